"""Field types shared by every area: ids, timestamps, pages."""
from __future__ import annotations

from typing import Annotated

import msgspec

from wharf.infra.ids import ID_PATTERN
from wharf.infra.pagination import DEFAULT_LIMIT, MAX_LIMIT

Id = Annotated[str, msgspec.Meta(pattern=ID_PATTERN, description="An id: 32 lowercase hex digits.",
                                 examples=["0f8fad5bd9cb469fa16570867728950e"])]
# Timestamps are written by ``wharf.infra.clock.iso`` (UTC, ``Z`` suffix), kept as text so the
# bytes on the wire stay exactly what the server always sent.
Timestamp = Annotated[str, msgspec.Meta(extra_json_schema={"format": "date-time"},
                                        examples=["2026-01-31T12:00:00.000000Z"])]
# An id a client sends: not checked against the pattern (an unknown or malformed id is a
# 404, the same answer as an id the caller may not see), only bounded.
IdRef = Annotated[str, msgspec.Meta(max_length=64, description="An id (unknown ids are 404).")]
# Documented as bounded; a longer (or any forged) cursor is refused by the decoder as
# 400 ``invalid_cursor``, the same answer as every cursor this server did not issue.
Cursor = Annotated[str, msgspec.Meta(extra_json_schema={"maxLength": 1024},
                                     description="`next_cursor` of the page before.")]
Limit = Annotated[int, msgspec.Meta(ge=1, le=MAX_LIMIT, description="Page size.")]

class InvalidField(ValueError):
    """A request Struct's own rule (``__post_init__``) refused the value of ``field``: the
    400 ``validation_failed`` problem names it (``details.field``)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class Request(msgspec.Struct, forbid_unknown_fields=True):
    """Base of request bodies: an unknown field is refused (400 validation_failed)."""


class Response(msgspec.Struct):
    """Base of response bodies."""


class PageQuery(msgspec.Struct, forbid_unknown_fields=False):
    """``?limit=&cursor=`` of keyset-paginated listings."""

    limit: Limit = DEFAULT_LIMIT
    cursor: Cursor | None = None
