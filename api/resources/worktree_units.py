"""Units inside a worktree: add a trunk unit (operation ``add_worktree_unit``) or create
one new in the worktree (``create_worktree_unit``), read a unit and its draft, draft
changesets, rename or re-target a local unit, remove a unit."""
from __future__ import annotations

from typing import Any

import falcon
import msgspec

from api import contract
from api.resources.operations import SUBMISSION_HEADERS, answer_submission, submission_answers
from api.resources.units import CHANGESET_PROBLEMS, read_changeset, wants_minimal, write_json
from api.schemas.operations import ChangesetRequest, ChangesetResult
from api.schemas.spaces import changes
from api.schemas.worktrees import (
    AddWorktreeUnitRequest,
    UpdateWorktreeUnitRequest,
    WorktreeUnit,
    WorktreeUnitDetail,
)
from storage.db import Database
from storage.unitstore import UnitStore
from wharf.infra.settings import Settings
from wharf.operations.service import Operations
from wharf.worktrees import unit_changes, units

NOT_WHILE = ("409 `worktree_busy` while a merge or discard runs, `worktree_state` unless "
             "the worktree is a draft (`details.state`, `details.allowed`).")


def unit_body(view: units.UnitView) -> WorktreeUnit:
    return msgspec.convert(view.as_dict(), WorktreeUnit)


def unit_detail(view: units.UnitView, snapshot: dict[str, Any]) -> WorktreeUnitDetail:
    return msgspec.convert({**view.as_dict(), "snapshot": snapshot}, WorktreeUnitDetail)


class WorktreeUnits:
    def __init__(self, ops: Operations, store: UnitStore, settings: Settings):
        self.ops, self.store, self.settings = ops, store, settings

    @contract.op(operation_id="addWorktreeUnit",
                 summary="Add a unit to a worktree (operation add_worktree_unit or "
                         "create_worktree_unit)", tags=["worktrees"],
                 description="`source: trunk`: a unit you may edit (viewer: 403; a blob: "
                             "400 `not_a_unit`; in a team worktree only units of its space, "
                             "400 `outside_team_space`; already there: 409 "
                             "`unit_already_added`). `source: worktree`: a new unit whose "
                             "node is created in `target` by the merge (editor there). At "
                             "most WHARF_WORKTREE_MAX_UNITS units (409 "
                             "`worktree_unit_limit`); the draft (two copies of the "
                             "document) within the creator's "
                             "WHARF_WORKTREE_DRAFT_QUOTA_BYTES (409 "
                             "`draft_quota_exceeded`). " + NOT_WHILE,
                 body=AddWorktreeUnitRequest, headers=SUBMISSION_HEADERS,
                 responses=submission_answers("Accepted (or a replay while not done)."),
                 problems=(403, 404, 409))
    def on_post(self, req: falcon.Request, resp: falcon.Response, worktree_id: str) -> None:
        body = contract.read_body(req, AddWorktreeUnitRequest)
        request: dict[str, Any] = msgspec.to_builtins(body)
        answer_submission(resp, units.submit_add_unit(
            self.ops, self.store, self.settings, req.context.ctx,
            req.get_header("Idempotency-Key"), worktree_id, request))


class WorktreeUnitItem:
    def __init__(self, db: Database, store: UnitStore, settings: Settings):
        self.db, self.store, self.settings = db, store, settings

    @contract.op(operation_id="getWorktreeUnit", summary="A worktree unit and its draft",
                 tags=["worktrees"], responses={200: WorktreeUnitDetail},
                 description="410 `draft_purged` once retention deleted the drafts of a "
                             "processed worktree.",
                 problems=(410,))
    def on_get(self, req: falcon.Request, resp: falcon.Response, worktree_id: str,
               unit_id: str) -> None:
        view, snapshot = units.get_unit(self.db, self.store, req.context.ctx, worktree_id,
                                        unit_id)
        resp.media = unit_detail(view, snapshot)

    @contract.op(operation_id="updateWorktreeUnit",
                 summary="Rename a unit new in the worktree, or change its target",
                 tags=["worktrees"],
                 description="Units new in the worktree only (400 `not_local_unit`); the "
                             "new target needs the right to create there. " + NOT_WHILE,
                 body=UpdateWorktreeUnitRequest, responses={200: WorktreeUnit},
                 problems=(403, 409))
    def on_patch(self, req: falcon.Request, resp: falcon.Response, worktree_id: str,
                 unit_id: str) -> None:
        body = contract.read_body(req, UpdateWorktreeUnitRequest)
        fields = {k: msgspec.to_builtins(v) for k, v in changes(body).items()}
        resp.media = unit_body(unit_changes.update_unit(
            self.db, self.store, req.context.ctx, worktree_id, unit_id, fields))

    @contract.op(operation_id="removeWorktreeUnit", summary="Take a unit out of a worktree",
                 tags=["worktrees"],
                 description="Its worktree assets are deleted, its draft too. " + NOT_WHILE,
                 responses={204: contract.Answer(None, "Removed.")}, problems=(403, 409))
    def on_delete(self, req: falcon.Request, resp: falcon.Response, worktree_id: str,
                  unit_id: str) -> None:
        unit_changes.remove_unit(self.db, self.store, self.settings, req.context.ctx,
                                 worktree_id, unit_id)
        resp.status = falcon.HTTP_204


class WorktreeUnitChangesets:
    def __init__(self, db: Database, store: UnitStore, settings: Settings):
        self.db, self.store, self.settings = db, store, settings

    @contract.op(operation_id="applyWorktreeChangeset",
                 summary="Apply an RFC 6902 JSON Patch to a unit's draft",
                 tags=["worktrees"],
                 description="Same contract as trunk changesets (`Prefer: "
                             "return=minimal` too), against the draft's revision. "
                             + CHANGESET_PROBLEMS + " Growing the draft "
                             "past the creator's WHARF_WORKTREE_DRAFT_QUOTA_BYTES: 409 "
                             "`draft_quota_exceeded`. " + NOT_WHILE,
                 body=ChangesetRequest, headers=("Prefer",),
                 responses={200: contract.Answer(ChangesetResult, "Applied.",
                                                 headers=("Preference-Applied",))},
                 problems=(403, 409, 410))
    def on_post(self, req: falcon.Request, resp: falcon.Response, worktree_id: str,
                unit_id: str) -> None:
        body = read_changeset(req)
        minimal = wants_minimal(req)
        head = unit_changes.apply_changeset(self.db, self.store, self.settings,
                                            req.context.ctx, worktree_id, unit_id,
                                            body.base_revision,
                                            msgspec.to_builtins(body.changes),
                                            with_document=not minimal)
        if minimal:
            resp.set_header("Preference-Applied", "return=minimal")
        write_json(resp, ChangesetResult(
            unit_id=head.id, revision=head.revision,
            snapshot=None if head.document_json is None
            else msgspec.Raw(head.document_json)))  # type: ignore[arg-type]
