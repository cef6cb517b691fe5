"""A worktree draft's head as a checkpoint plus its draft revisions, kept hot per process
(schema version 6): a draft changeset costs what a trunk one costs.

Every test runs on SQLite and on PostgreSQL. "Another process" is another ``UnitStore``
(and its ``Drafts``) on the same database: its own cache of documents.
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
from sqlalchemy import select

from storage.errors import DraftQuotaExceeded, RevisionConflict
from storage.unitheads import CHECKPOINT_MIN_LOG_BYTES
from storage.unitpatch import InvalidChangeset, json_size
from storage.unitschema import DRAFTS
from storage.unitstore import UnitStore
from tests.storage.test_unit_log import _changesets, _other, _sheet
from tests.storage.test_unitstore import empty_url, store  # noqa: F401
from wharf.worktrees.drafts import Drafts

pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.NonInteractiveExampleWarning")

WT = "wt"


def _row(store: UnitStore, unit_id: str, wt: str = WT):
    with store.db.read() as s:
        return s.execute(select(DRAFTS.c.revision, DRAFTS.c.snapshot_revision,
                                DRAFTS.c.log_bytes, DRAFTS.c.snapshot_bytes,
                                DRAFTS.c.snapshot)
                         .where(DRAFTS.c.worktree_id == wt,
                                DRAFTS.c.unit_id == unit_id)).one()


def _cold(store: UnitStore, unit_id: str, wt: str = WT) -> dict:
    """The draft head as a process that never saw it reads it (checkpoint + log)."""
    head = Drafts.of(_other(store)).get_draft_head(wt, unit_id)
    assert head is not None
    return head.snapshot


def _edit(drafts: Drafts, unit_id: str, revision: int, changes: list, **kw):
    return drafts.apply_draft_changeset(WT, unit_id, revision, changes, "alice", **kw)


def test_a_draft_changeset_writes_its_revision_not_the_document(store):
    """One-cell edits of a forked 2,000-cell sheet store draft revisions and head columns
    only: the head stays trunk's shared document with the log on top."""
    drafts = Drafts.of(store)
    store.create_unit("big", "sheet", _sheet(2000))
    size = store.stored_size("big")
    drafts.fork("wt", "big")
    for revision in range(3):
        edit = [{"op": "replace", "path": f"/body/sheets/s1/cellData/7/{revision}/v",
                 "value": "y"}]
        applied = _edit(drafts, "big", revision, edit)
        assert applied.document_json is None and applied.revision == revision + 1
    row = _row(store, "big")
    assert (row.revision, row.snapshot_revision, row.snapshot) == (3, 0, None)
    assert (row.snapshot_bytes, row.log_bytes) == (size - 3 * 79, 3 * json_size(edit))
    cells = _cold(store, "big")["body"]["sheets"]["s1"]["cellData"]["7"]
    assert [cells[str(c)]["v"] for c in range(4)] == ["y", "y", "y", "x" * 80]
    assert store.get("big").revision == 0  # trunk untouched


def test_a_draft_checkpoint_is_written_once_its_log_outgrows_the_head(store):
    drafts = Drafts.of(store)
    store.create_unit("u", "doc")
    drafts.fork(WT, "u")
    value, revision, logged = "z" * 4000, 0, [0]
    while _row(store, "u").snapshot_revision == 0:
        changes = [{"op": "add", "path": "/body/v", "value": value + str(revision)}]
        _edit(drafts, "u", revision, changes)
        revision += 1
        logged.append(logged[-1] + json_size(changes))
    row = _row(store, "u")
    assert row.snapshot_revision == revision and row.log_bytes == 0
    assert logged[revision] > CHECKPOINT_MIN_LOG_BYTES >= logged[revision - 1]
    expected = {"type": "doc", "schemaVersion": 1, "body": {"v": value + str(revision - 1)}}
    assert row.snapshot == expected == _cold(store, "u")
    _edit(drafts, "u", revision, [{"op": "add", "path": "/body/w", "value": 1}])
    assert _cold(store, "u") == {**expected, "body": {**expected["body"], "w": 1}}


def test_two_processes_alternate_on_one_draft_and_a_stale_base_is_a_conflict(store):
    a, b = Drafts.of(store), Drafts.of(_other(store))
    store.create_unit("u", "doc")
    a.fork(WT, "u")
    for revision in range(6):
        (a, b)[revision % 2].apply_draft_changeset(
            WT, "u", revision, [{"op": "add", "path": f"/body/k{revision}",
                                 "value": "v" * revision}], "w")
    with pytest.raises(RevisionConflict):
        a.apply_draft_changeset(WT, "u", 5, [{"op": "add", "path": "/body/late",
                                              "value": 1}], "w")
    expected = {f"k{r}": "v" * r for r in range(6)}
    assert a.get_draft_head(WT, "u").snapshot["body"] == expected
    assert b.get_draft_head(WT, "u").snapshot["body"] == expected
    assert _row(store, "u").snapshot_bytes == json_size(a.get_draft_head(WT, "u").snapshot)


