"""The unit store's trunk documents as checkpoints plus a revision log, kept hot per process
(schema version 5, ``storage/unitheads.py``).

Every test runs on SQLite and on PostgreSQL. "Another process" is another ``UnitStore`` on
the same database: it has its own cache of documents, as a second API process would.
"""
# ruff: noqa: F811  (the fixtures ``store`` and ``empty_url`` come from test_unitstore)
from __future__ import annotations

import copy
import json
import uuid

import jsonpatch
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import (
    JSON,
    Column,
    Integer,
    MetaData,
    String,
    Table,
    create_engine,
    func,
    select,
    text,
)

from storage.clock import utcnow
from storage.db import Database
from storage.errors import RevisionConflict
from storage.types import UTCDateTime
from storage.unitheads import CHECKPOINT_MIN_LOG_BYTES
from storage.unitpatch import InvalidChangeset, UnitLimits, json_size
from storage.unitschema import (
    CHECKPOINTS,
    REVISIONS,
    SCHEMA_VERSION,
    UNITS,
    UPGRADES,
    prepare_unitstore_db,
)
from storage.unitstore import UnitStore, initial_snapshot
from tests.storage.test_unitstore import _create_v1_store, _quiet, empty_url, store  # noqa: F401

pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.NonInteractiveExampleWarning")


def _other(store: UnitStore) -> UnitStore:
    """Another process's store on the same database (its own cache)."""
    return UnitStore(store.db, store.limits)


def _cold(store: UnitStore, unit_id: str) -> dict:
    """The document as a process that never saw the unit reads it (checkpoint + log)."""
    unit = _other(store).get(unit_id)
    assert unit is not None
    return unit.snapshot


def _checkpoints(store: UnitStore, unit_id: str) -> list[int]:
    with store.db.read() as s:
        return list(s.scalars(select(CHECKPOINTS.c.revision)
                              .where(CHECKPOINTS.c.unit_id == unit_id)
                              .order_by(CHECKPOINTS.c.revision)))


# --- the same documents and refusals as a plain RFC 6902 implementation -------------------

_keys = st.sampled_from(["a", "b", "c", "é", "x~y", "s/l"])
_scalars = st.one_of(st.integers(-5, 5), st.booleans(), st.none(), st.text(max_size=4),
                     st.sampled_from([0.5, -0.0, 1.0, 1e300]))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(_keys, inner, max_size=3)), max_leaves=8)


def _pointer(doc, draw, *, end: bool) -> str:
    """A pointer into ``doc`` (often existing, sometimes not)."""
    parts: list[str] = []
    node = doc
    while draw(st.booleans()):
        if isinstance(node, dict) and node:
            key = draw(st.sampled_from(sorted(node)))
            parts.append(key)
            node = node[key]
        elif isinstance(node, list) and node:
            i = draw(st.integers(0, len(node) - 1))
            parts.append(str(i))
            node = node[i]
        else:
            break
    if draw(st.integers(0, 3)) == 0:
        parts.append(draw(st.one_of(_keys, st.just("-") if end else _keys, st.just("7"))))
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


@st.composite
def _changesets(draw, doc):
    ops = []
    for _ in range(draw(st.integers(1, 4))):
        name = draw(st.sampled_from(["add", "remove", "replace", "move", "copy", "test"]))
        op = {"op": name, "path": _pointer(doc, draw, end=name in ("add", "move", "copy"))}
        if name in ("add", "replace", "test"):
            op["value"] = draw(_values)
        if name in ("move", "copy"):
            op["from"] = _pointer(doc, draw, end=False)
        ops.append(op)
    return ops


