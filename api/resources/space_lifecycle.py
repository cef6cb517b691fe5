"""A team space handed over, archived and unarchived (``wharf.spaces.lifecycle``), and
deleted (``wharf.accounts.space_deletion``)."""
from __future__ import annotations

import falcon

from api import contract, serialize
from api.resources.operations import SUBMISSION_HEADERS, answer_submission, submission_answers
from api.resources.spaces import Space
from api.schemas.spaces import DeleteSpaceRequest, TransferSpaceRequest
from api.schemas.spaces import Space as SpaceBody
from storage.db import Database
from wharf.identity import people
from wharf.operations.service import Operations
from wharf.spaces import lifecycle


class SpaceTransfer:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="transferSpace", summary="Hand a team space to a member",
                 tags=["spaces"],
                 description="The owner only (403 `owner_required`). The new owner, named by "
                             "`user_id` or `username`, must be a member (409 "
                             "`new_owner_not_member`; an unknown user 404, `user_not_found` "
                             "by username); their "
                             "member row goes and the old owner becomes an admin. 409 "
                             "`not_a_team_space` for a personal space, `owner_not_member` "
                             "naming the owner; 429 `rate_limited` by username (counted with "
                             "`GET /api/users?username=`).",
                 body=TransferSpaceRequest, responses={200: SpaceBody}, problems=(409, 429))
    def on_post(self, req: falcon.Request, resp: falcon.Response, space_id: str) -> None:
        body = contract.read_body(req, TransferSpaceRequest)
        ctx = req.context.ctx
        if body.username is not None:
            people.take_lookup(self.db, ctx)
        space, role = lifecycle.transfer(self.db, ctx, space_id, body.user_id,
                                         username=body.username)
        resp.media = serialize.space(space, role)


class _Archiving:
    archived: bool

    def __init__(self, db: Database):
        self.db = db

    def _answer(self, req: falcon.Request, resp: falcon.Response, space_id: str) -> None:
        space, role = lifecycle.set_archived(self.db, req.context.ctx, space_id, self.archived)
        resp.media = serialize.space(space, role)


class SpaceArchive(_Archiving):
    archived = True

    @contract.op(operation_id="archiveSpace", summary="Archive a team space",
                 tags=["spaces"],
                 description="Owner or admin. The space becomes read-only for everyone "
                             "(writes answer 403 `space_read_only`; reads go on; nothing is "
                             "deleted). Idempotent. 409 `not_a_team_space`.",
                 responses={200: SpaceBody}, problems=(409,))
    def on_post(self, req: falcon.Request, resp: falcon.Response, space_id: str) -> None:
        self._answer(req, resp, space_id)


class SpaceUnarchive(_Archiving):
    archived = False

    @contract.op(operation_id="unarchiveSpace", summary="Unarchive a team space",
                 tags=["spaces"],
                 description="Owner or admin; writable again. Idempotent. 409 "
                             "`not_a_team_space`; 403 `space_read_only` for a space read-only "
                             "because its owner's account was deleted (an operator gives it "
                             "an owner).",
                 responses={200: SpaceBody}, problems=(409,))
    def on_post(self, req: falcon.Request, resp: falcon.Response, space_id: str) -> None:
        self._answer(req, resp, space_id)


class SpaceWithDeletion(Space):
    """``/api/spaces/{id}`` where operations run: DELETE deletes a team space."""

    def __init__(self, db: Database, operations: Operations):
        super().__init__(db)
        self.ops = operations

    @contract.op(operation_id="deleteSpace", summary="Delete a team space",
                 tags=["spaces"],
                 description="The owner only (403 `owner_required`), a team space only (409 "
                             "`not_a_team_space`: a personal space goes with its account), "
                             "`confirm_name` equal to the space's name (400 "
                             "`confirm_name_mismatch`). Records a `delete_space` operation; "
                             "at once the space is read-only (writes 403 `space_read_only`; "
                             "transfer, archive and unarchive 409 `space_deleting`), then a "
                             "worker deletes everything in it (docs/accounts.md). 409 "
                             "`worktree_reference` while worktrees are open on it "
                             "(`details.worktree_ids`: merge or discard them first); 409 "
                             "`space_deleting` when a deletion is already pending.",
                 headers=SUBMISSION_HEADERS, body=DeleteSpaceRequest,
                 responses=submission_answers("Accepted: the space is being deleted."),
                 problems=(403, 409))
    def on_delete(self, req: falcon.Request, resp: falcon.Response, space_id: str) -> None:
        from wharf.accounts import space_deletion
        body = contract.read_body(req, DeleteSpaceRequest)
        answer_submission(resp, space_deletion.submit(
            self.ops, req.context.ctx, req.get_header("Idempotency-Key"), space_id,
            body.confirm_name))
