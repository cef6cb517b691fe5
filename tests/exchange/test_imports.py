"""Imports (issue 38): a file uploaded as a blob resource, ``POST /api/imports``, a worker
converts it, and the new unit reads back with the values, types, styles and paragraphs
the file had; hostile files fail the operation with a stable code and leave no node and
no unit. On the filesystem and S3 (moto over HTTP) stores."""
from __future__ import annotations

import dataclasses
import datetime as dt
import io
import uuid
import zipfile

import dramatiq
import pytest
from sqlalchemy import func, select

from storage.blobstore import FileBlobStore
from storage.models import Node, UnitResource
from tests.conftest import World
from tests.engine.test_operations import wait_done
from tests.sharing.test_sharing_trash_recent import upload_blob
from wharf.exchange import formats, importer
from wharf.infra.errors import TransientFailure
from wharf.operations.executor import Hooks
from wharfd.runtime import Components

# PostgreSQL too for what touches the database differently (publish, replay, a rerun,
# a failure's cleanup); the format round trips are the same SQL: SQLite only
both = pytest.mark.both_databases


def key() -> str:
    return uuid.uuid4().hex


class Env:
    """The embedded wiring around a chosen blob store and settings, with a worker."""

    def __init__(self, settings, db, store, hooks=None):
        self.settings, self.db, self.store = settings, db, store
        self.components = Components(settings, db=db, blob_store=store, hooks=hooks)
        self.world = World(self.components.api_app())
        self.worker = dramatiq.Worker(self.components.broker, worker_threads=2,
                                      worker_timeout=50)
        self.worker.start()
        self.alice = self.world.user("alice")
        self.space = self.alice.personal_space_id

    def close(self):
        self.worker.stop(timeout=5000)
        self.components.close()

    def count(self, model, *where) -> int:
        with self.db.read() as s:
            return s.scalar(select(func.count()).select_from(model).where(*where))

    def upload(self, data: bytes, name: str, client=None) -> str:
        return upload_blob(client or self.alice, self.space, None, data=data, name=name)

    def submit(self, blob_id: str, name: str = "Imported", client=None, k: str | None = None,
               **extra):
        body = {"blob_resource_id": blob_id, "space_id": self.space, "name": name, **extra}
        return (client or self.alice).post("/api/imports", json=body,
                                           headers={"Idempotency-Key": k or key()})

    def run(self, data: bytes, filename: str, **extra) -> dict:
        """The finished ``import_file`` operation of ``data`` uploaded as ``filename``."""
        r = self.submit(self.upload(data, filename), **extra)
        assert r.status_code == 202, r.text
        assert r.json["kind"] == "import_file"
        return wait_done(self.alice, r.json["id"])

    def unit(self, data: bytes, filename: str, **extra) -> dict:
        op = self.run(data, filename, **extra)
        assert op["status"] == "completed", op
        result = op["result"]
        r = self.alice.get(f"/api/units/{result['unit_id']}")
        assert r.status_code == 200, r.text
        assert r.json["resource_id"] == result["resource_id"]
        assert r.json["node_id"] == result["node_id"]
        return r.json

    def failed(self, data: bytes, filename: str, code: str, **extra) -> dict:
        """The failed operation of importing ``data``: ``code``, and no node, resource
        or unit left."""
        blob = self.upload(data, filename)
        nodes, units = self.count(Node), self.count(UnitResource)
        r = self.submit(blob, **extra)
        assert r.status_code == 202, r.text
        op = wait_done(self.alice, r.json["id"])
        assert op["status"] == "failed", op
        assert op["error"]["code"] == code, op["error"]
        assert (self.count(Node), self.count(UnitResource)) == (nodes, units)
        assert self.components.unitstore.unit_ids() == self.units_before
        return op

    @property
    def units_before(self) -> list[str]:
        with self.db.read() as s:
            ids = set(s.scalars(select(UnitResource.unit_id)))
        return sorted(i for i in self.components.unitstore.unit_ids() if i in ids)


def _env(request, settings, db, tmp_path, store_kind: str, hooks=None, **overrides):
    store = FileBlobStore(tmp_path / "blobs") if store_kind == "file" \
        else request.getfixturevalue("s3_store")
    e = Env(dataclasses.replace(settings, **overrides), db, store, hooks)
    request.addfinalizer(e.close)
    return e


