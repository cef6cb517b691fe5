"""Office exports end to end (issue 38, item 3): a unit built through the API, exported by
an ``export_unit`` operation, downloaded and read back with another library (calamine for
XLSX values, the XLSX's XML for merges, formulas and styles, python-docx, python-pptx);
CSV; the view right re-checked on every download; ranges and ETags; expiry through the
sweep and the deletion outbox; the format checked against the unit type; idempotent
replays; on the filesystem store and on S3 (moto over HTTP)."""
from __future__ import annotations

import csv
import hashlib
import io
import re
import uuid
import zipfile
from datetime import timedelta

import docx
import dramatiq
import pptx
import pytest
from python_calamine import CalamineWorkbook
from sqlalchemy import select

from storage.blobstore import BlobNotFound, FileBlobStore
from storage.models import DeletionRecord, Export, ObjectDeletionJob, Operation
from tests.conftest import World
from tests.engine.test_operations import wait_done
from wharf.deletion import service as deletion
from wharf.exchange import formats as F
from wharf.infra.clock import utcnow
from wharf.retention.schedule import schedules
from wharf.retention.sweeps import SWEEPS, SweepContext
from wharfd.runtime import Components


def key() -> str:
    return uuid.uuid4().hex


class Env:
    """The embedded wiring around a chosen blob store, with worker threads."""

    def __init__(self, settings, db, store):
        self.settings, self.db, self.store = settings, db, store
        self.components = Components(settings, db=db, blob_store=store)
        self.world = World(self.components.api_app())
        self.worker = dramatiq.Worker(self.components.broker, worker_threads=2,
                                      worker_timeout=50)
        self.worker.start()

    def close(self):
        self.worker.stop(timeout=5000)
        self.components.close()

    def sweep(self, name: str, *, later: float = 0) -> dict[str, int]:
        ctx = SweepContext(db=self.db, settings=self.settings,
                           now=utcnow() + timedelta(seconds=later),
                           send=self.components.dispatcher.send, blob_store=self.store)
        return SWEEPS[name](ctx)


@pytest.fixture
def env(settings, db, tmp_path):
    e = Env(settings, db, FileBlobStore(tmp_path / "blobs"))
    yield e
    e.close()


@pytest.fixture
def s3_env(settings, db, s3_store):
    e = Env(settings, db, s3_store)
    yield e
    e.close()


def make_unit(client, unit_type: str, name: str, body: dict, space_id: str | None = None):
    r = client.post("/api/resources", json={
        "space_id": space_id or client.personal_space_id, "name": name,
        "unit_type": unit_type}, headers={"Idempotency-Key": key()})
    assert r.status_code == 202, r.text
    op = wait_done(client, r.json["id"])
    assert op["status"] == "completed", op
    unit_id = op["result"]["unit_id"]
    r = client.post(f"/api/units/{unit_id}/changesets", json={
        "base_revision": 0, "changes": [{"op": "add", "path": "/body", "value": body}]})
    assert r.status_code == 200, r.text
    return unit_id


def export(client, unit_id: str, fmt: str, idem: str | None = None, **extra) -> dict:
    r = client.post(f"/api/units/{unit_id}/exports", json={"format": fmt, **extra},
                    headers={"Idempotency-Key": idem or key()})
    assert r.status_code == 202, r.text
    op = wait_done(client, r.json["id"])
    assert op["status"] == "completed", op
    return op


def download(client, op: dict) -> bytes:
    result = op["result"]
    assert result["content_url"] == f"/api/exports/{result['export_id']}/content"
    r = client.get(result["content_url"])
    assert r.status_code == 200, r.text
    assert r.headers["etag"] == f'"{result["sha256"]}"'
    assert "attachment" in r.headers["content-disposition"]
    assert r.headers["cache-control"] == "private, no-store"
    assert len(r.content) == result["size"]
    assert hashlib.sha256(r.content).hexdigest() == result["sha256"]
    return r.content


