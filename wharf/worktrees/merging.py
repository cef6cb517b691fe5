"""Merging a worktree into trunk (specs/assets-worktrees.md §7.4, §8): the
``merge_worktree`` operation and its submission. The reads and writes around it — a
unit's merge preview (§6.2), the conflicts of its last merge, and a rebase with explicit
resolutions (§8.7) — are :mod:`wharf.worktrees.merge_review`'s.

The merge runs unit by unit, in ``ordinal`` order, outside the product database: each
unit's outcome is decided by :mod:`wharf.worktrees.merge` and written by one unit-store
transaction that also stores the unit's merge record (:mod:`wharf.worktrees.records`:
``commit_fast_forward``, ``commit_merge``, ``commit_created``, ``record_outcome``). A
re-run of the operation (crash, retry) finds the records and writes nothing twice. All
the product effects — each unit's ``merge_state``, the activation of units created by the
merge, the publication of the worktree's assets, the worktree's new state, the audit row
— happen in the one completion transaction. A conflict is an outcome, not a failure: the
operation completes, the unit is left for its author and the worktree goes back to
``draft``.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, select, update
from sqlalchemy.orm import Session

from storage.db import Database
from storage.enums import MergeOutcome
from storage.errors import RevisionConflict, StorageError
from storage.models import (
    Operation,
    Resource,
    UnitAsset,
    UnitResource,
    Worktree,
    WorktreeNodeIntent,
    WorktreeUnit,
)
from storage.unitstore import UnitStore
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import Principal, RequestContext
from wharf.infra.errors import (
    Conflict,
    Forbidden,
    NotFound,
    TransientFailure,
    from_storage,
)
from wharf.infra.settings import Settings
from wharf.observability import metrics
from wharf.operations.kinds import payload
from wharf.operations.service import Operations, Submission
from wharf.protection.enforce import check_document
from wharf.units.resources import publish_node
from wharf.worktrees import access
from wharf.worktrees import merge as three_way
from wharf.worktrees.deciding import changed_paths, decide
from wharf.worktrees.drafts import Draft, Drafts
from wharf.worktrees.enums import MergeState, WorktreeState, WorktreeUnitSource
from wharf.worktrees.errors import WorktreeStateConflict
from wharf.worktrees.kinds import (
    MERGE_WORKTREE,
    MergeUnitResult,
    MergeWorktreePayload,
    MergeWorktreeResult,
)
from wharf.worktrees.records import FastForwardUnavailable, MergeRecord, MergeRecords
from wharf.worktrees.service import scope_of

#: Compare-and-set attempts per unit before the operation backs off and retries (§7.4).
CAS_ATTEMPTS = 5
#: The operation's result (and so its webhook delivery) is a bounded summary, under 64 KiB
#: whatever the merge (documented in kinds.MergeWorktreeResult, docs/worktrees.md): at most
#: this many units listed (ordinal order; ``counts`` has all),
RESULT_UNITS = 200
#: at most this many conflicts per unit and in all (document order, then ordinal order),
RESULT_UNIT_CONFLICTS = 3
RESULT_CONFLICTS = 10
#: each with its path and values clipped to this many bytes of JSON (merge.clip). The
#: full conflicts: ``GET /api/worktrees/{id}/units/{unit_id}/conflicts``.
RESULT_VALUE_BYTES = 128
#: Conflicts a preview, or a refused rebase, reports.
SHOWN_CONFLICTS = 100
#: The outcomes that count as merged: the worktree is ``merged`` when every unit has one.
DONE = frozenset((MergeState.UNCHANGED.value, MergeState.FAST_FORWARD.value,
                  MergeState.MERGED.value, MergeState.CREATED.value))
#: Every outcome the result counts, in order.
#: The states in which a worktree is not processed yet.
OPEN_STATES = (WorktreeState.DRAFT.value, WorktreeState.READY.value,
               WorktreeState.MERGING.value, WorktreeState.DISCARDING.value)
OUTCOMES = ("unchanged", "fast_forward", "merged", "created", "conflict",
            "activation_blocked")


class UnitUnavailable(Conflict):
    """Units of the worktree cannot be merged: their node is trashed or gone, or (a unit
    new in the worktree) the folder it is to be created in is (``details.unit_ids``)."""

    code = "unit_unavailable"
    title = "Unit unavailable"

    def __init__(self, unit_ids: list[str]) -> None:
        super().__init__("Restore or remove these units before merging: their node (or "
                         "target folder) is trashed or gone.", details={"unit_ids": unit_ids})


class MergeConflict(Conflict):
    """A rebase left conflicts without a resolution (``details``: the first 100 and
    ``conflict_count``)."""

    code = "merge_conflict"
    title = "Merge conflict"


# --- the units of a worktree, and who may merge them -----------------------------------

@dataclass(frozen=True, slots=True)
class UnitRow:
    unit_id: str
    resource_id: str
    source: str
    unit_type: str
    ordinal: int
    intent_node_id: str | None
    activated: bool
    target_space_id: str | None
    target_parent_id: str | None

    @property
    def pending_creation(self) -> bool:
        """A unit new in the worktree whose node does not exist yet."""
        return self.source == WorktreeUnitSource.WORKTREE and not self.activated


def units_of(s: Session, worktree_id: str, unit_id: str | None = None) -> list[UnitRow]:
    """The worktree's units (or ``unit_id`` alone), in merge order, with their intents."""
    q = (select(WorktreeUnit.unit_id, WorktreeUnit.resource_id, WorktreeUnit.source,
                WorktreeUnit.unit_type, WorktreeUnit.ordinal, WorktreeNodeIntent.node_id,
                WorktreeNodeIntent.activated_at, WorktreeNodeIntent.target_space_id,
                WorktreeNodeIntent.target_parent_id)
         .outerjoin(WorktreeNodeIntent, and_(
             WorktreeNodeIntent.worktree_id == WorktreeUnit.worktree_id,
             WorktreeNodeIntent.unit_id == WorktreeUnit.unit_id))
         .where(WorktreeUnit.worktree_id == worktree_id))
    if unit_id is not None:
        q = q.where(WorktreeUnit.unit_id == unit_id)
    return [UnitRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6] is not None, r[7], r[8])
            for r in s.execute(q.order_by(WorktreeUnit.ordinal, WorktreeUnit.unit_id))]


