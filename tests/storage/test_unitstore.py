"""UnitStore schema version 2: worktree drafts, draft revisions, merge records, and the
commits a merge makes through them (spec assets-worktrees §3.2, §7.4, §8.2, §11).

Every test runs on SQLite and on PostgreSQL (the ``backend`` fixture). The merge algorithm
is not under test here: the patches and merged documents below are written by hand, as
the core's ``wharf/worktrees/merge.py`` would compute them.
"""
from __future__ import annotations

import json
import os
import threading
import uuid
from datetime import timedelta

import pytest
from sqlalchemy import (
    JSON,
    Column,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    create_engine,
    inspect,
    text,
)

from storage.clock import utcnow
from storage.db import Database
from storage.enums import DraftRevisionKind, MergeOutcome
from storage.errors import DatabaseBusy
from storage.types import UTCDateTime
from storage.unitpatch import json_size
from storage.unitschema import SCHEMA_VERSION, UnitStoreSchemaError, prepare_unitstore_db
from storage.unitstore import (
    ChangesetTooLarge,
    InvalidChangeset,
    RevisionConflict,
    UnitConflict,
    UnitLimits,
    UnitNotFound,
    UnitStore,
    UnitStoreUnavailable,
    UnitTooLarge,
    initial_snapshot,
)
from tests.support import services
from wharf.worktrees.drafts import MERGE_AUTHOR, DraftKey, DraftNotFound, Drafts
from wharf.worktrees.records import FastForwardUnavailable, MergeRecords, merge_origin

V2_TABLES = ("worktree_drafts", "worktree_draft_revisions", "unit_merge_records")
WT, OP, OP2 = "wt1", "op1", "op2"


def _quiet(*_: object) -> None:
    pass


@pytest.fixture
def store(unitstore_url):
    db = Database(unitstore_url)
    if db.is_postgres:  # conftest truncates the v1 tables only
        with db.write() as s:
            s.execute(text("TRUNCATE " + ", ".join(V2_TABLES)))
    yield UnitStore(db)
    db.dispose()


@pytest.fixture
def drafts(store):
    return Drafts.of(store)


@pytest.fixture
def records(store):
    return MergeRecords.of(store)


