"""What an XLSX holds that calamine does not expose: formulas and the cell styles of the
subset ``docs/units.md`` defines (bold, italic, underline, size, font, text and fill
colour as RGB, number format), read in a streaming pass over the sheet parts (lxml
``iterparse``, each cell element dropped once read) and merged into calamine's values.

Bounded like the rest: it runs only on sheet parts the used-range scan saw a formula or
a style in (a plain sheet costs nothing more), after the unpacked-size check; it keeps
only the cells that carry one (never more than the cell limit); a formula longer than
:data:`MAX_FORMULA_LENGTH` (Excel's own limit) is ``file_too_complex``; the parser
resolves no entities, fetches nothing and keeps lxml's depth and size guards.

A shared formula is written once, in its first cell (``<f t="shared" ref="B2:B9"
si="0">A2*2</f>``); the other cells of its range say only ``<f t="shared" si="0"/>``.
Each of those gets the master's formula with its relative references moved by the
cell's offset (``A3*2`` in B3), by openpyxl's formula translator
(:class:`openpyxl.formula.translate.Translator`, loaded on the first shared formula); a
reference moved off the grid (``TranslatorError``) or a formula the tokenizer cannot read
leaves that cell its value only."""
from __future__ import annotations

import posixpath
import zipfile
from typing import Any, Final

from lxml import etree  # type: ignore[import-untyped]  # no stubs in the dev set

from wharf.exchange.import_errors import CorruptFile, FileTooComplex, Limits

MAX_FORMULA_LENGTH: Final = 8192  # characters, as Excel allows
_MAIN: Final = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_R_ID: Final = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_REL: Final = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"
_TRANSLATORS: Final = 256  # shared formulas' translators kept at once (each tokenized)
_SMALL_PART: Final = 16 << 20  # workbook.xml, its rels and styles.xml are read whole
#: Excel's built-in number formats (the ones not stored in styles.xml)
BUILTIN_FORMATS: Final = {
    1: "0", 2: "0.00", 3: "#,##0", 4: "#,##0.00", 9: "0%", 10: "0.00%", 11: "0.00E+00",
    12: "# ?/?", 13: "# ??/??", 14: "mm-dd-yy", 15: "d-mmm-yy", 16: "d-mmm", 17: "mmm-yy",
    18: "h:mm AM/PM", 19: "h:mm:ss AM/PM", 20: "h:mm", 21: "h:mm:ss", 22: "m/d/yy h:mm",
    37: "#,##0 ;(#,##0)", 38: "#,##0 ;[Red](#,##0)", 39: "#,##0.00;(#,##0.00)",
    40: "#,##0.00;[Red](#,##0.00)", 45: "mm:ss", 46: "[h]:mm:ss", 47: "mmss.0",
    48: "##0.0E+0", 49: "@"}

Extras = dict[tuple[int, int], tuple[str | None, int]]  # (row, col) → (formula, xf index)


def _parser() -> etree.XMLParser:
    return etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)


def _xml(zf: zipfile.ZipFile, name: str) -> Any:
    info = zf.getinfo(name)
    if info.file_size > _SMALL_PART:
        raise FileTooComplex(f"{name} is {info.file_size} bytes", details={"limit": "part_size"})
    return etree.fromstring(zf.read(info), _parser())


def sheet_parts(zf: zipfile.ZipFile) -> dict[str, str]:
    """Each worksheet's name → its part's path in the package."""
    names = set(zf.namelist())
    book = "xl/workbook.xml"
    if "_rels/.rels" in names:
        for rel in _xml(zf, "_rels/.rels").iter(_REL):
            if rel.get("Type", "").endswith("/officeDocument"):
                book = _resolve("", rel.get("Target", book))
    rels_name = posixpath.join(posixpath.dirname(book), "_rels",
                               posixpath.basename(book) + ".rels")
    if book not in names or rels_name not in names:
        return {}
    targets = {rel.get("Id"): _resolve(posixpath.dirname(book), rel.get("Target", ""))
               for rel in _xml(zf, rels_name).iter(_REL)
               if rel.get("TargetMode") != "External"}
    out: dict[str, str] = {}
    for sheet in _xml(zf, book).iter(f"{_MAIN}sheet"):
        target = targets.get(sheet.get(_R_ID))
        if target in names:
            out[sheet.get("name", "")] = target
    return out


