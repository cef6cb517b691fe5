"""The RFC 9457 problem document every error answers with."""
from __future__ import annotations

from typing import Annotated, Any

import msgspec

from api.schemas.common import Response


class Problem(Response):
    """An error (`application/problem+json`, RFC 9457). `code` is stable and
    machine-readable; `details` carries code-specific facts (`field` and `errors` for
    validation failures, `retry_after`, `operation_id`, `enclosing_batch_id`, ...)."""

    title: str
    status: int
    code: Annotated[str, msgspec.Meta(description="Stable machine-readable error code.")]
    type: str = "about:blank"
    detail: str | msgspec.UnsetType = msgspec.UNSET
    request_id: str | msgspec.UnsetType = msgspec.UNSET
    details: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET
