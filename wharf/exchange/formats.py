"""The document shapes Wharf reads and writes for ``sheet``, ``doc`` and ``slide`` units: a
subset of the Univer SDK's public snapshot formats (workbook, document, presentation),
kept in a unit's ``body`` and versioned by its ``schemaVersion`` (``docs/units.md``).

Declared once here: the importers build these shapes, the exporters read them, and the
docs describe them. Pure: no I/O.
"""
from __future__ import annotations

from enum import IntEnum
from typing import Any, Final

#: The ``schemaVersion`` of the documents these helpers build.
SCHEMA_VERSION: Final = 1


class CellType(IntEnum):
    """A sheet cell's ``t`` (Univer ``CellValueType``)."""

    STRING = 1
    NUMBER = 2
    BOOLEAN = 3
    FORCE_STRING = 4  # text that looks like a number and must stay text


class NamedStyle(IntEnum):
    """A doc paragraph's ``paragraphStyle.namedStyleType`` (Univer ``NamedStyleType``)."""

    NORMAL_TEXT = 1
    TITLE = 2
    SUBTITLE = 3
    HEADING_1 = 4
    HEADING_2 = 5
    HEADING_3 = 6
    HEADING_4 = 7
    HEADING_5 = 8


class PageElementType(IntEnum):
    """A slide page element's ``type`` (Univer ``PageElementType``)."""

    SHAPE = 0
    IMAGE = 1
    TEXT = 2


#: A doc's paragraph end and document end in ``dataStream`` (Univer's control characters).
PARAGRAPH_END: Final = "\r"
SECTION_END: Final = "\n"


def unit_document(unit_type: str, body: dict[str, Any] | Any) -> dict[str, Any]:
    """A unit's whole document: its type, the schema version and the Univer snapshot
    (or that snapshot already encoded as JSON, an import's ``msgspec.Raw``)."""
    return {"type": unit_type, "schemaVersion": SCHEMA_VERSION, "body": body}


# -- sheet: the workbook snapshot -------------------------------------------------------------