@settings(max_examples=40, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_random_changesets_give_the_documents_and_refusals_of_a_plain_rfc_6902(store, data):
    """Through the store (patched in place, size counted per operation, another process
    catching up from the log, a cold one from the checkpoint) and through ``jsonpatch``
    on a plain copy: the same documents; a refusal exactly where the reference refuses
    (or where the result would not be an object, Wharf's own rule); nothing stored then."""
    unit_id = uuid.uuid4().hex
    start = {"type": "doc", "schemaVersion": 1, "body": {"a": [1, {"b": "c"}], "d": {}}}
    store.create_unit(unit_id, "doc", copy.deepcopy(start))
    peer = _other(store)
    assert peer.get(unit_id).snapshot == start  # the peer holds revision 0 from here on
    expected, revision = start, 0
    for step in range(data.draw(st.integers(1, 6))):
        changes = data.draw(_changesets(expected))
        try:
            reference = jsonpatch.apply_patch(expected, changes)
            refused = not isinstance(reference, dict)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError,
                KeyError, IndexError, ValueError):
            refused = True
        writer = store if step % 2 == 0 else peer
        if refused:
            with pytest.raises(InvalidChangeset):
                writer.apply_changeset(unit_id, revision, changes, "alice")
        else:
            applied = writer.apply_changeset(unit_id, revision, changes, "alice")
            expected, revision = reference, revision + 1
            assert applied.revision == revision
        for reader in (store, peer):
            unit = reader.get(unit_id)
            assert (unit.snapshot, unit.revision) == (expected, revision), changes
        assert _cold(store, unit_id) == expected
        assert store.stored_size(unit_id) == json_size(expected)


# --- what a changeset writes and reads -------------------------------------------------------