@pytest.fixture
def empty_url(backend, tmp_path, request):
    """The URL of an empty database (no UnitStore schema yet), SQLite or PostgreSQL."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'empty-units.db'}"
        return
    services.need(services.postgres_error())
    request.getfixturevalue("postgres_database")  # the suite's PostgreSQL is set up
    name = f"wharf_test_{os.getpid()}_{uuid.uuid4().hex[:6]}_v1"
    admin = create_engine(services.POSTGRES_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    yield services.POSTGRES_URL.rsplit("/", 1)[0] + "/" + name
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def _create_v1_store(url: str) -> None:
    """The schema version 1 wrote (storage/unitstore.py before worktrees), with data."""
    meta = MetaData()
    units = Table("units", meta, Column("id", String(32), primary_key=True),
                  Column("unit_type", String(8)), Column("snapshot", JSON),
                  Column("revision", Integer), Column("created_at", UTCDateTime),
                  Column("updated_at", UTCDateTime))
    revisions = Table("unit_revisions", meta,
                      Column("unit_id", String(32), ForeignKey("units.id", ondelete="CASCADE"),
                             primary_key=True),
                      Column("revision", Integer, primary_key=True),
                      Column("changeset", JSON), Column("author_id", String(64)),
                      Column("created_at", UTCDateTime))
    unitstore_meta = Table("unitstore_meta", meta, Column("key", String(32), primary_key=True),
                           Column("value", String(64)))
    engine = create_engine(url)
    meta.create_all(engine)
    now = utcnow()
    with engine.begin() as conn:
        conn.execute(unitstore_meta.insert(), {"key": "schema_version", "value": "1"})
        conn.execute(units.insert(), [
            {"id": "old1", "unit_type": "sheet", "snapshot": {"a": 2}, "revision": 2,
             "created_at": now, "updated_at": now},
            {"id": "old2", "unit_type": "doc", "snapshot": initial_snapshot("doc"),
             "revision": 0, "created_at": now, "updated_at": now}])
        conn.execute(revisions.insert(), [
            {"unit_id": "old1", "revision": 1, "author_id": "alice", "created_at": now,
             "changeset": [{"op": "add", "path": "/a", "value": 1}]},
            {"unit_id": "old1", "revision": 2, "author_id": "bob", "created_at": now,
             "changeset": [{"op": "replace", "path": "/a", "value": 2}]}])
    engine.dispose()


def _version(db: Database) -> str:
    with db.read() as s:
        return s.execute(text("SELECT value FROM unitstore_meta "
                              "WHERE key = 'schema_version'")).scalar_one()


# -- schema -------------------------------------------------------------------------------

def test_a_fresh_store_is_created_at_the_current_version(store):
    assert SCHEMA_VERSION == 6 and _version(store.db) == "6"
    with store.db.engine.connect() as conn:
        insp = inspect(conn)
        assert set(V2_TABLES) <= set(insp.get_table_names())
        assert "origin" in {c["name"] for c in insp.get_columns("unit_revisions")}
        assert {"conflicts_sha256", "conflicts_operation_id"} <= {
            c["name"] for c in insp.get_columns("unit_merge_records")}


def test_a_v1_store_is_upgraded_in_place_keeping_its_units_and_revisions(empty_url):
    _create_v1_store(empty_url)
    db = Database(empty_url)
    try:
        said: list[str] = []
        prepare_unitstore_db(db, report=said.append)
        assert said == [f"wharf: unit store schema upgraded from version 1 to {SCHEMA_VERSION}"]
        assert _version(db) == str(SCHEMA_VERSION)
        store = UnitStore(db)
        old1 = store.get("old1")
        assert old1 is not None and (old1.snapshot, old1.revision) == ({"a": 2}, 2)
        assert [(r.revision, r.author_id, r.origin) for r in store.revisions("old1")] == \
            [(1, "alice", None), (2, "bob", None)]
        assert store.get("old2").snapshot == initial_snapshot("doc")
        # the upgraded store does everything a fresh one does
        Drafts.of(store).fork_draft(WT, "old1")
        Drafts.of(store).apply_draft_changeset(WT, "old1", 0, [{"op": "add", "path": "/b", "value": 1}],
                                               "carol")
        record = MergeRecords.of(store).commit_fast_forward(OP, WT, "old1", expected_trunk_revision=2,
                                                            expected_draft_revision=1)
        assert (record.trunk_revision_before, record.trunk_revision_after) == (2, 3)
        assert store.revisions("old1", after=2)[0].origin == merge_origin(WT, OP)
        assert store.apply_changeset("old2", 0, [{"op": "add", "path": "/x", "value": 1}],
                                     "dave").revision == 1
        assert store.delete_unit("old1") and store.get("old1") is None
        said.clear()
        prepare_unitstore_db(db, report=said.append)  # at version 3: nothing to do
        assert said == []
    finally:
        db.dispose()


def test_processes_upgrading_a_v1_store_together_upgrade_it_once(empty_url):
    _create_v1_store(empty_url)
    dbs = [Database(empty_url) for _ in range(3)]
    barrier, errors = threading.Barrier(len(dbs)), []

    def prepare(db: Database) -> None:
        barrier.wait()
        try:
            prepare_unitstore_db(db, report=_quiet)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=prepare, args=(db,)) for db in dbs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    try:
        assert errors == [] and _version(dbs[0]) == str(SCHEMA_VERSION)
        assert UnitStore(dbs[0]).get("old1").revision == 2
    finally:
        for db in dbs:
            db.dispose()


def test_processes_preparing_a_new_store_together_create_it_once(empty_url):
    """Two ``wharf migrate`` runs (or workers starting) on a new database: one creates the
    schema, the others wait for it and find it current. Before, each saw no tables and
    created them, and all but one failed (PostgreSQL: "relation units already exists")."""
    said: list[str] = []
    for round_ in range(6):
        url = empty_url.replace("empty-units.db", f"empty-units-{round_}.db")
        if round_ and url == empty_url:  # PostgreSQL: empty the database again
            with Database(url).engine.begin() as conn:
                conn.execute(text("DROP SCHEMA public CASCADE"))
                conn.execute(text("CREATE SCHEMA public"))
        dbs = [Database(url) for _ in range(3)]
        barrier, errors = threading.Barrier(len(dbs)), []

        def prepare(db: Database) -> None:
            try:
                barrier.wait(10)
                prepare_unitstore_db(db, report=said.append)
            except Exception as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=prepare, args=(db,)) for db in dbs]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        try:
            assert errors == [], (round_, errors[:1])
            assert _version(dbs[0]) == str(SCHEMA_VERSION)
        finally:
            for db in dbs:
                db.dispose()
    assert said == [f"wharf: unit store schema at version {SCHEMA_VERSION}"] * 6


def test_a_store_newer_than_this_code_is_refused(store):
    with store.db.write() as s:
        s.execute(text("UPDATE unitstore_meta SET value = :v WHERE key = 'schema_version'"),
                  {"v": str(SCHEMA_VERSION + 1)})
    try:
        with pytest.raises(UnitStoreSchemaError, match=f"version {SCHEMA_VERSION + 1}"):
            prepare_unitstore_db(store.db, report=_quiet)
    finally:
        with store.db.write() as s:
            s.execute(text("UPDATE unitstore_meta SET value = :v "
                           "WHERE key = 'schema_version'"), {"v": str(SCHEMA_VERSION)})


def test_a_v2_store_gets_its_drafts_sizes(empty_url):
    """Version 3 adds each draft's document sizes; the upgrade measures the drafts there
    are, so what a worktree's drafts hold is known without reading them."""
    db = Database(empty_url)
    try:
        prepare_unitstore_db(db, report=_quiet)
        store = UnitStore(db)
        _trunk(store, "u1", {"a": "x" * 100})
        Drafts.of(store).fork_draft(WT, "u1")
        Drafts.of(store).apply_draft_changeset(WT, "u1", 0, [{"op": "add", "path": "/b", "value": 1}],
                                               "carol")
        with db.write() as s:  # back to what version 2 had (a draft stored both documents)
            s.execute(text("UPDATE worktree_drafts SET base_snapshot = :doc, snapshot = :head"),
                      {"doc": json.dumps({"a": "x" * 100}),
                       "head": json.dumps({"a": "x" * 100, "b": 1})})
            for column in ("base_bytes", "snapshot_bytes", "snapshot_revision", "log_bytes"):
                s.execute(text(f"ALTER TABLE worktree_drafts DROP COLUMN {column}"))
            s.execute(text("UPDATE unitstore_meta SET value = '2' "
                           "WHERE key = 'schema_version'"))
        said: list[str] = []
        prepare_unitstore_db(db, report=said.append)
        assert said == [f"wharf: unit store schema upgraded from version 2 to {SCHEMA_VERSION}"]
        base, head = json_size({"a": "x" * 100}), json_size({"a": "x" * 100, "b": 1})
        assert Drafts.of(store).draft_bytes([WT]) == base + head
        assert Drafts.of(store).get_draft_head(WT, "u1").snapshot == {"a": "x" * 100, "b": 1}
        Drafts.of(store).fork_draft("wt2", "u1")  # written with its sizes from now on
        assert Drafts.of(store).draft_bytes([WT, "wt2"]) == base + head + 2 * base
    finally:
        db.dispose()


# -- drafts -------------------------------------------------------------------------------

def _trunk(store: UnitStore, unit_id: str = "u1", snapshot: dict | None = None) -> None:
    store.create_unit(unit_id, "sheet", snapshot if snapshot is not None else {"a": 1})


def _edit(store: UnitStore, rev: int, path: str, value: object, author: str = "alice",
          unit_id: str = "u1", wt: str = WT):
    return Drafts.of(store).apply_draft_changeset(wt, unit_id, rev,
                                                  [{"op": "add", "path": path, "value": value}], author,
                                                  with_document=True)


def test_fork_copies_the_trunk_head_and_is_idempotent(store, drafts):
    _trunk(store)
    store.apply_changeset("u1", 0, [{"op": "add", "path": "/b", "value": 2}], "x")
    draft = drafts.fork_draft(WT, "u1")
    assert (draft.source, draft.unit_type, draft.base_revision, draft.revision,
            draft.base_draft_revision) == ("trunk", "sheet", 1, 0, 0)
    assert draft.snapshot == draft.base_snapshot == {"a": 1, "b": 2}
    _edit(store, 0, "/c", 3)
    again = drafts.fork_draft(WT, "u1")  # the existing draft, edits kept
    assert (again.revision, again.snapshot, again.created_at) == \
        (1, {"a": 1, "b": 2, "c": 3}, draft.created_at)
    assert drafts.fork_draft("wt2", "u1").snapshot == {"a": 1, "b": 2}  # another worktree
    with pytest.raises(UnitNotFound):
        drafts.fork_draft(WT, "missing")
    drafts.create_local_draft(WT, "local", "doc")
    with pytest.raises(UnitConflict):
        drafts.fork_draft(WT, "local")


