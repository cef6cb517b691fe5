"""The RFC 9457 problem document every error answers with."""
from __future__ import annotations

from typing import Annotated

import msgspec

from api.schemas.common import Response

Unset = msgspec.UnsetType
UNSET = msgspec.UNSET


class FieldError(Response):
    """One validation failure: where (a JSON pointer into the body or query) and what."""

    pointer: str
    message: str


class ProblemDetails(Response):
    """Code-specific facts of a problem. The keys below are the ones the server sets (each
    only with the codes that need it); other keys may appear."""

    field: Annotated[str | Unset | None, msgspec.Meta(
        description="validation_failed: the offending field (null: the body itself).")] = UNSET
    errors: Annotated[list[FieldError] | Unset, msgspec.Meta(
        description="validation_failed: up to 10 failures.")] = UNSET
    allowed: Annotated[list[str] | Unset, msgspec.Meta(
        description="validation_failed: the accepted values.")] = UNSET
    retry_after: Annotated[int | Unset, msgspec.Meta(
        description="rate_limited: seconds to wait (also in `Retry-After`).")] = UNSET
    operation_id: Annotated[str | Unset, msgspec.Meta(
        description="The operation the conflict is about (idempotency replays, purges).")
    ] = UNSET
    enclosing_batch_id: Annotated[str | Unset, msgspec.Meta(
        description="ancestor_trashed: restore this batch first.")] = UNSET
    op_index: Annotated[int | Unset, msgspec.Meta(
        description="Changesets: the index of the failing operation.")] = UNSET
    reason: Annotated[str | Unset, msgspec.Meta(
        description="Why a retry or an action is not possible.")] = UNSET


class Problem(Response):
    """An error (`application/problem+json`, RFC 9457). `code` is stable and
    machine-readable; `details` carries code-specific facts."""

    title: str
    status: int
    code: Annotated[str, msgspec.Meta(description="Stable machine-readable error code.")]
    type: str = "about:blank"
    detail: str | Unset = UNSET
    request_id: str | Unset = UNSET
    details: ProblemDetails | Unset = UNSET
    error: Annotated[str | Unset, msgspec.Meta(
        description="The device login's OAuth endpoints only: RFC 6749/8628's `error` "
                    "(`authorization_pending`, `slow_down`, ...), for OAuth clients.")] = UNSET


__all__ = ["FieldError", "Problem", "ProblemDetails"]