WORKBOOK = F.workbook("Budget", [
    F.worksheet("s1", "2027", {
        "0": {"0": F.cell("Item", style="head"), "1": F.cell("Cost", style="head")},
        "1": {"0": F.cell("Rent"), "1": F.cell(1200, style="money")},
        "2": {"0": F.cell("Café ☕"), "1": F.cell(30.5, style="money")},
        "3": {"0": F.cell("Total"), "1": F.cell(1230.5, formula="=SUM(B2:B3)")},
        "4": {"0": F.cell(True), "1": {"v": "007", "t": int(F.CellType.FORCE_STRING)}},
        "6": {"2": F.cell("after a gap")}},
        [F.merge_range(0, 0, 0, 1), F.merge_range(5, 0, 6, 1)]),
    F.worksheet("s2", "Notes", {"0": {"0": F.cell("only note")}})],
    {"head": {"bl": 1, "it": 1, "fs": 14, "cl": {"rgb": "#C00000"}},
     "money": {"n": {"pattern": "0.00"}}})


def check_xlsx(data: bytes) -> None:
    wb = CalamineWorkbook.from_filelike(io.BytesIO(data))
    assert wb.sheet_names == ["2027", "Notes"]
    rows = wb.get_sheet_by_name("2027").to_python()
    assert rows[0][:2] == ["Item", "Cost"]
    assert rows[1][:2] == ["Rent", 1200.0] and rows[2][:2] == ["Café ☕", 30.5]
    assert rows[3][:2] == ["Total", 1230.5]
    assert rows[4][:2] == [True, "007"]  # a boolean and text that stays text
    assert rows[6][2] == "after a gap"
    assert wb.get_sheet_by_name("Notes").to_python() == [["only note"]]
    z = zipfile.ZipFile(io.BytesIO(data))
    sheet = z.read("xl/worksheets/sheet1.xml").decode()
    assert re.findall(r'<mergeCell ref="([A-Z0-9:]+)"/>', sheet) == ["A1:B1", "A6:B7"]
    assert "<f>SUM(B2:B3)</f><v>1230.5</v>" in sheet
    styles = z.read("xl/styles.xml").decode()
    assert '<numFmt numFmtId="164" formatCode="0.00"/>' in styles
    assert re.search(r'<font><b/><i/><sz val="14"/><color rgb="FFC00000"/>', styles)


def test_a_sheet_exports_to_xlsx_and_reads_back(env):
    alice = env.world.user("alice")
    unit_id = make_unit(alice, "sheet", "Budget", WORKBOOK)
    op = export(alice, unit_id, "xlsx")
    assert op["kind"] == "export_unit" and op["result"]["expires_at"]
    data = download(alice, op)
    check_xlsx(data)
    assert download(alice, op) == data
    with env.db.read() as s:
        row = s.get(Export, op["result"]["export_id"])
        assert row.format == "xlsx" and row.filename == "Budget.xlsx"
        assert row.object_key == f"exports/{op['id']}"
        assert 7100 < (row.expires_at - row.created_at).total_seconds() <= 7200


def test_xlsx_on_s3(s3_env):
    alice = s3_env.world.user("alice")
    unit_id = make_unit(alice, "sheet", "Budget", WORKBOOK)
    op = export(alice, unit_id, "xlsx")
    check_xlsx(download(alice, op))
    assert s3_env.store.head(f"exports/{op['id']}").size == op["result"]["size"]


def test_csv_exports_one_sheet_utf8_by_id_or_name(env):
    alice = env.world.user("alice")
    unit_id = make_unit(alice, "sheet", "Budget", WORKBOOK)
    first = download(alice, export(alice, unit_id, "csv")).decode("utf-8")
    assert list(csv.reader(io.StringIO(first))) == [
        ["Item", "Cost", ""], ["Rent", "1200", ""], ["Café ☕", "30.5", ""],
        ["Total", "1230.5", ""], ["TRUE", "007", ""], [], ["", "", "after a gap"]]
    for sheet in ("s2", "Notes"):
        notes = download(alice, export(alice, unit_id, "csv", sheet=sheet))
        assert notes.decode("utf-8").splitlines() == ["only note"]
    r = alice.post(f"/api/units/{unit_id}/exports", json={"format": "csv", "sheet": "nope"},
                   headers={"Idempotency-Key": key()})
    op = wait_done(alice, r.json["id"])
    assert op["status"] == "failed" and op["error"]["code"] == "validation_failed"
    # whatever it may have stored was queued for deletion (the deletion ledger says why)
    with env.db.read() as s:
        assert s.scalar(select(DeletionRecord.reason).where(
            DeletionRecord.subject == f"exports/{op['id']}")) == "export_failed"