@pytest.fixture(params=["file", "s3"])
def env(request, settings, db, tmp_path):
    return _env(request, settings, db, tmp_path, request.param)


@pytest.fixture
def fs_env(request, settings, db, tmp_path):
    return _env(request, settings, db, tmp_path, "file")


# -- files built with the same libraries ------------------------------------------------------

def xlsx_bytes() -> bytes:
    import xlsxwriter
    out = io.BytesIO()
    wb = xlsxwriter.Workbook(out, {"in_memory": True})
    ws = wb.add_worksheet("Budget")
    header = wb.add_format({"bold": True, "italic": True, "underline": 1, "font_size": 14,
                            "font_name": "Arial", "font_color": "#C00000",
                            "bg_color": "#FFFF00", "pattern": 1})
    ws.write("A1", "Item", header)
    ws.write("B1", "Cost", header)
    ws.write("A2", "Paper")
    ws.write_number("B2", 12.5, wb.add_format({"num_format": "0.00"}))
    ws.write_number("B3", 7)
    ws.write_boolean("C3", True)
    ws.write_datetime("A4", dt.datetime(2024, 3, 1), wb.add_format({"num_format": "yyyy-mm-dd"}))
    ws.write_formula("B4", "=B2+B3", None, 19.5)
    ws.merge_range("D5:E6", "merged")
    wb.add_worksheet("Second").write("B2", "two")
    wb.close()
    return out.getvalue()


def docx_bytes() -> bytes:
    import docx
    d = docx.Document()
    d.add_heading("Report", level=0)  # Title
    d.add_heading("Intro", level=1)
    p = d.add_paragraph("plain ")
    p.add_run("bold").bold = True
    p.add_run(" and ")
    p.add_run("italic").italic = True
    d.add_heading("Deep", level=3)
    out = io.BytesIO()
    d.save(out)
    return out.getvalue()


def pptx_bytes() -> bytes:
    import pptx
    deck = pptx.Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[1])  # title and content
    first.shapes.title.text = "Welcome"
    first.placeholders[1].text = "First point"
    second = deck.slides.add_slide(deck.slide_layouts[5])  # title only
    second.shapes.title.text = "Numbers"
    box = second.shapes.add_textbox(0, 0, 100, 100)
    box.text_frame.text = "42 things"
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def ods_bytes() -> bytes:
    content = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2">'
        '<office:body><office:spreadsheet>'
        '<table:table table:name="Open">'
        '<table:table-row><table:table-cell office:value-type="string"><text:p>Name</text:p>'
        '</table:table-cell><table:table-cell office:value-type="float" office:value="3.5">'
        '<text:p>3.5</text:p></table:table-cell></table:table-row>'
        '<table:table-row><table:table-cell office:value-type="date" office:date-value="2024-03-01">'
        '<text:p>2024-03-01</text:p></table:table-cell>'
        '<table:table-cell office:value-type="boolean" office:boolean-value="true">'
        '<text:p>TRUE</text:p></table:table-cell></table:table-row>'
        '</table:table></office:spreadsheet></office:body></office:document-content>')
    manifest = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
        '<manifest:file-entry manifest:full-path="/" manifest:media-type="application/'
        'vnd.oasis.opendocument.spreadsheet"/><manifest:file-entry manifest:full-path='
        '"content.xml" manifest:media-type="text/xml"/></manifest:manifest>')
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr(zipfile.ZipInfo("mimetype"), "application/vnd.oasis.opendocument.spreadsheet")
        zf.writestr("META-INF/manifest.xml", manifest, zipfile.ZIP_DEFLATED)
        zf.writestr("content.xml", content, zipfile.ZIP_DEFLATED)
    return out.getvalue()


# -- round trips -------------------------------------------------------------------------------