def _sheet(cells: int) -> dict:
    return {"type": "sheet", "schemaVersion": 1, "body": {"sheets": {"s1": {"cellData": {
        str(r): {str(c): {"v": "x" * 80, "t": 1} for c in range(10)}
        for r in range(cells // 10)}}}}}


def test_a_changeset_writes_its_revision_not_the_document(store):
    """A one-cell edit of a 2,000-cell document adds one revision row and changes the
    head's columns; the checkpoint written at creation is the only copy of the document
    until the changesets since it outgrow the document."""
    store.create_unit("big", "sheet", _sheet(2000))
    size = store.stored_size("big")
    edit = [{"op": "replace", "path": "/body/sheets/s1/cellData/7/3/v", "value": "y"}]
    store.apply_changeset("big", 0, edit, "alice")
    assert _checkpoints(store, "big") == [0]
    with store.db.read() as s:
        row = s.execute(select(UNITS.c.revision, UNITS.c.size, UNITS.c.log_bytes)
                        .where(UNITS.c.id == "big")).one()
    assert (row.revision, row.size, row.log_bytes) == (1, size - 79, json_size(edit))
    assert _cold(store, "big")["body"]["sheets"]["s1"]["cellData"]["7"]["3"]["v"] == "y"


def test_a_checkpoint_is_written_once_the_log_outgrows_the_document_and_old_ones_pruned(store):
    store.create_unit("u", "doc")
    value = "z" * 4000
    revision, logged = 0, [0]
    while len(_checkpoints(store, "u")) < 3:
        changes = [{"op": "add", "path": "/body/v", "value": value + str(revision)}]
        store.apply_changeset("u", revision, changes, "alice")
        revision += 1
        logged.append(logged[-1] + json_size(changes))
    # a checkpoint comes with the first changeset past the threshold, not before
    first, second, third = _checkpoints(store, "u")
    assert first == 0
    assert logged[second] > CHECKPOINT_MIN_LOG_BYTES >= logged[second - 1]
    expected = {"type": "doc", "schemaVersion": 1, "body": {"v": value + str(revision - 1)}}
    assert _cold(store, "u") == expected
    assert store.prune_checkpoints(limit=10) == 1  # the middle one: not the first, not the last
    assert _checkpoints(store, "u") == [first, third]
    assert store.prune_checkpoints(limit=10) == 0
    assert _cold(store, "u") == expected


def test_prune_is_bounded_per_run(store):
    for n in range(3):
        store.create_unit(f"p{n}", "doc")
        with store.db.write() as s:  # two later checkpoints each, as a long history leaves
            for revision in (1, 2):
                s.execute(CHECKPOINTS.insert().values(
                    unit_id=f"p{n}", revision=revision, snapshot=initial_snapshot("doc"),
                    size=json_size(initial_snapshot("doc")), created_at=utcnow()))
                s.execute(REVISIONS.insert().values(
                    unit_id=f"p{n}", revision=revision, author_id=None, created_at=utcnow(),
                    changeset=[{"op": "test", "path": "/type", "value": "doc"}]))
            s.execute(UNITS.update().where(UNITS.c.id == f"p{n}").values(
                revision=2, checkpoint_revision=2))
    assert store.prune_checkpoints(limit=2) == 2
    assert store.prune_checkpoints(limit=2) == 1
    assert store.prune_checkpoints(limit=2) == 0
    assert all(_checkpoints(store, f"p{n}") == [0, 2] for n in range(3))


def test_a_refused_changeset_leaves_the_kept_document_as_it_was(store):
    """The store patches its kept copy in place; a refusal half-way (a failed ``test``
    after a removal and an insertion) puts it back, member order included."""
    start = {"type": "doc", "schemaVersion": 1, "body": {"a": 1, "b": [1, 2], "c": {"d": 3}}}
    store.create_unit("u", "doc", copy.deepcopy(start))
    assert store.get("u").snapshot == start
    with pytest.raises(InvalidChangeset):
        store.apply_changeset("u", 0, [
            {"op": "remove", "path": "/body/a"}, {"op": "add", "path": "/body/b/0", "value": 0},
            {"op": "move", "from": "/body/c/d", "path": "/body/e"},
            {"op": "test", "path": "/body/e", "value": 4}], "alice")
    kept = store.get("u").snapshot
    assert kept == start and list(kept["body"]) == ["a", "b", "c"]
    assert store.stored_size("u") == json_size(start)


def test_a_commit_that_fails_leaves_the_kept_document_at_the_stored_revision(store,
                                                                              monkeypatch):
    store.create_unit("u", "doc")
    assert store.get("u").revision == 0
    import storage.unitstore as unitstore

    def broken_checkpoint_test(log_bytes: int, size: int) -> bool:
        raise ConnectionError("lost the database mid-changeset")
    monkeypatch.setattr(unitstore, "needs_checkpoint", broken_checkpoint_test)
    with pytest.raises(ConnectionError):
        store.apply_changeset("u", 0, [{"op": "add", "path": "/body/x", "value": 1}], "a")
    monkeypatch.undo()
    unit = store.get("u")
    assert (unit.revision, unit.snapshot) == (0, initial_snapshot("doc"))
    assert store.apply_changeset("u", 0, [{"op": "add", "path": "/body/y", "value": 2}],
                                 "a").revision == 1
    assert store.get("u").snapshot["body"] == {"y": 2}


def test_two_processes_alternate_and_a_stale_base_is_a_conflict(store):
    a, b = store, _other(store)
    a.create_unit("u", "doc")
    for revision in range(6):
        writer = (a, b)[revision % 2]
        writer.apply_changeset("u", revision, [{"op": "add", "path": f"/body/k{revision}",
                                                "value": revision}], "w")
    with pytest.raises(RevisionConflict):
        a.apply_changeset("u", 5, [{"op": "add", "path": "/body/late", "value": 1}], "w")
    expected = {f"k{r}": r for r in range(6)}
    assert a.get("u").snapshot["body"] == expected == b.get("u").snapshot["body"]


def test_a_process_catching_up_several_revisions_keeps_the_size_exact(store):
    """A cold (or lagging) process replays several revisions, then writes: the size it
    stores is the document's (each changeset's delta counted once)."""
    store.create_unit("u", "doc")
    for revision in range(3):
        store.apply_changeset("u", revision, [{"op": "add", "path": f"/body/k{revision}",
                                               "value": "v" * (10 + revision)}], "a")
    lagging = _other(store)
    lagging.apply_changeset("u", 3, [{"op": "add", "path": "/body/z", "value": 1}], "b")
    document = _cold(store, "u")
    assert store.stored_size("u") == json_size(document)
    assert lagging.heads.cached_bytes == json_size(document)


def test_the_cache_counts_each_document_once(store):
    """Many changesets to one unit leave the cache's total at that document's size, so
    other units still fit (the total once grew with every changeset)."""
    small = UnitStore(store.db, store.limits, cache_bytes=10 * json_size(_sheet(100)))
    small.create_unit("a", "sheet", _sheet(100))
    for revision in range(30):
        small.apply_changeset("a", revision, [{"op": "replace", "path": "/schemaVersion",
                                               "value": revision}], "w")
    assert small.heads.cached_bytes == small.stored_size("a")
    small.create_unit("b", "sheet", _sheet(100))
    small.get("b")
    assert small.heads.cached_bytes == small.stored_size("a") + small.stored_size("b")
    assert {"a", "b"} <= {u for u, slot in small.heads._slots.items() if slot.head}


def test_a_head_row_whose_checkpoint_was_replaced_is_read_again(store):
    """A reader that read the head row before a newer checkpoint was written and the
    older pruned must not fall back to an older checkpoint and a longer replay."""
    from storage.unitheads import HeadMoved, HeadRow, read_document
    store.create_unit("u", "doc")
    row = store.head("u")
    stale = HeadRow(**{**row.__dict__, "checkpoint_revision": 7})
    with store.db.read() as s, pytest.raises(HeadMoved):
        read_document(s.connection(), stale)


def test_a_unit_deleted_and_created_again_is_not_served_from_an_old_copy(store):
    peer = _other(store)
    store.create_unit("u", "doc", {"type": "doc", "schemaVersion": 1, "body": {"old": 1}})
    assert peer.get("u").snapshot["body"] == {"old": 1}
    store.delete_unit("u")
    store.create_unit("u", "doc", {"type": "doc", "schemaVersion": 1, "body": {"new": 1}})
    assert peer.get("u").snapshot["body"] == {"new": 1}


def test_a_merge_stores_its_document_as_a_checkpoint_that_others_load(store):
    peer = _other(store)
    store.create_unit("u", "doc")
    assert peer.get("u").revision == 0
    merged = {"type": "doc", "schemaVersion": 1, "body": {"m": 1}}
    store.append_revision_with_snapshot("u", 0, [{"op": "add", "path": "/body/m", "value": 1}],
                                        merged, "system:merge")
    assert _checkpoints(store, "u") == [0, 1]
    assert peer.get("u").snapshot == merged


def test_the_cache_keeps_to_its_budget(store):
    small = UnitStore(store.db, store.limits, cache_bytes=3 * json_size(_sheet(100)))
    for n in range(6):
        small.create_unit(f"s{n}", "sheet", _sheet(100))
        small.get(f"s{n}")
    assert small.heads.cached_bytes <= small.heads.max_bytes
    huge = UnitStore(store.db, store.limits, cache_bytes=100)
    huge.get("s0")
    assert huge.heads.cached_bytes == 0  # larger than the whole budget: not kept


def test_the_size_limit_counts_the_tracked_size(store):
    tight = UnitStore(store.db, UnitLimits(max_bytes=2000))
    tight.create_unit("u", "doc")
    tight.apply_changeset("u", 0, [{"op": "add", "path": "/body/a", "value": "x" * 1000}], "a")
    from storage.unitpatch import UnitTooLarge
    with pytest.raises(UnitTooLarge):
        tight.apply_changeset("u", 1, [{"op": "add", "path": "/body/b", "value": "x" * 1000}],
                              "a")
    # shrinking is always allowed
    tight.apply_changeset("u", 1, [{"op": "remove", "path": "/body/a"}], "a")
    assert tight.stored_size("u") == json_size(initial_snapshot("doc"))


# --- the upgrade from schema version 4 -------------------------------------------------------

DOCUMENTS = {
    "v4a": {"type": "sheet", "schemaVersion": 1, "body": {"n": [1, 2.5, -0.0, 10**20, None],
                                                          "é": "ü\u2028", "deep": {"a": {"b": {}}}}},
    "v4b": {"type": "doc", "schemaVersion": 1, "body": {}},
}


def _to_v4(url: str) -> None:
    """A version 1 store brought to version 4 by the upgrades of the time, then given
    units whose documents exercise JSON's corners."""
    db = Database(url)
    try:
        with db.write() as s:
            conn = s.connection()
            for version in (1, 2, 3):
                UPGRADES[version](conn)
            conn.execute(text("UPDATE unitstore_meta SET value = '4' "
                              "WHERE key = 'schema_version'"))
            units = Table("units", MetaData(), Column("id", String(32)),
                          Column("unit_type", String(8)), Column("snapshot", JSON),
                          Column("revision", Integer), Column("created_at", UTCDateTime),
                          Column("updated_at", UTCDateTime))
            for unit_id, doc in DOCUMENTS.items():
                conn.execute(units.insert().values(id=unit_id, unit_type=doc["type"],
                                                   snapshot=doc, revision=3,
                                                   created_at=utcnow(), updated_at=utcnow()))
                conn.execute(REVISIONS.insert(), [
                    {"unit_id": unit_id, "revision": r, "author_id": f"user{r}",
                     "created_at": utcnow(), "origin": None,
                     "changeset": [{"op": "add", "path": f"/r{r}", "value": r}]}
                    for r in (1, 2, 3)])
    finally:
        db.dispose()


def _value(raw):
    """A JSON column's value read with plain SQL (SQLite hands over its text)."""
    return json.loads(raw) if isinstance(raw, str) else raw


def test_a_populated_v4_store_is_upgraded_keeping_every_document_and_its_history(empty_url):
    _create_v1_store(empty_url)
    _to_v4(empty_url)
    engine = create_engine(empty_url)
    with engine.connect() as conn:
        before = {r.id: (r.snapshot, r.revision) for r in conn.execute(
            text("SELECT id, snapshot, revision FROM units"))}
        history = conn.execute(text("SELECT unit_id, revision, changeset, author_id FROM "
                                    "unit_revisions ORDER BY unit_id, revision")).all()
    engine.dispose()
    db = Database(empty_url)
    try:
        said: list[str] = []
        prepare_unitstore_db(db, report=said.append)
        assert said == [f"wharf: unit store schema upgraded from version 4 to {SCHEMA_VERSION}"]
        store = UnitStore(db)
        for unit_id, (document, revision) in before.items():
            document = _value(document)
            unit = store.get(unit_id)
            assert (unit.snapshot, unit.revision) == (document, revision), unit_id
            assert store.stored_size(unit_id) == json_size(document)
        with db.read() as s:
            assert s.execute(select(REVISIONS.c.unit_id, REVISIONS.c.revision,
                                    REVISIONS.c.changeset, REVISIONS.c.author_id)
                             .order_by(REVISIONS.c.unit_id, REVISIONS.c.revision)).all() \
                == [(r[0], r[1], _value(r[2]), r[3]) for r in history]
            assert s.scalar(select(func.count()).select_from(CHECKPOINTS)) == len(before)
        # and it goes on as a new store: edits, a cold reader, the next checkpoint
        store.apply_changeset("v4a", 3, [{"op": "add", "path": "/body/new", "value": 1}], "a")
        assert _cold(store, "v4a")["body"]["new"] == 1
    finally:
        db.dispose()


# --- worktree drafts share trunk's document ---------------------------------------------------

def _stored_draft(store: UnitStore, worktree_id: str, unit_id: str):
    from storage.unitschema import DRAFTS
    with store.db.read() as s:
        return s.execute(select(DRAFTS.c.base_snapshot, DRAFTS.c.snapshot,
                                DRAFTS.c.base_bytes, DRAFTS.c.snapshot_bytes)
                         .where(DRAFTS.c.worktree_id == worktree_id,
                                DRAFTS.c.unit_id == unit_id)).one()


def test_a_fork_stores_no_document_and_keeps_reading_trunk_at_its_base(store):
    """Adding a trunk unit to a worktree stores the draft's row, not the document (its
    base and head are trunk's at the fork's revision, whatever trunk does next); the
    first changeset stores the head only; the draft quota still counts both."""
    from wharf.worktrees.drafts import Drafts
    drafts = Drafts.of(store)
    document = _sheet(2000)
    store.create_unit("big", "sheet", copy.deepcopy(document))
    store.apply_changeset("big", 0, [{"op": "add", "path": "/body/r1", "value": 1}], "a")
    at_fork = _cold(store, "big")
    size = store.stored_size("big")
    draft = drafts.fork_draft("wt", "big")
    assert (draft.base_revision, draft.snapshot, draft.base_snapshot) == (1, at_fork, at_fork)
    stored = _stored_draft(store, "wt", "big")
    assert (stored.base_snapshot, stored.snapshot) == (None, None)  # JSON null: shared
    assert (stored.base_bytes, stored.snapshot_bytes) == (size, size)
    assert drafts.draft_bytes(["wt"]) == 2 * size
    # trunk moves on; the draft still reads trunk at its base
    store.apply_changeset("big", 1, [{"op": "add", "path": "/body/r2", "value": 2}], "a")
    assert drafts.get_draft("wt", "big").snapshot == at_fork
    assert drafts.get_draft_head("wt", "big").snapshot == at_fork
    # a changeset stores its revision, not the head: both stay shared
    drafts.apply_draft_changeset("wt", "big", 0, [{"op": "add", "path": "/body/d", "value": 3}],
                                 "b")
    edited = {**at_fork, "body": {**at_fork["body"], "d": 3}}
    stored = _stored_draft(store, "wt", "big")
    assert (stored.base_snapshot, stored.snapshot) == (None, None)
    assert stored.snapshot_bytes == size + len(',"d":3')
    assert drafts.get_draft("wt", "big").base_snapshot == at_fork
    assert drafts.get_draft("wt", "big").snapshot == edited
    assert Drafts(store.db, store.limits).get_draft_head("wt", "big").snapshot == edited


def test_prune_keeps_the_checkpoint_a_draft_reads_its_base_from(store):
    """The newest checkpoint at or below a draft's base revision is kept while the draft
    is there (the draft reads its base from it), and pruned once it is gone."""
    from wharf.worktrees.drafts import Drafts
    drafts = Drafts.of(store)
    store.create_unit("u", "doc")
    value, revision = "z" * 4000, 0

    def edit() -> None:
        nonlocal revision
        store.apply_changeset("u", revision, [{"op": "add", "path": "/body/v",
                                               "value": value + str(revision)}], "a")
        revision += 1
    while len(_checkpoints(store, "u")) < 2:
        edit()
    middle = _checkpoints(store, "u")[-1]
    edit()
    drafts.fork_draft("wt", "u")  # its base: one revision past the middle checkpoint
    base = _cold(store, "u")
    while len(_checkpoints(store, "u")) < 3:
        edit()
    assert store.prune_checkpoints(limit=10) == 0  # the middle one is the draft's
    assert _checkpoints(store, "u") == [0, middle, _checkpoints(store, "u")[-1]]
    assert drafts.get_draft("wt", "u").base_snapshot == base
    drafts.delete_draft("wt", "u")
    assert store.prune_checkpoints(limit=10) == 1
