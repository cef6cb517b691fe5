"""Keyset pagination: opaque cursors that encode the last row's sort key."""
from __future__ import annotations

import base64
import binascii
import json
from typing import Any, Sequence

from wharf.errors import InvalidCursor, ValidationFailed

DEFAULT_LIMIT = 50
MAX_LIMIT = 200


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
    raw = json.dumps([kind, *key], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(kind: str, cursor: str | None, arity: int) -> list[Any] | None:
    """Return the key stored in ``cursor`` or None; refuse anything we did not issue."""
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
            or not all(isinstance(v, str) and _storable(v) for v in data[1:])):
        raise InvalidCursor("The cursor is not valid for this listing.")
    return data[1:]


def _storable(value: str) -> bool:
    """Keys we issue are names and ids: never NUL, never lone surrogates (which the
    databases refuse with an error rather than a comparison)."""
    if "\x00" in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def page(items: list[Any], limit: int, kind: str, key_of) -> tuple[list[Any], str | None]:
    """``items`` was fetched with ``limit + 1``; trim and build the next cursor."""
    if len(items) > limit:
        items = items[:limit]
        return items, encode_cursor(kind, key_of(items[-1]))
    return items, None