def test_a_doc_exports_to_docx_with_styles_and_runs(env):
    alice = env.world.user("alice")
    body = F.document("Plan", [
        ([("Q3 plan", {})], F.NamedStyle.TITLE),
        ([("Shipping", {})], F.NamedStyle.HEADING_1),
        ([("Ship ", {}), ("the importer", {"bl": 1}), (" first", {"it": 1})],
         F.NamedStyle.NORMAL_TEXT),
        ([("Detail", {})], F.NamedStyle.HEADING_5)])
    unit_id = make_unit(alice, "doc", "Plan", body)
    d = docx.Document(io.BytesIO(download(alice, export(alice, unit_id, "docx"))))
    paras = [(p.text, p.style.name) for p in d.paragraphs]
    assert paras == [("Q3 plan", "Title"), ("Shipping", "Heading 1"),
                     ("Ship the importer first", "Normal"), ("Detail", "Heading 5")]
    runs = [(r.text, bool(r.bold), bool(r.italic)) for r in d.paragraphs[2].runs]
    assert runs == [("Ship ", False, False), ("the importer", True, False),
                    (" first", False, True)]


def test_a_slide_exports_to_pptx(env):
    alice = env.world.user("alice")
    body = F.presentation("Review", [("Where we are", ["Importer shipped", "Export next"]),
                                     ("Questions", [])])
    unit_id = make_unit(alice, "slide", "Review", body)
    deck = pptx.Presentation(io.BytesIO(download(alice, export(alice, unit_id, "pptx"))))
    got = [(s.shapes.title.text, [sh.text_frame.text for sh in s.shapes
                                  if sh.has_text_frame and sh.shape_id != s.shapes.title.shape_id])
           for s in deck.slides]
    assert got == [("Where we are", ["Importer shipped", "Export next"]), ("Questions", [])]


def test_a_format_that_does_not_fit_is_400_and_records_nothing(env):
    alice = env.world.user("alice")
    unit_id = make_unit(alice, "doc", "Plan", F.document("Plan", []))
    for fmt in ("xlsx", "csv", "pptx"):
        r = alice.post(f"/api/units/{unit_id}/exports", json={"format": fmt},
                       headers={"Idempotency-Key": key()})
        assert r.status_code == 400 and r.json["code"] == "validation_failed", r.text
        assert r.json["details"]["field"] == "format"
    r = alice.post(f"/api/units/{unit_id}/exports", json={"format": "pdf"},
                   headers={"Idempotency-Key": key()})
    assert r.status_code == 400
    r = alice.post(f"/api/units/{unit_id}/exports", json={"format": "docx"})
    assert r.status_code == 400 and r.json["code"] == "idempotency_key_required"
    # a stranger cannot export (nor learn the unit exists)
    r = env.world.user("mallory").post(f"/api/units/{unit_id}/exports",
                                       json={"format": "docx"},
                                       headers={"Idempotency-Key": key()})
    assert r.status_code == 404
    assert alice.get("/api/operations").json["items"][0]["kind"] == "create_resource"


