"""Trash: batches, restore, and permanent delete (the ``purge_trash`` operation).

Trashing moves a node and its descendants that are not already in another batch into a
new batch; trashed nodes disappear from browsing, content and the resolver. Restore brings
exactly that batch back. Permanent delete of a batch root is an operation: the worker
deletes the units from the UnitStore (idempotently), then in one product transaction
queues every blob object below for deletion and deletes the rows.

References held outside the tree (``PURGE_BLOCKERS``; ``wharf.worktrees`` registers the
worktrees') either refuse the purge (409 ``worktree_reference``, ``details.worktree_ids``:
the blocking worktrees the caller may see) or give way to it: the hook says which, and
the purge releases the others (in ``perform`` their unit-store copies, idempotently; in
its completion transaction their rows). The rule is the hook's (docs/architecture.md,
"Worktrees", "Trash").

Nested batches: trashing P after R (R below P) leaves R in its own batch, *enclosed* by P's.
- R cannot be restored while an enclosing batch is trashed (409 ``ancestor_trashed``): it
  would come back below a trashed node, unreachable, and P's purge would then delete it.
- Purging P deletes everything below P, R's batch included. The trash listing says so
  (each batch carries ``enclosing_batch_id`` and ``nested_batches``) and so does the
  result (``batches_deleted``, ``nested_batch_ids``).
- A batch whose purge is queued or running cannot be restored (409 ``purge_in_progress``):
  the worker may already have deleted its units. Restore and the worker's permission
  re-check both lock the batch row, so one of them waits for the other.

Who may purge: the owner of a personal space, the owner or an admin of a team space
(``access.can_purge``) — at submission and again in the worker. Editors, grantees and
link holders can trash and restore but not destroy.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session, aliased

from storage.db import Database
from storage.enums import OperationStatus, PurgeReason, Role
from storage.models import (
    BlobResource,
    LinkSharing,
    Node,
    NodeGrant,
    Operation,
    RecentOpen,
    Resource,
    Space,
    TrashBatch,
    UnitResource,
)
from storage.results import rowcount
from storage.unitstore import UnitStore
from wharf.deletion import service as deletion
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import Principal, RequestContext
from wharf.infra.errors import Conflict, NotFound
from wharf.infra.ids import is_id, new_id
from wharf.infra.pagination import decode_cursor, scan_page
from wharf.infra.settings import Settings
from wharf.operations.idempotency import fingerprint
from wharf.operations.kinds import payload, to_json
from wharf.operations.service import Operations, Submission
from wharf.spaces.access import (
    ancestors,
    forget_tree,
    node_access,
    require_node,
    require_purge,
    require_space,
)
from wharf.trash.kinds import PURGE_TRASH, PurgeTrashPayload, PurgeTrashResult

log = logging.getLogger("wharf.trash.service")

KIND = PURGE_TRASH

@dataclass(frozen=True, slots=True)
class Blocked:
    """Why a purge must wait, and the blocking worktrees the caller may see."""

    reason: str
    worktree_ids: tuple[str, ...] = ()


class PurgeReferences(Protocol):
    """References to a trash batch's resources and nodes held outside the tree. Each
    method receives the resource ids and node ids of the subtree being purged."""

    def blocked(self, s: Session, actor: Principal | None, resource_ids: list[str],
                node_ids: list[str]) -> Blocked | None:
        """Why the purge by ``actor`` (None: the trash retention) must wait, or None:
        then every other reference gives way to it."""

    def copies(self, s: Session, resource_ids: list[str]) -> list[tuple[str, str]]:
        """The unit-store drafts (worktree id, unit id) of these resources' units that
        the purge deletes with the units (:meth:`delete_copies`)."""

    def delete_copies(self, unitstore: UnitStore, copies: list[tuple[str, str]]) -> None:
        """Delete the drafts ``copies`` returned, after the units (idempotent)."""

    def release(self, s: Session, ctx: RequestContext, operation_id: str,
                reason: PurgeReason, resource_ids: list[str], node_ids: list[str],
                settings: Settings) -> None:
        """In the purge's completion transaction, after ``blocked`` said None: drop the
        references that gave way, saying so to whoever holds them."""


# wharf.worktrees registers one (wharf.worktrees.blockers).
PURGE_BLOCKERS: list[PurgeReferences] = []


class UnitsPurged(Protocol):
    def __call__(self, s: Session, unit_ids: list[str]) -> int:
        """The units ``unit_ids`` are deleted, in the purge's completion transaction, chunk
        by chunk, before their rows go: returns how many storage objects this queued for
        deletion (the result's ``objects_queued`` counts them)."""


class NodesPurged(Protocol):
    def __call__(self, s: Session, node_ids: list[str]) -> object:
        """The nodes ``node_ids`` are deleted (same transaction, before their rows go);
        what it returns is not used."""


# What a capability does to its own rows that name what a purge deletes; registered on
# import (wharf.infra.hooks.register): wharf.assets (the units' embedded assets) in
# UNITS_PURGED, wharf.issues (references to the nodes) in NODES_PURGED.
UNITS_PURGED: list[UnitsPurged] = []
NODES_PURGED: list[NodesPurged] = []


def subtree(s: Session, root_id: str) -> list[Node]:
    """The root and every descendant, whatever their trash state, parents before children."""
    out: list[Node] = []
    frontier = [root_id]
    root = s.get(Node, root_id)
    if root is None:
        return out
    out.append(root)
    while frontier:
        children = list(s.scalars(select(Node).where(Node.parent_id.in_(frontier))))
        out.extend(children)
        frontier = [c.id for c in children]
    return out


def _lock_space(s: Session, space_id: str, *, forget: bool = True) -> None:
    """Trash, restore, purge and moves in one space run one at a time (a trash racing a
    restore could otherwise leave restored nodes below a trashed node); the space row is
    always locked before a batch row. With ``forget``, what was read before the lock is
    forgotten, so every check after it sees the current tree."""
    s.get(Space, space_id, with_for_update=True)
    if forget:
        s.expire_all()
        forget_tree(s)


def trash_node(db: Database, ctx: RequestContext, node_id: str) -> TrashBatch:
    """Move the node and its descendants to a new batch (one write transaction)."""
    with db.write() as s:
        return _trash_node(s, ctx, node_id)


def _trash_node(s: Session, ctx: RequestContext, node_id: str) -> TrashBatch:
    node, _ = require_node(s, ctx.principal, node_id, Role.EDITOR)
    _lock_space(s, node.space_id)
    node, _ = require_node(s, ctx.principal, node_id, Role.EDITOR, lock=True)
    batch = TrashBatch(id=new_id(), space_id=node.space_id, root_node_id=node.id,
                       created_by=ctx.principal.user_id, node_count=0)
    s.add(batch)
    s.flush()
    # The node and its descendants not already in another batch (whose subtrees stay there).
    ids, frontier = [node.id], [node.id]
    while frontier:
        children = list(s.scalars(select(Node.id).where(Node.parent_id.in_(frontier),
                                                        Node.trash_batch_id.is_(None))))
        ids.extend(children)
        frontier = children
    for i in range(0, len(ids), 500):
        s.execute(update(Node).where(Node.id.in_(ids[i:i + 500])).values(
            trash_batch_id=batch.id, updated_at=utcnow()))
    batch.node_count = len(ids)
    forget_tree(s)
    audit.record(s, ctx, "node.trash", "node", node.id, space_id=node.space_id,
                 details={"batch_id": batch.id, "nodes": len(ids)})
    return batch


def _batch_for_caller(s: Session, ctx: RequestContext, batch_id: str, *,
                      lock: bool = False) -> TrashBatch:
    batch = s.get(TrashBatch, batch_id, with_for_update=lock) if is_id(batch_id) else None
    if batch is None:
        raise NotFound("No such trash batch.")
    try:
        require_node(s, ctx.principal, batch.root_node_id, Role.EDITOR, include_trashed=True)
    except NotFound:
        raise NotFound("No such trash batch.") from None
    return batch


def enclosing_batch_id(s: Session, batch: TrashBatch) -> str | None:
    """The batch holding the nearest trashed ancestor of ``batch``'s root, if any."""
    root = s.get(Node, batch.root_node_id)
    parent = s.get(Node, root.parent_id) if root is not None and root.parent_id else None
    if parent is None:
        return None
    return next((b for _, b in ancestors(s, parent) if b is not None), None)


def _purge_pending(s: Session, batch: TrashBatch) -> str | None:
    for op_id, stored in s.execute(select(Operation.id, Operation.payload).where(
            Operation.kind == KIND, Operation.scope_id == batch.space_id,
            Operation.status.in_((OperationStatus.PENDING, OperationStatus.RUNNING)))):
        if isinstance(stored, dict) and stored.get("batch_id") == batch.id:
            return str(op_id)
    return None


def restore_batch(db: Database, ctx: RequestContext,
                  batch_id: str) -> tuple[TrashBatch, int]:
    """Restore exactly this batch (one write transaction): the batch and how many nodes
    came back."""
    with db.write() as s:
        return _restore_batch(s, ctx, batch_id)


def _restore_batch(s: Session, ctx: RequestContext, batch_id: str) -> tuple[TrashBatch, int]:
    batch = _batch_for_caller(s, ctx, batch_id)
    _lock_space(s, batch.space_id)
    batch = _batch_for_caller(s, ctx, batch_id, lock=True)
    enclosing = enclosing_batch_id(s, batch)
    if enclosing is not None:
        raise Conflict("A folder above this batch is in the trash; restore that batch first.",
                       code="ancestor_trashed", details={"enclosing_batch_id": enclosing})
    op_id = _purge_pending(s, batch)
    if op_id is not None:
        raise Conflict("This batch is being deleted permanently.", code="purge_in_progress",
                       details={"operation_id": op_id})
    res = s.execute(update(Node).where(Node.trash_batch_id == batch.id).values(
        trash_batch_id=None, updated_at=utcnow()))
    s.delete(batch)
    forget_tree(s)
    audit.record(s, ctx, "trash.restore", "trash_batch", batch.id, space_id=batch.space_id,
                 details={"root_node_id": batch.root_node_id, "nodes": rowcount(res)})
    return batch, rowcount(res)


def nesting(s: Session, batches: list[TrashBatch]) -> dict[str, dict[str, Any]]:
    """``{batch_id: {"enclosing_batch_id", "nested_batches"}}`` for a page of batches:
    which batch encloses each one and how many batches sit directly inside it (a purge of
    a batch deletes those too)."""
    ids = [b.id for b in batches]
    out: dict[str, dict[str, Any]] = {i: {"enclosing_batch_id": None, "nested_batches": 0}
                                      for i in ids}
    if not ids:
        return out
    root, parent = aliased(Node), aliased(Node)
    # Batches inside one of these: their root's parent belongs to it.
    for enclosing, count in s.execute(
            select(parent.trash_batch_id, func.count(TrashBatch.id))
            .join(root, root.id == TrashBatch.root_node_id)
            .join(parent, parent.id == root.parent_id)
            .where(parent.trash_batch_id.in_(ids)).group_by(parent.trash_batch_id)):
        if enclosing is not None:  # always: it is one of ``ids``
            out[enclosing]["nested_batches"] = count
    for batch in batches:
        out[batch.id]["enclosing_batch_id"] = enclosing_batch_id(s, batch)
    return out


def list_batches(db: Database, ctx: RequestContext, space_id: str, limit: int, cursor: str | None,
                 ) -> tuple[list[tuple[TrashBatch, dict[str, Any]]], str | None]:
    """A page of the space's batches (:func:`_batches`), each with its :func:`nesting`
    (one read transaction)."""
    with db.read() as s:
        items, nxt = _batches(s, ctx, space_id, limit, cursor)
        around = nesting(s, items)
        return [(b, around[b.id]) for b in items], nxt


def _batches(s: Session, ctx: RequestContext, space_id: str, limit: int,
             cursor: str | None) -> tuple[list[TrashBatch], str | None]:
    """Newest first, only the batches the caller could restore. Visibility is decided per
    row (grants and links sit on ancestors), so the scan continues past invisible batches
    until the page is full; it is bounded per request, and when the bound is reached the
    cursor points after the last row scanned — a short page with a cursor, never a null
    cursor while rows remain."""
    space, _ = require_space(s, ctx.principal, space_id, Role.VIEWER)
    after = decode_cursor("trash", cursor, 1)

    def fetch(key: list[Any] | None, n: int) -> list[TrashBatch]:
        q = select(TrashBatch).where(TrashBatch.space_id == space.id)
        if key:
            q = q.where(TrashBatch.id < key[0])
        return list(s.scalars(q.order_by(TrashBatch.id.desc()).limit(n)))

    def visible(batch: TrashBatch) -> bool:
        root = s.get(Node, batch.root_node_id)
        return root is not None and node_access(s, ctx.principal, root, space,
                                                include_trashed=True).can_edit

    return scan_page(fetch, after, limit, "trash", lambda b: [b.id], visible)


def _check_blockers(s: Session, actor: Principal | None, root_node_id: str) -> None:
    """409 ``worktree_reference`` when the purge of the subtree at ``root_node_id`` by
    ``actor`` (None: the trash retention) must wait (``PURGE_BLOCKERS``)."""
    if not PURGE_BLOCKERS:
        return
    node_ids = [n.id for n in subtree(s, root_node_id)]
    resource_ids = [r.id for r in _resources_below(s, node_ids)]
    for hook in PURGE_BLOCKERS:
        blocked = hook.blocked(s, actor, resource_ids, node_ids)
        if blocked is not None:
            raise Conflict(blocked.reason, code="worktree_reference",
                           details={"worktree_ids": list(blocked.worktree_ids)})


def _resources_below(s: Session, node_ids: list[str]) -> list[Resource]:
    out: list[Resource] = []
    for i in range(0, len(node_ids), 500):
        out.extend(s.scalars(select(Resource).where(Resource.node_id.in_(node_ids[i:i + 500]))))
    return out


def submit_purge(ops: Operations, ctx: RequestContext, key: str | None,
                 node_id: str) -> Submission:
    request = {"node_id": node_id}

    def prepare(s: Session, op_id: str) -> tuple[str, PurgeTrashPayload]:
        node, _ = require_purge(s, ctx.principal, node_id)
        batch = s.scalar(select(TrashBatch).where(TrashBatch.root_node_id == node.id))
        if batch is None or node.trash_batch_id != batch.id:
            raise Conflict("Only the root of a trash batch can be deleted permanently; "
                           "trash the node first.", code="not_trashed")
        _check_blockers(s, ctx.principal, node.id)
        return node.space_id, PurgeTrashPayload(batch_id=batch.id, root_node_id=node.id,
                                                space_id=node.space_id)

    return ops.submit(ctx, KIND, key, request, prepare)


def submit_due_purges(db: Database, settings: Settings, now: datetime,
                      limit: int = 1000) -> int:
    """Trash older than WHARF_TRASH_RETENTION → ``purge_trash`` operations (once per batch:
    the idempotency key is derived from the batch id)."""
    ops = Operations(db, settings)
    cutoff = now - timedelta(seconds=settings.trash_retention)
    submitted = 0
    with db.write() as s:
        batches = list(s.scalars(select(TrashBatch).where(TrashBatch.created_at <= cutoff)
                                 .order_by(TrashBatch.created_at).limit(limit)))
        for batch in batches:
            key = f"trash-retention-{batch.id}"
            exists = s.scalar(select(Operation.id).where(Operation.actor_id == batch.created_by,
                                                         Operation.idempotency_key == key))
            if exists:
                continue
            purge = PurgeTrashPayload(batch_id=batch.id, root_node_id=batch.root_node_id,
                                      space_id=batch.space_id, by_retention=True)
            op = ops.record(s, new_id(), KIND, batch.created_by, key,
                            fingerprint(KIND, to_json(purge)), batch.space_id,
                            purge)
            audit.record(s, RequestContext(principal=Principal(kind="system",
                                                               username=op.id)),
                         "trash.retention_purge", "trash_batch", batch.id,
                         space_id=batch.space_id)
            submitted += 1
    return submitted


class PurgeTrash:
    """``purge_trash``: delete units, queue blob objects, delete the rows of one batch."""

    kind = KIND

    def __init__(self, db: Database, unitstore: UnitStore, settings: Settings):
        self._db = db
        self.unitstore = unitstore
        self.settings = settings

    def _batch(self, s: Session, p: PurgeTrashPayload) -> TrashBatch:
        # Locked: a restore of this batch waits for us, or we find it gone.
        batch = s.get(TrashBatch, p.batch_id, with_for_update=True)
        root = s.get(Node, p.root_node_id)
        if batch is None or root is None or root.trash_batch_id != batch.id:
            raise Conflict("The batch was restored or is already gone.", code="batch_restored")
        return batch

    def authorize(self, s: Session, op: Operation, actor: Principal) -> None:
        # Runs first in the claim and in the completion transaction (a fresh session each
        # time, nothing read yet): lock the space, then the batch, like restore does.
        p = payload(op, PurgeTrashPayload)
        _lock_space(s, p.space_id, forget=False)
        self._batch(s, p)
        if not p.by_retention:
            require_purge(s, actor, p.root_node_id)
        _check_blockers(s, None if p.by_retention else actor, p.root_node_id)

    def perform(self, op: Operation) -> None:
        # Units live in another database: delete them first (idempotent). Until the rows go,
        # the nodes are trashed, so nobody can open the now-missing units.
        db = self._db
        root_node_id = payload(op, PurgeTrashPayload).root_node_id
        with db.read() as s:
            nodes = [n.id for n in subtree(s, root_node_id)]
            units = [u for (u,) in s.execute(
                select(UnitResource.unit_id).join(Resource, Resource.id == UnitResource.resource_id)
                .where(Resource.node_id.in_(nodes)))] if nodes else []
            resource_ids = [r.id for r in _resources_below(s, nodes)]
            # The drafts of these units in worktrees that gave way to the purge: the
            # document is deleted everywhere (their rows go in commit).
            drafts = [(hook, hook.copies(s, resource_ids)) for hook in PURGE_BLOCKERS]
        for unit_id in units:
            self.unitstore.delete_unit(unit_id)
        for hook, copies in drafts:
            hook.delete_copies(self.unitstore, copies)

    def commit(self, s: Session, op: Operation, ctx: RequestContext) -> PurgeTrashResult:
        p = payload(op, PurgeTrashPayload)
        self._batch(s, p)  # authorize() locked space and batch in this transaction
        nodes = subtree(s, p.root_node_id)
        node_ids = [n.id for n in nodes]
        resources = _resources_below(s, node_ids)
        resource_ids = [r.id for r in resources]
        # authorize() found nothing blocking in this transaction: the rest give way.
        reason = PurgeReason.RETENTION if p.by_retention else PurgeReason.PURGE
        for hook in PURGE_BLOCKERS:
            hook.release(s, ctx, op.id, reason, resource_ids, node_ids, self.settings)
        objects = 0
        for i in range(0, len(resource_ids), 500):
            chunk = resource_ids[i:i + 500]
            for key in s.scalars(select(BlobResource.object_key)
                                 .where(BlobResource.resource_id.in_(chunk))):
                deletion.schedule(s, key, "purged")
                objects += 1
            # What names the units (their embedded assets) goes with them; objects queued.
            unit_ids = list(s.scalars(
                select(UnitResource.unit_id).where(UnitResource.resource_id.in_(chunk))))
            for units_purged in UNITS_PURGED:
                objects += units_purged(s, unit_ids)
            s.execute(delete(RecentOpen).where(RecentOpen.resource_id.in_(chunk)))
            s.execute(delete(BlobResource).where(BlobResource.resource_id.in_(chunk)))
            s.execute(delete(UnitResource).where(UnitResource.resource_id.in_(chunk)))
            s.execute(delete(Resource).where(Resource.id.in_(chunk)))
        batch_ids: list[str] = []
        for i in range(0, len(node_ids), 500):
            chunk = node_ids[i:i + 500]
            s.execute(delete(NodeGrant).where(NodeGrant.node_id.in_(chunk)))
            # What names these nodes (issue references: with a history event) lets go.
            for nodes_purged in NODES_PURGED:
                nodes_purged(s, chunk)
            s.execute(delete(LinkSharing).where(LinkSharing.node_id.in_(chunk)))
            batch_ids.extend(s.scalars(select(TrashBatch.id)
                                       .where(TrashBatch.root_node_id.in_(chunk))))
            s.execute(delete(TrashBatch).where(TrashBatch.root_node_id.in_(chunk)))
        nested = sorted(b for b in batch_ids if b != p.batch_id)
        for node in reversed(nodes):  # children before parents
            s.execute(delete(Node).where(Node.id == node.id))
        audit.record(s, ctx, "trash.purge", "trash_batch", p.batch_id, space_id=p.space_id,
                     details={"nodes": len(nodes), "resources": len(resources),
                              "objects": objects, "nested_batch_ids": nested,
                              "on_behalf_of": op.actor_id})
        return PurgeTrashResult(batch_id=p.batch_id, nodes_deleted=len(nodes),
                                resources_deleted=len(resources), objects_queued=objects,
                                batches_deleted=len(batch_ids), nested_batch_ids=nested)

    def compensate(self, op: Operation) -> None:
        pass