def _resolve(base: str, target: str) -> str:
    if target.startswith("/"):
        return posixpath.normpath(target.lstrip("/"))
    return posixpath.normpath(posixpath.join(base, target))


def read_styles(zf: zipfile.ZipFile) -> dict[int, dict[str, Any]]:
    """Each cell format (``cellXfs`` index) that differs from the default, as a style of
    the subset (size and font only where they differ from the workbook's default font)."""
    if "xl/styles.xml" not in zf.namelist():
        return {}
    root = _xml(zf, "xl/styles.xml")
    numfmts = {int(n.get("numFmtId", "0")): n.get("formatCode", "")
               for n in root.iter(f"{_MAIN}numFmt")}
    fonts = [_font(f) for f in root.iterfind(f"{_MAIN}fonts/{_MAIN}font")]
    fills = [_fill(f) for f in root.iterfind(f"{_MAIN}fills/{_MAIN}fill")]
    default = fonts[0] if fonts else {}
    out: dict[int, dict[str, Any]] = {}
    for i, xf in enumerate(root.iterfind(f"{_MAIN}cellXfs/{_MAIN}xf")):
        style: dict[str, Any] = {}
        font = fonts[int(xf.get("fontId", "0"))] if int(xf.get("fontId", "0")) < len(fonts) \
            else {}
        style.update({k: v for k, v in font.items() if default.get(k) != v or k in
                      ("bl", "it", "ul", "cl")})
        fill_id = int(xf.get("fillId", "0"))
        if fill_id < len(fills) and fills[fill_id]:
            style["bg"] = fills[fill_id]
        num = int(xf.get("numFmtId", "0"))
        pattern = numfmts.get(num) or BUILTIN_FORMATS.get(num)
        if pattern and pattern != "General":
            style["n"] = {"pattern": pattern}
        if style:
            out[i] = style
    return out


def _rgb(element: Any) -> dict[str, str] | None:
    rgb = element.get("rgb") if element is not None else None
    if rgb and len(rgb) in (6, 8) and all(ch in "0123456789abcdefABCDEF" for ch in rgb):
        return {"rgb": "#" + rgb[-6:].upper()}
    return None  # theme and indexed colours are not in the subset