@pytest.mark.both_databases
def test_the_same_key_replays_the_same_export(env):
    alice = env.world.user("alice")
    unit_id = make_unit(alice, "sheet", "Budget", WORKBOOK)
    idem = key()
    op = export(alice, unit_id, "xlsx", idem)
    r = alice.post(f"/api/units/{unit_id}/exports", json={"format": "xlsx"},
                   headers={"Idempotency-Key": idem})
    assert r.status_code == 200 and r.json["id"] == op["id"]
    assert r.json["result"] == op["result"]
    r = alice.post(f"/api/units/{unit_id}/exports", json={"format": "csv"},
                   headers={"Idempotency-Key": idem})
    assert r.status_code == 409 and r.json["code"] == "idempotency_key_reused"
    with env.db.read() as s:
        assert len(s.scalars(select(Export)).all()) == 1


def test_the_export_is_read_at_its_submitted_revision(env):
    alice = env.world.user("alice")
    unit_id = make_unit(alice, "doc", "Plan", F.document("Plan", [([("one", {})], 1)]))
    env.worker.stop(timeout=5000)  # hold the export in the queue
    r = alice.post(f"/api/units/{unit_id}/exports", json={"format": "docx"},
                   headers={"Idempotency-Key": key()})
    assert r.status_code == 202
    r2 = alice.post(f"/api/units/{unit_id}/changesets", json={
        "base_revision": 1, "changes": [{"op": "add", "path": "/body",
                                         "value": F.document("Plan", [([("two", {})], 1)])}]})
    assert r2.status_code == 200
    env.worker = dramatiq.Worker(env.components.broker, worker_threads=2, worker_timeout=50)
    env.worker.start()
    op = wait_done(alice, r.json["id"])
    d = docx.Document(io.BytesIO(download(alice, op)))
    assert [p.text for p in d.paragraphs] == ["one"]


@pytest.mark.both_databases
def test_ranges_etags_and_the_right_rechecked_on_every_download(env):
    alice, bob = env.world.user("alice"), env.world.user("bob")
    r = alice.post("/api/spaces", json={"name": "Team", "type": "team"})
    space = r.json["id"]
    assert alice.put(f"/api/spaces/{space}/members/{bob.user_id}",
                     json={"role": "viewer"}).status_code == 201
    unit_id = make_unit(alice, "sheet", "Budget", WORKBOOK, space_id=space)
    op = export(bob, unit_id, "xlsx")  # a viewer may export
    data = download(bob, op)
    url, etag = op["result"]["content_url"], f'"{op["result"]["sha256"]}"'
    r = bob.get(url, headers={"Range": "bytes=10-99"})
    assert r.status_code == 206 and r.content == data[10:100]
    assert r.headers["content-range"] == f"bytes 10-99/{len(data)}"
    assert bob.get(url, headers={"If-None-Match": etag}).status_code == 304
    assert bob.get(url, headers={"Range": f"bytes={len(data) + 5}-"}).status_code == 416
    assert bob.head(url).status_code == 200
    # only its requester downloads it
    assert alice.get(url).status_code == 404
    assert env.world.anonymous().get(url).status_code in (401, 404)
    # bob loses the view right: 404 at once, though the export has not expired
    assert alice.delete(f"/api/spaces/{space}/members/{bob.user_id}").status_code == 204
    assert bob.get(url).status_code == 404
    assert bob.get(url, headers={"Range": "bytes=0-9"}).status_code == 404


@pytest.mark.both_databases
def test_an_expired_export_is_swept_deleted_from_the_store_and_404(env):
    alice = env.world.user("alice")
    unit_id = make_unit(alice, "doc", "Plan", F.document("Plan", [([("x", {})], 1)]))
    op = export(alice, unit_id, "docx")
    object_key = f"exports/{op['id']}"
    env.store.head(object_key)
    url = op["result"]["content_url"]
    assert env.sweep("expire_exports") == {"expired": 0}
    assert alice.get(url).status_code == 200
    assert env.sweep("expire_exports", later=env.settings.export_ttl + 1) == {"expired": 1}
    assert alice.get(url).status_code == 404
    with env.db.read() as s:
        assert s.scalar(select(ObjectDeletionJob.reason).where(
            ObjectDeletionJob.object_key == object_key)) == "export_expired"
    deletion.run_due(env.db, env.store)
    with pytest.raises(BlobNotFound):
        env.store.head(object_key)
    assert env.sweep("expire_exports", later=env.settings.export_ttl + 1) == {"expired": 0}
    assert "expire_exports" in {s.name for s in schedules(env.settings)}