def test_a_quota_refusal_leaves_the_kept_head_as_it_was(store):
    """The quota is measured from the tracked size; a refusal writes nothing and the
    process's copy is undone (its next changeset applies to the stored head)."""
    drafts = Drafts.of(store)
    store.create_unit("u", "doc")
    drafts.fork(WT, "u")
    _edit(drafts, "u", 0, [{"op": "add", "path": "/body/a", "value": 1}])
    with pytest.raises(DraftQuotaExceeded) as refused:
        _edit(drafts, "u", 1, [{"op": "add", "path": "/body/big", "value": "x" * 100}],
              max_growth=50)
    assert refused.value.details["bytes"] == len(',"big":""') + 100
    applied = _edit(drafts, "u", 1, [{"op": "add", "path": "/body/b", "value": 2}],
                    max_growth=50, with_document=True)
    assert json.loads(applied.document_json)["body"] == {"a": 1, "b": 2}
    assert _cold(store, "u")["body"] == {"a": 1, "b": 2}


def test_a_rebase_by_another_process_is_not_hidden_by_a_kept_head(store):
    """A process that keeps the draft head at revision n must not patch it after another
    process re-based the draft (a new checkpoint at a later revision)."""
    a, b = Drafts.of(store), Drafts.of(_other(store))
    store.create_unit("u", "doc", {"type": "doc", "schemaVersion": 1, "body": {"t": 0}})
    a.fork(WT, "u")
    _edit(a, "u", 0, [{"op": "add", "path": "/body/d", "value": 1}])
    store.apply_changeset("u", 0, [{"op": "replace", "path": "/body/t", "value": 1}], "x")
    trunk = store.get("u").snapshot
    merged = {**trunk, "body": {**trunk["body"], "d": 1}}
    b.rebase_draft(WT, "u", expected_draft_revision=1, base_revision=1, base_snapshot=trunk,
                   snapshot=merged, changeset=[{"op": "replace", "path": "/body/t",
                                                "value": 1}], author_id="system:rebase")
    applied = _edit(a, "u", 2, [{"op": "add", "path": "/body/e", "value": 2}],
                    with_document=True)
    assert json.loads(applied.document_json)["body"] == {"t": 1, "d": 1, "e": 2}
    assert _cold(store, "u")["body"] == {"t": 1, "d": 1, "e": 2}


def test_a_draft_removed_and_forked_again_is_not_served_from_an_old_copy(store):
    drafts = Drafts.of(store)
    store.create_unit("u", "doc")
    drafts.fork(WT, "u")
    _edit(drafts, "u", 0, [{"op": "add", "path": "/body/old", "value": 1}])
    assert drafts.delete_draft(WT, "u")
    drafts.fork(WT, "u")
    applied = _edit(drafts, "u", 0, [{"op": "add", "path": "/body/new", "value": 1}],
                    with_document=True)
    assert json.loads(applied.document_json)["body"] == {"new": 1}


@settings(max_examples=30, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_random_draft_changesets_give_the_documents_and_refusals_of_a_plain_rfc_6902(
        store, data):
    """As for trunk units: two processes alternating on a forked draft, a cold reader, and
    ``jsonpatch`` on a plain copy agree on every document and every refusal."""
    unit_id = uuid.uuid4().hex
    start = {"type": "doc", "schemaVersion": 1, "body": {"a": [1, {"b": "c"}], "d": {}}}
    store.create_unit(unit_id, "doc", copy.deepcopy(start))
    mine, peer = Drafts.of(store), Drafts.of(_other(store))
    mine.fork(WT, unit_id)
    assert peer.get_draft_head(WT, unit_id).snapshot == start
    expected, revision = start, 0
    for step in range(data.draw(st.integers(1, 6))):
        changes = data.draw(_changesets(expected))
        try:
            reference = jsonpatch.apply_patch(expected, changes)
            refused = not isinstance(reference, dict)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError,
                KeyError, IndexError, ValueError):
            refused = True
        writer = mine if step % 2 == 0 else peer
        if refused:
            with pytest.raises(InvalidChangeset):
                writer.apply_draft_changeset(WT, unit_id, revision, changes, "alice")
        else:
            applied = writer.apply_draft_changeset(WT, unit_id, revision, changes, "alice",
                                                   with_document=True)
            expected, revision = reference, revision + 1
            assert json.loads(applied.document_json) == expected
        assert _cold(store, unit_id) == expected
        assert _row(store, unit_id).snapshot_bytes == json_size(expected)
    assert store.get(unit_id).snapshot == start  # trunk untouched