def _font(font: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for tag, key in (("b", "bl"), ("i", "it")):
        flag = font.find(f"{_MAIN}{tag}")
        if flag is not None and flag.get("val", "1") not in ("0", "false"):
            out[key] = 1
    underline = font.find(f"{_MAIN}u")
    if underline is not None and underline.get("val", "single") != "none":
        out["ul"] = {"s": 1}
    size = font.find(f"{_MAIN}sz")
    if size is not None:
        try:
            points = float(size.get("val", ""))
            out["fs"] = int(points) if points.is_integer() else points
        except ValueError:
            pass
    name = font.find(f"{_MAIN}name")
    if name is not None and name.get("val"):
        out["ff"] = name.get("val")
    colour = _rgb(font.find(f"{_MAIN}color"))
    if colour:
        out["cl"] = colour
    return out


def _fill(fill: Any) -> dict[str, str] | None:
    pattern = fill.find(f"{_MAIN}patternFill")
    if pattern is None or pattern.get("patternType") != "solid":
        return None
    return _rgb(pattern.find(f"{_MAIN}fgColor"))


class SharedFormulas:
    """A sheet's shared formulas by their ``si``: the master's formula and position, and
    its translator (made on the first dependent; the last :data:`_TRANSLATORS` kept)."""

    def __init__(self) -> None:
        self.masters: dict[str, tuple[str, str]] = {}  # si → (formula, A1 reference)
        self.translators: dict[str, Any] = {}

    def master(self, si: str, formula: str, row: int, col: int) -> None:
        self.masters[si] = (formula, reference(row, col))
        self.translators.pop(si, None)

    def dependent(self, si: str, row: int, col: int) -> str | None:
        """The master's formula as it reads at (row, col), or None (no master seen, or
        not translatable)."""
        if si not in self.masters:
            return None
        # loaded on the first shared formula (openpyxl's package is slow to import)
        from openpyxl.formula.tokenizer import TokenizerError
        from openpyxl.formula.translate import Translator, TranslatorError  # (as above)
        try:
            translator = self.translators.get(si)
            if translator is None:
                if len(self.translators) >= _TRANSLATORS:  # bounded: a hostile file may
                    self.translators.clear()  # have a master per cell
                formula, origin = self.masters[si]
                translator = self.translators[si] = Translator("=" + formula, origin=origin)
            text: str = translator.translate_formula(reference(row, col))
        except (TranslatorError, TokenizerError, ValueError, IndexError):
            return None
        return text[1:] if text.startswith("=") else text


def reference(row: int, col: int) -> str:
    """A 0-based (row, column) as an A1 reference."""
    letters = ""
    col += 1
    while col:
        col, rest = divmod(col - 1, 26)
        letters = chr(65 + rest) + letters
    return f"{letters}{row + 1}"


def read_sheet(zf: zipfile.ZipFile, part: str, styled: set[int], limits: Limits) -> Extras:
    """The cells of ``part`` with a formula (a shared formula's dependents translated)
    or one of the ``styled`` cell formats."""
    out: Extras = {}
    shared = SharedFormulas()
    row_at, col_at = -1, -1
    try:
        with zf.open(part) as stream:
            for _, el in etree.iterparse(stream, events=("end",),
                                         tag=(f"{_MAIN}c", f"{_MAIN}row"),
                                         resolve_entities=False, no_network=True):
                if el.tag == f"{_MAIN}row":
                    el.clear()
                    while el.getprevious() is not None:
                        del el.getparent()[0]
                    continue
                row_at, col_at = _position(el, row_at, col_at)
                xf = int(el.get("s") or 0)
                f = el.find(f"{_MAIN}f")
                formula = f.text if f is not None and f.text else None
                if f is not None and f.get("t") == "shared" and f.get("si") is not None:
                    if formula is not None:
                        shared.master(f.get("si"), formula, row_at, col_at)
                    else:
                        formula = shared.dependent(f.get("si"), row_at, col_at)
                if formula is not None and len(formula) > MAX_FORMULA_LENGTH:
                    raise FileTooComplex(
                        f"a formula of {len(formula)} characters (at most "
                        f"{MAX_FORMULA_LENGTH})", details={"limit": "formula_length"})
                if formula is not None or xf in styled:
                    out[(row_at, col_at)] = (formula, xf if xf in styled else 0)
                    if len(out) > limits.max_cells:
                        limits.cells(len(out))
                el.clear()
    except (etree.XMLSyntaxError, ValueError, KeyError, zipfile.BadZipFile, OSError) as exc:
        raise CorruptFile(f"an unreadable worksheet: {exc}") from None
    return out


def _position(el: Any, row_at: int, col_at: int) -> tuple[int, int]:
    """The cell's 0-based (row, column): from its ``r``, else after the previous cell
    (a row's own ``r`` when it has one)."""
    ref = el.get("r")
    if ref:
        letters = ref.rstrip("0123456789")
        col = 0
        for ch in letters:
            col = col * 26 + ord(ch.upper()) - 64
        return int(ref[len(letters):]) - 1, col - 1
    parent = el.getparent()
    row = int(parent.get("r")) - 1 if parent is not None and parent.get("r") else row_at
    return row, (col_at + 1 if row == row_at else 0)


def merge(cell_data: dict[str, dict[str, dict[str, Any]]], extras: Extras,
          used: set[int]) -> None:
    """``extras`` into calamine's cells: a formula (``=`` first) and the file's style
    (``x<index>``, replacing a date style of ours) on cells with a value; a formula
    without a cached value becomes a cell of its own. Empty styled cells are left out."""
    for (r, c), (formula, xf) in extras.items():
        row = cell_data.get(str(r))
        cell = row.get(str(c)) if row is not None else None
        if cell is None:
            if formula is None:
                continue
            cell = cell_data.setdefault(str(r), {}).setdefault(str(c), {})
        if formula is not None:
            cell["f"] = "=" + formula
        if xf:
            cell["s"] = f"x{xf}"
            used.add(xf)
