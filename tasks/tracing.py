"""Trace context through Dramatiq: a small middleware.

- ``before_enqueue``: the current span's context, as a W3C ``traceparent``, goes into the
  message's options (``traceparent``), so it travels with the message through Redis.
- ``before_process_message``: a ``dramatiq.process`` span (kind consumer) starts, a child
  of the message's context (a new trace without one), and is current while the actor
  runs -- a doorbell's drain and its batches (``wharf.operations.executor``) nest under it.
- ``after_process_message`` / ``after_skip_message``: the span ends (error status with
  the exception, if the actor raised).

While tracing is off (``wharf.observability.tracing.enabled()`` is false) every hook returns
at once: no option is written and no span made. A message's span is kept per worker thread: Dramatiq
runs the before/after hooks of one message on the thread that runs its actor.
"""
from __future__ import annotations

import threading
from typing import Any

import dramatiq
from dramatiq.broker import MessageProxy
from dramatiq.middleware import Middleware

from wharf.observability import tracing


class TracingMiddleware(Middleware):
    def __init__(self) -> None:
        self._local = threading.local()

    def before_enqueue(self, broker: dramatiq.Broker, message: dramatiq.Message[Any],
                       delay: int | None) -> None:
        traceparent = tracing.current_traceparent()
        if traceparent is not None:
            message.options[tracing.TRACEPARENT] = traceparent

    def before_process_message(self, broker: dramatiq.Broker,
                               message: MessageProxy) -> None:
        if not tracing.enabled():
            return
        parent = message.options.get(tracing.TRACEPARENT)
        span = tracing.open_span("dramatiq.process",
                                 parent=parent if isinstance(parent, str) else None,
                                 kind=tracing.SpanKind.CONSUMER, attributes={
                                     "messaging.system": "dramatiq",
                                     "messaging.operation": "process",
                                     "messaging.destination.name": message.queue_name,
                                     "messaging.message.id": message.message_id,
                                     "wharf.actor": message.actor_name})
        scope = tracing.use(span)
        scope.__enter__()
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        stack.append((message.message_id, span, scope))

    def _end(self, message: MessageProxy, exception: BaseException | None = None) -> None:
        stack = getattr(self._local, "stack", None)
        if not stack or stack[-1][0] != message.message_id:
            return
        _, span, scope = stack.pop()
        scope.__exit__(None, None, None)
        tracing.close_span(span, error=exception,
                           failure=None if exception is None else type(exception).__name__)

    def after_process_message(self, broker: dramatiq.Broker, message: MessageProxy,
                              *, result: Any = None,
                              exception: BaseException | None = None) -> None:
        self._end(message, exception)

    def after_skip_message(self, broker: dramatiq.Broker, message: MessageProxy) -> None:
        self._end(message)


def install(broker: dramatiq.Broker) -> None:
    """Add the middleware to ``broker`` once (the process wiring calls it)."""
    if not any(isinstance(m, TracingMiddleware) for m in broker.middleware):
        broker.add_middleware(TracingMiddleware())
