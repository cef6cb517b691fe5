"""A team space's deletion (issue 41): ``DELETE /api/spaces/{id}`` → the ``delete_space``
operation, purged in bounded batches by the same code as an account's deletion
(:mod:`wharf.accounts.tree`).

1. The request (:func:`submit`): the owner only (an admin, editor or viewer 403
   ``owner_required``; anyone else 404), a team space only (409 ``not_a_team_space``),
   ``confirm_name`` equal to the space's name (400 ``confirm_name_mismatch``), no open
   worktree holding the space (409 ``worktree_reference``, ``details.worktree_ids``: a team
   worktree of the space, a worktree holding a copy of one of its units, or one waiting to
   create a document in it; discard or merge them first), no deletion already pending
   (409 ``space_deleting``). In the same transaction the space becomes read-only (every
   write 403 ``space_read_only``; transfer, archive and unarchive 409 ``space_deleting``;
   reads go on while the content goes) and the request is audited (``space.delete``).
2. The worker (:class:`DeleteSpace`) re-checks the owner and the worktrees (refused: the
   operation fails and the space is as it was, archived or writable), then runs
   :data:`STEPS`, each in bounded batches of ``WHARF_ACCOUNT_DELETION_BATCH`` rows, each
   batch its own transaction and idempotent: a worker killed at any point leaves the
   operation to be claimed again once its lease expires, and the next attempt goes on
   where this one stopped. Stored objects (blobs, assets, uploads, exports) are queued in
   the object deletion outbox with the rows naming them. The completion transaction
   deletes what is left (trash batches, members, labels) and the space row, and audits
   ``space.deleted``. The audit trail keeps its rows naming the space.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import delete, or_, select, update
from sqlalchemy.orm import Session

from storage.db import Database
from storage.enums import DONE_STATUSES, Role, SpaceType
from storage.models import (
    BlobUploadSession,
    Export,
    Issue,
    IssueCounter,
    IssueLabel,
    Node,
    Operation,
    Resource,
    Space,
    SpaceMember,
    TrashBatch,
    Worktree,
    WorktreeNodeIntent,
    WorktreeUnit,
)
from storage.results import rowcount
from storage.unitstore import UnitStore
from wharf.accounts import tree
from wharf.accounts.kinds import DeleteSpacePayload, DeleteSpaceResult
from wharf.accounts.purge import PurgeHandler
from wharf.deletion import service as deletion
from wharf.infra import audit
from wharf.infra.context import Principal, RequestContext, system_principal
from wharf.infra.errors import (
    Conflict,
    Forbidden,
    NotFound,
    ProblemCode,
    TransientFailure,
    ValidationFailed,
)
from wharf.infra.ids import is_id
from wharf.infra.settings import Settings
from wharf.operations.kinds import payload
from wharf.operations.service import Operations, Submission
from wharf.spaces.access import space_role
from wharf.spaces.lifecycle import DELETE_SPACE, refuse_while_deleting

log = logging.getLogger("wharf.accounts.space_deletion")

KIND = DELETE_SPACE
REASON = "space_deleted"
#: Blocking worktrees named in the 409 (the first, by id).
NAMED_WORKTREES = 50


def open_worktrees(s: Session, space_id: str) -> list[str]:
    """Active worktrees (not merged or discarded) that hold the space: its team worktrees,
    those holding a copy of one of its units, those waiting to create a document in it."""
    copies = select(WorktreeUnit.worktree_id).join(
        Resource, Resource.id == WorktreeUnit.resource_id).join(
        Node, Node.id == Resource.node_id).where(Node.space_id == space_id)
    intents = select(WorktreeNodeIntent.worktree_id).where(
        WorktreeNodeIntent.target_space_id == space_id,
        WorktreeNodeIntent.activated_at.is_(None), WorktreeNodeIntent.discarded_at.is_(None))
    return list(s.scalars(select(Worktree.id).where(
        Worktree.processed_at.is_(None),
        or_(Worktree.team_space_id == space_id, Worktree.id.in_(copies),
            Worktree.id.in_(intents))).order_by(Worktree.id).limit(NAMED_WORKTREES)))


def _refuse_open_worktrees(s: Session, space_id: str) -> None:
    ids = open_worktrees(s, space_id)
    if ids:
        raise Conflict("Worktrees are open on this space: merge or discard them first.",
                       code="worktree_reference", details={"worktree_ids": ids})


def _owned_team_space(s: Session, principal: Principal, space_id: str) -> Space:
    """The team space, locked, if ``principal`` owns it (404 / 403 / 409 otherwise)."""
    space = s.get(Space, space_id, with_for_update=True) if is_id(space_id) else None
    role = space_role(s, principal, space) if space is not None else None
    if space is None or role is None:
        raise NotFound("No such space.")
    if role != Role.OWNER:
        raise Forbidden("Only the space owner deletes the space.", code="owner_required")
    if space.type != SpaceType.TEAM:
        raise Conflict("A personal space goes with its account (DELETE /api/me).",
                       code="not_a_team_space")
    return space


def submit(ops: Operations, ctx: RequestContext, key: str | None, space_id: str,
           confirm_name: str) -> Submission:
    """``DELETE /api/spaces/{id}``: check, lock the space read-only, record ``delete_space``."""
    request = {"space_id": space_id, "confirm_name": confirm_name}

    def prepare(s: Session, op_id: str) -> tuple[str, DeleteSpacePayload]:
        space = _owned_team_space(s, ctx.principal, space_id)
        refuse_while_deleting(s, space.id)
        if confirm_name != space.name:
            raise ValidationFailed("confirm_name must be the space's name, exactly.",
                                   code=ProblemCode.CONFIRM_NAME_MISMATCH)
        _refuse_open_worktrees(s, space.id)
        space.read_only = True
        audit.record(s, ctx, "space.delete", "space", space.id, space_id=space.id,
                     details={"operation_id": op_id, "name": space.name})
        return space.id, DeleteSpacePayload(space_id=space.id)

    return ops.submit(ctx, KIND, key, request, prepare)


Step = Callable[["SpacePurge"], int]


@dataclass
class SpacePurge:
    """One run of a space's deletion: :data:`STEPS`, in bounded batches."""

    db: Database
    unitstore: UnitStore
    settings: Settings
    handlers: Mapping[str, Any]
    space_id: str
    operation_id: str
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return self.settings.account_deletion_batch

    def run(self) -> dict[str, int]:
        return tree.run_steps(self, STEPS, self.counts, "space deletion")