def check_units(s: Session, principal: Principal, worktree: Worktree) -> None:
    """The per-unit part of *merge* (§5), as :func:`access.unit_access` answers it: a unit
    that is not available (its node, or a waiting unit's target, trashed or gone) is 409
    ``unit_unavailable`` (with every such unit); then a unit the caller may not edit (or
    create in its target) is 403."""
    units = access.unit_access(s, principal, worktree)
    unavailable = [unit_id for unit_id, rights in units.items() if not rights.available]
    if unavailable:
        raise UnitUnavailable(unavailable)
    if not access.all_units(units).edit:
        raise Forbidden("A unit of this worktree does not allow you to merge it.")


# --- submission -----------------------------------------------------------------------

def submit_merge(ops: Operations, ctx: RequestContext, key: str | None,
                 worktree_id: str) -> Submission:
    """``ready → merging`` in the transaction that records the operation (a second merge
    or a discard is refused with 409 ``worktree_busy`` from then on)."""
    request = {"worktree_id": worktree_id}

    def prepare(s: Session, op_id: str) -> tuple[str | None, MergeWorktreePayload]:
        view = access.find(s, ctx.principal, worktree_id, lock=True)
        access.require(view, "merge", units=False)  # check_units answers for the units
        wt = view.worktree
        check_units(s, ctx.principal, wt)
        wt.state = WorktreeState.MERGING.value
        wt.busy_operation_id = op_id
        wt.updated_at = utcnow()
        s.flush()
        scope = scope_of(s, wt)
        audit.record(s, ctx, "worktree.merge_submit", "worktree", wt.id, space_id=scope,
                     details={"operation_id": op_id})
        return scope, MergeWorktreePayload(worktree_id=wt.id)

    return ops.submit(ctx, MERGE_WORKTREE, key, request, prepare)