def test_a_local_draft_starts_at_revision_0_and_is_idempotent_on_its_type(store, drafts):
    draft = drafts.create_local_draft(WT, "n1", "doc")
    assert (draft.source, draft.base_revision, draft.revision, draft.snapshot,
            draft.base_snapshot) == ("worktree", 0, 0, initial_snapshot("doc"),
                                     initial_snapshot("doc"))
    assert drafts.create_local_draft(WT, "n1", "doc") == draft
    with pytest.raises(UnitConflict):
        drafts.create_local_draft(WT, "n1", "sheet")
    assert drafts.create_local_draft(WT, "n2", "sheet", {"x": 1}).snapshot == {"x": 1}
    _trunk(store)
    drafts.fork_draft(WT, "u1")
    with pytest.raises(UnitConflict):
        drafts.create_local_draft(WT, "u1", "sheet")
    with pytest.raises(InvalidChangeset):
        drafts.create_local_draft(WT, "n3", "sheet", ["not", "an", "object"])  # type: ignore[arg-type]
    assert store.get("n1") is None  # no trunk unit until a merge creates it


def test_get_draft_and_its_head(store, drafts):
    assert drafts.get_draft(WT, "u1") is None and drafts.get_draft_head(WT, "u1") is None
    _trunk(store)
    drafts.fork_draft(WT, "u1")
    _edit(store, 0, "/b", 2)
    draft, head = drafts.get_draft(WT, "u1"), drafts.get_draft_head(WT, "u1")
    assert draft.base_snapshot == {"a": 1}
    assert (head.snapshot, head.revision, head.base_revision) == ({"a": 1, "b": 2}, 1, 0)


def test_a_draft_changeset_is_compare_and_set_and_leaves_trunk_alone(store, drafts):
    _trunk(store)
    drafts.fork_draft(WT, "u1")
    head = _edit(store, 0, "/b", 2, author="alice")
    assert (head.revision, json.loads(head.document_json)) == (1, {"a": 1, "b": 2})
    _edit(store, 1, "/c", 3, author="bob")
    with pytest.raises(RevisionConflict) as stale:
        _edit(store, 1, "/d", 4)
    assert stale.value.details == {"current_revision": 2}
    assert [(r.revision, r.author_id, r.kind) for r in drafts.draft_revisions(WT, "u1")] == \
        [(1, "alice", "edit"), (2, "bob", "edit")]
    assert [r.revision for r in drafts.draft_revisions(WT, "u1", after=1)] == [2]
    assert store.get("u1").snapshot == {"a": 1} and store.get("u1").revision == 0
    with pytest.raises(DraftNotFound):
        _edit(store, 0, "/b", 1, unit_id="nope")
    assert issubclass(DraftNotFound, UnitNotFound)  # the core's 404


def test_a_draft_changeset_has_the_limits_of_a_trunk_changeset(store):
    small = UnitStore(store.db, UnitLimits(max_bytes=200, max_ops=2, max_depth=5))
    _trunk(small)
    Drafts.of(small).fork_draft(WT, "u1")
    add = {"op": "add", "path": "/b", "value": 1}
    with pytest.raises(ChangesetTooLarge):
        Drafts.of(small).apply_draft_changeset(WT, "u1", 0, [add] * 3, "a")
    with pytest.raises(UnitTooLarge):
        _edit(small, 0, "/big", "x" * 300)
    with pytest.raises(InvalidChangeset):
        Drafts.of(small).apply_draft_changeset(WT, "u1", 0, [{"op": "remove", "path": "/zz"}], "a")
    with pytest.raises(InvalidChangeset):
        Drafts.of(small).apply_draft_changeset(WT, "u1", 0, [], "a")
    assert Drafts.of(small).get_draft_head(WT, "u1").revision == 0  # nothing written


# -- merge commits ------------------------------------------------------------------------

def _revs(store: UnitStore, unit_id: str = "u1") -> list[tuple]:
    return [(r.revision, r.author_id, r.origin) for r in store.revisions(unit_id)]


def test_fast_forward_appends_the_draft_revisions_with_their_authors(store, drafts, records):
    _trunk(store)
    drafts.fork_draft(WT, "u1")
    _edit(store, 0, "/b", 2, author="alice")
    _edit(store, 1, "/c", 3, author="bob")
    record = records.commit_fast_forward(OP, WT, "u1", expected_trunk_revision=0,
                                         expected_draft_revision=2)
    assert (record.outcome, record.trunk_revision_before, record.trunk_revision_after,
            record.conflicts, record.conflict_count) == ("fast_forward", 0, 2, [], 0)
    origin = merge_origin(WT, OP)
    assert origin == {"merge": {"worktree_id": WT, "operation_id": OP}}
    assert _revs(store) == [(1, "alice", origin), (2, "bob", origin)]
    assert store.get("u1").snapshot == {"a": 1, "b": 2, "c": 3}
    draft = drafts.get_draft(WT, "u1")  # re-based onto the new head
    assert (draft.base_revision, draft.base_draft_revision, draft.revision) == (2, 2, 2)
    assert draft.base_snapshot == draft.snapshot == {"a": 1, "b": 2, "c": 3}
    assert records.merge_record(OP, "u1") == record and records.has_merge_records(OP)
    assert records.merge_records(OP) == [record] and not records.has_merge_records(OP2)

    # later edits after a partial merge fast-forward on their own, authors kept again
    _edit(store, 2, "/d", 4, author="carol")
    again = records.commit_fast_forward(OP2, WT, "u1", expected_trunk_revision=2,
                                        expected_draft_revision=3)
    assert (again.trunk_revision_before, again.trunk_revision_after) == (2, 3)
    assert _revs(store)[-1] == (3, "carol", merge_origin(WT, OP2))


def test_fast_forward_refuses_when_trunk_or_draft_moved(store, drafts, records):
    _trunk(store)
    drafts.fork_draft(WT, "u1")
    _edit(store, 0, "/b", 2)
    with pytest.raises(RevisionConflict) as draft_moved:
        records.commit_fast_forward(OP, WT, "u1", expected_trunk_revision=0,
                                    expected_draft_revision=0)
    assert draft_moved.value.details["scope"] == "draft"
    store.apply_changeset("u1", 0, [{"op": "add", "path": "/t", "value": 1}], "x")
    with pytest.raises(RevisionConflict) as stale:  # the caller's view of trunk is stale
        records.commit_fast_forward(OP, WT, "u1", expected_trunk_revision=0,
                                    expected_draft_revision=1)
    assert stale.value.details == {"current_revision": 1, "scope": "trunk"}
    with pytest.raises(RevisionConflict, match="not a fast-forward"):  # trunk moved since
        records.commit_fast_forward(OP, WT, "u1", expected_trunk_revision=1,
                                    expected_draft_revision=1)
    assert records.merge_record(OP, "u1") is None and store.get("u1").revision == 1


