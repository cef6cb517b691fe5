"""Content search (issue 41 item 1): ``GET /api/search?kind=content`` over the text of
units, extracted by the ``index_content`` worker after changes. A word a changeset adds is
found once indexed and not after a changeset removes it (imports and worktree merges are
indexed too); results follow discovery (a stranger, a removed member, trash) exactly as
name search does; keyset pages cover every match once; any ``q`` is a page or a 400; a
purge or an account deletion takes the units' search rows with them. On both databases
(PostgreSQL full text, SQLite FTS5)."""
from __future__ import annotations

import base64
import json
import time
import uuid

import pytest
from sqlalchemy import func, select

from storage.db import Database
from storage.models import SearchDirty, SearchDocument
from tests.conftest import make_settings
from tests.support.foundation import add_member, assert_problem, team_space
from tests.support.waiting import wait_until
from tests.worktrees.test_worktree_merge import (
    add_trunk_unit,
    edit_draft,
    make_doc,
    make_worktree,
    merge,
    ready,
    run,
)
from wharf.infra.clock import utcnow
from wharf.retention.sweeps import SWEEPS, SweepContext
from wharf.search import indexing
from wharf.search.text import MAX_TEXT_BYTES, extract

pytestmark = pytest.mark.both_databases


@pytest.fixture
def settings(tmp_path, database_url, unitstore_url):
    """No debounce: the worker indexes a unit as soon as it is rung."""
    return make_settings(tmp_path, database_url, unitstore_url, search_index_delay=0.0)


def wait_op(client, op_id: str) -> dict:
    deadline = time.monotonic() + 60
    op = client.get(f"/api/operations/{op_id}", params={"wait": "10"}).json
    while not op["done"] and time.monotonic() < deadline:
        op = client.get(f"/api/operations/{op_id}", params={"wait": "10"}).json
    assert op["status"] == "completed", op
    return op


