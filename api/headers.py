"""HTTP header parsing for blob reads: ``Range`` (with ``If-Range``), ``If-None-Match`` and
``Content-Disposition``.

Falcon's own helpers are used where they keep the behaviour the tests pin:
``req.if_none_match`` parses the entity-tag list, ``resp.set_stream`` sends the body. Two
do not fit: ``req.range`` answers 400 to a malformed ``Range`` header (RFC 9110 says to
ignore it and serve the whole content, which ``tests/hostile/test_ranges.py`` pins) and
converts positions of any length with ``int()``; ``resp.downloadable_as`` writes an ASCII
name unescaped into ``filename="..."`` (a name with ``"`` or ``\\`` breaks the header) and
sends ``filename*`` only for non-ASCII names.
"""
from __future__ import annotations

import re
from urllib.parse import quote

import falcon

from wharf.infra.errors import WharfError


class RangeNotSatisfiable(WharfError):
    """The requested byte range lies outside the content."""

    status = 416
    code = "range_not_satisfiable"
    title = "Range not satisfiable"


RANGE_DIGITS = 19  # beyond any object size (2**63 has 19 digits)


def _position(digits: str) -> int | None:
    """A byte position of a Range header; None for one too large to be any object's size.

    The digits are never converted when there are more than RANGE_DIGITS of them (after
    leading zeros): Python refuses int() on more than 4,300 digits, and such a number
    is larger than any content anyway, which the callers treat as RFC 9110 says."""
    digits = digits.lstrip("0") or "0"
    return int(digits) if len(digits) <= RANGE_DIGITS else None


def _magnitude(digits: str) -> tuple[int, str]:
    """Orders decimal strings of any length by value without converting them."""
    digits = digits.lstrip("0") or "0"
    return len(digits), digits


def parse_range(header: str | None, size: int) -> tuple[int, int] | None:
    """A single ``bytes=`` range → (start, end) inclusive; None means the whole content.

    Malformed or multi-range headers are ignored (the whole content is served, as RFC 9110
    allows); a syntactically valid but unsatisfiable range raises RangeNotSatisfiable.
    Positions of any length are valid syntax: one too large for any content is treated as
    "beyond the end" (a first position → 416, a last position or a suffix length → up to
    the end), without ever building the huge integer.
    """
    if not header:
        return None
    m = re.fullmatch(r"\s*bytes\s*=\s*([0-9]*)\s*-\s*([0-9]*)\s*", header)
    if not m or (not m.group(1) and not m.group(2)):
        return None
    first, last = m.group(1), m.group(2)
    if not first:  # suffix: the last N bytes
        n = _position(last)
        if n == 0 or size == 0:
            raise RangeNotSatisfiable("empty suffix range", headers={
                "Content-Range": f"bytes */{size}"})
        return (0 if n is None else max(0, size - n)), size - 1
    if last and _magnitude(last) < _magnitude(first):
        return None  # invalid (last < first): ignored
    start = _position(first)
    end = _position(last) if last else size - 1
    if start is None or start >= size:
        raise RangeNotSatisfiable(f"range starts beyond the content's {size} bytes",
                                  headers={"Content-Range": f"bytes */{size}"})
    return start, size - 1 if end is None else min(end, size - 1)


def byte_range(req: falcon.Request, etag: str, size: int) -> tuple[int, int] | None:
    """The range to serve: ``Range`` when ``If-Range`` is absent or names the current
    ``etag``; None means the whole content."""
    if_range = req.get_header("If-Range")
    if if_range is None or if_range.strip() == etag:
        return parse_range(req.get_header("Range"), size)
    return None


def not_modified(req: falcon.Request, etag: str) -> bool:
    """True when ``If-None-Match`` lists the current ``etag`` (weak comparison, so
    ``W/"..."`` matches too) or ``*``: the client's copy is current (answer 304).

    Parsed here rather than with Falcon's ``req.if_none_match``, which drops a ``*`` inside
    a list and takes an unquoted token for an entity-tag; those answers are pinned."""
    header = req.get_header("If-None-Match")
    if not header:
        return False
    tags = [t.strip() for t in header.split(",")]
    return "*" in tags or etag in tags or f"W/{etag}" in tags


def attachment(filename: str) -> str:
    """``Content-Disposition: attachment`` with an ASCII fallback ``filename`` (anything
    else replaced by ``_``) and the exact name as RFC 6266 / RFC 5987 ``filename*``."""
    fallback = "".join(c if c.isascii() and c.isprintable() and c not in '"\\' else "_"
                       for c in filename)
    return (f"attachment; filename=\"{fallback}\"; "
            f"filename*=UTF-8''{quote(filename, safe='')}")


#: At most this many comma-separated preferences of one ``Prefer`` header are read.
MAX_PREFERENCES = 16


def preferences(header: str | None) -> list[str]:
    """The comma-separated preferences of a ``Prefer`` header (RFC 7240), the first
    :data:`MAX_PREFERENCES` of them (the split stops there), as sent."""
    if not header:
        return []
    return header.split(",", MAX_PREFERENCES)[:MAX_PREFERENCES]