@both
def test_xlsx_imports_as_a_sheet_with_values_types_dates_and_merges(env):
    unit = env.unit(xlsx_bytes(), "budget.xlsx", name="Budget 2024")
    assert unit["unit_type"] == "sheet"
    doc = unit["snapshot"]
    assert doc["type"] == "sheet" and doc["schemaVersion"] == formats.SCHEMA_VERSION
    body = doc["body"]
    assert [body["sheets"][s]["name"] for s in body["sheetOrder"]] == ["Budget", "Second"]
    first = body["sheets"][body["sheetOrder"][0]]
    cells = first["cellData"]
    assert cells["0"]["0"]["v"] == "Item" and cells["0"]["0"]["t"] == formats.CellType.STRING
    assert body["styles"][cells["0"]["0"]["s"]] == {
        "bl": 1, "it": 1, "ul": {"s": 1}, "fs": 14, "ff": "Arial", "cl": {"rgb": "#C00000"},
        "bg": {"rgb": "#FFFF00"}} == body["styles"][cells["0"]["1"]["s"]]
    assert cells["1"]["0"] == {"v": "Paper", "t": formats.CellType.STRING}  # no style
    assert cells["1"]["1"]["v"] == 12.5 and cells["1"]["1"]["t"] == formats.CellType.NUMBER
    assert body["styles"][cells["1"]["1"]["s"]] == {"n": {"pattern": "0.00"}}
    assert cells["2"]["1"] == {"v": 7, "t": formats.CellType.NUMBER}
    assert cells["2"]["2"] == {"v": True, "t": formats.CellType.BOOLEAN}
    date = cells["3"]["0"]
    assert date["v"] == 45352 and date["t"] == formats.CellType.NUMBER  # 2024-03-01
    assert body["styles"][date["s"]]["n"]["pattern"] == "yyyy-mm-dd"
    assert cells["3"]["1"] == {"v": 19.5, "t": formats.CellType.NUMBER, "f": "=B2+B3"}
    assert first["mergeData"] == [formats.merge_range(4, 3, 5, 4)]
    assert cells["4"]["3"]["v"] == "merged"
    second = body["sheets"][body["sheetOrder"][1]]
    assert second["cellData"] == {"1": {"1": {"v": "two", "t": formats.CellType.STRING}}}
    node = env.alice.get(f"/api/resources/{unit['resource_id']}").json
    assert node["node"]["name"] == "Budget 2024"


def test_ods_imports_as_a_sheet(fs_env):
    body = fs_env.unit(ods_bytes(), "open.ods")["snapshot"]["body"]
    sheet = body["sheets"][body["sheetOrder"][0]]
    assert sheet["name"] == "Open"
    assert sheet["cellData"] == {
        "0": {"0": {"v": "Name", "t": 1}, "1": {"v": 3.5, "t": 2}},
        "1": {"0": {"v": 45352, "t": 2, "s": "date"}, "1": {"v": True, "t": 3}}}


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "latin-1"])
def test_csv_in_each_encoding(fs_env, encoding):
    text = "name;price;code\nCafé;3.5;007\nCrème brûlée;12;x\n"
    unit = fs_env.unit(text.encode(encoding), "menu.csv")
    sheet = unit["snapshot"]["body"]["sheets"]["s1"]
    cells = sheet["cellData"]
    assert cells["1"]["0"]["v"] == "Café" and cells["2"]["0"]["v"] == "Crème brûlée"
    assert cells["1"]["1"] == {"v": 3.5, "t": formats.CellType.NUMBER}
    assert cells["2"]["1"] == {"v": 12, "t": formats.CellType.NUMBER}
    assert cells["1"]["2"]["v"] == "007"  # a leading zero stays text
    assert cells["0"]["2"] == {"v": "code", "t": formats.CellType.STRING}
    assert sheet["name"] == "menu"


def test_tsv_by_its_extension(fs_env):
    unit = fs_env.unit(b"a\tb,c\n1\t2\n", "data.tsv")
    cells = unit["snapshot"]["body"]["sheets"]["s1"]["cellData"]
    assert cells["0"] == {"0": {"v": "a", "t": 1}, "1": {"v": "b,c", "t": 1}}
    assert cells["1"]["1"] == {"v": 2, "t": 2}


