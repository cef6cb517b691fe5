"""Worktrees: create (operation ``create_worktree``), list, read, rename and visibility,
ready and reopen, discard (operation ``discard_worktree``)."""
from __future__ import annotations

from typing import Any, TypeVar

import falcon
import msgspec

from api import contract
from api.resources.operations import SUBMISSION_HEADERS, answer_submission, submission_answers
from api.schemas.common import PageQuery
from api.schemas.spaces import changes
from api.schemas.worktrees import (
    CreateWorktreeRequest,
    TeamSpaceRef,
    UpdateWorktreeRequest,
    UserRef,
    Worktree,
    WorktreeDetail,
    WorktreeEvent,
    WorktreeEventList,
    WorktreeList,
    WorktreeListQuery,
    WorktreeUnit,
)
from api.serialize import timestamp
from storage.db import Database
from storage.enums import PurgeReason
from storage.unitstore import UnitStore
from wharf import worktrees
from wharf.infra.clock import iso
from wharf.operations.service import Operations
from wharf.worktrees import events as wt_events
from wharf.worktrees.detail import Detail
from wharf.worktrees.enums import WorktreeEventKind, WorktreeKind, WorktreeState, WorktreeVisibility

W = TypeVar("W", bound=Worktree)


def worktree_as(cls: type[W], s: worktrees.Summary, **extra: Any) -> W:
    """A worktree summary as ``cls`` (``Worktree``, or ``WorktreeDetail`` with its units
    in ``extra``)."""
    wt = s.worktree
    return cls(
        id=wt.id, kind=WorktreeKind(wt.kind), name=wt.name, summary=wt.summary,
        team_space=(TeamSpaceRef(id=wt.team_space_id, name=s.team_space_name or "")
                    if wt.team_space_id is not None else None),
        visibility=WorktreeVisibility(wt.visibility), state=WorktreeState(wt.state),
        creator=UserRef(id=wt.creator_id, username=s.creator_username),
        unit_count=s.unit_count, busy_operation_id=wt.busy_operation_id,
        last_merge_operation_id=wt.last_merge_operation_id,
        processed_at=iso(wt.processed_at), created_at=timestamp(wt.created_at),
        updated_at=timestamp(wt.updated_at),
        capabilities=s.capabilities, **extra)


def summary_body(s: worktrees.Summary) -> Worktree:
    return worktree_as(Worktree, s)


def detail_body(s: worktrees.Summary,
                units: list[WorktreeUnit] | None = None) -> WorktreeDetail:
    return worktree_as(WorktreeDetail, s, units=units or [])


def detail(found: Detail) -> WorktreeDetail:
    """A worktree's summary and its units (``worktrees.worktree_detail``) as the API shows
    them."""
    summary, units = found
    return detail_body(summary, [msgspec.convert(u.as_dict(), WorktreeUnit) for u in units])


NOT_WHILE = ("409 `worktree_busy` while a merge or discard runs (`details.operation_id`), "
             "`worktree_state` in a state that does not allow it (`details.state`, "
             "`details.allowed`).")


class Worktrees:
    def __init__(self, db: Database, ops: Operations):
        self.db, self.ops = db, ops

    @contract.op(operation_id="createWorktree",
                 summary="Create a worktree (operation create_worktree)", tags=["worktrees"],
                 description="A `user` worktree (yours alone, always private) or a `team` "
                             "worktree in a team space where you are owner, admin or "
                              "editor (viewer: 403; a read-only team space: 403 "
                              "`space_read_only`; not a member: 404; a personal space: "
                              "409 `not_a_team_space`). At most "
                              "WHARF_WORKTREE_MAX_OPEN_PER_USER open worktrees per user and "
                              "WHARF_WORKTREE_MAX_OPEN_PER_TEAM_SPACE per team space (409 "
                              "`worktree_limit`). The operation's result names the "
                             "worktree.",
                 body=CreateWorktreeRequest, headers=SUBMISSION_HEADERS,
                 responses=submission_answers("Accepted (or a replay while not done)."),
                 problems=(403, 404, 409))
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = contract.read_body(req, CreateWorktreeRequest)
        request = {"kind": str(body.kind), "name": body.name, "summary": body.summary,
                   "team_space_id": body.team_space_id,
                   "visibility": None if body.visibility is None else str(body.visibility)}
        answer_submission(resp, worktrees.submit_create_worktree(
            self.ops, req.context.ctx, req.get_header("Idempotency-Key"), request))

    @contract.op(operation_id="listWorktrees",
                 summary="Worktrees I can see, most recently updated first",
                 tags=["worktrees"],
                 description="One query per page: the capabilities reported here leave out "
                             "each unit's own permission (a unit the caller may no longer "
                             "edit); `GET /api/worktrees/{id}` accounts for it.",
                 query=WorktreeListQuery, responses={200: WorktreeList})
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        q = contract.read_query(req, WorktreeListQuery)
        items, nxt = worktrees.read_worktrees(
            self.db, req.context.ctx, scope=str(q.scope),
            kind=None if q.kind is None else str(q.kind), team_space_id=q.team_space_id,
            limit=q.limit, cursor=q.cursor)
        resp.media = WorktreeList(items=[summary_body(i) for i in items], next_cursor=nxt)