def _operations(p: SpacePurge) -> int:
    """The space's other open operations fail with ``space_deleted``."""
    error = {"code": ProblemCode.SPACE_DELETED.value, "retryable": False,
             "message": "The space this operation worked in was deleted."}
    return tree.fail_operations(p.db, Operation.scope_id == p.space_id, p.operation_id, p.n,
                                p.handlers, p.settings.idempotency_key_ttl, error,
                                "after the space's deletion", REASON)


def _worktrees(p: SpacePurge) -> int:
    """Its team worktrees (merged or discarded: open ones refused the deletion)."""
    return tree.purge_worktrees(p.db, p.unitstore, Worktree.team_space_id == p.space_id,
                                max(1, p.n // 10), REASON)


def _uploads(p: SpacePurge) -> int:
    """Uploads into it (none of its units' asset uploads: the tree step takes those)."""
    return tree.purge_uploads(p.db, BlobUploadSession.space_id == p.space_id, None, p.n,
                              REASON)


def _tree(p: SpacePurge) -> int:
    return tree.purge_leaves(p.db, p.unitstore, p.space_id, p.n, REASON)


def _exports(p: SpacePurge) -> int:
    """Its takeouts waiting for expiry: objects queued, rows gone."""
    with p.db.write() as s:
        rows = list(s.execute(select(Export.id, Export.object_key).where(
            Export.space_id == p.space_id).limit(p.n)))
        deletion.schedule_many(s, [r[1] for r in rows], REASON)
        s.execute(delete(Export).where(Export.id.in_([r[0] for r in rows])))
    return len(rows)


def _issues(p: SpacePurge) -> int:
    """Its issues (their comments, events, labels, references and assignees cascade)."""
    with p.db.write() as s:
        ids = list(s.scalars(select(Issue.id).where(Issue.space_id == p.space_id).limit(p.n)))
        return rowcount(s.execute(delete(Issue).where(Issue.id.in_(ids)))) if ids else 0


def _history(p: SpacePurge) -> int:
    """Its finished operations (not this one) stay their submitters' record (a failed
    ``space_deleted`` one says why), no longer scoped to the space."""
    with p.db.write() as s:
        ids = list(s.scalars(select(Operation.id).where(
            Operation.scope_id == p.space_id, Operation.id != p.operation_id,
            Operation.status.in_(DONE_STATUSES)).limit(p.n)))
        return rowcount(s.execute(update(Operation).where(Operation.id.in_(ids))
                                  .values(scope_id=None))) if ids else 0


STEPS: tuple[tuple[str, Step], ...] = (
    ("operations_failed", _operations),
    ("worktrees", _worktrees),
    ("uploads", _uploads),
    ("nodes", _tree),
    ("exports", _exports),
    ("issues", _issues),
    ("history", _history),
)


class DeleteSpace(PurgeHandler):
    """``delete_space``: :class:`SpacePurge` as the side effects (many short transactions),
    then the space row in the completion transaction."""

    kind = KIND

    def authorize(self, s: Session, op: Operation, actor: Principal) -> None:
        space_id = payload(op, DeleteSpacePayload).space_id
        if s.get(Space, space_id) is None:
            return  # nothing left to refuse
        _owned_team_space(s, actor, space_id)
        _refuse_open_worktrees(s, space_id)

    def perform(self, op: Operation) -> None:
        space_id = payload(op, DeleteSpacePayload).space_id
        counts = SpacePurge(self._db, self.unitstore, self.settings, self.handlers,
                            space_id, op.id).run()
        log.info("space %s: deletion batches done %s", space_id, counts)

    def commit(self, s: Session, op: Operation, ctx: RequestContext) -> DeleteSpaceResult:
        space_id = payload(op, DeleteSpacePayload).space_id
        space = s.get(Space, space_id, with_for_update=True)
        if space is not None:
            if tree.has_nodes(s, space_id) or s.scalar(select(Worktree.id).where(
                    Worktree.team_space_id == space_id).limit(1)):
                raise TransientFailure("The space gained content while it was purged; "
                                       "retrying.")
            s.execute(delete(TrashBatch).where(TrashBatch.space_id == space_id))
            # Other worktrees' finished intents to create a document in it.
            s.execute(delete(WorktreeNodeIntent).where(
                WorktreeNodeIntent.target_space_id == space_id))
            s.execute(delete(Issue).where(Issue.space_id == space_id))
            s.execute(delete(IssueLabel).where(IssueLabel.space_id == space_id))
            s.execute(delete(IssueCounter).where(IssueCounter.space_id == space_id))
            s.execute(delete(SpaceMember).where(SpaceMember.space_id == space_id))
            s.execute(delete(Space).where(Space.id == space_id))
            audit.record(s, ctx, "space.deleted", "space", space_id, space_id=space_id,
                         details={"on_behalf_of": op.actor_id})
        # The operation, the record of the deletion, no longer names the space as its scope.
        s.execute(update(Operation).where(Operation.id == op.id).values(scope_id=None),
                  execution_options={"synchronize_session": False})
        op.scope_id = None
        return DeleteSpaceResult(space_id=space_id)

    def compensate(self, op: Operation) -> None:
        pass

    def on_failed(self, s: Session, op: Operation, error: dict[str, Any]) -> None:
        """Refused or out of attempts: the space is as it was before the request (archived
        or writable), less what the batches already deleted; audited."""
        space_id = payload(op, DeleteSpacePayload).space_id
        space = s.get(Space, space_id, with_for_update=True)
        if space is None:
            return
        if space.owner_id == op.actor_id:  # not orphaned meanwhile (wharf.accounts.purge)
            space.read_only = space.archived_at is not None
        audit.record(s, RequestContext(principal=system_principal(op.id)),
                     "space.delete_failed", "space", space_id, space_id=space_id,
                     details={"operation_id": op.id, "code": error.get("code")})