def workbook(name: str, sheets: list[dict[str, Any]],
             styles: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """A workbook body: ``sheetOrder`` (the sheets' ids in order), ``sheets`` by id and
    the shared ``styles`` by id (``bl`` bold, ``it`` italic, ``ul`` underline as
    ``{"s": 1}``, ``fs`` font size, ``ff`` font family, ``cl``/``bg`` text/background
    colour as ``{"rgb": "#RRGGBB"}``, ``n`` number format as ``{"pattern": "0.00"}``)."""
    return {"name": name, "sheetOrder": [s["id"] for s in sheets],
            "sheets": {s["id"]: s for s in sheets}, "styles": styles or {}}


def worksheet(sheet_id: str, name: str, cell_data: Any,
              merges: list[dict[str, int]] | None = None, *, row_count: int = 0,
              column_count: int = 0, extent: tuple[int, int] | None = None) -> dict[str, Any]:
    """A worksheet: ``cellData`` by row then column (decimal strings, 0-based), each cell
    ``{"v": value, "t": CellType, "f": "=formula", "s": style id}`` (all optional but
    one of ``v``/``f``); ``mergeData`` ranges (0-based, inclusive); ``rowCount`` and
    ``columnCount`` at least the used range. ``extent``: the rows and columns
    ``cell_data`` spans, when the caller knows them (else counted over every cell; it
    must be given for ``cell_data`` already encoded as that JSON, an import's
    ``msgspec.Raw``)."""
    if extent is None:
        assert isinstance(cell_data, dict)
        rows = max((int(r) for r in cell_data), default=-1) + 1
        cols = max((int(c) for row in cell_data.values() for c in row), default=-1) + 1
    else:
        rows, cols = extent
    return {"id": sheet_id, "name": name, "rowCount": max(row_count, rows),
            "columnCount": max(column_count, cols), "cellData": cell_data,
            "mergeData": merges or []}


def merge_range(start_row: int, start_column: int, end_row: int,
                end_column: int) -> dict[str, int]:
    return {"startRow": start_row, "startColumn": start_column, "endRow": end_row,
            "endColumn": end_column}


def cell(value: Any, *, formula: str | None = None, style: str | None = None) -> dict[str, Any]:
    """A cell of ``value`` (str, int, float, bool or None) with its type."""
    out: dict[str, Any] = {}
    if value is not None:
        out["v"] = value
        out["t"] = (CellType.BOOLEAN if isinstance(value, bool) else
                    CellType.NUMBER if isinstance(value, int | float) else CellType.STRING)
    if formula is not None:
        out["f"] = formula if formula.startswith("=") else "=" + formula
    if style is not None:
        out["s"] = style
    return out


# -- doc: the document snapshot ---------------------------------------------------------------

def document(title: str, paragraphs: list[tuple[list[tuple[str, dict[str, Any]]], int]]
             ) -> dict[str, Any]:
    """A doc body from paragraphs, each ``(runs, NamedStyle)`` with runs ``(text, style)``
    (``{"bl": 1}`` bold, ``{"it": 1}`` italic, ``{}`` plain): the text stream
    (``dataStream``, each paragraph ended by ``\\r``, the document by ``\\n``), the styled
    ``textRuns`` (``st``..``ed``, end exclusive) and ``paragraphs`` (``startIndex``: the
    index of the paragraph's ``\\r``)."""
    stream: list[str] = []
    runs: list[dict[str, Any]] = []
    paras: list[dict[str, Any]] = []
    at = 0
    for texts, named in paragraphs:
        for text, style in texts:
            text = text.replace(PARAGRAPH_END, " ").replace(SECTION_END, " ")
            if style and text:
                runs.append({"st": at, "ed": at + len(text), "ts": dict(style)})
            stream.append(text)
            at += len(text)
        paras.append({"startIndex": at, "paragraphStyle": {"namedStyleType": int(named)}})
        stream.append(PARAGRAPH_END)
        at += 1
    stream.append(SECTION_END)
    return {"title": title, "body": {"dataStream": "".join(stream), "textRuns": runs,
                                     "paragraphs": paras}}


def paragraphs_of(body: dict[str, Any]) -> list[tuple[list[tuple[str, dict[str, Any]]], int]]:
    """The inverse of :func:`document`: a doc body's paragraphs as ``(runs, NamedStyle)``.
    Text outside any run is plain; a missing style is ``NORMAL_TEXT``."""
    inner = body.get("body") or {}
    stream: str = inner.get("dataStream") or ""
    styled = sorted((r for r in inner.get("textRuns") or [] if isinstance(r, dict)),
                    key=lambda r: int(r.get("st", 0)))
    named = {int(p.get("startIndex", -1)): int((p.get("paragraphStyle") or {}).get(
        "namedStyleType", NamedStyle.NORMAL_TEXT)) for p in inner.get("paragraphs") or []
        if isinstance(p, dict)}
    out: list[tuple[list[tuple[str, dict[str, Any]]], int]] = []
    start = 0
    for end, ch in enumerate(stream):
        if ch != PARAGRAPH_END:
            continue
        runs: list[tuple[str, dict[str, Any]]] = []
        at = start
        for r in styled:
            st, ed = max(int(r.get("st", 0)), start), min(int(r.get("ed", 0)), end)
            if ed <= st:
                continue
            if st > at:
                runs.append((stream[at:st], {}))
            runs.append((stream[st:ed], dict(r.get("ts") or {})))
            at = ed
        if at < end:
            runs.append((stream[at:end], {}))
        out.append((runs, named.get(end, NamedStyle.NORMAL_TEXT)))
        start = end + 1
    return out


# -- slide: the presentation snapshot ---------------------------------------------------------

def presentation(title: str, slides: list[tuple[str, list[str]]]) -> dict[str, Any]:
    """A slide body from ``(slide title, [text box texts])``: ``pageOrder`` and
    ``body.pages`` by id, each page's text boxes as ``pageElements`` of type TEXT with
    ``richText.text``."""
    pages: dict[str, Any] = {}
    for n, (page_title, texts) in enumerate(slides, start=1):
        page_id = f"p{n}"
        elements = {f"{page_id}e{i}": {
            "id": f"{page_id}e{i}", "type": int(PageElementType.TEXT), "zIndex": i,
            "left": 0, "top": 0, "width": 0, "height": 0, "title": "", "description": "",
            "richText": {"text": text}} for i, text in enumerate(texts, start=1)}
        pages[page_id] = {"id": page_id, "title": page_title, "pageType": 0, "zIndex": n,
                          "pageElements": elements}
    return {"title": title, "pageOrder": list(pages), "body": {"pages": pages}}


def slide_texts(body: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """The inverse of :func:`presentation`: each page's title and its text elements'
    texts, in page order then ``zIndex``."""
    pages = (body.get("body") or {}).get("pages") or {}
    out = []
    for page_id in body.get("pageOrder") or list(pages):
        page = pages.get(page_id)
        if not isinstance(page, dict):
            continue
        elements = sorted((e for e in (page.get("pageElements") or {}).values()
                           if isinstance(e, dict) and e.get("type") == PageElementType.TEXT),
                          key=lambda e: int(e.get("zIndex", 0)))
        out.append((str(page.get("title") or ""),
                    [str((e.get("richText") or {}).get("text") or "") for e in elements]))
    return out
