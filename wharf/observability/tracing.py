"""Trace context for the domain: W3C ``traceparent`` strings in and out, and spans.

Rules:
- Off unless :func:`enable` was called (by the process wiring, ``wharfd.tracing.setup``,
  when ``OTEL_TRACES_EXPORTER`` asks for an exporter). While off, every function here
  returns at once: no context string is built (:func:`current_traceparent` is None, so
  the ``trace_context`` columns stay NULL) and :func:`start_span` makes no span.
- Only the OpenTelemetry *API* is imported here; the SDK, exporters and
  instrumentations belong to ``wharfd.tracing``.
- A stored context is a version-00 ``traceparent`` (55 characters,
  ``storage.models.TRACE_CONTEXT_LENGTH``); anything else reads as no context.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

#: The instrumentation scope of Wharf's own spans.
TRACER_NAME = "wharf"
#: The carrier key of a W3C trace context (also the Dramatiq message option's name).
TRACEPARENT = "traceparent"

_PROPAGATOR = TraceContextTextMapPropagator()
_NULL: contextlib.nullcontext[None] = contextlib.nullcontext()
_enabled = False

Attributes = Mapping[str, str | int | float | bool]


def enable(on: bool = True) -> None:
    """Turn Wharf's spans and stored contexts on (or off). Process wiring only."""
    global _enabled
    _enabled = on


def enabled() -> bool:
    return _enabled


def current_traceparent() -> str | None:
    """The current span's context as a ``traceparent``; None when off or outside a span."""
    if not _enabled:
        return None
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier)
    return carrier.get(TRACEPARENT)


def context_from(traceparent: str | None) -> Context | None:
    """The context a stored ``traceparent`` names (a remote parent); None when off, empty
    or malformed."""
    if not _enabled or not traceparent:
        return None
    ctx = _PROPAGATOR.extract({TRACEPARENT: traceparent})
    if not trace.get_current_span(ctx).get_span_context().is_valid:
        return None
    return ctx


def _tracer() -> trace.Tracer:
    return trace.get_tracer(TRACER_NAME)


def open_span(name: str, *, parent: str | None = None, kind: SpanKind = SpanKind.INTERNAL,
              attributes: Attributes | None = None) -> Span | None:
    """Start a span that is not made current (end it with :func:`close_span`): a child of
    the ``parent`` traceparent, or of the current span when ``parent`` names none. None
    when tracing is off."""
    if not _enabled:
        return None
    return _tracer().start_span(name, context=context_from(parent), kind=kind,
                                attributes=attributes)


@contextlib.contextmanager
def start_span(name: str, *, parent: str | None = None, kind: SpanKind = SpanKind.INTERNAL,
               attributes: Attributes | None = None) -> Iterator[Span | None]:
    """A span made current for the block (see :func:`open_span` for ``parent``); an
    exception escaping the block is recorded and sets its status to error. Yields None
    when tracing is off."""
    span = open_span(name, parent=parent, kind=kind, attributes=attributes)
    if span is None:
        yield None
        return
    with trace.use_span(span, end_on_exit=True):
        yield span


def use(span: Span | None) -> contextlib.AbstractContextManager[Any]:
    """Make ``span`` current for a block without ending it (nothing when None). An
    exception escaping the block is not recorded here: :func:`close_span` records the
    outcome once."""
    if span is None:
        return _NULL
    return trace.use_span(span, end_on_exit=False, record_exception=False,
                          set_status_on_exception=False)


@contextlib.contextmanager
def detached() -> Iterator[None]:
    """A block outside any trace: what it enqueues carries no parent. A drain's hand-over
    bell (another worker joins) is work of the system, not of the request whose bell
    started the drain; without this, one submitter's trace would take in every batch
    while the system stays busy."""
    if not _enabled:
        yield
        return
    token = otel_context.attach(Context())
    try:
        yield
    finally:
        otel_context.detach(token)


def link_to(span: Span | None, traceparents: Sequence[str | None]) -> None:
    """Link ``span`` to each context named (a batch to the operations it holds)."""
    if span is None or not _enabled:
        return
    for tp in traceparents:
        ctx = context_from(tp)
        if ctx is not None:
            span.add_link(trace.get_current_span(ctx).get_span_context())


def close_span(span: Span | None, *, error: BaseException | None = None,
               failure: str | None = None, attributes: Attributes | None = None) -> None:
    """End a span from :func:`open_span`; with ``failure`` (a short description) its
    status is error and ``error``, if any, is recorded as its exception."""
    if span is None:
        return
    if attributes:
        span.set_attributes(attributes)
    if failure is not None:
        if error is not None:
            span.record_exception(error)
        span.set_status(Status(StatusCode.ERROR, failure))
    span.end()


__all__ = ["TRACEPARENT", "TRACER_NAME", "SpanKind", "close_span", "context_from",
           "current_traceparent", "detached", "enable", "enabled", "link_to", "open_span",
           "start_span", "use"]