def test_fast_forward_unavailable_writes_nothing(store, drafts, records):
    _trunk(store)
    drafts.fork_draft(WT, "u1")
    with pytest.raises(FastForwardUnavailable) as none:
        records.commit_fast_forward(OP, WT, "u1", expected_trunk_revision=0,
                                    expected_draft_revision=0)
    assert none.value.details == {"reason": "no_revisions"}
    # a rebase with a resolution: the draft head is unlike its base, so the later
    # revisions do not replay onto trunk
    _edit(store, 0, "/b", 1)
    store.apply_changeset("u1", 0, [{"op": "add", "path": "/b", "value": 9}], "trunker")
    drafts.rebase_draft(WT, "u1", expected_draft_revision=1, base_revision=1,
                        base_snapshot={"a": 1, "b": 9}, snapshot={"a": 1, "b": 1},
                        changeset=[], author_id="alice")  # take: draft
    _edit(store, 1, "/c", 2)
    with pytest.raises(FastForwardUnavailable) as differs:
        records.commit_fast_forward(OP, WT, "u1", expected_trunk_revision=1,
                                    expected_draft_revision=2)
    assert differs.value.details == {"reason": "replay_differs"}
    assert store.get("u1").revision == 1 and records.merge_record(OP, "u1") is None
    # the single-revision form
    record = records.commit_merge(
        OP, WT, "u1", expected_trunk_revision=1, expected_draft_revision=2,
        changeset=[{"op": "replace", "path": "/b", "value": 1},
                   {"op": "add", "path": "/c", "value": 2}],
        snapshot={"a": 1, "b": 1, "c": 2}, draft_changeset=[], author_id="merger",
        outcome=MergeOutcome.FAST_FORWARD)
    assert (record.outcome, record.trunk_revision_after) == ("fast_forward", 2)
    assert store.get("u1").snapshot == {"a": 1, "b": 1, "c": 2}
    assert _revs(store)[-1] == (2, "merger", merge_origin(WT, OP))


def test_merge_appends_one_revision_with_the_precomputed_snapshot(store, drafts, records):
    _trunk(store, snapshot={"a": 1, "b": 1})
    drafts.fork_draft(WT, "u1")
    _edit(store, 0, "/d", 1, author="alice")                       # draft: + d
    store.apply_changeset("u1", 0, [{"op": "add", "path": "/t", "value": 1}], "trunker")
    merged = {"a": 1, "b": 1, "t": 1, "d": 1}
    # stored as given: a marker the patch does not produce proves no re-application
    record = records.commit_merge(
        OP, WT, "u1", expected_trunk_revision=1, expected_draft_revision=1,
        changeset=[{"op": "add", "path": "/d", "value": 1}],
        snapshot={**merged, "given": True},
        draft_changeset=[{"op": "add", "path": "/t", "value": 1}], author_id="merger")
    assert (record.outcome, record.trunk_revision_before, record.trunk_revision_after) == \
        ("merged", 1, 2)
    assert store.get("u1").snapshot == {**merged, "given": True}
    last = store.revisions("u1")[-1]
    assert (last.revision, last.author_id, last.origin, last.changeset) == \
        (2, "merger", merge_origin(WT, OP), [{"op": "add", "path": "/d", "value": 1}])
    draft = drafts.get_draft(WT, "u1")  # re-based: base and head are the merge result
    assert (draft.revision, draft.base_revision, draft.base_draft_revision) == (2, 2, 2)
    assert draft.snapshot == draft.base_snapshot == {**merged, "given": True}
    sync = drafts.draft_revisions(WT, "u1")[-1]
    assert (sync.kind, sync.author_id, sync.changeset) == \
        (DraftRevisionKind.MERGE_SYNC, MERGE_AUTHOR, [{"op": "add", "path": "/t", "value": 1}])


def test_merge_without_a_draft_change_writes_no_sync_revision(store, drafts, records):
    _trunk(store)
    drafts.fork_draft(WT, "u1")
    _edit(store, 0, "/d", 1)
    records.commit_merge(OP, WT, "u1", expected_trunk_revision=0, expected_draft_revision=1,
                         changeset=[{"op": "add", "path": "/d", "value": 1}],
                         snapshot={"a": 1, "d": 1}, draft_changeset=[], author_id="m")
    assert [r.kind for r in drafts.draft_revisions(WT, "u1")] == ["edit"]
    assert drafts.get_draft(WT, "u1").base_draft_revision == 1


def test_merge_refusals_write_nothing(store):
    small = UnitStore(store.db, UnitLimits(max_bytes=100))
    _trunk(small)
    Drafts.of(small).fork_draft(WT, "u1")
    _edit(small, 0, "/d", 1)
    args = {"expected_trunk_revision": 0, "expected_draft_revision": 1,
            "changeset": [{"op": "add", "path": "/d", "value": 1}],
            "snapshot": {"a": 1, "d": 1}, "draft_changeset": [], "author_id": "m"}
    with pytest.raises(RevisionConflict):
        MergeRecords.of(small).commit_merge(OP, WT, "u1", **{**args, "expected_trunk_revision": 5})
    with pytest.raises(RevisionConflict):
        MergeRecords.of(small).commit_merge(OP, WT, "u1", **{**args, "expected_draft_revision": 0})
    with pytest.raises(UnitTooLarge):
        MergeRecords.of(small).commit_merge(OP, WT, "u1", **{**args, "snapshot": {"big": "x" * 200}})
    with pytest.raises(InvalidChangeset):
        MergeRecords.of(small).commit_merge(OP, WT, "u1", **{**args, "changeset": []})
    with pytest.raises(InvalidChangeset):
        MergeRecords.of(small).commit_merge(OP, WT, "u1", **{**args, "snapshot": ["no"]})
    with pytest.raises(ValueError):
        MergeRecords.of(small).commit_merge(OP, WT, "u1", **args, outcome=MergeOutcome.CREATED)
    with pytest.raises(DraftNotFound):
        MergeRecords.of(small).commit_merge(OP, "other", "u1", **args)
    assert small.get("u1").revision == 0 and MergeRecords.of(small).merge_record(OP, "u1") is None
    assert Drafts.of(small).get_draft(WT, "u1").revision == 1


