"""Server-generated identifiers.

Ids are UUIDv7-shaped (48-bit millisecond timestamp, then random bits), rendered as 32
lower-case hex characters: generated in Python before the row exists, unguessable, and
roughly time-ordered so keyset pagination by id follows creation order.

It lives in the lowest layer because column defaults need it; the core uses it as
:mod:`wharf.infra.ids`, which re-exports it.
"""
from __future__ import annotations

import os
import re
import time

#: Every id (32 lowercase hex digits); the API documents this very pattern.
ID_PATTERN = r"^[0-9a-f]{32}$"
_ID_RE = re.compile(ID_PATTERN)


def new_id() -> str:
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & ((1 << 48) - 1)) << 80 | rand
    # version 7 and RFC 4122 variant bits
    value = (value & ~(0xF << 76)) | (0x7 << 76)
    value = (value & ~(0x3 << 62)) | (0x2 << 62)
    return f"{value:032x}"


def is_id(value: object) -> bool:
    return isinstance(value, str) and bool(_ID_RE.match(value))
