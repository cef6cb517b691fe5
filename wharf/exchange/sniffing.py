"""Which format a spooled import file is: content first (the zip magic and the package's
``[Content_Types].xml`` or ODF ``mimetype``; the OLE2 magic of legacy Office files),
then the filename's extension; a zip-based file's unpacked size is checked here, from
its directory, before any parser opens it."""
from __future__ import annotations

import zipfile
from pathlib import Path, PurePath
from typing import BinaryIO, Final

from wharf.exchange.import_errors import CorruptFile, FileTooComplex, Limits, UnsupportedFormat

ZIP_MAGIC: Final = b"PK\x03\x04"
OLE_MAGIC: Final = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
#: The unit type each format imports as.
UNIT_TYPE: Final = {"xlsx": "sheet", "xlsb": "sheet", "ods": "sheet", "xls": "sheet",
                    "csv": "sheet", "tsv": "sheet", "docx": "doc", "doc": "doc",
                    "pptx": "slide", "ppt": "slide"}
# [Content_Types].xml main part types → format (macro-enabled variants read the same;
# their macros are never run: no reader executes anything)
_MAIN_PARTS: Final = (
    ("spreadsheetml.sheet.main", "xlsx"), ("sheet.macroEnabled.main", "xlsx"),
    ("spreadsheetml.template.main", "xlsx"), ("sheet.binary.macroEnabled.main", "xlsb"),
    ("wordprocessingml.document.main", "docx"), ("document.macroEnabled.main", "docx"),
    ("wordprocessingml.template.main", "docx"),
    ("presentationml.presentation.main", "pptx"), ("presentation.macroEnabled.main", "pptx"),
    ("presentationml.slideshow.main", "pptx"))
_OLE_EXTENSIONS: Final = {".xls": "xls", ".xlt": "xls", ".doc": "doc", ".dot": "doc",
                          ".ppt": "ppt", ".pps": "ppt", ".pot": "ppt"}
# the OLE2 streams that name each legacy format (UTF-16LE directory entries)
_OLE_STREAMS: Final = (("Workbook", "xls"), ("Book", "xls"), ("WordDocument", "doc"),
                       ("PowerPoint Document", "ppt"))
_TEXT_EXTENSIONS: Final = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "csv"}
_TYPES_READ: Final = 1 << 20  # bytes of [Content_Types].xml read (it is a few KiB)
_SCAN: Final = 4 << 20  # bytes of an OLE2 file scanned for its stream names


def sniff(path: Path, filename: str, limits: Limits) -> str:
    """The format of the file at ``path`` (a key of :data:`UNIT_TYPE`)."""
    with path.open("rb") as f:
        head = f.read(8)
        if head.startswith(ZIP_MAGIC):
            return _zip_format(path, limits)
        if head == OLE_MAGIC:
            return _ole_format(f, filename)
        f.seek(0)
        sample = f.read(64 * 1024)
    ext = PurePath(filename).suffix.lower()
    if _looks_textual(sample) or (not sample and ext in _TEXT_EXTENSIONS):
        return _TEXT_EXTENSIONS.get(ext, "csv")
    raise UnsupportedFormat(f"{filename!r} is not a spreadsheet, document or presentation "
                            "Wharf imports (XLSX, XLS, XLSB, ODS, CSV, TSV, DOCX, DOC, PPTX, "
                            "PPT)")


def check_unpacked(path: Path, limits: Limits) -> zipfile.ZipFile:
    """The zip at ``path``, open, once the sum of its members' sizes is within the limit
    (a zip bomb is refused before anything inflates it)."""
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise CorruptFile(f"not a readable zip package: {exc}") from None
    total = sum(info.file_size for info in zf.infolist())
    if total > limits.max_unpacked_bytes:
        zf.close()
        raise FileTooComplex(f"the package unpacks to {total} bytes (at most "
                             f"{limits.max_unpacked_bytes})", details={"limit": "unpacked_bytes"})
    return zf


def _zip_format(path: Path, limits: Limits) -> str:
    with check_unpacked(path, limits) as zf:
        names = set(zf.namelist())
        try:
            if "[Content_Types].xml" in names:
                with zf.open("[Content_Types].xml") as member:
                    types = member.read(_TYPES_READ).decode("utf-8", "replace")
                for marker, fmt in _MAIN_PARTS:
                    if marker in types:
                        return fmt
            elif "mimetype" in names:
                with zf.open("mimetype") as member:
                    mime = member.read(256).decode("ascii", "replace").strip()
                if mime == "application/vnd.oasis.opendocument.spreadsheet":
                    return "ods"
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            raise CorruptFile(f"an unreadable zip package: {exc}") from None
    raise UnsupportedFormat("a zip package that is not an XLSX, XLSB, ODS, DOCX or PPTX file")


def _ole_format(f: BinaryIO, filename: str) -> str:
    ext = PurePath(filename).suffix.lower()
    if ext in _OLE_EXTENSIONS:
        return _OLE_EXTENSIONS[ext]
    f.seek(0)
    data = f.read(_SCAN)
    for stream, fmt in _OLE_STREAMS:
        if (stream + "\x00").encode("utf-16-le") in data:
            return fmt
    raise UnsupportedFormat("an OLE2 compound file that is not an XLS, DOC or PPT file")


def _looks_textual(sample: bytes) -> bool:
    if sample.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True  # UTF-16 with its BOM
    if not sample or b"\x00" in sample:
        return False
    control = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13))
    return control * 100 <= len(sample)