def test_created_makes_the_trunk_unit_with_the_draft_history(store, drafts, records):
    drafts.create_local_draft(WT, "n1", "doc")
    _edit(store, 0, "/x", 1, author="alice", unit_id="n1")
    _edit(store, 1, "/y", 2, author="bob", unit_id="n1")
    record = records.commit_created(OP, WT, "n1", expected_draft_revision=2)
    assert (record.outcome, record.trunk_revision_before, record.trunk_revision_after) == \
        ("created", None, 2)
    unit = store.get("n1")
    assert (unit.unit_type, unit.revision) == ("doc", 2)
    assert unit.snapshot == {**initial_snapshot("doc"), "x": 1, "y": 2}
    origin = merge_origin(WT, OP)
    assert _revs(store, "n1") == [(1, "alice", origin), (2, "bob", origin)]
    draft = drafts.get_draft(WT, "n1")  # behaves as a trunk draft from now on
    assert (draft.base_revision, draft.base_draft_revision) == (2, 2)
    assert draft.base_snapshot == unit.snapshot


def test_created_without_revisions_and_when_the_unit_exists(store, drafts, records):
    drafts.create_local_draft(WT, "n1", "sheet", {"s": 1})
    record = records.commit_created(OP, WT, "n1", expected_draft_revision=0)
    assert (record.trunk_revision_before, record.trunk_revision_after) == (None, 0)
    assert store.get("n1").snapshot == {"s": 1} and store.revisions("n1") == []
    # a later merge (the first one's activation was blocked): nothing appended
    again = records.commit_created(OP2, WT, "n1", expected_draft_revision=0)
    assert (again.outcome, again.trunk_revision_before, again.trunk_revision_after) == \
        ("created", 0, 0)
    drafts.create_local_draft(WT, "n2", "doc")
    store.create_unit("n2", "sheet")
    with pytest.raises(UnitConflict):
        records.commit_created(OP, WT, "n2", expected_draft_revision=0)
    _trunk(store)
    drafts.fork_draft(WT, "u1")
    with pytest.raises(UnitConflict):
        records.commit_created(OP, WT, "u1", expected_draft_revision=0)
    with pytest.raises(DraftNotFound):
        records.commit_created(OP, WT, "nope", expected_draft_revision=0)


def test_record_outcome_conflict_and_unchanged(store, drafts, records):
    _trunk(store)
    drafts.fork_draft(WT, "u1")
    _edit(store, 0, "/a", 11)
    conflicts = [{"path": "/a", "base": 1, "trunk": 10, "draft": 11}]
    record = records.record_outcome(OP, WT, "u1", MergeOutcome.CONFLICT, trunk_revision=1,
                                    conflicts=conflicts, conflict_count=12_345)
    assert (record.outcome, record.conflicts, record.conflict_count,
            record.trunk_revision_before, record.trunk_revision_after) == \
        ("conflict", conflicts, 12_345, 1, 1)
    assert drafts.get_draft(WT, "u1").revision == 1  # draft untouched
    # a second call for the same (operation, unit) gets the first record back
    assert records.record_outcome(OP, WT, "u1", MergeOutcome.UNCHANGED,
                                  trunk_revision=1) == record
    assert records.record_outcome(OP2, WT, "u1", MergeOutcome.FAILED,
                                  trunk_revision=None).outcome == "failed"
    with pytest.raises(ValueError):
        records.record_outcome(OP, WT, "u2", MergeOutcome.MERGED, trunk_revision=1)
    with pytest.raises(ValueError):
        records.record_outcome(OP, WT, "u2", MergeOutcome.CONFLICT, trunk_revision=1,
                               sync_changeset=[], expected_draft_revision=0)
    with pytest.raises(ValueError):
        records.record_outcome(OP, WT, "u2", MergeOutcome.UNCHANGED, trunk_revision=1,
                               sync_changeset=[])


def _stored(store: UnitStore, operation_id: str, unit_id: str = "u1") -> tuple:
    """A record's stored conflicts column and the record it refers to, as written."""
    with store.db.read() as s:
        stored, refers_to = s.execute(text(
            "SELECT conflicts, conflicts_operation_id FROM unit_merge_records "
            "WHERE operation_id = :o AND unit_id = :u"), {"o": operation_id, "u": unit_id}).one()
    return json.loads(stored) if isinstance(stored, str) else stored, refers_to


def test_a_repeated_conflict_list_is_stored_once(store, drafts, records):
    _trunk(store)
    drafts.fork_draft(WT, "u1")
    conflicts = [{"path": f"/k{i}", "base": "b" * 4000, "trunk": "t" * 4000,
                  "draft": "d" * 4000} for i in range(20)]
    first = records.record_outcome(OP, WT, "u1", MergeOutcome.CONFLICT, trunk_revision=0,
                                   conflicts=conflicts, conflict_count=25)
    again = records.record_outcome(OP2, WT, "u1", MergeOutcome.CONFLICT, trunk_revision=0,
                                   conflicts=conflicts, conflict_count=25)
    assert _stored(store, OP) == (conflicts, None)
    assert _stored(store, OP2) == ([], OP)  # a reference, not the list again
    for record in (first, again, records.merge_record(OP2, "u1"), *records.merge_records(OP2)):
        assert (record.conflicts, record.conflict_count) == (conflicts, 25)
    # a third repeat refers to the record that holds the list, not to a reference
    records.record_outcome("op3", WT, "u1", MergeOutcome.CONFLICT, trunk_revision=0,
                           conflicts=conflicts)
    assert _stored(store, "op3") == ([], OP)
    # other conflicts, or another worktree's, are stored
    other = conflicts[:19]
    records.record_outcome("op4", WT, "u1", MergeOutcome.CONFLICT, trunk_revision=0,
                           conflicts=other)
    assert _stored(store, "op4") == (other, None)
    drafts.fork_draft("wt2", "u1")
    records.record_outcome("op5", "wt2", "u1", MergeOutcome.CONFLICT, trunk_revision=0,
                           conflicts=conflicts)
    assert _stored(store, "op5") == (conflicts, None)
    # retention deletes a worktree's records together, the referred-to one included
    drafts.delete_drafts(WT)
    assert all(records.merge_record(o, "u1") is None for o in (OP, OP2, "op3", "op4"))
    assert records.merge_record("op5", "u1").conflicts == conflicts