def test_a_retry_overwrites_the_same_object(env):
    alice = env.world.user("alice")
    unit_id = make_unit(alice, "sheet", "Budget", WORKBOOK)
    op = export(alice, unit_id, "csv")
    handler = env.components.handlers["export_unit"]
    with env.db.read() as s:
        row = s.get(Operation, op["id"])
    handler.perform(row)  # as a redelivery after a crash would
    handler.perform(row)
    assert list(env.store.list_keys("exports/")) == [f"exports/{op['id']}"]
    assert env.store.head(f"exports/{op['id']}").size == op["result"]["size"]


def test_a_view_right_lost_while_queued_fails_the_export(env):
    alice, bob = env.world.user("alice"), env.world.user("bob")
    space = alice.post("/api/spaces", json={"name": "Team", "type": "team"}).json["id"]
    assert alice.put(f"/api/spaces/{space}/members/{bob.user_id}",
                     json={"role": "viewer"}).status_code == 201
    unit_id = make_unit(alice, "doc", "Plan", F.document("Plan", [([("x", {})], 1)]),
                        space_id=space)
    env.worker.stop(timeout=5000)
    r = bob.post(f"/api/units/{unit_id}/exports", json={"format": "docx"},
                 headers={"Idempotency-Key": key()})
    assert r.status_code == 202
    assert alice.delete(f"/api/spaces/{space}/members/{bob.user_id}").status_code == 204
    env.worker = dramatiq.Worker(env.components.broker, worker_threads=2, worker_timeout=50)
    env.worker.start()
    op = wait_done(bob, r.json["id"])
    assert op["status"] == "failed" and op["error"]["code"] == "permission_revoked"
    assert list(env.store.list_keys("exports/")) == []
    with env.db.read() as s:
        assert s.scalars(select(Export)).all() == []


def test_odd_documents_still_write(tmp_path):
    """What a changeset may put in a body that Office files cannot hold: control
    characters, invalid or duplicate sheet names, colours that are not #RRGGBB,
    overlapping or degenerate merges. The writers leave it out rather than fail."""
    from wharf.exchange import writers
    doc = F.document("T\x00itle", [([("a\x01b", {"bl": 1})], F.NamedStyle.HEADING_2)])
    writers.write("doc", "docx", doc, str(tmp_path / "a.docx"))
    d = docx.Document(str(tmp_path / "a.docx"))
    assert [(p.text, p.style.name) for p in d.paragraphs] == [("ab", "Heading 2")]
    deck = F.presentation("x", [("t\x02", ["b\x00ox"])])
    writers.write("slide", "pptx", deck, str(tmp_path / "a.pptx"))
    book = F.workbook("B", [
        F.worksheet("a", "x[1]:*?/\\", {"0": {"0": F.cell("v", style="bad")}},
                    [F.merge_range(0, 0, 1, 1), F.merge_range(1, 1, 2, 2),
                     F.merge_range(3, 3, 3, 3)]),
        F.worksheet("b", "X[1]:*?/\\", {}), F.worksheet("c", "", {})],
        {"bad": {"cl": {"rgb": "red"}, "bg": {"rgb": 3}, "fs": "big"}})
    writers.write("sheet", "xlsx", book, str(tmp_path / "a.xlsx"))
    wb = CalamineWorkbook.from_path(str(tmp_path / "a.xlsx"))
    assert wb.sheet_names == ["x_1______", "X_1______~2", "Sheet3"]
    sheet = zipfile.ZipFile(tmp_path / "a.xlsx").read("xl/worksheets/sheet1.xml").decode()
    assert re.findall(r'<mergeCell ref="([A-Z0-9:]+)"/>', sheet) == ["A1:B2"]
    with pytest.raises(ValueError):
        writers.write("doc", "xlsx", doc, str(tmp_path / "b.xlsx"))
