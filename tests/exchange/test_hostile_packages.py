"""Macros and external references in imported packages: a macro-enabled workbook
(``.xlsm`` with a ``vbaProject.bin`` part) and XLSX/DOCX/PPTX whose relationships point
outside the package (``TargetMode="External"``: an external workbook link, a hyperlink,
a linked image, an attached template) import with their values, and nothing is executed
or fetched: the test listens on the port the links name and no connection arrives."""
from __future__ import annotations

import io
import re
import socket
import zipfile
from collections.abc import Iterator

import pytest

from tests.exchange.test_imports import _env, docx_bytes, pptx_bytes, xlsx_bytes
from wharf.exchange import formats

_REL_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


@pytest.fixture
def fs_env(request, settings, db, tmp_path):
    return _env(request, settings, db, tmp_path, "file")


@pytest.fixture
def listener() -> Iterator[tuple[str, socket.socket]]:
    """A listening 127.0.0.1 socket (nothing accepts: a connection would wait in its
    backlog) and the URL base naming it."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    sock.setblocking(False)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}", sock
    sock.close()


def assert_no_connection(sock: socket.socket) -> None:
    try:
        conn, peer = sock.accept()
    except BlockingIOError:
        return
    conn.close()
    raise AssertionError(f"something connected to the link's port from {peer}")


def _rewrite(data: bytes, changes: dict[str, bytes | str],
             edits: dict[str, tuple[str, str]] | None = None) -> bytes:
    """The package ``data`` with parts added or replaced (``changes``) and text edits
    (``edits``: part → (old, new), ``old`` must be there) applied."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, \
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if info.filename in changes:
                continue
            content = src.read(info)
            if edits and info.filename in edits:
                old, new = edits[info.filename]
                text = content.decode("utf-8")
                assert old in text, (info.filename, old)
                content = text.replace(old, new, 1).encode("utf-8")
            dst.writestr(info.filename, content)
        for name, content in changes.items():
            dst.writestr(name, content)
    return out.getvalue()


def _add_rel(rels: str, rel_id: str, rel_type: str, target: str) -> str:
    return rels.replace("</Relationships>", f'<Relationship Id="{rel_id}" Type="{_REL_NS}/'
                        f'{rel_type}" Target="{target}" TargetMode="External"/>'
                        "</Relationships>")


def xlsm_bytes() -> bytes:
    """The test workbook made macro-enabled: a VBA project part (an OLE2 stream whose
    ``Workbook_Open`` would run on opening in Excel), its relationship and content type."""
    data = xlsx_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        types = zf.read("[Content_Types].xml").decode()
        rels = zf.read("xl/_rels/workbook.xml.rels").decode()
    types = types.replace("spreadsheetml.sheet.main+xml",
                          "sheet.macroEnabled.main+xml").replace(
        "</Types>", '<Default Extension="bin" ContentType="application/'
        'vnd.ms-office.vbaProject"/></Types>')
    rels = rels.replace("</Relationships>", '<Relationship Id="rId99" Type="http://schemas.'
                        'microsoft.com/office/2006/relationships/vbaProject" '
                        'Target="vbaProject.bin"/></Relationships>')
    vba = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504 + \
        b'Sub Workbook_Open()\r\n Shell "touch /tmp/wharf-macro-ran"\r\nEnd Sub\r\n'
    return _rewrite(data, {"[Content_Types].xml": types, "xl/_rels/workbook.xml.rels": rels,
                           "xl/vbaProject.bin": vba})


def linked_xlsx_bytes(base: str) -> bytes:
    """An XLSX with an external workbook link (``externalLink1.xml`` whose target is a
    URL, and a formula that reads it), a hyperlink cell, all pointing at ``base``."""
    import xlsxwriter
    out = io.BytesIO()
    wb = xlsxwriter.Workbook(out, {"in_memory": True})
    ws = wb.add_worksheet("Links")
    ws.write("A1", "linked")
    ws.write_formula("B1", "=[1]Remote!A1", None, 41)
    ws.write_url("A2", f"{base}/hyperlink", string="a link")
    wb.close()
    link = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
            '<externalLink xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
            f'xmlns:r="{_REL_NS}"><externalBook r:id="rId1"><sheetNames>'
            '<sheetName val="Remote"/></sheetNames><sheetDataSet><sheetData sheetId="0">'
            '<row r="1"><cell r="A1"><v>41</v></cell></row></sheetData></sheetDataSet>'
            '</externalBook></externalLink>')
    link_rels = _add_rel('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
                         '<Relationships xmlns="http://schemas.openxmlformats.org/package/'
                         '2006/relationships"></Relationships>',
                         "rId1", "externalLinkPath", f"{base}/remote.xlsx")
    return _rewrite(out.getvalue(), {
        "xl/externalLinks/externalLink1.xml": link,
        "xl/externalLinks/_rels/externalLink1.xml.rels": link_rels,
    }, {
        "[Content_Types].xml": ("</Types>", '<Override PartName="/xl/externalLinks/'
                                'externalLink1.xml" ContentType="application/vnd.'
                                'openxmlformats-officedocument.spreadsheetml.externalLink+xml"'
                                '/></Types>'),
        "xl/_rels/workbook.xml.rels": ("</Relationships>", f'<Relationship Id="rId98" Type='
                                       f'"{_REL_NS}/externalLink" Target="externalLinks/'
                                       'externalLink1.xml"/></Relationships>'),
        "xl/workbook.xml": ("</sheets>", '</sheets><externalReferences><externalReference '
                            'r:id="rId98"/></externalReferences>'),
    })


