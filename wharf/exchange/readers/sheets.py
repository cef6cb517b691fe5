"""Spreadsheets to a ``sheet`` unit: XLSX, XLSB, XLS and ODS through python-calamine, CSV
and TSV through :mod:`csv` with the encoding guessed by charset-normalizer.

What calamine gives: each sheet's values with their types (numbers, text, booleans,
dates and times, durations) and, for XLSX and XLS, the merged ranges. What it does not:
formulas, cell styles and number formats (dates get a date style of ours), column
widths, comments. For XLSX, :mod:`wharf.exchange.readers.xlsx_extras` adds the formulas
and the style subset from the sheet XML (only for sheets the used-range scan saw them in)."""
from __future__ import annotations

import csv
import datetime as dt
import json
import re
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import msgspec
from python_calamine import CalamineError, CalamineWorkbook, PasswordError, SheetTypeEnum

from wharf.exchange import formats
from wharf.exchange.import_errors import CorruptFile, FileTooComplex, Limits, UnsupportedFormat
from wharf.exchange.readers import xlsx_extras

_EPOCH: Final = dt.datetime(1899, 12, 30)  # Excel's day 0 (1900 date system)
#: The styles imported dates, times and durations get (Excel number formats).
DATE_STYLES: Final = {"date": {"n": {"pattern": "yyyy-mm-dd"}},
                      "datetime": {"n": {"pattern": "yyyy-mm-dd hh:mm:ss"}},
                      "time": {"n": {"pattern": "hh:mm:ss"}},
                      "duration": {"n": {"pattern": "[h]:mm:ss"}}}