def test_docx_imports_as_a_doc_with_runs_and_headings(env):
    unit = env.unit(docx_bytes(), "report.docx")
    assert unit["unit_type"] == "doc"
    paragraphs = formats.paragraphs_of(unit["snapshot"]["body"])
    assert paragraphs == [
        ([("Report", {})], formats.NamedStyle.TITLE),
        ([("Intro", {})], formats.NamedStyle.HEADING_1),
        ([("plain ", {}), ("bold", {"bl": 1}), (" and ", {}), ("italic", {"it": 1})],
         formats.NamedStyle.NORMAL_TEXT),
        ([("Deep", {})], formats.NamedStyle.HEADING_3)]


def test_pptx_imports_as_a_slide_with_titles_and_text(env):
    unit = env.unit(pptx_bytes(), "deck.pptx")
    assert unit["unit_type"] == "slide"
    assert formats.slide_texts(unit["snapshot"]["body"]) == [
        ("Welcome", ["First point"]), ("Numbers", ["42 things"])]


def test_a_file_without_extension_is_sniffed(fs_env):
    assert fs_env.unit(docx_bytes(), "noext")["unit_type"] == "doc"


@both
def test_the_same_key_replays_the_same_operation(fs_env):
    blob = fs_env.upload(b"a,b\n1,2\n", "x.csv")
    k = key()
    first = fs_env.submit(blob, k=k)
    assert first.status_code == 202
    done = wait_done(fs_env.alice, first.json["id"])
    assert done["status"] == "completed"
    again = fs_env.submit(blob, k=k)
    assert again.json["id"] == first.json["id"]
    assert again.json["result"] == done["result"]
    assert fs_env.count(UnitResource) == 1
    other = fs_env.submit(blob, name="Other name", k=k)
    assert other.status_code == 409 and other.json["code"] == "idempotency_key_reused"


@both
def test_bytes_gone_bad_after_publication_quarantine_the_blob(fs_env):
    """An import re-reads a published blob: bytes that no longer hash to its SHA-256
    (damaged or changed in the store) fail the import with ``verification_failed``, no
    unit is made of them, and the blob is quarantined, audited by the system."""
    from storage.models import AuditLog, BlobResource
    blob = fs_env.upload(b"a,b\n1,2\n", "bad.csv")
    with fs_env.db.read() as s:
        object_key = s.scalar(select(BlobResource.object_key).where(
            BlobResource.resource_id == blob))
    fs_env.store.put_stream(object_key, [b"a,b\n6,6\n"])  # same size, other bytes
    nodes = fs_env.count(Node)
    r = fs_env.submit(blob)
    assert r.status_code == 202, r.text
    op = wait_done(fs_env.alice, r.json["id"])
    assert op["status"] == "failed" and op["error"]["code"] == "verification_failed", op
    assert (fs_env.count(Node), fs_env.count(UnitResource)) == (nodes, 0)
    assert fs_env.alice.get(f"/api/blob-resources/{blob}").json["state"] == "quarantined"
    r = fs_env.alice.get(f"/api/blob-resources/{blob}/content")
    assert r.status_code == 409 and r.json["code"] == "quarantined"
    with fs_env.db.read() as s:
        row = s.scalar(select(AuditLog).where(AuditLog.action == "blob.quarantine",
                                              AuditLog.target_id == blob))
    assert row.actor_type == "system" and row.details["reason"] == "verification_failed"
    # released by the owner, a new import is refused no more at submission, and fails
    # again at the worker while the bytes stay bad
    r = fs_env.alice.post(f"/api/blob-resources/{blob}/release")
    assert r.status_code == 200, r.text
    op = wait_done(fs_env.alice, fs_env.submit(blob).json["id"])
    assert op["error"]["code"] == "verification_failed"
    assert fs_env.alice.get(f"/api/blob-resources/{blob}").json["state"] == "quarantined"