def test_a_v2_store_is_upgraded_keeping_its_merge_records(empty_url):
    """Version 2's merge records (no digest, no reference, no worktree index) stay
    readable after the upgrade, and a repeat of a later record is stored once."""
    conflicts = [{"path": "/a", "base": 1, "trunk": 2, "draft": 3}]
    store = UnitStore(Database(empty_url))
    prepare_unitstore_db(store.db, report=_quiet)
    with store.db.write() as s:  # back to what version 2 created
        s.execute(text("DROP TABLE unit_merge_records"))
        s.execute(text(
            "CREATE TABLE unit_merge_records (operation_id VARCHAR(32) NOT NULL, "
            "unit_id VARCHAR(32) NOT NULL, worktree_id VARCHAR(32) NOT NULL, "
            "outcome VARCHAR(16) NOT NULL, trunk_revision_before INTEGER, "
            "trunk_revision_after INTEGER, conflicts JSON NOT NULL, "
            "conflict_count INTEGER NOT NULL, created_at TIMESTAMP NOT NULL, "
            "PRIMARY KEY (operation_id, unit_id))"))
        s.execute(text("INSERT INTO unit_merge_records VALUES ('old', 'u1', :w, 'conflict', "
                       "1, 1, :c, 1, :t)"),
                  {"w": WT, "c": json.dumps(conflicts), "t": utcnow().replace(tzinfo=None)})
        s.execute(text("UPDATE unitstore_meta SET value = '2' "
                       "WHERE key = 'schema_version'"))
    said: list[str] = []
    prepare_unitstore_db(store.db, report=said.append)
    assert said == [f"wharf: unit store schema upgraded from version 2 to {SCHEMA_VERSION}"]
    assert _version(store.db) == str(SCHEMA_VERSION)
    with store.db.engine.connect() as conn:
        assert "ix_unit_merge_records_worktree" in {
            i["name"] for i in inspect(conn).get_indexes("unit_merge_records")}
    assert MergeRecords.of(store).merge_record("old", "u1").conflicts == conflicts
    _trunk(store)
    Drafts.of(store).fork_draft(WT, "u1")
    for op in (OP, OP2):
        MergeRecords.of(store).record_outcome(op, WT, "u1", MergeOutcome.CONFLICT, trunk_revision=0,
                                              conflicts=conflicts)
    assert _stored(store, OP) == (conflicts, None) and _stored(store, OP2) == ([], OP)
    store.db.dispose()


def test_unchanged_with_trunk_moved_rebases_the_draft_onto_trunk(store, drafts, records):
    _trunk(store)
    drafts.fork_draft(WT, "u1")
    store.apply_changeset("u1", 0, [{"op": "add", "path": "/t", "value": 1}], "trunker")
    sync = [{"op": "add", "path": "/t", "value": 1}]
    with pytest.raises(RevisionConflict):  # trunk moved on since the caller looked
        records.record_outcome(OP, WT, "u1", MergeOutcome.UNCHANGED, trunk_revision=0,
                               sync_changeset=sync, expected_draft_revision=0)
    record = records.record_outcome(OP, WT, "u1", MergeOutcome.UNCHANGED, trunk_revision=1,
                                    sync_changeset=sync, expected_draft_revision=0)
    assert (record.outcome, record.trunk_revision_after) == ("unchanged", 1)
    draft = drafts.get_draft(WT, "u1")
    assert draft.snapshot == draft.base_snapshot == {"a": 1, "t": 1}
    assert (draft.revision, draft.base_revision, draft.base_draft_revision) == (1, 1, 1)
    assert drafts.draft_revisions(WT, "u1")[0].kind == "merge_sync"
    assert store.get("u1").revision == 1  # trunk untouched
    # with an empty patch (merged == trunk == draft): re-based, no draft revision
    store.apply_changeset("u1", 1, [{"op": "add", "path": "/u", "value": 1}], "trunker")
    _edit(store, 1, "/u", 1)
    records.record_outcome(OP2, WT, "u1", MergeOutcome.UNCHANGED, trunk_revision=2,
                           sync_changeset=[], expected_draft_revision=2)
    draft = drafts.get_draft(WT, "u1")
    assert (draft.revision, draft.base_revision, draft.base_draft_revision) == (2, 2, 2)


def test_rebase_moves_the_draft_onto_the_trunk_head(store, drafts):
    _trunk(store)
    drafts.fork_draft(WT, "u1")
    _edit(store, 0, "/a", 11)
    store.apply_changeset("u1", 0, [{"op": "replace", "path": "/a", "value": 10},
                                    {"op": "add", "path": "/t", "value": 1}], "trunker")
    args = {"base_revision": 1, "base_snapshot": {"a": 10, "t": 1},
            "snapshot": {"a": 11, "t": 1}, "changeset": [{"op": "add", "path": "/t",
                                                          "value": 1}],
            "author_id": "alice"}
    with pytest.raises(RevisionConflict) as stale_draft:
        drafts.rebase_draft(WT, "u1", expected_draft_revision=0, **args)
    assert stale_draft.value.details["scope"] == "draft"
    with pytest.raises(RevisionConflict) as stale_trunk:
        drafts.rebase_draft(WT, "u1", expected_draft_revision=1, **{**args, "base_revision": 0})
    assert stale_trunk.value.details == {"current_revision": 1, "scope": "trunk"}
    head = drafts.rebase_draft(WT, "u1", expected_draft_revision=1, **args)
    assert (head.revision, head.base_revision, head.base_draft_revision, head.snapshot) == \
        (2, 1, 2, {"a": 11, "t": 1})
    draft = drafts.get_draft(WT, "u1")
    assert draft.base_snapshot == {"a": 10, "t": 1} and draft.snapshot == {"a": 11, "t": 1}
    rebase = drafts.draft_revisions(WT, "u1")[-1]
    assert (rebase.kind, rebase.author_id) == ("rebase", "alice")
    # now a fast-forward of the single-revision form merges it
    assert store.get("u1").revision == 1
    drafts.create_local_draft(WT, "n1", "doc")
    with pytest.raises(UnitNotFound):  # a local unit never merged has no trunk
        drafts.rebase_draft(WT, "n1", expected_draft_revision=0, **args)


def test_delete_drafts_and_orphan_candidates(store, drafts, records):
    _trunk(store)
    for wt in ("w1", "w2"):
        drafts.fork_draft(wt, "u1")
        drafts.create_local_draft(wt, "n1", "doc")
        _edit(store, 0, "/x", 1, unit_id="n1", wt=wt)
    records.record_outcome(OP, "w1", "u1", MergeOutcome.UNCHANGED, trunk_revision=0)
    records.record_outcome(OP2, "w2", "u1", MergeOutcome.UNCHANGED, trunk_revision=0)
    later = utcnow() + timedelta(seconds=1)
    assert drafts.orphan_drafts(utcnow() - timedelta(hours=1)) == []
    everything = drafts.orphan_drafts(later)
    assert everything == [DraftKey("w1", "n1"), DraftKey("w1", "u1"), DraftKey("w2", "n1"),
                          DraftKey("w2", "u1")]
    assert drafts.orphan_drafts(later, limit=2) == everything[:2]
    assert drafts.orphan_drafts(later, after=everything[1], limit=2) == everything[2:]
    assert drafts.delete_draft("w2", "n1") and not drafts.delete_draft("w2", "n1")
    assert drafts.draft_revisions("w2", "n1") == []
    assert drafts.delete_drafts("w1") == 2 and drafts.delete_drafts("w1") == 0
    assert drafts.get_draft("w1", "u1") is None and drafts.draft_revisions("w1", "n1") == []
    assert drafts.get_draft("w2", "u1") is not None  # another worktree's draft stays
    # the worktree's merge records go with its drafts (retention); another's stay
    assert records.merge_record(OP, "u1") is None and records.merge_records(OP) == []
    assert records.merge_record(OP2, "u1") is not None
    assert store.get("u1") is not None


