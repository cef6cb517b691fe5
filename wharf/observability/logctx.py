"""Log context: the fields every line a request or an operation writes carries.

Rules:
- The context lives in :mod:`contextvars`: a thread sees only its own (a request on one
  server thread never sees another's), and binding costs one ``ContextVar.set`` -- no
  logger is built, nothing is formatted. The fields are merged into a line only when the
  line is emitted (:func:`add_context`, a structlog processor wired by ``wharfd.logs``), so
  a line below the level costs nothing more than before.
- A request (``api.middleware``) binds ``request_id`` when it starts (replacing whatever
  the thread held), ``user_id`` once authenticated, and clears both when it ends.
- The executor binds ``operation_id``, ``kind`` and ``attempt`` around each operation's
  perform, commit and failure handling (:func:`bound_op`, nestable: the previous
  binding comes back on exit). Work on a whole batch binds ``batch_size`` and the first
  :data:`BATCH_IDS_SHOWN` ``operation_ids`` (and ``kind`` when the batch has one kind);
  a batch of one is bound as its operation.
- ``trace_id`` and ``span_id`` (lower-case hex, as OpenTelemetry backends show them) come
  from the current OpenTelemetry span when it is recording; without a configured SDK no
  span records, and the fields are absent.
- A field passed by the log call itself (``extra=`` or a structlog keyword) wins over the
  bound one.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from contextvars import ContextVar, Token
from typing import TYPE_CHECKING, Any, Protocol

from opentelemetry import trace

if TYPE_CHECKING:  # structlog itself comes with wharfd.logs (wharfd/structlog_import.py)
    from structlog.typing import EventDict, WrappedLogger

#: How many ids of a batch its batch-level lines name (the rest: ``batch_size``).
BATCH_IDS_SHOWN = 10


class ParsedOp(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def attempts(self) -> int: ...


# One variable per scope, each holding an immutable value (a dict never mutated once set,
# or a tuple): a binding is a single ``set``, a reset restores the enclosing one.
_request: ContextVar[dict[str, str] | None] = ContextVar("wharf_log_request", default=None)
_operation: ContextVar[tuple[str, str, int] | None] = ContextVar("wharf_log_operation",
                                                                 default=None)
_batch: ContextVar[dict[str, Any] | None] = ContextVar("wharf_log_batch", default=None)


# -- requests ---------------------------------------------------------------------------
def bind_request(request_id: str) -> None:
    """A request starts on this thread: its id from now on (anything bound before is
    dropped, so nothing an earlier request left behind can leak into this one)."""
    _request.set({"request_id": request_id})
    _operation.set(None)
    _batch.set(None)


def bind_user(user_id: str) -> None:
    """The request's actor, once authenticated."""
    current = _request.get()
    _request.set({**current, "user_id": user_id} if current else {"user_id": user_id})


def clear_request() -> None:
    """The request has ended: nothing of it stays bound to the thread."""
    _request.set(None)
    _operation.set(None)
    _batch.set(None)


# -- operations -------------------------------------------------------------------------
class _Scope:
    """Sets one context variable on entry, restores the enclosing value on exit. A class
    rather than a ``@contextmanager`` generator: a third of the cost on the hot path."""

    __slots__ = ("_token", "_value", "_var")

    def __init__(self, var: ContextVar[Any], value: Any) -> None:
        self._var = var
        self._value = value
        self._token: Token[Any] | None = None

    def __enter__(self) -> None:
        self._token = self._var.set(self._value)

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            self._var.reset(self._token)
            self._token = None


def bound_op(op: ParsedOp) -> _Scope:
    """``with bound_op(op)``: lines written inside carry the ``Operation`` row's
    ``operation_id``, ``kind`` and ``attempt`` (its ``attempts``: the number of the attempt
    running)."""
    return _Scope(_operation, (op.id, op.kind, op.attempts))


@contextlib.contextmanager
def bound_batch(ops: Sequence[ParsedOp]) -> Iterator[None]:
    """Lines written inside carry ``batch_size``, the first ids (``operation_ids``) and
    ``kind`` if the batch has one; a batch of one is bound as that operation."""
    fields: dict[str, Any] = {"batch_size": len(ops),
                              "operation_ids": [op.id for op in ops[:BATCH_IDS_SHOWN]]}
    kinds = {op.kind for op in ops}
    if len(kinds) == 1:
        fields["kind"] = next(iter(kinds))
    token = _batch.set(fields)
    op_token = _operation.set((ops[0].id, ops[0].kind, ops[0].attempts)) \
        if len(ops) == 1 else None
    try:
        yield
    finally:
        if op_token is not None:
            _operation.reset(op_token)
        _batch.reset(token)


# -- the processor ----------------------------------------------------------------------
def current() -> dict[str, Any]:
    """The fields a line emitted here and now would carry: for tests and tools."""
    return dict(add_context(None, "info", {}))


def add_context(logger: WrappedLogger, method_name: str, event_dict: EventDict) -> EventDict:
    """structlog processor: add the bound request, operation/batch and trace fields to the
    line being emitted (fields the call passed itself are kept)."""
    request = _request.get()
    if request is not None:
        for key, value in request.items():
            event_dict.setdefault(key, value)
    op = _operation.get()
    batch = _batch.get()
    if op is not None:
        event_dict.setdefault("operation_id", op[0])
        event_dict.setdefault("kind", op[1])
        event_dict.setdefault("attempt", op[2])
        if batch is not None and batch["batch_size"] > 1:
            event_dict.setdefault("batch_size", batch["batch_size"])
    elif batch is not None:
        for key, value in batch.items():
            event_dict.setdefault(key, value)
    span = trace.get_current_span()
    if span.is_recording():
        ctx = span.get_span_context()
        event_dict.setdefault("trace_id", format(ctx.trace_id, "032x"))
        event_dict.setdefault("span_id", format(ctx.span_id, "016x"))
    return event_dict
