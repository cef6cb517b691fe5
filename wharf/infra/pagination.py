"""Keyset pagination: opaque cursors that encode the last row's sort key.

A cursor decodes to exactly the key we issued or the request is refused (400
``invalid_cursor``): each key part is a string, or a timestamp when the listing asks for
one (``decode_cursor(kind, cursor, (TIMESTAMP, str))``), so a forged value never reaches a
parser or the database as something it cannot take.

Listings that filter rows after the query (visibility decided per row) use
:func:`scan_page`: it keeps scanning past hidden rows until the page is full, at most
``SCAN_BUDGET`` rows per request; when the budget runs out first, the cursor points after
the last row scanned, so a page may be short (even empty) but the cursor is only null at
the end of the listing.
"""
from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from wharf.infra.clock import iso
from wharf.infra.errors import InvalidCursor, ValidationFailed
from wharf.infra.validation import storable

T = TypeVar("T")

DEFAULT_LIMIT = 50
MAX_LIMIT = 200
SCAN_BUDGET = 1000  # rows one request may examine for a filtered listing


class TIMESTAMP:
    """A cursor key part holding an aware UTC datetime (encoded as ISO 8601)."""


def parse_limit(raw: str | None) -> int:
    if raw is None or raw == "":
        return DEFAULT_LIMIT
    # Plain ASCII digits only: int() would also take " 3", "+3", "1_0" and other scripts' digits.
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 6:
        raise ValidationFailed(f"limit must be an integer between 1 and {MAX_LIMIT}",
                               details={"field": "limit"})
    value = int(raw)
    if not 1 <= value <= MAX_LIMIT:
        raise ValidationFailed(f"limit must be between 1 and {MAX_LIMIT}",
                               details={"field": "limit"})
    return value


def encode_cursor(kind: str, key: Sequence[Any]) -> str:
    parts = [iso(v) if isinstance(v, datetime) else v for v in key]
    raw = json.dumps([kind, *parts], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _timestamp(value: str) -> datetime:
    # Only what encode_cursor writes: ISO 8601 with a UTC offset ("Z" or "+00:00").
    if len(value) > 40:
        raise ValueError(value)
    when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    offset = when.utcoffset()
    if offset is None or offset.total_seconds() != 0:
        raise ValueError(value)
    return when.astimezone(UTC)


def decode_cursor(kind: str, cursor: str | None,
                  arity: int | Sequence[type]) -> list[Any] | None:
    """Return the key stored in ``cursor`` or None; refuse anything we did not issue.
    ``arity`` is the number of string parts, or the type of each part (``str`` or
    ``TIMESTAMP``)."""
    types = [str] * arity if isinstance(arity, int) else list(arity)
    key = _decode(kind, cursor, len(types))
    if key is None:
        return None
    try:
        return [_timestamp(v) if t is TIMESTAMP else v for v, t in zip(key, types)]
    except (ValueError, TypeError, OverflowError):
        raise InvalidCursor("The cursor is not valid for this listing.") from None


def _decode(kind: str, cursor: str | None, arity: int) -> list[Any] | None:
    if cursor is None or cursor == "":
        return None
    try:
        if len(cursor) > 1024:
            raise ValueError
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, binascii.Error, UnicodeError):
        raise InvalidCursor("The cursor is not valid for this listing.") from None
    if (not isinstance(data, list) or len(data) != arity + 1 or data[0] != kind
            or not all(isinstance(v, str) and storable(v) for v in data[1:])):
        raise InvalidCursor("The cursor is not valid for this listing.")
    return data[1:]


def page(items: list[T], limit: int, kind: str,
         key_of: Callable[[T], list[Any]]) -> tuple[list[T], str | None]:
    """``items`` was fetched with ``limit + 1``; trim and build the next cursor."""
    if len(items) > limit:
        items = items[:limit]
        return items, encode_cursor(kind, key_of(items[-1]))
    return items, None


def scan_page(fetch: Callable[[list[Any] | None, int], list[Any]], after: list[Any] | None,
              limit: int, kind: str, key_of: Callable[[Any], list[Any]],
              keep: Callable[[Any], bool], *, budget: int | None = None
              ) -> tuple[list[Any], str | None]:
    """One page of the rows ``keep`` accepts, in ``fetch`` order.

    ``fetch(key, n)`` returns the next ``n`` rows after ``key`` (None: from the start).
    At most ``budget`` rows are examined; the cursor is null only when the listing ended."""
    budget = max(budget or SCAN_BUDGET, limit + 1)
    items: list[Any] = []
    scanned = 0
    while True:
        want = min(max(2 * limit + 1, 50), budget - scanned)
        rows = fetch(after, want)
        scanned += len(rows)
        for row in rows:
            if keep(row):
                items.append(row)
                if len(items) > limit:
                    return items[:limit], encode_cursor(kind, key_of(items[limit - 1]))
        if len(rows) < want:
            return items, None
        after = key_of(rows[-1])
        if scanned >= budget:
            return items, encode_cursor(kind, after)