def test_append_revision_with_snapshot_stores_the_given_document(store):
    _trunk(store)
    unit = store.append_revision_with_snapshot(
        "u1", 0, [{"op": "add", "path": "/b", "value": 2}], {"a": 1, "b": 2, "given": 1},
        "alice", {"merge": {"worktree_id": WT, "operation_id": OP}})
    assert (unit.revision, unit.snapshot) == (1, {"a": 1, "b": 2, "given": 1})
    assert store.get("u1").snapshot == {"a": 1, "b": 2, "given": 1}
    assert _revs(store) == [(1, "alice", merge_origin(WT, OP))]
    store.append_revision_with_snapshot("u1", 1, [{"op": "remove", "path": "/given"}],
                                        {"a": 1, "b": 2}, None)
    assert store.revisions("u1")[-1].origin is None
    with pytest.raises(RevisionConflict) as stale:
        store.append_revision_with_snapshot("u1", 1, [{"op": "add", "path": "/c",
                                                       "value": 1}], {}, "a")
    assert stale.value.details == {"current_revision": 2, "scope": "trunk"}
    with pytest.raises(UnitNotFound):
        store.append_revision_with_snapshot("nope", 0, [{"op": "add", "path": "/c",
                                                         "value": 1}], {}, "a")
    with pytest.raises(InvalidChangeset):
        store.append_revision_with_snapshot("u1", 2, [{"path": "/c"}], {}, "a")
    assert store.get("u1").revision == 2


def test_a_large_fast_forward_and_merge(store, drafts, records):
    """200 sheet rows x 50 cells: the documents a merge moves are not small."""
    rows = {str(r): {str(c): {"v": r * c} for c in range(50)} for r in range(200)}
    _trunk(store, snapshot={"cellData": rows})
    drafts.fork_draft(WT, "u1")
    for i in range(20):
        _edit(store, i, f"/cellData/{i}/0/v", -i, author=f"user{i % 3}")
    record = records.commit_fast_forward(OP, WT, "u1", expected_trunk_revision=0,
                                         expected_draft_revision=20)
    assert record.trunk_revision_after == 20
    assert store.get("u1").snapshot == drafts.get_draft(WT, "u1").snapshot
    assert {r.author_id for r in store.revisions("u1")} == {"user0", "user1", "user2"}


# -- crashes, re-runs and races --------------------------------------------------------------

def _merge_args(store: UnitStore) -> dict:
    return {"expected_trunk_revision": 0, "expected_draft_revision": 1,
            "changeset": [{"op": "add", "path": "/d", "value": 1}],
            "snapshot": {"a": 1, "d": 1}, "draft_changeset": [], "author_id": "m"}


def test_a_rerun_after_a_crash_gets_the_record_and_writes_nothing_again(store, drafts, records, unitstore_url):
    _trunk(store)
    drafts.create_local_draft(WT, "n1", "doc")
    _edit(store, 0, "/x", 1, unit_id="n1")
    drafts.fork_draft(WT, "u1")
    _edit(store, 0, "/d", 1)
    _trunk(store, "u2")
    drafts.fork_draft(WT, "u2")
    _edit(store, 0, "/e", 1, unit_id="u2")
    first = {
        "u1": records.commit_merge(OP, WT, "u1", **_merge_args(store)),
        "n1": records.commit_created(OP, WT, "n1", expected_draft_revision=1),
        "u2": records.commit_fast_forward(OP, WT, "u2", expected_trunk_revision=0,
                                          expected_draft_revision=1)}
    heads = {u: (store.get(u).revision, drafts.get_draft(WT, u).revision) for u in first}
    # the worker died before its product commit; another process runs the operation again
    # with what it read before (stale revisions): the records come back, nothing is written
    rerun_db = Database(unitstore_url)
    try:
        rerun = UnitStore(rerun_db)
        assert MergeRecords.of(rerun).commit_merge(OP, WT, "u1", **_merge_args(store)) == first["u1"]
        assert MergeRecords.of(rerun).commit_created(OP, WT, "n1", expected_draft_revision=1) == first["n1"]
        assert MergeRecords.of(rerun).commit_fast_forward(OP, WT, "u2", expected_trunk_revision=0,
                                                          expected_draft_revision=1) == first["u2"]
        assert MergeRecords.of(rerun).record_outcome(OP, WT, "u1", MergeOutcome.CONFLICT,
                                                     trunk_revision=0) == first["u1"]
    finally:
        rerun_db.dispose()
    assert {u: (store.get(u).revision, drafts.get_draft(WT, u).revision) for u in first} == \
        heads
    assert len(store.revisions("u1")) == 1 and len(store.revisions("n1")) == 1
    assert len(store.revisions("u2")) == 1
    assert records.merge_records(OP) == sorted(first.values(), key=lambda r: r.unit_id)


def test_a_crash_before_the_record_leaves_no_trunk_revision(store, drafts, records, monkeypatch):
    _trunk(store)
    drafts.fork_draft(WT, "u1")
    _edit(store, 0, "/d", 1)

    def die(*_a, **_k):
        raise RuntimeError("killed between the trunk write and the record")
    with monkeypatch.context() as m:
        m.setattr(MergeRecords, "_insert_record", die)
        with pytest.raises(RuntimeError):
            records.commit_merge(OP, WT, "u1", **_merge_args(store))
        with pytest.raises(RuntimeError):
            records.commit_fast_forward(OP, WT, "u1", expected_trunk_revision=0,
                                        expected_draft_revision=1)
    # one transaction: no trunk revision, no draft re-base, no record
    assert store.get("u1").revision == 0 and store.revisions("u1") == []
    assert drafts.get_draft(WT, "u1").revision == 1 and records.merge_record(OP, "u1") is None
    record = records.commit_merge(OP, WT, "u1", **_merge_args(store))  # the re-run writes once
    assert record.trunk_revision_after == 1 and len(store.revisions("u1")) == 1


def _race(n: int, fn) -> tuple[list, list]:
    barrier, results, errors = threading.Barrier(n), [], []
    lock = threading.Lock()

    def run(i: int) -> None:
        barrier.wait()
        try:
            out = fn(i)
            with lock:
                results.append(out)
        except Exception as exc:
            with lock:
                errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results, errors