def make_unit(client, space_id: str, name: str, unit_type: str = "doc",
              parent_id: str | None = None) -> dict:
    r = client.post("/api/resources", json={"space_id": space_id, "parent_id": parent_id,
                                            "name": name, "unit_type": unit_type},
                    headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 202, r.text
    return wait_op(client, r.json["id"])["result"]


def write(client, unit_id: str, path: str, value) -> None:
    base = client.get(f"/api/units/{unit_id}").json["revision"]
    r = client.post(f"/api/units/{unit_id}/changesets", json={
        "base_revision": base, "changes": [{"op": "add", "path": path, "value": value}]})
    assert r.status_code == 200, r.text


def write_doc(client, unit_id: str, text: str) -> None:
    write(client, unit_id, "/body/body", {"dataStream": text.replace("\n", "\r") + "\r\n"})


def index(components) -> indexing.Drained:
    """Index every marked unit now (what the worker does once the delay passed)."""
    return indexing.index_due(components.db, components.unitstore, 0)


def found(client, q: str, **params) -> list[str]:
    r = client.get("/api/search", params={"q": q, "kind": "content", **params})
    assert r.status_code == 200, r.text
    return [i["name"] for i in r.json["items"]]


def test_a_word_a_changeset_adds_is_found_once_indexed_and_not_once_removed(
        world, worker, components):
    alice = world.user("alice")
    sp = alice.personal_space_id
    doc = make_unit(alice, sp, "Plan")
    sheet = make_unit(alice, sp, "Budget", "sheet")
    slides = make_unit(alice, sp, "Review", "slide")
    write_doc(alice, doc["unit_id"], "Ship the importer first.\nThen the pelican exporter.")
    # indexed by the worker (rung through the outbox), not by the changeset
    wait_until(lambda: found(alice, "pelican") == ["Plan"], what="the worker indexed it")
    write(alice, sheet["unit_id"], "/body/sheets", {"s1": {"id": "s1", "name": "2027",
          "cellData": {"0": {"0": {"v": "Pelican food", "t": 1}, "1": {"v": 1200, "t": 2}}}}})
    write(alice, slides["unit_id"], "/body/body", {"pages": {"p1": {"id": "p1",
          "title": "Where we are", "pageElements": {"e": {"richText": {"text":
                                                                      "pelican shipped"}}}}}})
    index(components)
    r = alice.get("/api/search", params={"q": "PELICAN", "kind": "content"})
    assert sorted(i["name"] for i in r.json["items"]) == ["Budget", "Plan", "Review"]
    item = next(i for i in r.json["items"] if i["name"] == "Plan")
    assert "«pelican»" in item["snippet"] and item["match"] is None
    assert item["resource_id"] == doc["resource_id"] and item["kind"] == "unit"
    assert item["node_id"] == doc["node_id"] and item["space_id"] == sp
    assert found(alice, "1200") == ["Budget"] and found(alice, "shipped") == ["Review"]
    assert found(alice, "pelican exporter") == ["Plan"]  # every word, anywhere
    assert found(alice, "pelican zebra") == []
    assert found(alice, "pelican", space_id=sp) == ["Plan", "Budget", "Review"] or \
        len(found(alice, "pelican", space_id=sp)) == 3
    # removed by a changeset: gone once indexed again (by the worker or the sweep, which
    # drains what a lost bell left; they race here, so only the sum is known)
    write_doc(alice, doc["unit_id"], "Ship the importer first.")
    swept = SWEEPS["index_content"](SweepContext(
        db=components.db, settings=components.settings, now=utcnow(),
        unitstore=components.unitstore))
    assert set(swept) == {"indexed", "gone"} and swept["gone"] == 0
    index(components)
    assert sorted(found(alice, "pelican")) == ["Budget", "Review"]
    assert found(alice, "importer") == ["Plan"]
    # an imported unit is indexed too (its cells)
    csv = b"name,food\nAda,anchovies\nAlan,pelican pie\n"
    r = alice.post("/api/blob-upload-sessions", json={"space_id": sp, "filename": "menu.csv",
                                                      "size": len(csv)},
                   headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 201, r.text
    assert alice.request("PUT", f"/api/blob-upload-sessions/{r.json['id']}/content", body=csv,
                         headers={"Content-Type": "application/octet-stream",
                                  "Content-Length": str(len(csv))}).status_code == 200
    r = alice.post("/api/imports", json={"upload_session_id": r.json["id"], "space_id": sp,
                                         "name": "Menu"},
                   headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 202, r.text
    wait_op(alice, r.json["id"])
    index(components)
    assert found(alice, "anchovies") == ["Menu"]
    # a stranger finds nothing; the index holds one row per unit, nothing left dirty
    assert found(world.user("mallory"), "pelican") == []
    with components.db.read() as s:
        assert s.scalar(select(func.count()).select_from(SearchDocument)) == 4
        assert s.scalar(select(func.count()).select_from(SearchDirty)) == 0
    # deleting the account purges its units' search rows
    r = alice.delete("/api/me", json_body={}, headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 202, r.text

    def left() -> int:
        with components.db.read() as s:
            return int(s.scalar(select(func.count()).select_from(SearchDocument)) or 0)
    wait_until(lambda: left() == 0, timeout=60, what="the account's search rows purged")


def test_only_what_the_caller_can_discover_now(world, worker, components):
    owner = world.user("owner")
    team = team_space(owner)["id"]
    folder = owner.post("/api/nodes", json={"space_id": team, "name": "Folder"}).json["id"]
    deep = make_unit(owner, team, "Deep", parent_id=folder)
    top = make_unit(owner, team, "Top")
    for unit in (deep, top):
        write_doc(owner, unit["unit_id"], "the walrus report")
    index(components)
    viewer, stranger = world.user("viewer"), world.user("stranger")
    add_member(owner, team, viewer.user_id, "viewer")
    assert sorted(found(owner, "walrus")) == ["Deep", "Top"]
    assert sorted(found(viewer, "walrus", space_id=team)) == ["Deep", "Top"]
    assert found(stranger, "walrus") == [] and found(stranger, "walrus", space_id=team) == []
    assert_problem(world.anonymous().get("/api/search", params={"q": "walrus",
                                                                 "kind": "content"}), 401)
    # trash: below a trashed folder is hidden; restore brings it back
    assert owner.post(f"/api/nodes/{folder}/trash").status_code == 200
    assert found(owner, "walrus") == ["Top"] and found(viewer, "walrus") == ["Top"]
    batch = next(b for b in owner.get(f"/api/spaces/{team}/trash").json["items"]
                 if b["root_node_id"] == folder)
    assert owner.post(f"/api/trash-batches/{batch['id']}/restore").status_code == 200
    assert sorted(found(viewer, "walrus")) == ["Deep", "Top"]
    # a removed member stops finding it at once
    assert owner.delete(f"/api/spaces/{team}/members/{viewer.user_id}").status_code == 204
    assert found(viewer, "walrus") == []
    # a purge takes the search rows with it
    assert owner.post(f"/api/nodes/{folder}/trash").status_code == 200
    r = owner.delete(f"/api/nodes/{folder}", headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 202, r.text
    wait_op(owner, r.json["id"])
    with components.db.read() as s:
        assert list(s.scalars(select(SearchDocument.unit_id))) == [top["unit_id"]]


def test_keyset_pages_cover_every_match_once_best_first(world, worker, components):
    alice = world.user("alice")
    sp = alice.personal_space_id
    for n in range(1, 8):  # "apple" n times among as many other words
        unit = make_unit(alice, sp, f"note {n}")
        write_doc(alice, unit["unit_id"], " ".join(["apple"] * n + ["pear"] * (8 - n)))
    index(components)
    everything = found(alice, "apple")
    assert everything[0] == "note 7" and everything[-1] == "note 1"
    seen, cursor = [], None
    while True:
        params = {"q": "apple", "kind": "content", "limit": "3",
                  **({"cursor": cursor} if cursor else {})}
        page = alice.get("/api/search", params=params).json
        seen += [i["name"] for i in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == everything and len(seen) == 7


def test_any_query_is_a_page_or_a_400(world, worker, components):
    alice = world.user("alice")
    unit = make_unit(alice, alice.personal_space_id, "Odd")
    write_doc(alice, unit["unit_id"], 'say "hello" to NEAR the ex-wife* now')
    index(components)

    def search(q, **params):
        return alice.get("/api/search", params={"q": q, "kind": "content", **params})

    for q in ("", "   "):
        assert_problem(search(q), 400, "validation_failed")
    assert_problem(search("x" * 201), 400, "validation_failed")
    assert_problem(search("a\x00b"), 400)
    for q in ('"', '""', "*", "-", "'; --", "^x", "a OR", "(((", "x" * 200):
        r = search(q)
        assert r.status_code == 200 and r.json["items"] == [], (q, r.text)
    for q in ('"hello', "hello*", "NEAR(", "NEAR(hello wife)", "-hello", "ex-wife", "to:"):
        assert [i["name"] for i in search(q).json["items"]] == ["Odd"], q
    assert search("hello OR nothing").json["items"] == []  # every word, OR is a word
    for raw in (["search-content", "nan", "f" * 32], ["search-content", "inf", "x"],
                ["search-content", "1"], ["search-name", "1", "a", "b"]):
        token = base64.urlsafe_b64encode(json.dumps(raw).encode()).decode().rstrip("=")
        assert_problem(search("hello", cursor=token), 400, "invalid_cursor")
    assert_problem(search("hello", cursor="nonsense"), 400, "invalid_cursor")


def test_extraction_is_bounded_and_ignores_foreign_shapes():
    big = {"body": {"body": {"dataStream": "word " * 400_000}}}
    text = extract("doc", big)
    assert 0 < len(text.encode()) <= MAX_TEXT_BYTES
    for document in (None, [], {"body": []}, {"body": {"body": "x", "title": 5}},
                     {"body": {"sheets": [1], "sheetOrder": "s"}},
                     {"body": {"sheets": {"s": {"cellData": {"0": [1], "1": {"0": 7}}}}}},
                     {"body": {"body": {"pages": {"p": {"pageElements": [1]}}}}}):
        for unit_type in ("doc", "sheet", "slide", "board", "base"):
            assert isinstance(extract(unit_type, document), str)
    assert extract("sheet", {"body": {"name": "B", "sheets": {"s": {"name": "S", "cellData": {
        "0": {"0": {"v": True}, "1": {"v": 2.5}, "2": {"v": "t\ud800"}}}}}}}) == \
        "B\nS\nTRUE\n2.5\nt?"
    assert extract("board", {"body": {"title": "not indexed yet"}}) == ""


def test_a_change_while_indexing_is_indexed_again_and_never_overwritten_by_older(
        world, worker, components):
    """The indexer's two guards: a dirty row is deleted only if no mark came after it was
    read (else it is marked anew), and a document is never replaced by an older revision
    (two indexers racing)."""
    alice = world.user("alice")
    unit = make_unit(alice, alice.personal_space_id, "Race")
    write_doc(alice, unit["unit_id"], "first words")
    index(components)
    # Another unit id (only its text is written), marked through a database without the
    # outbox hand-over: no bell, so no worker drain races the steps below.
    db, uid = Database(components.settings.database_url), "e" * 32
    try:
        with db.write() as s:
            assert indexing.mark(s, [uid, uid]) == 1  # a new row (its first mark), once
            assert indexing.mark(s, [uid]) == 0  # the same row bumped
        with db.read() as s:
            row = s.get(SearchDirty, uid)
            read_token, marks = row.token, row.marks
        assert marks == 2
        with db.write() as s:
            indexing.mark(s, [uid])  # a change while the indexer reads the unit
        newer = {"unit_id": uid, "resource_id": unit["resource_id"], "revision": 99,
                 "body": "newest words"}
        assert indexing._write(db, [newer], [(uid, read_token)]) == 1  # kept, marked anew
        older = {**newer, "revision": 98, "body": "stale words"}
        assert indexing._write(db, [older], []) == 0
        with db.read() as s:
            assert s.get(SearchDirty, uid) is not None
            doc = s.scalar(select(SearchDocument).where(SearchDocument.unit_id == uid))
            assert (doc.revision, doc.body) == (99, "newest words")
    finally:
        db.dispose()
    assert found(alice, "stale") == [] and found(alice, "newest") == ["Race"]


def test_a_worktree_merge_reindexes_the_units_it_changed(world, components, db):
    alice = world.user("alice")
    doc = make_doc(components, alice, {"body": {"dataStream": "old seal text\r\n"}})
    index(components)

    def hits(q: str) -> list[str]:
        r = alice.get("/api/search", params={"q": q, "kind": "content"})
        return [i["resource_id"] for i in r.json["items"]]

    assert hits("seal") == [doc["resource_id"]]
    wt = make_worktree(components, alice)
    add_trunk_unit(components, db, wt, alice.user_id, doc, 0)
    edit_draft(components, wt, doc["unit_id"], [
        {"op": "replace", "path": "/body/body/dataStream", "value": "narwhal text\r\n"}],
        alice.user_id)
    index(components)
    assert hits("narwhal") == []  # a draft is not trunk
    ready(alice, wt)
    assert run(components, alice, merge(alice, wt))["status"] == "completed"
    index(components)
    assert hits("narwhal") == [doc["resource_id"]] and hits("seal") == []
