"""The searchable text of a unit document (docs/units.md for the shapes): a doc's title
and ``dataStream``; a sheet's name, its sheets' names and every cell's value (text,
numbers, booleans; a formula's last value, not the formula); a slide's title, its pages'
titles and its text boxes (``richText.text``, or a ``richText.body.dataStream``). Boards
and bases have no text format yet: nothing is extracted from them.

Changesets may write anything into a body, so every step checks its shape and skips what
is not as documented. The text is bounded: at most ``MAX_TEXT_BYTES`` of UTF-8 (the rest
of a document is not searchable), which also keeps PostgreSQL's ``tsvector`` (at most
1 MB) and ``ts_headline`` in bounds."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

#: The searchable text of one unit, at most (UTF-8 bytes).
MAX_TEXT_BYTES = 256 * 1024


def _dict(value: Any, key: str) -> dict[str, Any]:
    found = value.get(key) if isinstance(value, dict) else None
    return found if isinstance(found, dict) else {}


def _str(value: Any, key: str) -> Iterator[str]:
    found = value.get(key) if isinstance(value, dict) else None
    if isinstance(found, str) and found:
        yield found


def _ordered(items: dict[str, Any], order: Any) -> list[Any]:
    """``items`` in ``order`` (ids; those not named follow in their own order)."""
    named = [items[k] for k in order if isinstance(k, str) and k in items] \
        if isinstance(order, list) else []
    rest = [v for k, v in items.items() if not (isinstance(order, list) and k in order)]
    return named + rest


def _doc(body: dict[str, Any]) -> Iterator[str]:
    yield from _str(body, "title")
    stream = _dict(body, "body").get("dataStream")
    if isinstance(stream, str):
        yield stream.replace("\r", "\n")


def _cell(cell: Any) -> Iterator[str]:
    value = cell.get("v") if isinstance(cell, dict) else None
    if isinstance(value, str) and value:
        yield value
    elif isinstance(value, bool):
        yield "TRUE" if value else "FALSE"
    elif isinstance(value, int | float):
        yield str(value)


def _sheet(body: dict[str, Any]) -> Iterator[str]:
    yield from _str(body, "name")
    for sheet in _ordered(_dict(body, "sheets"), body.get("sheetOrder")):
        yield from _str(sheet, "name")
        for row in _dict(sheet, "cellData").values():
            if isinstance(row, dict):
                for cell in row.values():
                    yield from _cell(cell)


def _slide(body: dict[str, Any]) -> Iterator[str]:
    yield from _str(body, "title")
    for page in _ordered(_dict(_dict(body, "body"), "pages"), body.get("pageOrder")):
        yield from _str(page, "title")
        for element in _dict(page, "pageElements").values():
            rich = _dict(element, "richText")
            yield from _str(rich, "text")
            stream = _dict(rich, "body").get("dataStream")
            if isinstance(stream, str):
                yield stream.replace("\r", "\n")


_EXTRACT = {"doc": _doc, "sheet": _sheet, "slide": _slide}


def extract(unit_type: str, document: Any, limit: int = MAX_TEXT_BYTES) -> str:
    """The searchable text of ``document`` (a unit of ``unit_type``), pieces one per line,
    at most ``limit`` bytes of UTF-8 (cut at a character boundary)."""
    body = _dict(document, "body")
    pieces = _EXTRACT.get(unit_type)
    if pieces is None:
        return ""
    out: list[str] = []
    size = 0
    for piece in pieces(body):
        encoded = piece.encode("utf-8", "replace")
        if size + len(encoded) + 1 > limit:
            out.append(encoded[:max(0, limit - size)].decode("utf-8", "ignore"))
            break
        out.append(encoded.decode("utf-8"))  # (a lone surrogate became "?")
        size += len(encoded) + 1
    return "\n".join(out).replace("\x00", " ")