def _summary(conflicts: Sequence[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """The first ``limit`` conflicts, each field clipped to :data:`RESULT_VALUE_BYTES`."""
    return [{k: three_way.clip(v, RESULT_VALUE_BYTES) for k, v in c.items()}
            for c in conflicts[:limit]]


# --- the operation ----------------------------------------------------------------------

class MergeWorktree:
    """``merge_worktree`` (§7.4). Retryable: a failure gives the worktree back ``ready``;
    ``POST /operations/{id}/retry`` re-takes it (authorize, in the claim transaction)
    and reuses the merge records already written."""

    kind = MERGE_WORKTREE

    def __init__(self, db: Database, unitstore: UnitStore, settings: Settings):
        self.db = db
        self.unitstore = unitstore
        self.drafts = Drafts.of(unitstore)
        self.records = MergeRecords.of(unitstore)
        self.settings = settings

    # -- authorize (claim and commit) ---------------------------------------------------
    def authorize(self, session: Session, op: Operation, actor: Principal) -> None:
        p = payload(op, MergeWorktreePayload)
        wt = session.get(Worktree, p.worktree_id, with_for_update=True)
        ours = wt is not None and wt.state == WorktreeState.MERGING and \
            wt.busy_operation_id == op.id
        retaken = wt is not None and wt.state == WorktreeState.READY and \
            wt.busy_operation_id is None
        if wt is None or not (ours or retaken):
            raise WorktreeStateConflict(wt.state if wt is not None else "missing",
                                        (WorktreeState.MERGING.value,), "this merge")
        try:
            written = self.records.has_merge_records(op.id)
        except StorageError as exc:
            # The unit store is down: this operation retries later; the rest of the claim
            # (other kinds, other worktrees) goes on.
            raise from_storage(exc) from exc
        if retaken and written:
            # It failed after writing to trunk and released the worktree, which may have
            # changed since (reopened, edited): its per-unit records may no longer describe
            # the drafts. A new merge decides every unit afresh (units it already wrote
            # come out unchanged).
            raise Conflict("This merge wrote to trunk before it failed, and the worktree "
                           "may have changed since: merge again with a new request.",
                           code="worktree_state",
                           details={"state": wt.state, "allowed": [WorktreeState.MERGING]})
        if retaken or not written:
            # Before the first trunk write the actor's right decides; after it, the merge
            # runs to completion (undoing published trunk content is worse, §5) -- unless
            # it failed and released the worktree: a retry is a new decision.
            rel = access.relation_to(session, actor, wt)
            if not access.discoverable(wt.kind, wt.visibility, rel):
                raise NotFound("No such worktree.")
            if not access.rights(wt.kind, wt.visibility, rel)["merge"]:
                raise Forbidden("You may no longer merge this worktree.")
            check_units(session, actor, wt)
        if retaken:  # a retried operation holds the worktree again before any effect
            wt.state = WorktreeState.MERGING.value
            wt.busy_operation_id = op.id
            wt.updated_at = utcnow()
            session.flush()

    # -- perform ------------------------------------------------------------------------
    def perform(self, op: Operation) -> None:
        p = payload(op, MergeWorktreePayload)
        with self.db.read() as s:
            units = units_of(s, p.worktree_id)
        for u in units:
            if self.records.merge_record(op.id, u.unit_id) is not None:
                continue  # an earlier attempt merged it
            started = time.perf_counter()
            self._merge_unit(op, p.worktree_id, u)
            metrics.MERGE_DURATION.observe(time.perf_counter() - started)

    def _merge_unit(self, op: Operation, worktree_id: str, u: UnitRow) -> MergeRecord:
        for _ in range(CAS_ATTEMPTS):
            try:
                if u.pending_creation:
                    return self._create(op, worktree_id, u.unit_id)
                return self._write(op, worktree_id, u.unit_id)
            except RevisionConflict:
                continue  # trunk (or the draft) moved: decide again
        raise TransientFailure(f"unit {u.unit_id} kept changing during the merge; "
                               f"the merge is retried")

    def _draft(self, worktree_id: str, unit_id: str) -> Draft:
        draft = self.drafts.get_draft(worktree_id, unit_id)
        if draft is None:
            raise Conflict(f"unit {unit_id} has no draft in this worktree",
                           code="unit_unavailable")
        return draft

    def _create(self, op: Operation, worktree_id: str, unit_id: str) -> MergeRecord:
        draft = self._draft(worktree_id, unit_id)
        # The trunk unit may exist already without its node (an earlier merge created it,
        # then its activation was blocked or the merge failed before its commit): the
        # draft's edits since then are brought over.
        trunk = self.unitstore.get(unit_id)
        catch_up = three_way.diff(trunk.snapshot, draft.snapshot) \
            if trunk is not None else None
        return self.records.commit_created(op.id, worktree_id, unit_id,
                                             expected_draft_revision=draft.revision,
                                             catch_up=catch_up)

    def _write(self, op: Operation, worktree_id: str, unit_id: str) -> MergeRecord:
        draft = self._draft(worktree_id, unit_id)
        trunk = self.unitstore.get(unit_id)
        if trunk is None:
            raise Conflict(f"unit {unit_id} no longer exists in trunk",
                           code="unit_unavailable")
        touched = changed_paths(self.unitstore, draft, trunk)
        d = decide(draft, trunk, self.settings.merge_max_conflicts, touched)
        store = self.records
        if d.outcome in (MergeOutcome.FAST_FORWARD, MergeOutcome.MERGED):
            # Protected ranges are re-checked when trunk is written, against trunk's
            # bindings now (a range protected after the fork included) and the actor's
            # rights now: the commit is compare-and-set on this trunk revision.
            with self.db.read() as s:
                check_document(
                    s, Principal(kind="user", user_id=op.actor_id), unit_id, trunk.snapshot,
                    d.merge.patch if d.merge is not None
                    else three_way.diff(trunk.snapshot, draft.snapshot, touched))
        if d.outcome == MergeOutcome.FAST_FORWARD:
            try:
                return store.commit_fast_forward(
                    op.id, worktree_id, unit_id, expected_trunk_revision=trunk.revision,
                    expected_draft_revision=draft.revision)
            except FastForwardUnavailable:
                return store.commit_merge(
                    op.id, worktree_id, unit_id, expected_trunk_revision=trunk.revision,
                    expected_draft_revision=draft.revision,
                    changeset=three_way.diff(trunk.snapshot, draft.snapshot, touched),
                    snapshot=draft.snapshot, draft_changeset=[], author_id=op.actor_id,
                    outcome=MergeOutcome.FAST_FORWARD)
        if d.outcome == MergeOutcome.MERGED:
            assert d.merge is not None
            return store.commit_merge(
                op.id, worktree_id, unit_id, expected_trunk_revision=trunk.revision,
                expected_draft_revision=draft.revision, changeset=d.merge.patch,
                snapshot=d.merge.merged,
                draft_changeset=three_way.diff(draft.snapshot, d.merge.merged, touched),
                author_id=op.actor_id)
        if d.outcome == MergeOutcome.CONFLICT:
            assert d.merge is not None
            return store.record_outcome(
                op.id, worktree_id, unit_id, MergeOutcome.CONFLICT,
                trunk_revision=trunk.revision,
                conflicts=[c.to_json() for c in d.merge.conflicts],
                conflict_count=d.merge.conflict_count)
        # unchanged: re-base onto trunk when it moved, so a later merge still finds it so
        if trunk.revision != draft.base_revision:
            return store.record_outcome(
                op.id, worktree_id, unit_id, MergeOutcome.UNCHANGED,
                trunk_revision=trunk.revision,
                sync_changeset=three_way.diff(draft.snapshot, trunk.snapshot, touched),
                expected_draft_revision=draft.revision)
        return store.record_outcome(op.id, worktree_id, unit_id, MergeOutcome.UNCHANGED,
                                    trunk_revision=trunk.revision)

    # -- commit ---------------------------------------------------------------------------
    def commit(self, session: Session, op: Operation,
               ctx: RequestContext) -> MergeWorktreeResult:
        p = payload(op, MergeWorktreePayload)
        wt = session.get(Worktree, p.worktree_id, with_for_update=True)
        assert wt is not None  # authorize() locked it, in this transaction
        records = {r.unit_id: r for r in self.records.merge_records(op.id)}
        rows = {u.unit_id: u for u in session.scalars(
            select(WorktreeUnit).where(WorktreeUnit.worktree_id == wt.id))}
        intents = {i.unit_id: i for i in session.scalars(
            select(WorktreeNodeIntent).where(WorktreeNodeIntent.worktree_id == wt.id))}
        now = utcnow()
        counts = dict.fromkeys(OUTCOMES, 0)
        results: list[MergeUnitResult] = []
        published_units: list[str] = []
        merged, conflicts, shown = True, 0, 0
        for u in units_of(session, wt.id):
            rec = records.get(u.unit_id)
            if rec is None:  # not performed yet (cannot happen unless a unit was added)
                raise TransientFailure(f"unit {u.unit_id} has not been merged yet")
            outcome = rec.outcome
            node_id: str | None
            if outcome == MergeOutcome.CREATED and u.pending_creation:
                intent = intents[u.unit_id]
                if activate_intent(session, op, intent, u.resource_id, u.unit_type, now):
                    node_id = intent.node_id
                else:
                    outcome = MergeState.ACTIVATION_BLOCKED.value
                    node_id = None
            elif u.source == WorktreeUnitSource.WORKTREE:
                node_id = u.intent_node_id
            else:
                node_id = session.scalar(select(Resource.node_id)
                                         .where(Resource.id == u.resource_id))
            row = rows[u.unit_id]
            row.merge_state = outcome
            row.merged_trunk_revision = rec.trunk_revision_after
            row.conflict_count = rec.conflict_count
            row.last_merge_operation_id = op.id
            counts[outcome] = counts.get(outcome, 0) + 1
            conflicts += rec.conflict_count
            if outcome in DONE:
                published_units.append(u.unit_id)
            else:
                merged = False
            if len(results) == RESULT_UNITS:
                continue
            sample = _summary(rec.conflicts, min(RESULT_UNIT_CONFLICTS,
                                                 RESULT_CONFLICTS - shown))
            shown += len(sample)
            results.append(MergeUnitResult(
                unit_id=u.unit_id, resource_id=u.resource_id, node_id=node_id,
                outcome=outcome, trunk_revision_before=rec.trunk_revision_before,
                trunk_revision_after=rec.trunk_revision_after,
                conflict_count=rec.conflict_count, conflicts=sample))
        session.flush()
        published = publish_assets(session, wt.id, published_units, now)
        wt.state = (WorktreeState.MERGED if merged else WorktreeState.DRAFT).value
        if merged:
            wt.processed_at = now
        wt.busy_operation_id = None
        wt.last_merge_operation_id = op.id
        wt.updated_at = now
        session.flush()
        audit.record(session, ctx, "worktree.merge", "worktree", wt.id, space_id=op.scope_id,
                     details={"counts": counts, "assets_published": published,
                              "state": wt.state, "on_behalf_of": op.actor_id})
        for outcome, n in counts.items():
            if n:
                metrics.MERGE_UNITS.labels(outcome).inc(n)
        if conflicts:
            metrics.MERGE_CONFLICTS.inc(conflicts)
        return MergeWorktreeResult(worktree_id=wt.id, state=wt.state, counts=counts,
                                   assets_published=published, units=results,
                                   units_truncated=len(results) < sum(counts.values()))

    def on_failed(self, session: Session, op: Operation, error: dict[str, Any]) -> None:
        p = payload(op, MergeWorktreePayload)
        wt = session.get(Worktree, p.worktree_id, with_for_update=True)
        if wt is not None and wt.state == WorktreeState.MERGING and \
                wt.busy_operation_id == op.id:
            wt.state = WorktreeState.READY.value
            wt.busy_operation_id = None
            wt.updated_at = utcnow()
            session.flush()

    def compensate(self, op: Operation) -> None:
        pass  # trunk writes already made are legitimate content (§11)


def activate_intent(session: Session, op: Operation, intent: WorktreeNodeIntent,
                    resource_id: str, unit_type: str, now: Any) -> bool:
    """Create the node, resource and unit row of a unit new in a worktree that is in
    trunk already (the merge created it), if its target still holds (the space exists;
    the parent exists, in that space, not trashed); False, nothing written, otherwise.
    The actor's create right is not checked again: the unit is in trunk already (§7.4).
    Shared by ``merge_worktree`` and ``activate_worktree_resource`` (§7.6)."""
    if not access.target_holds(session, intent.target_space_id, intent.target_parent_id):
        return False
    publish_node(session, op, node_id=intent.node_id, resource_id=resource_id,
                 space_id=intent.target_space_id, parent_id=intent.target_parent_id,
                 name=intent.name, kind="unit", created_by=intent.created_by)
    session.add(UnitResource(resource_id=resource_id, unit_id=intent.unit_id,
                             unit_type=unit_type))
    intent.activated_at = now
    intent.updated_at = now
    session.flush()
    return True


def publish_assets(session: Session, worktree_id: str, unit_ids: Sequence[str],
                   now: Any) -> int:
    """The worktree assets of these (merged) units become trunk assets; how many."""
    if not unit_ids:
        return 0
    res = session.execute(
        update(UnitAsset).where(UnitAsset.worktree_id == worktree_id,
                                UnitAsset.unit_id.in_(list(unit_ids)))
        .values(worktree_id=None, published_at=now)
        .execution_options(synchronize_session=False))
    return int(getattr(res, "rowcount", 0) or 0)


__all__ = ["MergeConflict", "MergeWorktree", "UnitUnavailable", "activate_intent",
           "publish_assets", "submit_merge"]