class WorktreeItem:
    def __init__(self, db: Database, store: UnitStore | None = None):
        self.db, self.store = db, store

    @contract.op(operation_id="getWorktree", summary="A worktree and its units",
                 tags=["worktrees"], responses={200: WorktreeDetail})
    def on_get(self, req: falcon.Request, resp: falcon.Response, worktree_id: str) -> None:
        resp.media = detail(worktrees.worktree_detail(self.db, self.store, req.context.ctx,
                                                      worktree_id))

    @contract.op(operation_id="updateWorktree",
                 summary="Rename a worktree, change its summary or visibility",
                 tags=["worktrees"],
                 description="Name and summary: the creator (team worktrees: also the "
                             "space's owner and admins). Visibility: team worktrees only "
                             "(400 for a user worktree), by the same people. "
                             + NOT_WHILE,
                 body=UpdateWorktreeRequest, responses={200: WorktreeDetail},
                 problems=(403, 409))
    def on_patch(self, req: falcon.Request, resp: falcon.Response, worktree_id: str) -> None:
        body = contract.read_body(req, UpdateWorktreeRequest)
        resp.media = detail(worktrees.update_worktree_detail(
            self.db, self.store, req.context.ctx, worktree_id, changes(body)))


class WorktreeEvents:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="listWorktreeEvents",
                 summary="What others' permanent deletes of trash did to a worktree",
                 tags=["worktrees"],
                 description="Oldest first. A document deleted permanently by its owner or "
                             "a space admin, or by the trash retention, leaves the worktrees "
                             "of others that held it (their draft is discarded): "
                             "`unit_purged`; a unit new in the worktree whose target folder "
                             "was deleted: `target_purged`. Those who may review the "
                             "worktree's units (403 otherwise).",
                 query=PageQuery, responses={200: WorktreeEventList}, problems=(403,))
    def on_get(self, req: falcon.Request, resp: falcon.Response, worktree_id: str) -> None:
        q = contract.read_query(req, PageQuery)
        items, nxt = wt_events.read_events(self.db, req.context.ctx, worktree_id, q.limit,
                                           q.cursor)
        resp.media = WorktreeEventList(
            items=[WorktreeEvent(id=e.id, kind=WorktreeEventKind(e.kind), unit_id=e.unit_id,
                                 resource_id=e.resource_id, operation_id=e.operation_id,
                                 reason=PurgeReason(e.reason), at=timestamp(e.at))
                   for e in items],
            next_cursor=nxt)


class WorktreeReady:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="markWorktreeReady",
                 summary="Mark a draft worktree ready for review and merge",
                 tags=["worktrees"],
                 description="`draft → ready`: its drafts are frozen; only a ready worktree "
                             "merges. The creator (team: owner, admin or editor). "
                             + NOT_WHILE,
                 responses={200: Worktree}, problems=(403, 409))
    def on_post(self, req: falcon.Request, resp: falcon.Response, worktree_id: str) -> None:
        resp.media = summary_body(worktrees.mark_worktree_ready(self.db, req.context.ctx,
                                                                worktree_id))


class WorktreeReopen:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="reopenWorktree", summary="Reopen a ready worktree for edits",
                 tags=["worktrees"],
                 description="`ready → draft`. The creator (team: also the space's owner "
                             "and admins). " + NOT_WHILE,
                 responses={200: Worktree}, problems=(403, 409))
    def on_post(self, req: falcon.Request, resp: falcon.Response, worktree_id: str) -> None:
        resp.media = summary_body(worktrees.reopen_worktree(self.db, req.context.ctx,
                                                            worktree_id))


class WorktreeDiscard:
    def __init__(self, ops: Operations):
        self.ops = ops

    @contract.op(operation_id="discardWorktree",
                 summary="Discard a worktree (operation discard_worktree)",
                 tags=["worktrees"],
                 description="A draft or ready worktree becomes `discarding` at once (other "
                             "changes answer 409 `worktree_busy`), then `discarded`: its "
                             "assets are deleted, its uploads cancelled. The creator (team: "
                             "also the space's owner and admins). " + NOT_WHILE,
                 headers=SUBMISSION_HEADERS,
                 responses=submission_answers("Accepted (or a replay while not done)."),
                 problems=(403, 409))
    def on_post(self, req: falcon.Request, resp: falcon.Response, worktree_id: str) -> None:
        answer_submission(resp, worktrees.submit_discard(
            self.ops, req.context.ctx, req.get_header("Idempotency-Key"), worktree_id))