def test_a_merge_leaves_the_draft_sharing_trunks_document(store):
    """After a merge the draft's base and head are trunk's merged document: the draft
    stores neither (JSON null, read from trunk at its new base revision), and keeps
    reading it after trunk moves on and old checkpoints are pruned."""
    from wharf.worktrees import merge as three_way
    from wharf.worktrees.records import MergeRecords
    drafts = Drafts.of(store)
    store.create_unit("u", "sheet", _sheet(200))
    drafts.fork(WT, "u")
    _edit(drafts, "u", 0, [{"op": "add", "path": "/body/d", "value": 1}])
    store.apply_changeset("u", 0, [{"op": "add", "path": "/body/t", "value": 2}], "x")
    draft, trunk = drafts.get_draft(WT, "u"), store.get("u")
    result = three_way.merge(draft.base_snapshot, trunk.snapshot, draft.snapshot)
    MergeRecords.of(store).commit_merge(
        "op1", WT, "u", expected_trunk_revision=1, expected_draft_revision=1,
        changeset=result.patch, snapshot=result.merged,
        draft_changeset=three_way.diff(draft.snapshot, result.merged), author_id="alice")
    row = _row(store, "u")
    assert row.snapshot is None and row.snapshot_bytes == store.stored_size("u")
    with store.db.read() as s:
        assert s.scalar(select(DRAFTS.c.base_snapshot).where(
            DRAFTS.c.worktree_id == WT, DRAFTS.c.unit_id == "u")) is None
    assert _cold(store, "u") == result.merged == store.get("u").snapshot
    for revision in range(2, 5):  # trunk moves on; the draft still reads its base
        store.apply_changeset("u", revision, [{"op": "add", "path": "/body/t",
                                               "value": revision}], "x")
    store.prune_checkpoints(limit=100)
    assert _cold(store, "u") == result.merged
    applied = _edit(drafts, "u", row.revision, [{"op": "add", "path": "/body/e", "value": 3}],
                    with_document=True)
    assert json.loads(applied.document_json) == {
        **result.merged, "body": {**result.merged["body"], "e": 3}}


@pytest.mark.parametrize("value", ["\ud800 lone", 2**70, -0.0, 1e300, "ü\u2028\x00"])
def test_values_msgspec_refuses_or_keeps_apart_survive_the_json_columns(store, value):
    """The JSON columns are (de)serialized by msgspec with the standard library as the
    fallback: a lone surrogate, a big integer, -0.0 come back as they went in, in a
    checkpoint and in a replayed revision alike."""
    store.create_unit("u", "doc", {"type": "doc", "schemaVersion": 1, "body": {"v": value}})
    store.apply_changeset("u", 0, [{"op": "add", "path": "/body/w", "value": [value]}], "a")
    body = _other(store).get("u").snapshot["body"]
    assert body == {"v": value, "w": [value]}
    assert repr(body["v"]) == repr(value)


def test_a_merge_that_moves_the_base_drops_a_kept_head_equal_only_by_value(store):
    """Review finding: the draft adds ``1``, trunk adds ``1.0`` at the same path; the merge
    (equal by the merge's JSON equality) writes no draft revision but leaves the draft on
    trunk's merged document. The process that kept the draft's head must not go on
    serving its own bytes: its next changeset answers what a cold process reads."""
    from wharf.worktrees import merge as three_way
    from wharf.worktrees.records import MergeRecords
    drafts = Drafts.of(store)
    store.create_unit("u", "doc")
    drafts.fork(WT, "u")
    _edit(drafts, "u", 0, [{"op": "add", "path": "/body/a", "value": 1}])
    _edit(drafts, "u", 1, [{"op": "add", "path": "/body/d", "value": 2}])
    store.apply_changeset("u", 0, [{"op": "add", "path": "/body/a", "value": 1.0}], "x")
    draft, trunk = drafts.get_draft(WT, "u"), store.get("u")
    result = three_way.merge(draft.base_snapshot, trunk.snapshot, draft.snapshot)
    sync = three_way.diff(draft.snapshot, result.merged)
    assert sync == []  # equal by value: no merge_sync revision
    MergeRecords.of(store).commit_merge(
        "op1", WT, "u", expected_trunk_revision=1, expected_draft_revision=2,
        changeset=result.patch, snapshot=result.merged, draft_changeset=sync,
        author_id="alice")
    applied = _edit(drafts, "u", 2, [{"op": "add", "path": "/body/e", "value": 3}],
                    with_document=True)
    assert applied.document_json == json.dumps(_cold(store, "u"), separators=(",", ":")).encode()
    assert json.loads(applied.document_json)["body"] == {"a": 1.0, "d": 2, "e": 3}