def test_submission_checks_the_blob_and_the_target(fs_env):
    blob = fs_env.upload(b"a,b\n", "x.csv")
    r = fs_env.alice.post("/api/imports", json={"blob_resource_id": blob,
                                                "space_id": fs_env.space, "name": "x"})
    assert r.status_code == 400 and r.json["code"] == "idempotency_key_required"
    assert fs_env.submit(uuid.uuid4().hex).status_code == 404
    bob = fs_env.world.user("bob")
    # bob cannot see alice's blob, nor create in her space
    r = bob.post("/api/imports", json={"blob_resource_id": blob, "space_id": fs_env.space,
                                       "name": "x"}, headers={"Idempotency-Key": key()})
    assert r.status_code == 404
    own = upload_blob(bob, bob.personal_space_id, None, data=b"a\n", name="b.csv")
    r = bob.post("/api/imports", json={"blob_resource_id": own, "space_id": fs_env.space,
                                       "name": "x"}, headers={"Idempotency-Key": key()})
    assert r.status_code == 404
    # a viewer of a team space may read its blob but not create there (403)
    team = fs_env.alice.post("/api/spaces", json={"name": "Team"}).json["id"]
    assert fs_env.alice.put(f"/api/spaces/{team}/members/{bob.user_id}",
                            json={"role": "viewer"}).status_code == 201
    shared = upload_blob(fs_env.alice, team, None, data=b"a\n", name="t.csv")
    r = bob.post("/api/imports", json={"blob_resource_id": shared, "space_id": team,
                                       "name": "x"}, headers={"Idempotency-Key": key()})
    assert r.status_code == 403
    r = bob.post("/api/imports", json={"blob_resource_id": shared,
                                       "space_id": bob.personal_space_id, "name": "x"},
                 headers={"Idempotency-Key": key()})
    assert r.status_code == 202
    assert wait_done(bob, r.json["id"])["status"] == "completed"
    r = fs_env.submit(blob, unit_type="board")
    assert r.status_code == 400


class CrashBeforeCommit(Hooks):
    """The first import_file attempt dies after its side effects, before its completion
    transaction (as a worker killed there would: the unit is in the UnitStore, nothing in
    the product database)."""

    def __init__(self):
        self.crashed = 0

    def before_commit(self, op):
        if op.kind == "import_file" and not self.crashed:
            self.crashed += 1
            raise TransientFailure("killed before the completion")


@both
def test_a_crash_after_the_conversion_converges_exactly_once(request, settings, db, tmp_path,
                                                            monkeypatch):
    hooks = CrashBeforeCommit()
    e = _env(request, settings, db, tmp_path, "file", hooks=hooks)
    conversions = []
    real = importer.convert

    def counting(*args, **kwargs):
        conversions.append(args[1])
        return real(*args, **kwargs)
    monkeypatch.setattr(importer, "convert", counting)
    unit = e.unit(b"a,b\n1,2\n", "x.csv")
    assert hooks.crashed == 1 and conversions == ["x.csv"]  # the rerun found the unit
    assert e.count(UnitResource) == 1
    assert e.components.unitstore.unit_ids() == [unit["unit_id"]]


# -- hostile files -----------------------------------------------------------------------------

@both
def test_a_zip_bomb_fails_before_it_is_inflated(request, settings, db, tmp_path):
    e = _env(request, settings, db, tmp_path, "file", import_max_unpacked_bytes=1 << 20)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", '<Types><Override ContentType="application/'
                    'vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/></Types>')
        zf.writestr("xl/worksheets/sheet1.xml", b"\x00" * (8 << 20))
    op = e.failed(out.getvalue(), "bomb.xlsx", "file_too_complex")
    assert op["error"]["details"]["limit"] == "unpacked_bytes"


def test_too_many_cells_sheets_or_characters(request, settings, db, tmp_path):
    e = _env(request, settings, db, tmp_path, "file", import_max_cells=5,
             import_max_sheets=1, import_max_string_length=10)
    assert e.failed(b"1,2,3\n4,5,6\n", "many.csv", "file_too_complex")[
        "error"]["details"]["limit"] == "cells"
    assert e.failed(xlsx_bytes(), "two-sheets.xlsx", "file_too_complex")[
        "error"]["details"]["limit"] == "sheets"
    assert e.failed(b"short,this one is far too long\n", "long.csv", "file_too_complex")[
        "error"]["details"]["limit"] == "string_length"


def test_a_document_past_the_unit_size_fails(request, settings, db, tmp_path):
    e = _env(request, settings, db, tmp_path, "file", unit_max_snapshot_bytes=2048)
    data = "\n".join(",".join(f"cell{r}x{c}" for c in range(10)) for r in range(40))
    op = e.failed(data.encode(), "big.csv", "file_too_complex")
    assert op["error"]["details"]["limit"] == "snapshot_bytes"