def linked_docx_bytes(base: str) -> bytes:
    """The test document with an image linked (not embedded) from ``base``, a hyperlink
    and an attached template at ``base`` (the template-injection trick)."""
    import docx
    from docx.opc.constants import RELATIONSHIP_TYPE as RT
    from docx.oxml import parse_xml
    d = docx.Document(io.BytesIO(docx_bytes()))
    part = d.part
    image = part.relate_to(f"{base}/image.png", RT.IMAGE, is_external=True)
    link = part.relate_to(f"{base}/page", RT.HYPERLINK, is_external=True)
    paragraph = d.add_paragraph("after the picture")
    paragraph._p.append(parse_xml(
        f'<w:r xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
        f'xmlns:r="{_REL_NS}" '
        'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
        'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
        'xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"><w:drawing>'
        '<wp:inline><wp:extent cx="9525" cy="9525"/><wp:docPr id="9" name="linked"/>'
        '<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/'
        'picture"><pic:pic><pic:nvPicPr><pic:cNvPr id="9" name="linked"/><pic:cNvPicPr/>'
        f'</pic:nvPicPr><pic:blipFill><a:blip r:link="{image}"/></pic:blipFill><pic:spPr/>'
        '</pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r>'))
    paragraph._p.append(parse_xml(
        f'<w:hyperlink xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
        f'xmlns:r="{_REL_NS}" r:id="{link}"><w:r><w:t>the link</w:t></w:r></w:hyperlink>'))
    out = io.BytesIO()
    d.save(out)
    data = out.getvalue()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        settings_xml = zf.read("word/settings.xml").decode()
    settings_xml = re.sub(r"(<w:settings[^>]*>)", r'\1<w:attachedTemplate r:id="rIdT"/>',
                          settings_xml, count=1)
    if f'xmlns:r="{_REL_NS}"' not in settings_xml:  # pragma: no cover (python-docx's has it)
        settings_xml = settings_xml.replace("<w:settings ", f'<w:settings xmlns:r="{_REL_NS}" ',
                                            1)
    settings_rels = _add_rel('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
                             '<Relationships xmlns="http://schemas.openxmlformats.org/package/'
                             '2006/relationships"></Relationships>', "rIdT",
                             "attachedTemplate", f"{base}/template.dotm")
    return _rewrite(data, {"word/settings.xml": settings_xml,
                           "word/_rels/settings.xml.rels": settings_rels})


def linked_pptx_bytes(base: str) -> bytes:
    """The test deck with a picture linked from ``base`` and a hyperlink to it."""
    import pptx
    from pptx.opc.constants import RELATIONSHIP_TYPE as RT
    deck = pptx.Presentation(io.BytesIO(pptx_bytes()))
    slide = deck.slides[1]
    rel = slide.part.relate_to(f"{base}/picture.png", RT.IMAGE, is_external=True)
    box = slide.shapes[1]
    box.text_frame.paragraphs[0].runs[0].hyperlink.address = f"{base}/page"
    from pptx.oxml import parse_xml
    slide.shapes._spTree.append(parse_xml(
        '<p:pic xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" '
        'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
        f'xmlns:r="{_REL_NS}"><p:nvPicPr><p:cNvPr id="77" name="linked"/><p:cNvPicPr/>'
        f'<p:nvPr/></p:nvPicPr><p:blipFill><a:blip r:link="{rel}"/></p:blipFill>'
        '<p:spPr/></p:pic>'))
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def _first_sheet(unit: dict) -> dict:
    body = unit["snapshot"]["body"]
    return body["sheets"][body["sheetOrder"][0]]["cellData"]


def test_macros_and_external_links_import_their_values_and_nothing_runs_or_fetches(
        fs_env, listener):
    base, sock = listener
    # a macro-enabled workbook: its values; its VBA project is ignored, never run
    macro = fs_env.unit(xlsm_bytes(), "budget.xlsm")
    assert macro["unit_type"] == "sheet"
    cells = _first_sheet(macro)
    assert cells["1"]["0"] == {"v": "Paper", "t": formats.CellType.STRING}
    assert (cells["1"]["1"]["v"], cells["1"]["1"]["t"]) == (12.5, formats.CellType.NUMBER)
    assert cells["3"]["1"]["v"] == 19.5 and cells["3"]["1"]["f"] == "=B2+B3"
    assert "vbaProject" not in repr(macro["snapshot"])

    # an external workbook link (and a formula reading it) and a hyperlink: the cached
    # values and the link's text; the link is neither followed nor kept
    linked = fs_env.unit(linked_xlsx_bytes(base), "linked.xlsx")
    cells = _first_sheet(linked)
    assert cells["0"]["0"]["v"] == "linked" and cells["0"]["1"]["v"] == 41
    assert cells["0"]["1"]["f"] == "=[1]Remote!A1"  # text, never evaluated
    assert cells["1"]["0"]["v"] == "a link"
    assert base not in repr(linked["snapshot"])

    # a DOCX with a linked image, a hyperlink and an attached template on the port
    doc = fs_env.unit(linked_docx_bytes(base), "linked.docx")
    paragraphs = formats.paragraphs_of(doc["snapshot"]["body"])
    assert paragraphs[0] == ([("Report", {})], formats.NamedStyle.TITLE)
    assert paragraphs[-1][0][0][0] == "after the picture"
    assert base not in repr(doc["snapshot"])

    # a PPTX with a linked picture and a hyperlink
    deck = fs_env.unit(linked_pptx_bytes(base), "linked.pptx")
    assert formats.slide_texts(deck["snapshot"]["body"]) == [
        ("Welcome", ["First point"]), ("Numbers", ["42 things"])]
    assert base not in repr(deck["snapshot"])

    assert_no_connection(sock)
