"""The import's pieces without the API: format sniffing, and the LibreOffice path's
plumbing (a private profile, the time limit, reading its output) with a stand-in
``soffice`` script: it takes the branches a real LibreOffice does not take on demand (an
exit without output, a conversion past the time limit). Real DOC and PPT conversions
through LibreOffice are in ``test_legacy_formats.py``."""
from __future__ import annotations

import io
import stat
import zipfile
from pathlib import Path

import msgspec
import pytest

from tests.exchange.test_imports import docx_bytes, ods_bytes, pptx_bytes, xlsx_bytes
from wharf.exchange import formats, importer
from wharf.exchange.import_errors import (
    ConversionTimeout,
    CorruptFile,
    FileTooComplex,
    Limits,
    UnsupportedFormat,
)
from wharf.exchange.sniffing import OLE_MAGIC, sniff
from wharf.infra.settings import Settings


def _file(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _ole(stream: str) -> bytes:
    return OLE_MAGIC + b"\x00" * 504 + (stream + "\x00").encode("utf-16-le") + b"\x00" * 64


@pytest.mark.parametrize("data,filename,expected", [
    (xlsx_bytes(), "a.bin", "xlsx"), (docx_bytes(), "a", "docx"), (pptx_bytes(), "a.zip", "pptx"),
    (ods_bytes(), "x.xlsx", "ods"), (b"a;b\n", "a.TSV", "tsv"), (b"a;b\n", "a", "csv"),
    (b"", "empty.csv", "csv"), (b"\xff\xfea\x00,\x00", "u16.txt", "csv"),
    (_ole("Workbook"), "legacy", "xls"), (_ole("WordDocument"), "legacy", "doc"),
    (_ole("PowerPoint Document"), "legacy", "ppt"), (_ole("x"), "old.PPT", "ppt"),
])
def test_the_format_comes_from_the_content_then_the_extension(tmp_path, data, filename,
                                                              expected):
    assert sniff(_file(tmp_path, "f", data), filename, Limits()) == expected


@pytest.mark.parametrize("data,error", [
    (b"%PDF-1.7\x00", UnsupportedFormat), (_ole("Other"), UnsupportedFormat),
    (b"PK\x03\x04garbage", CorruptFile), (b"", UnsupportedFormat),
])
def test_what_is_not_imported(tmp_path, data, error):
    with pytest.raises(error):
        sniff(_file(tmp_path, "f", data), "file", Limits())


def test_a_zip_of_something_else_is_unsupported(tmp_path):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("readme.txt", "hello")
    with pytest.raises(UnsupportedFormat):
        sniff(_file(tmp_path, "f", out.getvalue()), "a.zip", Limits())


def test_the_unpacked_size_is_checked_from_the_directory(tmp_path):
    with pytest.raises(FileTooComplex):
        sniff(_file(tmp_path, "f", docx_bytes()), "a.docx", Limits(max_unpacked_bytes=1000))


def _soffice(tmp_path: Path, body: str) -> str:
    script = tmp_path / "soffice"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


# A stand-in: writes the prepared DOCX as LibreOffice would name its output, after checking
# it was given a private profile directory and its input by the legacy extension (the
# arguments' contract; test_legacy_formats.py runs the real LibreOffice).
_CONVERTS = """
for a in "$@"; do
  case "$a" in -env:UserInstallation=file://*) profile="${a#-env:UserInstallation=file://}";; esac
  [ "$last" = "--outdir" ] && outdir="$a"; last="$a"
done
[ -d "$profile" ] || exit 3
case "$last" in *.doc) cp "$FAKE_OUTPUT" "$outdir/input.docx";; *) exit 4;; esac
"""


def test_doc_through_a_configured_soffice(tmp_path):
    prepared = _file(tmp_path, "prepared.docx", docx_bytes())
    soffice = _soffice(tmp_path, f'FAKE_OUTPUT="{prepared}"\n' + _CONVERTS)
    work = tmp_path / "work"
    work.mkdir()
    settings = Settings.from_env({"WHARF_SOFFICE": soffice})
    unit_type, document = importer.convert(_file(work, "source", _ole("WordDocument")),
                                           "old.doc", "Old", settings, work)
    assert unit_type == "doc"
    assert formats.paragraphs_of(document["body"])[0] == ([("Report", {})],
                                                          formats.NamedStyle.TITLE)


def test_a_failed_or_slow_conversion(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    source = _ole("PowerPoint Document")
    failing = Settings.from_env({"WHARF_SOFFICE": _soffice(tmp_path, "exit 1\n")})
    with pytest.raises(CorruptFile):
        importer.convert(_file(work, "s1", source), "a.ppt", "A", failing, work)
    slow = Settings.from_env({"WHARF_SOFFICE": _soffice(tmp_path, "sleep 30\n"),
                              "WHARF_IMPORT_CONVERSION_TIMEOUT": "1"})
    with pytest.raises(ConversionTimeout):
        importer.convert(_file(work, "s2", source), "a.ppt", "A", slow, work)


def test_without_soffice_the_answer_says_so(tmp_path):
    with pytest.raises(UnsupportedFormat, match="WHARF_SOFFICE"):
        importer.convert(_file(tmp_path, "s", _ole("WordDocument")), "a.doc", "A",
                         Settings.from_env({}), tmp_path)


def _replace_part(data: bytes, part: str, content: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            dst.writestr(info, content if info.filename == part else src.read(info))
    return out.getvalue()


def test_deeply_nested_or_entity_laden_xml_is_corrupt_not_expanded(tmp_path):
    from wharf.exchange.readers.documents import read_docx
    ns = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    deep = (f"<w:document {ns}><w:body>" + "<w:p>" * 5000 + "</w:p>" * 5000
            + "</w:body></w:document>").encode()
    path = _file(tmp_path, "deep.docx", _replace_part(docx_bytes(), "word/document.xml", deep))
    with pytest.raises(CorruptFile):
        read_docx(path, "Deep", Limits())
    laughs = ('<?xml version="1.0"?><!DOCTYPE w:document [<!ENTITY a "aaaaaaaaaa">'
              + "".join(f'<!ENTITY {chr(98 + i)} "' + f"&{chr(97 + i)};" * 10 + '">'
                        for i in range(8))
              + f']><w:document {ns}><w:body><w:p><w:r><w:t>&i;</w:t></w:r></w:p>'
              '</w:body></w:document>').encode()
    path = _file(tmp_path, "laughs.docx",
                 _replace_part(docx_bytes(), "word/document.xml", laughs))
    try:
        document = read_docx(path, "Laughs", Limits())
    except CorruptFile:
        return  # refused outright
    assert len(document["body"]["dataStream"]) < 1000  # never expanded


def test_a_sparse_sheet_spanning_the_whole_grid_is_refused_before_calamine(tmp_path):
    """Two cells at A1 and XFD1048576: calamine would allocate the dense range between them
    (512 GiB) and abort the process; the used-range check refuses it first."""
    import xlsxwriter

    from wharf.exchange.readers.sheets import read_workbook
    out = io.BytesIO()
    wb = xlsxwriter.Workbook(out, {"in_memory": True})
    ws = wb.add_worksheet()
    ws.write("A1", 1)
    ws.write("XFD1048576", 2)
    wb.close()
    with pytest.raises(FileTooComplex) as caught:
        read_workbook(_file(tmp_path, "corner.xlsx", out.getvalue()), "C", Limits())
    assert caught.value.details["limit"] == "used_range"
    # the same cells close together are fine
    assert read_workbook(_file(tmp_path, "ok.xlsx", xlsx_bytes()), "OK",
                         Limits(max_cells=100))["sheetOrder"] == ["s1", "s2"]


def test_a_workbook_read_in_its_child_is_the_one_read_in_process(tmp_path):
    """The child hands the body on as JSON text, a plain sheet's cells encoded a few
    hundred rows at a time: the document is the one read in process, for a sheet with
    formulas and styles (read as dicts), a plain one that starts at C5 with more rows
    than a batch (text, integers, fractions, booleans, dates, blanks) and an empty one."""
    import datetime as dt

    import xlsxwriter

    from wharf.exchange.readers.isolated import read_workbook_isolated
    from wharf.exchange.readers.sheets import read_workbook
    out = io.BytesIO()
    wb = xlsxwriter.Workbook(out, {"in_memory": True})
    ws = wb.add_worksheet("Styled")
    ws.write("A1", "Item", wb.add_format({"bold": True}))
    ws.write_formula("B1", "=1+1", None, 2)
    plain = wb.add_worksheet("Plain")
    for r in range(700):
        plain.write(4 + r, 2, f"row {r} \u00e9\"\\")
        plain.write(4 + r, 3, r)
        plain.write(4 + r, 4, r + 0.25)
        plain.write_boolean(4 + r, 6, r % 2 == 0)  # (column F left blank)
        if r % 7 == 0:
            plain.write_datetime(4 + r, 7, dt.datetime(2024, 1, 1 + r % 28, 6, 30))
    wb.add_worksheet("Empty")
    wb.close()
    path = _file(tmp_path, "mixed.xlsx", out.getvalue())
    raw = read_workbook_isolated(path, "M", Limits(), "xlsx", memory=1 << 30, timeout=60)
    assert isinstance(raw, msgspec.Raw)
    body = msgspec.json.decode(raw)
    assert body == read_workbook(path, "M", Limits())
    cells = body["sheets"]["s2"]["cellData"]
    assert len(cells) == 700 and cells["703"]["3"] == {"v": 699, "t": 2}
    assert cells["4"]["4"] == {"v": 0.25, "t": 2} and "5" not in cells["4"]
    assert body["sheets"]["s2"]["rowCount"] == 704 and body["sheets"]["s3"]["cellData"] == {}


def test_a_used_range_past_the_limit_stops_the_child(tmp_path):
    """The worker checks the used ranges while its child loads the first sheet: past the
    limit the read is ``file_too_complex`` (``used_range``, not ``memory``, even where
    calamine would abort the child) and the child is killed before it answers."""
    import xlsxwriter

    from wharf.exchange.readers.isolated import read_workbook_isolated

    def book(name: str, far: str) -> Path:
        out = io.BytesIO()
        wb = xlsxwriter.Workbook(out, {"in_memory": True})
        ws = wb.add_worksheet()
        ws.write("A1", 1)
        ws.write(far, 2)
        wb.close()
        return _file(tmp_path, name, out.getvalue())
    for path, limits in ((book("corner.xlsx", "XFD1048576"), Limits()),
                         (book("small.xlsx", "Z100"), Limits(max_cells=10))):
        with pytest.raises(FileTooComplex) as caught:
            read_workbook_isolated(path, "C", limits, "xlsx", memory=1 << 30, timeout=60)
        assert caught.value.details["limit"] == "used_range"
    assert not list(tmp_path.glob("*.json"))  # no answer written


def test_a_workbook_that_needs_too_much_memory_fails_in_its_child(tmp_path):
    """Past the used-range check (a huge cell limit here), calamine's allocation fails in
    the child under its address-space limit and aborts it; the worker goes on."""
    import xlsxwriter

    from wharf.exchange.readers.isolated import read_workbook_isolated
    out = io.BytesIO()
    wb = xlsxwriter.Workbook(out, {"in_memory": True})
    ws = wb.add_worksheet()
    ws.write("A1", 1)
    ws.write("XFD1048576", 2)
    wb.close()
    path = _file(tmp_path, "corner.xlsx", out.getvalue())
    with pytest.raises(FileTooComplex) as caught:
        read_workbook_isolated(path, "C", Limits(max_cells=10**12), "xlsx",
                               memory=1 << 30, timeout=60)
    assert caught.value.details["limit"] == "memory"
    raw = read_workbook_isolated(_file(tmp_path, "ok.xlsx", xlsx_bytes()), "OK", Limits(),
                                 "xlsx", memory=1 << 30, timeout=60)
    assert isinstance(raw, msgspec.Raw)  # the child's JSON, handed on without a decode
    body = msgspec.json.decode(raw)
    assert body["sheets"]["s1"]["cellData"]["1"]["1"] == {"v": 12.5, "t": 2, "s": "x2"}
    assert body["styles"]["x2"] == {"n": {"pattern": "0.00"}}


def test_a_shared_formula_reaches_every_cell_of_its_range_translated(tmp_path):
    """Excel writes a shared formula once (its master) and ``<f t="shared" si=…/>`` in the
    other cells: each gets the master's formula with its relative references moved (the
    absolute ones kept); a dependent whose references would leave the grid keeps its
    value only."""
    import xlsxwriter

    from wharf.exchange.readers.sheets import read_workbook
    from wharf.exchange.readers.xlsx_extras import reference
    plain = tmp_path / "plain.xlsx"
    wb = xlsxwriter.Workbook(str(plain))
    ws = wb.add_worksheet("F")
    for r in range(3):
        ws.write_number(r, 0, r + 1)
    for r, value in enumerate((3, 5, 7)):
        ws.write_formula(r, 1, f"=A{r + 1}*2+$A$1", None, value)
    ws.write_formula("D1", "=A1", None, 1)
    ws.write_formula("C2", "=A2", None, 2)
    wb.close()
    with zipfile.ZipFile(plain) as zf:
        xml = zf.read("xl/worksheets/sheet1.xml")
    for old, new in ((b"<f>A1*2+$A$1</f>", b'<f t="shared" ref="B1:B3" si="0">A1*2+$A$1</f>'),
                     (b"<f>A2*2+$A$1</f>", b'<f t="shared" si="0"/>'),
                     (b"<f>A3*2+$A$1</f>", b'<f t="shared" si="0"/>'),
                     (b"<f>A1</f>", b'<f t="shared" ref="C1:D2" si="1">A1</f>'),
                     (b"<f>A2</f>", b'<f t="shared" si="1"/>')):
        assert old in xml
        xml = xml.replace(old, new)
    path = _file(tmp_path, "shared.xlsx",
                 _replace_part(plain.read_bytes(), "xl/worksheets/sheet1.xml", xml))
    cells = read_workbook(path, "F", Limits())["sheets"]["s1"]["cellData"]
    assert [(cells[str(r)]["1"]["f"], cells[str(r)]["1"]["v"]) for r in range(3)] == [
        ("=A1*2+$A$1", 3), ("=A2*2+$A$1", 5), ("=A3*2+$A$1", 7)]
    assert cells["0"]["3"] == {"v": 1, "t": 2, "f": "=A1"}
    assert cells["1"]["2"] == {"v": 2, "t": 2}  # A1 moved one column left: off the grid
    assert [reference(0, 0), reference(9, 25), reference(0, 26), reference(1048575, 16383)] \
        == ["A1", "Z10", "AA1", "XFD1048576"]


def test_an_xlsx_formula_past_excels_length_limit_is_refused(tmp_path):
    """Formulas are imported from the sheet XML (calamine gives only their values): one
    longer than Excel's 8192 characters is ``file_too_complex``; one within it, and a
    style, come through."""
    import xlsxwriter

    from wharf.exchange.readers.sheets import read_workbook
    from wharf.exchange.readers.xlsx_extras import MAX_FORMULA_LENGTH

    def book(formula: str) -> Path:
        path = tmp_path / f"f{len(formula)}.xlsx"
        wb = xlsxwriter.Workbook(str(path))
        ws = wb.add_worksheet("F")
        ws.write_number("A1", 1, wb.add_format({"bold": True}))
        ws.write_formula("B1", formula, None, 1)
        wb.close()
        return path

    near = "=" + "+".join(["A1"] * ((MAX_FORMULA_LENGTH - 2) // 3))
    cells = read_workbook(book(near), "F", Limits())["sheets"]["s1"]["cellData"]["0"]
    assert cells["1"]["f"] == near and cells["1"]["v"] == 1
    assert cells["0"]["s"] == "x1"
    with pytest.raises(FileTooComplex) as caught:
        read_workbook(book(near + "+A1+A1"), "F", Limits())
    assert caught.value.details == {"limit": "formula_length"}


def _with_sheet_part_flagged(data: bytes, *, method: int | None = None,
                             encrypted: bool = False) -> bytes:
    """``data`` (an XLSX) with its worksheet part's zip headers claiming ``method`` as
    its compression (9: deflate64, which zipfile cannot read) or the encrypted flag."""
    buf = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        offsets = [zf.getinfo("xl/worksheets/sheet1.xml").header_offset]
    pos = data.find(b"PK\x01\x02")
    while pos != -1:  # the central directory entry naming the part
        name_len = int.from_bytes(data[pos + 28:pos + 30], "little")
        if data[pos + 46:pos + 46 + name_len] == b"xl/worksheets/sheet1.xml":
            offsets.append(pos + 2)  # central entries carry "version made by" first
        pos = data.find(b"PK\x01\x02", pos + 4)
    for at in offsets:
        if method is not None:
            buf[at + 8:at + 10] = method.to_bytes(2, "little")
        if encrypted:
            flags = int.from_bytes(buf[at + 6:at + 8], "little") | 1
            buf[at + 6:at + 8] = flags.to_bytes(2, "little")
    return bytes(buf)


@pytest.mark.parametrize("damage", [{"method": 9}, {"encrypted": True}],
                         ids=["deflate64", "encrypted"])
def test_a_sheet_part_zipfile_cannot_open_is_a_corrupt_file_not_an_internal_error(
        tmp_path, damage):
    """The used-range check runs in the worker: a part the zip module refuses with
    NotImplementedError (an unsupported compression) or RuntimeError (encrypted) is the
    file's fault, ``corrupt_file``, as when the check ran in the child; it escaped as an
    internal error, which the engine retries."""
    from wharf.exchange.readers.isolated import read_workbook_isolated
    path = _file(tmp_path, "bad.xlsx", _with_sheet_part_flagged(xlsx_bytes(), **damage))
    with pytest.raises(CorruptFile):
        read_workbook_isolated(path, "B", Limits(), "xlsx", memory=1 << 30, timeout=60)