_NUMBER: Final = re.compile(r"[+-]?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_SAMPLE: Final = 1 << 20  # bytes read to guess the encoding and the delimiter
_SAFE_INT: Final = 2 ** 53
# a cell's reference in a worksheet part (``<c r="AB12" …>``, any prefix, any attribute
# order): its column letters and its row number, by two patterns that start with a literal
# (the regex engine then skips to each ``r="`` at memchr speed). They match any attribute
# ending in ``r`` with a reference-like value, and text holding one: only ever a larger
# area, never a smaller one.
_REF_COLUMN: Final = re.compile(rb'r="([A-Za-z]{1,3})[0-9]')
_REF_ROW: Final = re.compile(rb'r="[A-Za-z]{1,3}([0-9]{1,7})"')
# a cell format other than the default (with a formula element: the sheet needs xlsx_extras)
_STYLED: Final = re.compile(rb'\ss="[1-9]')
_SCAN_CHUNK: Final = 1 << 20
_OVERLAP: Final = 512
_T_TEXT: Final = int(formats.CellType.STRING)
_T_NUMBER: Final = int(formats.CellType.NUMBER)
_T_BOOLEAN: Final = int(formats.CellType.BOOLEAN)
#: A sheet's cells: by row then column, or already encoded as that JSON object.
CellData = dict[str, dict[str, dict[str, Any]]] | msgspec.Raw
_ENCODER: Final = msgspec.json.Encoder()
_BATCH: Final = 256  # rows encoded at once


def read_workbook(path: Path, name: str, limits: Limits, fmt: str = "xlsx", *,
                  encoded: bool = False,
                  scanned: Callable[[], set[str]] | None = None) -> dict[str, Any]:
    """XLSX, XLSB, XLS or ODS at ``path`` as a workbook body. ``encoded``: each sheet's
    ``cellData`` as its compact JSON (``msgspec.Raw``) where no formula or style pass
    needs it as dicts (see :func:`_cells`), for a caller that only encodes the body.
    ``scanned``: for an XLSX whose used ranges someone else checks
    (:func:`check_used_ranges`, in the process that started this one and kills it if
    they are too large), what that check found, asked for once calamine has loaded
    the first sheet and before its cells are read."""
    flagged: set[str] | None = None
    if fmt != "xlsx":
        flagged = set()
    elif scanned is None:
        flagged = check_used_ranges(path, limits)
    parts: dict[str, str] = {}
    xfs: dict[int, dict[str, Any]] = {}
    used_xfs: set[int] = set()
    try:
        wb = CalamineWorkbook.from_path(str(path))
    except PasswordError:
        raise UnsupportedFormat("the workbook is password-protected") from None
    except (CalamineError, OSError, ValueError) as exc:
        raise _unreadable(exc, "the workbook") from None
    with wb:
        wanted = [i for i, meta in enumerate(wb.sheets_metadata)
                  if meta.typ == SheetTypeEnum.WorkSheet]
        limits.sheets(len(wanted))
        sheets: list[dict[str, Any]] = []
        used: set[str] = set()
        cells = 0
        for n, index in enumerate(wanted, start=1):
            try:
                sheet = wb.get_sheet_by_index(index)
                if flagged is None:
                    assert scanned is not None
                    flagged = scanned()
                if flagged and n == 1:
                    parts, xfs = _extras_index(path)
                extras = parts.get(sheet.name) in flagged
                cell_data, count, height, width = _cells(sheet, limits, cells, used,
                                                         encoded=encoded and not extras)
                merges = sheet.merged_cell_ranges or []
                extent: tuple[int, int] | None = (height, width)
                if extras:
                    assert isinstance(cell_data, dict)
                    _add_extras(path, parts[sheet.name], cell_data, xfs, used_xfs, limits)
                    extent = None  # a formula without a value may add a cell: counted
            except (CalamineError, ValueError) as exc:
                raise _unreadable(exc, f"sheet {n}") from None
            cells += count
            ranges = [formats.merge_range(a[0], a[1], b[0], b[1]) for a, b in merges]
            sheets.append(formats.worksheet(
                f"s{n}", limits.text(sheet.name, "a sheet name"), cell_data, ranges,
                row_count=max((m["endRow"] + 1 for m in ranges), default=0),
                column_count=max((m["endColumn"] + 1 for m in ranges), default=0),
                extent=extent))
    return formats.workbook(name, sheets, {**{k: DATE_STYLES[k] for k in sorted(used)},
                                           **{f"x{i}": xfs[i] for i in sorted(used_xfs)}})


def _extras_index(path: Path) -> tuple[dict[str, str], dict[int, dict[str, Any]]]:
    try:
        with zipfile.ZipFile(path) as zf:
            return xlsx_extras.sheet_parts(zf), xlsx_extras.read_styles(zf)
    except (SyntaxError, ValueError, KeyError, IndexError, zipfile.BadZipFile, OSError,
            zlib.error) as exc:  # lxml's parse errors are SyntaxErrors
        raise CorruptFile(f"the workbook's styles cannot be read: {exc}") from None


def _add_extras(path: Path, part: str, cell_data: dict[str, dict[str, dict[str, Any]]],
                xfs: dict[int, dict[str, Any]], used: set[int], limits: Limits) -> None:
    with zipfile.ZipFile(path) as zf:
        extras = xlsx_extras.read_sheet(zf, part, set(xfs), limits)
    xlsx_extras.merge(cell_data, extras, used)


def _unreadable(exc: Exception, what: str) -> FileTooComplex | CorruptFile:
    if "cell limit exceeded" in str(exc).lower():  # calamine's own limit (ODS)
        return FileTooComplex(f"{what}: {exc}", details={"limit": "cells"})
    return CorruptFile(f"{what} cannot be read: {exc}")


def check_used_ranges(path: Path, limits: Limits) -> set[str]:
    """Refuse an XLSX whose sheets' used ranges (from the first to the last cell, as
    calamine allocates them: a dense grid) exceed the area limit, before its cells are
    read: a sheet of two cells at A1 and XFD1048576 would otherwise ask for 512 GiB (in
    process: before calamine loads the sheets; an import runs it in the worker while its
    reader child, under its address-space limit, loads the first sheet, and kills the
    child when the ranges are too large). Streams each worksheet part (its size is
    already bounded by the unpacked-size check) for the cells' ``r`` references. Returns
    the parts that hold a formula or a non-default cell format (for :mod:`xlsx_extras`)."""
    flagged: set[str] = set()
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            if "worksheets/" not in info.filename or not info.filename.endswith(".xml"):
                continue
            area, extras = _used_area(zf, info)
            if extras:
                flagged.add(info.filename)
            if area > limits.max_area:
                raise FileTooComplex(
                    f"a sheet's used range spans {area} cells (at most {limits.max_area})",
                    details={"limit": "used_range"})
    return flagged


def _used_area(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple[int, bool]:
    """The used range's area: the extremes of the column letters and the row numbers of
    the cells' references, collected by C-speed ``findall`` into a set per chunk (a row
    or a column repeated there is one entry; no Python loop per cell) and reduced to the
    extremes so far before the next chunk: the memory stays a chunk's whatever the part
    holds (a part of ten million distinct rows would otherwise keep ten million)."""
    low_row = low_col = 1 << 62
    high_row = high_col = -1
    tail = b""
    extras = False
    try:
        with zf.open(info) as part:
            while chunk := part.read(_SCAN_CHUNK):
                data = tail + chunk
                extras = extras or _needs_extras(data)
                columns = set(_REF_COLUMN.findall(data))
                if columns:
                    indices = [_column_index(c) for c in columns]
                    low_col, high_col = min(low_col, *indices), max(high_col, *indices)
                rows = set(_REF_ROW.findall(data))
                if rows:
                    numbers = list(map(int, rows))
                    low_row, high_row = min(low_row, *numbers), max(high_row, *numbers)
                tail = data[-_OVERLAP:]
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, zlib.error) as exc:
        raise CorruptFile(f"an unreadable worksheet: {exc}") from None
    if high_row < 0:
        return 0, extras
    return (high_row - low_row + 1) * (high_col - low_col + 1), extras


def _needs_extras(data: bytes) -> bool:
    """Whether a chunk of sheet XML has a formula (``<f>``, ``<f …>``, any prefix) or a
    non-default cell format: plain substring searches first (memchr speed; a regex over
    40 MB costs seconds), the regex only where an ``s`` attribute is."""
    return b"f>" in data or b"<f " in data or b':f ' in data or (
        b' s="' in data and _STYLED.search(data) is not None)


def _column_index(letters: bytes) -> int:
    col = 0
    for ch in letters.upper():
        col = col * 26 + ch - 64
    return col


def _cells(sheet: Any, limits: Limits, before: int, used: set[str], *,
           encoded: bool = False) -> tuple[CellData, int, int, int]:
    """A sheet's non-empty cells by row and column (0-based, as in the file), their count,
    and the rows and the columns they span. calamine's ``iter_rows`` yields from row 0 or
    from the data's first row, and a row from column 0 or from the data's first column:
    the lengths tell which. The common values (text, numbers, booleans) are made inline,
    with the column keys made once per sheet: a million cells are a million loop turns.

    ``encoded``: the cells as their compact JSON object (``msgspec.Raw``, the text the
    dicts would encode to), encoded every :data:`_BATCH` rows and those rows' dicts
    dropped: the same memory is reused instead of a million dicts kept (a third of the
    time and of the memory, most of it the kernel's page faults)."""
    start, end = sheet.start, sheet.end
    if start is None or end is None:
        return (msgspec.Raw(b"{}") if encoded else {}), 0, 0, 0
    rows: dict[int, dict[str, dict[str, Any]]] = {}
    out = bytearray()
    count = 0
    yielded = 0
    columns = 0
    last_row = -1
    room = limits.max_cells - before  # cells this sheet may still add
    longest = limits.max_string_length
    keys = [str(c) for c in range(end[1] + 1)]  # calamine's rows never pass its last column
    widths = {key: c + 1 for c, key in enumerate(keys)}
    full, from_start = len(keys), keys[start[1]:]
    text_t, number_t, boolean_t = _T_TEXT, _T_NUMBER, _T_BOOLEAN
    for i, row in enumerate(sheet.iter_rows()):
        yielded += 1
        cells: dict[str, dict[str, Any]] = {}
        for key, value in zip(keys if len(row) == full else from_start, row):
            kind = type(value)
            if kind is str:
                if not value:
                    continue
                cell = {"v": value, "t": text_t} if len(value) <= longest else \
                    _cell(value, limits, used)
            elif kind is float:
                cell = {"v": int(value) if -_SAFE_INT < value < _SAFE_INT and value.is_integer()
                        else value, "t": number_t}
            elif value is None:
                continue
            elif kind is bool:
                cell = {"v": value, "t": boolean_t}
            else:
                cell = _cell(value, limits, used)
            cells[key] = cell
        if cells:
            count += len(cells)
            if count > room:
                limits.cells(before + count)
            width = widths[next(reversed(cells))]
            if width > columns:
                columns = width
            last_row = i
            rows[i] = cells
            if encoded and len(rows) >= _BATCH:
                _encode_rows(rows, out)
                rows = {}
    row_at = 0 if yielded == end[0] + 1 else start[0]
    height = last_row + row_at + 1 if last_row >= 0 else 0
    if not encoded:
        return {str(r + row_at): cells for r, cells in rows.items()}, count, height, columns
    _encode_rows(rows, out)
    out += b"}" if out else b"{}"
    if row_at:  # (not what this calamine does: its rows start at row 0)
        moved = {str(int(r) + row_at): cells for r, cells in json.loads(out).items()}
        return msgspec.Raw(_row_encoder(moved)), count, height, columns
    return msgspec.Raw(out), count, height, columns


def _encode_rows(rows: dict[int, dict[str, dict[str, Any]]], out: bytearray) -> None:
    """Rows (by their index) appended to the JSON object ``out`` holds, still open."""
    if not rows:
        return
    at = len(out)
    try:
        _ENCODER.encode_into(rows, out, -1)
    except (TypeError, ValueError, OverflowError):  # (a lone surrogate: escaped)
        del out[at:]
        out += json.dumps(rows, separators=(",", ":")).encode("utf-8")
    del out[-1]  # its "}": the object goes on
    if at:
        out[at] = ord(",")  # its "{"


def _row_encoder(value: Any) -> bytes:
    try:
        return _ENCODER.encode(value)
    except (TypeError, ValueError, OverflowError):
        return json.dumps(value, separators=(",", ":")).encode("utf-8")


def _cell(value: Any, limits: Limits, used: set[str]) -> dict[str, Any]:
    if isinstance(value, bool):
        return formats.cell(value)
    if isinstance(value, float):
        return formats.cell(_number(value))
    if isinstance(value, int):
        return formats.cell(value)
    if isinstance(value, str):
        return formats.cell(limits.text(value, "a cell"))
    serial, style = _serial(value)
    used.add(style)
    return formats.cell(serial, style=style)


def _number(value: float) -> int | float:
    return int(value) if value.is_integer() and abs(value) < _SAFE_INT else value


def _serial(value: Any) -> tuple[int | float, str]:
    """A date, time or duration as an Excel serial number, with its style."""
    if isinstance(value, dt.datetime):
        delta = value.replace(tzinfo=None) - _EPOCH
        return _number(delta.total_seconds() / 86400), "datetime"
    if isinstance(value, dt.date):
        return (value - _EPOCH.date()).days, "date"
    if isinstance(value, dt.time):
        seconds = value.hour * 3600 + value.minute * 60 + value.second + value.microsecond / 1e6
        return _number(seconds / 86400), "time"
    if isinstance(value, dt.timedelta):
        return _number(value.total_seconds() / 86400), "duration"
    raise CorruptFile(f"an unexpected cell value of type {type(value).__name__}")


# -- CSV and TSV ------------------------------------------------------------------------------

def read_delimited(path: Path, fmt: str, name: str, limits: Limits,
                   sheet_name: str = "Sheet1") -> dict[str, Any]:
    """CSV or TSV at ``path`` as a one-sheet workbook body (its sheet ``sheet_name``, cut
    to Excel's 31 characters): numbers become numbers (a leading zero keeps text text),
    everything else stays text."""
    with path.open("rb") as f:
        sample = f.read(_SAMPLE)
    encoding = _encoding(sample, len(sample) < _SAMPLE)
    delimiter = "\t" if fmt == "tsv" else _delimiter(sample.decode(encoding, "replace"))
    out: dict[str, dict[str, dict[str, Any]]] = {}
    count = 0
    try:
        with path.open(encoding=encoding, newline="") as text:
            for r, row in enumerate(csv.reader(text, delimiter=delimiter)):
                for c, field in enumerate(row):
                    if field == "":
                        continue
                    count += 1
                    if count > limits.max_cells:
                        limits.cells(count)
                    out.setdefault(str(r), {})[str(c)] = _field(field, limits)
    except UnicodeDecodeError as exc:
        raise CorruptFile(f"the text is not valid {encoding}: {exc.reason}") from None
    except csv.Error as exc:
        if "field larger than field limit" in str(exc):
            raise FileTooComplex(str(exc), details={"limit": "string_length"}) from None
        raise CorruptFile(f"not readable as delimited text: {exc}") from None
    return formats.workbook(name, [formats.worksheet("s1", sheet_name[:31] or "Sheet1", out)])


def _field(text: str, limits: Limits) -> dict[str, Any]:
    if len(text) <= 40 and _NUMBER.fullmatch(text):
        if "." in text or "e" in text or "E" in text:
            number = float(text)
            if number == number and abs(number) != float("inf"):
                return formats.cell(number)
        else:
            value = int(text)
            if abs(value) < _SAFE_INT:
                return formats.cell(value)
        return {"v": text, "t": int(formats.CellType.FORCE_STRING)}
    return formats.cell(limits.text(text, "a field"))


def _encoding(sample: bytes, whole: bool) -> str:
    """UTF-8 (with or without its BOM), UTF-16 by its BOM, else charset-normalizer's
    guess (Latin-1 and the other single-byte encodings)."""
    if sample.startswith(b"\xef\xbb\xbf"):
        return "utf-8-sig"
    if sample.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    try:
        sample.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError as exc:
        if not whole and exc.start >= len(sample) - 3:
            return "utf-8"  # a character cut by the end of the sample
    # loaded on first use (its models take a while): only non-UTF-8 imports need it
    from charset_normalizer import from_bytes
    matches = from_bytes(sample)
    best = matches.best()
    if best is None:
        raise CorruptFile("the text's encoding cannot be recognised")
    # Short Western text fits several single-byte code pages equally well: among the
    # equally good, Windows-1252 (Latin-1's superset) wins, as spreadsheet programs do.
    for match in matches:
        if (match.chaos, match.coherence) == (best.chaos, best.coherence) \
                and "cp1252" in match.could_be_from_charset:
            try:
                sample.decode("cp1252")
                return "cp1252"
            except UnicodeDecodeError:
                return "latin-1"
    return str(best.encoding)


def _delimiter(sample: str) -> str:
    lines = sample.splitlines()[:50]
    try:
        return csv.Sniffer().sniff("\n".join(lines), delimiters=",;\t|").delimiter
    except csv.Error:
        return ","
