"""What every operation kind shares: the base of the typed payloads and results, the error
shape, and reading and writing them.

Each kind's payload and result are ``msgspec.Struct`` s declared by its capability, with
the kind (``wharf/<capability>/kinds.py``, registered in ``wharf.operations.registry``).
A payload is fixed when the operation is submitted and stored in ``operations.payload``
(a JSON column); a result is what the kind's ``commit`` returns, stored in
``operations.result`` and served as ``Operation.result``. The Structs are the one
declaration of those shapes: submission builds the payload Struct and stores
``to_json(payload)``, handlers read ``payload(op, CreateResourcePayload).unit_id``, and
the API's ``Operation`` schema is a union of the result Structs keyed by ``kind``.

The stored JSON stays what it was before these types existed: fields are declared in the
order the dicts were written, optional fields with a default are omitted when they hold
it (``omit_defaults``), and unknown keys in an old row are ignored on decoding.
"""
from __future__ import annotations

from typing import Any, TypeVar

import msgspec

from storage.models import Operation
from wharf.operations.registry import KINDS


class Shape(msgspec.Struct, frozen=True, omit_defaults=True):
    """Base of the stored shapes (immutable; defaults are not written)."""



class OperationError(Shape, frozen=True):
    """Why an attempt or the operation failed (``operations.error``,
    ``operation_attempts.error``): a problem ``code``, a message, whether the executor
    would retry it, and the problem's ``details`` when it had any."""

    code: str
    message: str
    retryable: bool
    details: dict[str, Any] | None = None


S = TypeVar("S", bound=msgspec.Struct)


def payload(op: Operation, shape: type[S]) -> S:
    """The operation's stored payload as ``shape`` (a ``msgspec.ValidationError`` if the
    row does not hold one)."""
    return msgspec.convert(op.payload, shape)


#: What an error stored without a field reads as (the recovery sweep once wrote a lost
#: attempt's error as only ``{"code": "lease_expired", "retryable": true}``).
_ERROR_BACKFILL: dict[str, Any] = {"code": "internal_error", "message": "", "retryable": False}


def read_result(kind: str, stored: dict[str, Any] | None) -> msgspec.Struct | None:
    """A stored result as its kind's Struct, older rows included (the kind's
    ``result_backfill``)."""
    if stored is None:
        return None
    spec = KINDS[kind]
    backfill = spec.result_backfill
    return msgspec.convert({**(backfill(stored) if backfill else {}), **stored}, spec.result)


def read_error(stored: dict[str, Any] | None) -> OperationError | None:
    """A stored operation or attempt error, older rows included."""
    if stored is None:
        return None
    return msgspec.convert({**_ERROR_BACKFILL, **stored}, OperationError)


def to_json(value: msgspec.Struct | dict[str, Any]) -> dict[str, Any]:
    """What is stored in a JSON column for a payload, result or error Struct (a plain
    dict passes through unchanged)."""
    if isinstance(value, dict):
        return value
    out: dict[str, Any] = msgspec.to_builtins(value)
    return out