def test_concurrent_runs_of_one_merge_write_trunk_once(store, drafts, records):
    """Two workers running the same operation (a lease expired): one trunk write, one
    record, both get it."""
    _trunk(store)
    drafts.fork_draft(WT, "u1")
    _edit(store, 0, "/d", 1)
    drafts.create_local_draft(WT, "n1", "doc")
    _edit(store, 0, "/x", 1, unit_id="n1")
    results, errors = _race(6, lambda i: (
        records.commit_merge(OP, WT, "u1", **_merge_args(store)) if i % 2 else
        records.commit_created(OP, WT, "n1", expected_draft_revision=1)))
    assert errors == [] and len(results) == 6
    assert {(r.unit_id, r.trunk_revision_after) for r in results} == {("u1", 1), ("n1", 1)}
    assert len(store.revisions("u1")) == 1 and len(store.revisions("n1")) == 1
    assert len(records.merge_records(OP)) == 2


def test_concurrent_merges_into_one_unit_compare_and_set(store, drafts, records):
    """Different operations racing on one trunk unit: one wins, the others must recompute."""
    _trunk(store)
    for i in range(4):
        drafts.fork_draft(f"w{i}", "u1")
        _edit(store, 0, f"/d{i}", i, wt=f"w{i}")
    results, errors = _race(4, lambda i: records.commit_merge(
        f"op{i}", f"w{i}", "u1", expected_trunk_revision=0, expected_draft_revision=1,
        changeset=[{"op": "add", "path": f"/d{i}", "value": i}],
        snapshot={"a": 1, f"d{i}": i}, draft_changeset=[], author_id="m"))
    assert len(results) == 1 and len(errors) == 3
    assert all(isinstance(e, RevisionConflict) for e in errors)
    assert store.get("u1").revision == 1 and len(store.revisions("u1")) == 1


# -- transient trouble ----------------------------------------------------------------------

CALLS = {
    "fork_draft": lambda s: Drafts.of(s).fork_draft(WT, "u1"),
    "create_local_draft": lambda s: Drafts.of(s).create_local_draft(WT, "n1", "doc"),
    "get_draft": lambda s: Drafts.of(s).get_draft(WT, "u1"),
    "get_draft_head": lambda s: Drafts.of(s).get_draft_head(WT, "u1"),
    "draft_revisions": lambda s: Drafts.of(s).draft_revisions(WT, "u1"),
    "apply_draft_changeset": lambda s: Drafts.of(s).apply_draft_changeset(
        WT, "u1", 0, [{"op": "add", "path": "/b", "value": 1}], "a"),
    "rebase_draft": lambda s: Drafts.of(s).rebase_draft(WT, "u1", expected_draft_revision=0,
                                                        base_revision=0, base_snapshot={}, snapshot={},
                                                        changeset=[], author_id="a"),
    "delete_draft": lambda s: Drafts.of(s).delete_draft(WT, "u1"),
    "delete_drafts": lambda s: Drafts.of(s).delete_drafts(WT),
    "orphan_drafts": lambda s: Drafts.of(s).orphan_drafts(utcnow()),
    "merge_record": lambda s: MergeRecords.of(s).merge_record(OP, "u1"),
    "merge_records": lambda s: MergeRecords.of(s).merge_records(OP),
    "has_merge_records": lambda s: MergeRecords.of(s).has_merge_records(OP),
    "commit_fast_forward": lambda s: MergeRecords.of(s).commit_fast_forward(
        OP, WT, "u1", expected_trunk_revision=0, expected_draft_revision=1),
    "commit_merge": lambda s: MergeRecords.of(s).commit_merge(OP, WT, "u1", **_merge_args(s)),
    "commit_created": lambda s: MergeRecords.of(s).commit_created(OP, WT, "n1", expected_draft_revision=0),
    "record_outcome": lambda s: MergeRecords.of(s).record_outcome(OP, WT, "u1", MergeOutcome.CONFLICT,
                                                                  trunk_revision=0),
    "append_revision_with_snapshot": lambda s: s.append_revision_with_snapshot(
        "u1", 0, [{"op": "add", "path": "/b", "value": 1}], {"b": 1}, "a"),
    "revisions": lambda s: s.revisions("u1"),
}


@pytest.mark.parametrize("method", list(CALLS))
def test_transient_database_trouble_is_the_unit_store_being_unavailable(store, monkeypatch,
                                                                        method):
    def busy(*_a, **_k):
        raise DatabaseBusy("locked")
    monkeypatch.setattr(store.db, "write", busy)
    monkeypatch.setattr(store.db, "read", busy)
    with pytest.raises(UnitStoreUnavailable):
        CALLS[method](store)


def test_a_local_unit_created_earlier_catches_up_with_its_draft(store, drafts, records):
    """Review finding: a local unit whose trunk unit an earlier merge created (its
    activation then blocked, or that merge failed before its commit) and whose draft was
    edited since: the next merge brings the edits over instead of recording `created`
    over the stale content."""
    drafts.create_local_draft(WT, "loc", "doc", {"a": 1})
    records.commit_created("opA", WT, "loc", expected_draft_revision=0)
    assert store.get("loc").snapshot == {"a": 1}
    head = drafts.apply_draft_changeset(WT, "loc", drafts.get_draft(WT, "loc").revision,
                                        [{"op": "replace", "path": "/a", "value": 2}], "alice")
    rec = records.commit_created("opB", WT, "loc", expected_draft_revision=head.revision,
                                 catch_up=[{"op": "replace", "path": "/a", "value": 2}])
    assert store.get("loc").snapshot == {"a": 2}
    assert rec.outcome == "created" and rec.trunk_revision_after == store.get("loc").revision
    # A re-run of opB finds its record and writes nothing more.
    again = records.commit_created("opB", WT, "loc", expected_draft_revision=head.revision,
                                   catch_up=[{"op": "replace", "path": "/a", "value": 2}])
    assert again == rec and store.get("loc").snapshot == {"a": 2}


def test_a_unit_created_with_its_body_already_encoded_reads_back_as_that_body(store):
    """An import hands its body over as JSON text (``msgspec.Raw``): the store writes it as
    it is, counts its size as that of the same document encoded, and reads it back."""
    import msgspec
    body = {"name": "B", "sheets": {"s1": {"cellData": {"0": {"0": {"v": "é\"\\", "t": 1},
                                                               "1": {"v": 2.5, "t": 2}}}}}}
    store.create_unit("raw", "sheet", {"type": "sheet", "schemaVersion": 1,
                                       "body": msgspec.Raw(msgspec.json.encode(body))})
    document = {"type": "sheet", "schemaVersion": 1, "body": body}
    assert store.get("raw").snapshot == document
    assert store.head("raw").size == json_size(document)
