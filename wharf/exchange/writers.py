"""Writing a unit document (``wharf.exchange.formats``) to an Office file on disk: XLSX
(xlsxwriter, constant memory: rows in order), CSV (one sheet, UTF-8), DOCX (python-docx),
PPTX (python-pptx). Pure conversion: the caller chooses the path and stores the file."""
from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterator
from typing import Any, Final

from wharf.exchange.formats import CellType, NamedStyle, paragraphs_of, slide_texts

#: Export formats by unit type.
FORMATS: Final[dict[str, tuple[str, ...]]] = {
    "sheet": ("xlsx", "csv"), "doc": ("docx",), "slide": ("pptx",)}
MEDIA_TYPES: Final[dict[str, str]] = {
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "csv": "text/csv; charset=utf-8",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation"}


class SheetNotFound(ValueError):
    """The CSV export names a sheet the workbook does not have."""


# -- sheet ------------------------------------------------------------------------------------

def sheets_of(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The workbook's sheets in tab order (those ``sheetOrder`` names, then any other)."""
    sheets = body.get("sheets") or {}
    order = [i for i in body.get("sheetOrder") or [] if i in sheets]
    order += [i for i in sheets if i not in order]
    return [sheets[i] for i in order if isinstance(sheets[i], dict)]


def choose_sheet(body: dict[str, Any], sheet: str | None) -> dict[str, Any] | None:
    """The sheet ``sheet`` names (its id, else its name); the first when None; None when
    no sheet matches (or the workbook has none and one was named)."""
    sheets = sheets_of(body)
    if sheet is None:
        return sheets[0] if sheets else {}
    for s in sheets:
        if s.get("id") == sheet:
            return s
    for s in sheets:
        if s.get("name") == sheet:
            return s
    return None


def _rows(sheet: dict[str, Any]) -> list[tuple[int, dict[int, dict[str, Any]]]]:
    out = []
    for r, row in (sheet.get("cellData") or {}).items():
        if isinstance(row, dict) and str(r).isdigit():
            out.append((int(r), {int(c): v for c, v in row.items()
                                 if str(c).isdigit() and isinstance(v, dict)}))
    return sorted(out, key=lambda item: item[0])


def _typed(cell: dict[str, Any]) -> Any:
    """The cell's value as its type says (a number stored as text stays text)."""
    v, t = cell.get("v"), cell.get("t")
    if v is None:
        return None
    if t in (CellType.STRING, CellType.FORCE_STRING):
        return str(v)
    if t == CellType.BOOLEAN:
        return bool(v) if not isinstance(v, str) else v.strip().upper() in ("TRUE", "1")
    if t == CellType.NUMBER and not isinstance(v, bool):
        try:
            return v if isinstance(v, int | float) else float(v)
        except ValueError:
            return str(v)
    return v if isinstance(v, str | int | float | bool) else str(v)


_BAD_SHEET_NAME = re.compile(r"[\[\]:*?/\\]")


def _sheet_names(sheets: list[dict[str, Any]]) -> Iterator[str]:
    """Excel-valid, distinct sheet names (at most 31 characters, none of ``[]:*?/\\``)."""
    seen: set[str] = set()
    for n, s in enumerate(sheets, start=1):
        base = _BAD_SHEET_NAME.sub("_", str(s.get("name") or "")).strip("'")[:31] \
            or f"Sheet{n}"
        name, k = base, 1
        while name.lower() in seen:
            k += 1
            name = f"{base[:31 - len(str(k)) - 1]}~{k}"
        seen.add(name.lower())
        yield name


_RGB = re.compile(r"\A#[0-9A-Fa-f]{6}\Z")
#: Characters XML 1.0 cannot carry (python-docx and python-pptx refuse them).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _colour(value: Any) -> bool:
    """Whether ``value`` is ``{"rgb": "#RRGGBB"}`` (another colour is left out)."""
    return isinstance(value, dict) and isinstance(value.get("rgb"), str) \
        and bool(_RGB.match(value["rgb"]))


def xml_text(text: str) -> str:
    return _NOT_XML.sub("", text)


def _format_props(style: dict[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = {}
    if style.get("bl"):
        props["bold"] = True
    if style.get("it"):
        props["italic"] = True
    if (style.get("ul") or {}).get("s"):
        props["underline"] = 1
    if isinstance(style.get("fs"), int | float):
        props["font_size"] = style["fs"]
    if isinstance(style.get("ff"), str):
        props["font_name"] = style["ff"]
    if _colour(style.get("cl")):
        props["font_color"] = style["cl"]["rgb"]
    if _colour(style.get("bg")):
        props["bg_color"] = style["bg"]["rgb"]
        props["pattern"] = 1
    if isinstance((style.get("n") or {}).get("pattern"), str):
        props["num_format"] = style["n"]["pattern"]
    return props


def write_xlsx(body: dict[str, Any], path: str) -> None:
    """The workbook, every sheet, in constant-memory mode (each sheet's rows in order)."""
    import xlsxwriter  # loaded on first use: only a worker that exports needs it

    wb = xlsxwriter.Workbook(path, {"constant_memory": True, "strings_to_numbers": False,
                                    "strings_to_formulas": False, "strings_to_urls": False})
    styles = body.get("styles") or {}
    formats: dict[str, Any] = {}

    def fmt(style_id: Any) -> Any:
        if not isinstance(style_id, str) or not isinstance(styles.get(style_id), dict):
            return None
        if style_id not in formats:
            props = _format_props(styles[style_id])
            formats[style_id] = wb.add_format(props) if props else None
        return formats[style_id]

    try:
        sheets = sheets_of(body) or [{"name": "Sheet1"}]
        for sheet, name in zip(sheets, _sheet_names(sheets), strict=True):
            ws = wb.add_worksheet(name)
            for r, cells in _rows(sheet):
                for c in sorted(cells):
                    _write_cell(ws, r, c, cells[c], fmt)
            for m in _merges(sheet):
                # ``merge_range`` would write the range's cells, which constant memory
                # drops once their rows are flushed: the range is declared as it records
                # it (its top-left cell was written with its row).
                ws.merge.append(m)
    finally:
        wb.close()


def _merges(sheet: dict[str, Any]) -> list[list[int]]:
    """The sheet's merged ranges (of two cells or more), each ``[r0, c0, r1, c1]``,
    without overlaps (a range overlapping an earlier one is dropped, as Excel would
    refuse the file)."""
    taken: list[list[int]] = []
    for m in sheet.get("mergeData") or []:
        if not isinstance(m, dict):
            continue
        box = [m.get("startRow"), m.get("startColumn"), m.get("endRow"), m.get("endColumn")]
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in box):
            continue
        r0, c0, r1, c1 = (int(v) for v in box)  # type: ignore[arg-type]
        r0, r1, c0, c1 = min(r0, r1), max(r0, r1), min(c0, c1), max(c0, c1)
        if (r0, c0) == (r1, c1) or r1 > 1048575 or c1 > 16383 or any(
                r0 <= t[2] and t[0] <= r1 and c0 <= t[3] and t[1] <= c1 for t in taken):
            continue
        taken.append([r0, c0, r1, c1])
    return taken


def _write_cell(ws: Any, r: int, c: int, cell: dict[str, Any],
                fmt: Callable[[Any], Any]) -> None:
    value, style = _typed(cell), fmt(cell.get("s"))
    formula = cell.get("f")
    if isinstance(formula, str) and formula:
        ws.write_formula(r, c, formula if formula.startswith("=") else "=" + formula, style,
                         "" if value is None else value)
    elif isinstance(value, bool):
        ws.write_boolean(r, c, value, style)
    elif isinstance(value, int | float):
        ws.write_number(r, c, value, style)
    elif isinstance(value, str):
        ws.write_string(r, c, value, style)
    elif style is not None:
        ws.write_blank(r, c, None, style)


def _csv_text(cell: dict[str, Any] | None) -> str:
    if cell is None:
        return ""
    value = _typed(cell)
    if value is None:
        formula = cell.get("f")
        return formula if isinstance(formula, str) else ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 53:
        return str(int(value))
    return str(value)


def write_csv(sheet: dict[str, Any], path: str) -> None:
    """One sheet's used range as UTF-8 CSV (values; a formula's last value, else its
    text), rows in order, empty rows kept."""
    rows = _rows(sheet)
    width = max((max(cells) + 1 for _, cells in rows if cells), default=0)
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        at = 0
        for r, cells in rows:
            for _ in range(at, r):
                w.writerow([])
            w.writerow([_csv_text(cells.get(c)) for c in range(width)])
            at = r + 1


# -- doc and slide ----------------------------------------------------------------------------

DOCX_STYLES: Final[dict[int, str]] = {
    NamedStyle.NORMAL_TEXT: "Normal", NamedStyle.TITLE: "Title",
    NamedStyle.SUBTITLE: "Subtitle", NamedStyle.HEADING_1: "Heading 1",
    NamedStyle.HEADING_2: "Heading 2", NamedStyle.HEADING_3: "Heading 3",
    NamedStyle.HEADING_4: "Heading 4", NamedStyle.HEADING_5: "Heading 5"}


def write_docx(body: dict[str, Any], path: str) -> None:
    """Each paragraph with its named style, its runs bold/italic as styled."""
    import docx  # loaded on first use (as xlsxwriter)

    d = docx.Document()
    d.core_properties.title = xml_text(str(body.get("title") or ""))[:255]
    for runs, named in paragraphs_of(body):
        p = d.add_paragraph(style=DOCX_STYLES.get(named, "Normal"))
        for text, ts in runs:
            run = p.add_run(xml_text(text))
            if ts.get("bl"):
                run.bold = True
            if ts.get("it"):
                run.italic = True
    d.save(path)


def write_pptx(body: dict[str, Any], path: str) -> None:
    """One slide per page: its title, then its text boxes top to bottom."""
    # loaded on first use (as xlsxwriter)
    import pptx
    from pptx.util import Emu  # (with pptx)

    deck = pptx.Presentation()
    deck.core_properties.title = xml_text(str(body.get("title") or ""))[:255]
    layout = deck.slide_layouts[5]  # "Title Only"
    width, height = int(deck.slide_width or 9144000), int(deck.slide_height or 6858000)
    for title, texts in slide_texts(body):
        slide = deck.slides.add_slide(layout)
        if slide.shapes.title is not None:
            slide.shapes.title.text = xml_text(title)
        top, margin = height // 4, width // 16
        step = max(1, (height - top - margin) // max(1, len(texts)))
        for text in texts:
            box = slide.shapes.add_textbox(Emu(margin), Emu(top), Emu(width - 2 * margin),
                                           Emu(step))
            box.text_frame.word_wrap = True
            box.text_frame.text = xml_text(text)
            top += step
    deck.save(path)


def write(unit_type: str, fmt: str, body: dict[str, Any], path: str,
          sheet: str | None = None) -> None:
    """Write ``body`` (a ``unit_type`` document's body) to ``path`` as ``fmt``."""
    if fmt not in FORMATS.get(unit_type, ()):
        raise ValueError(f"a {unit_type} unit does not export to {fmt}")
    if fmt == "xlsx":
        write_xlsx(body, path)
    elif fmt == "csv":
        chosen = choose_sheet(body, sheet)
        if chosen is None:
            raise SheetNotFound(f"no sheet {sheet!r}")
        write_csv(chosen, path)
    elif fmt == "docx":
        write_docx(body, path)
    else:
        write_pptx(body, path)
