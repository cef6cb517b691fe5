"""Merging worktrees: ``POST /api/worktrees/{id}/merge`` (operation ``merge_worktree``),
and per unit the merge preview, the last merge's conflicts and a rebase."""
from __future__ import annotations

import falcon
import msgspec

from api import contract
from api.resources.operations import SUBMISSION_HEADERS, answer_submission, submission_answers
from api.resources.worktrees import NOT_WHILE
from api.schemas.worktree_merge import (
    ActivateUnitRequest,
    ConflictList,
    ConflictQuery,
    MergeConflictRecord,
    MergePreview,
    PreviewOutcome,
    RebaseRequest,
    RebaseResult,
)
from storage.db import Database
from storage.unitstore import UnitStore
from wharf.infra.settings import Settings
from wharf.operations.service import Operations
from wharf.worktrees import activation, merge_review, merging
from wharf.worktrees.merge import Take


def _records(items: list[dict[str, object]]) -> list[MergeConflictRecord]:
    return [msgspec.convert(c, MergeConflictRecord) for c in items]


class WorktreeMerge:
    def __init__(self, ops: Operations):
        self.ops = ops

    @contract.op(operation_id="mergeWorktree",
                 summary="Merge a ready worktree into trunk (operation merge_worktree)",
                 tags=["worktrees"],
                 description="The worktree becomes `merging` at once, then each unit is "
                             "merged in order: `unchanged`, `fast_forward`, `merged`, "
                             "`created` (a unit new in the worktree gets its node), or "
                             "`conflict` (trunk untouched, see the unit's conflicts). A "
                             "conflict is not a failure: the operation completes; the "
                             "worktree is `merged` when every unit merged, else back to "
                             "`draft`. Only a `ready` worktree merges; the creator (team: "
                             "owner, admin or editor) with edit rights on every unit. 409 "
                             "`unit_unavailable` when a unit's node or target folder is "
                             "trashed (`details.unit_ids`). " + NOT_WHILE,
                 headers=SUBMISSION_HEADERS,
                 responses=submission_answers("Accepted (or a replay while not done)."),
                 problems=(403, 409))
    def on_post(self, req: falcon.Request, resp: falcon.Response, worktree_id: str) -> None:
        answer_submission(resp, merging.submit_merge(
            self.ops, req.context.ctx, req.get_header("Idempotency-Key"), worktree_id))


class UnitMergePreview:
    def __init__(self, db: Database, unitstore: UnitStore, settings: Settings):
        self.db, self.unitstore, self.settings = db, unitstore, settings

    @contract.op(operation_id="previewUnitMerge",
                 summary="What merging a worktree unit would do now (nothing is written)",
                 tags=["worktrees"],
                 description="Any state but merged/discarded (409 `worktree_state`).",
                 responses={200: MergePreview}, problems=(403, 409))
    def on_get(self, req: falcon.Request, resp: falcon.Response, worktree_id: str,
               unit_id: str) -> None:
        p = merge_review.preview(self.db, self.unitstore, self.settings, req.context.ctx,
                            worktree_id, unit_id)
        resp.media = MergePreview(outcome=PreviewOutcome(p.outcome),
                                  trunk_revision=p.trunk_revision,
                                  conflict_count=p.conflict_count,
                                  conflicts=_records(p.conflicts), patch_ops=p.patch_ops)


class UnitMergeConflicts:
    def __init__(self, db: Database, unitstore: UnitStore):
        self.db, self.unitstore = db, unitstore

    @contract.op(operation_id="listUnitMergeConflicts",
                 summary="The conflicts of a worktree unit's last merge",
                 tags=["worktrees"], query=ConflictQuery, responses={200: ConflictList},
                 description="Every conflict with its values (a merge operation's result "
                             "has only a clipped sample). 410 `draft_purged` once retention "
                             "deleted them with the drafts of a processed worktree.",
                 problems=(403, 410))
    def on_get(self, req: falcon.Request, resp: falcon.Response, worktree_id: str,
               unit_id: str) -> None:
        q = contract.read_query(req, ConflictQuery)
        page = merge_review.conflicts(self.db, self.unitstore, req.context.ctx, worktree_id,
                                 unit_id, limit=q.limit, cursor=q.cursor)
        resp.media = ConflictList(operation_id=page.operation_id,
                                  conflict_count=page.conflict_count,
                                  items=_records(page.items), next_cursor=page.next_cursor)


class UnitRebase:
    def __init__(self, db: Database, unitstore: UnitStore, settings: Settings):
        self.db, self.unitstore, self.settings = db, unitstore, settings

    @contract.op(operation_id="rebaseWorktreeUnit",
                 summary="Move a unit's draft onto the trunk head, resolving conflicts",
                 tags=["worktrees"],
                 description="Every conflict needs a resolution (`take`: `trunk` or "
                             "`draft`): 409 `merge_conflict` otherwise (`details.conflicts`:"
                             " the first 100), nothing written; 400 `unknown_conflict_path` "
                             "for a path that is not a conflict; 409 `revision_conflict` "
                             "when the draft is not at `draft_revision`. Draft worktrees "
                             "only. " + NOT_WHILE,
                 body=RebaseRequest, responses={200: RebaseResult}, problems=(403, 409))
    def on_post(self, req: falcon.Request, resp: falcon.Response, worktree_id: str,
                unit_id: str) -> None:
        body = contract.read_body(req, RebaseRequest)
        resolutions: dict[str, Take] = {
            r.path: "trunk" if r.take == "trunk" else "draft" for r in body.resolutions}
        done = merge_review.rebase(self.db, self.unitstore, self.settings, req.context.ctx,
                              worktree_id, unit_id, body.draft_revision, resolutions)
        resp.media = RebaseResult(draft_revision=done.draft_revision,
                                  base_revision=done.base_revision)


class UnitActivate:
    def __init__(self, ops: Operations):
        self.ops = ops

    @contract.op(operation_id="activateWorktreeUnit",
                 summary="Create the node of a merged unit whose activation was blocked "
                         "(operation activate_worktree_resource)",
                 tags=["worktrees"],
                 description="A unit new in the worktree that the merge put in trunk while "
                             "its target folder was gone (`activation: blocked`): its node "
                             "is created at `target` (stored now; the right to create "
                             "there), else at the stored target (409 `unit_unavailable` "
                             "while it is still gone). 409 `not_blocked` for any other "
                             "unit. Its worktree assets are published; the worktree is "
                             "`merged` when it was the last unmerged unit. Draft or ready "
                             "worktrees, with the merge right.",
                 body=ActivateUnitRequest, headers=SUBMISSION_HEADERS,
                 responses=submission_answers("Accepted (or a replay while not done)."),
                 problems=(403, 409))
    def on_post(self, req: falcon.Request, resp: falcon.Response, worktree_id: str,
                unit_id: str) -> None:
        body = contract.read_body(req, ActivateUnitRequest)
        target = msgspec.to_builtins(body.target) if body.target is not None else None
        answer_submission(resp, activation.submit_activate(
            self.ops, req.context.ctx, req.get_header("Idempotency-Key"), worktree_id,
            unit_id, target))