def test_a_workbook_past_the_unit_size_fails(request, settings, db, tmp_path):
    """A workbook's body reaches the worker as its reader child's JSON text, not decoded:
    its size is checked all the same, and nothing is created."""
    import xlsxwriter
    e = _env(request, settings, db, tmp_path, "file", unit_max_snapshot_bytes=2048)
    out = io.BytesIO()
    wb = xlsxwriter.Workbook(out, {"in_memory": True})
    ws = wb.add_worksheet()
    for r in range(40):
        for c in range(10):
            ws.write(r, c, f"cell{r}x{c}")
    wb.close()
    op = e.failed(out.getvalue(), "big.xlsx", "file_too_complex")
    assert op["error"]["details"]["limit"] == "snapshot_bytes"
    assert e.count(UnitResource) == 0 and e.components.unitstore.unit_ids() == []


def test_corrupt_and_unknown_files(fs_env):
    broken = bytearray(xlsx_bytes())
    # keep the zip directory, wreck the sheet's compressed bytes
    at = broken.find(b"xl/worksheets/sheet1.xml") + 40
    broken[at:at + 200] = b"\xff" * 200
    fs_env.failed(bytes(broken), "broken.xlsx", "corrupt_file")
    fs_env.failed(b"PK\x03\x04 not really a zip", "fake.docx", "corrupt_file")
    fs_env.failed(b"%PDF-1.7\n\x00\x01\x02\x03 binary", "paper.pdf", "unsupported_format")
    fs_env.failed(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image.csv", "unsupported_format")
    # a spreadsheet where a doc was asked for
    fs_env.failed(b"a,b\n", "x.csv", "unsupported_format", unit_type="doc")


def test_legacy_formats_without_libreoffice_are_unsupported(fs_env):
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504
    op = fs_env.failed(ole, "old.doc", "unsupported_format")
    assert "WHARF_SOFFICE" in op["error"]["message"]
    fs_env.failed(ole, "old.ppt", "unsupported_format")


# -- through the exporters and back ----------------------------------------------------------

def test_xlsx_docx_pptx_import_then_export_then_import_again(fs_env):
    """XLSX → unit → XLSX → unit (and DOCX, PPTX) keeps what the subset carries: the
    second import reads the same document as the first (values, types, formulas, styles,
    merges; paragraphs, runs and headings; slide texts)."""
    from tests.exchange.test_exports import download, export
    for data, filename, fmt in ((xlsx_bytes(), "budget.xlsx", "xlsx"),
                                (docx_bytes(), "report.docx", "docx"),
                                (pptx_bytes(), "deck.pptx", "pptx")):
        first = fs_env.unit(data, filename, name="Round trip")
        again = fs_env.unit(download(fs_env.alice, export(fs_env.alice, first["unit_id"], fmt)),
                            f"again.{fmt}", name="Round trip")
        one, two = first["snapshot"]["body"], again["snapshot"]["body"]
        if fmt == "xlsx":
            assert [one["sheets"][s]["name"] for s in one["sheetOrder"]] == \
                [two["sheets"][s]["name"] for s in two["sheetOrder"]]
            for a, b in zip(one["sheetOrder"], two["sheetOrder"], strict=True):
                # values, types, formulas and the styles themselves (their ids may differ)
                resolved = [{(r, c): (v.get("v"), v.get("t"), v.get("f"),
                                      doc["styles"].get(v.get("s")))
                             for r, row in doc["sheets"][sid]["cellData"].items()
                             for c, v in row.items()} for doc, sid in ((one, a), (two, b))]
                assert resolved[0] == resolved[1]
                assert one["sheets"][a]["mergeData"] == two["sheets"][b]["mergeData"]
            date_style = two["sheets"][two["sheetOrder"][0]]["cellData"]["3"]["0"]["s"]
            assert "yyyy" in two["styles"][date_style]["n"]["pattern"]
        elif fmt == "docx":
            assert formats.paragraphs_of(one) == formats.paragraphs_of(two)
        else:
            assert formats.slide_texts(one) == formats.slide_texts(two)
