"""What a deletion removes, in bounded batches: the one purge behind an account's deletion
(its personal space's tree, its own worktrees and uploads, its open operations:
:mod:`wharf.accounts.purge`) and a team space's deletion (the space's tree, its team
worktrees, the uploads into it, its open operations: :mod:`wharf.accounts.space_deletion`).

Each function is one bounded batch (at most ``n`` rows of a kind) in its own transaction,
idempotent, and answers how much it did: its caller repeats it until it answers 0. Units
are deleted from the unit store before their rows (a crash in between leaves rows whose
unit is already gone: the next batch deletes it again, a no-op); stored objects are never
deleted here, they are queued through the object deletion outbox
(:mod:`wharf.deletion.service`) in the transaction that deletes the rows naming them.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, delete, select
from sqlalchemy.orm import Session

from storage.db import Database
from storage.enums import OPEN_STATUSES, AttemptOutcome, OperationStatus
from storage.models import (
    BlobResource,
    BlobUploadSession,
    LinkSharing,
    Node,
    NodeGrant,
    Operation,
    RecentOpen,
    Resource,
    Star,
    TrashBatch,
    UnitAsset,
    UnitAssetUpload,
    UnitResource,
    Worktree,
    WorktreeEvent,
    WorktreeNodeIntent,
    WorktreeUnit,
)
from storage.results import rowcount
from storage.unitstore import UnitStore
from wharf.assets.lifecycle import PURGED, delete_assets
from wharf.comments import lifecycle as comments
from wharf.deletion import service as deletion
from wharf.deletion.references import object_key_fields, referenced
from wharf.infra.clock import utcnow
from wharf.infra.errors import TransientFailure
from wharf.operations.finish import Outcome, finish
from wharf.protection import lifecycle as protection
from wharf.worktrees.drafts import Drafts

#: Rounds of one step in one attempt (a tree MAX_TREE_DEPTH deep needs that many; the
#: next attempt goes on where this one stopped).
MAX_ROUNDS = 10_000

P = TypeVar("P")


def run_steps(run: P, steps: Sequence[tuple[str, Callable[[P], int]]], counts: dict[str, int],
              what: str, max_rounds: int = MAX_ROUNDS) -> dict[str, int]:
    """Each step in order, round after round until a round finds nothing (leaves first),
    adding what each round did to ``counts``; a step still finding work after
    ``max_rounds`` is a :class:`TransientFailure` (the next attempt goes on)."""
    for name, step in steps:
        for _ in range(max_rounds):
            done = step(run)
            if not done:
                break
            counts[name] = counts.get(name, 0) + done
        else:
            raise TransientFailure(f"{what}: step {name} did not finish")
    return counts


def fail_operations(db: Database, where: ColumnElement[bool], not_id: str, n: int,
                    handlers: Mapping[str, Any], key_ttl: int, error: dict[str, Any],
                    when: str, reason: str) -> int:
    """Up to ``n`` open operations matching ``where`` (not ``not_id``, the deletion itself)
    fail with ``error``, with their kinds' failure hooks; object keys only their payloads
    named (a staged replacement) are queued for deletion."""
    with db.write() as s:
        ops = list(s.scalars(select(Operation).where(
            where, Operation.id != not_id,
            Operation.status.in_([str(x) for x in OPEN_STATUSES]))
            .order_by(Operation.id).limit(n).with_for_update()))
        finish(s, [Outcome(op, OperationStatus.FAILED, error=error, attempt=AttemptOutcome.FAILED,
                           handler=handlers.get(op.kind), when=when) for op in ops],
               key_ttl=key_ttl, now=utcnow())
        s.flush()
        fields = object_key_fields()
        keys = [op.payload[f] for op in ops for f in fields.get(op.kind, ())
                if isinstance(op.payload.get(f), str)]
        named = referenced(s, keys, deletion_jobs=False)
        for k in keys:
            if k not in named:
                deletion.schedule(s, k, reason)
    return len(ops)


def purge_worktrees(db: Database, unitstore: UnitStore, where: ColumnElement[bool], n: int,
                    reason: str) -> int:
    """Up to ``n`` worktrees matching ``where``: drafts (unit store), assets and uploads
    (objects queued), node intents, units, events, rows."""
    with db.read() as s:
        ids = list(s.scalars(select(Worktree.id).where(where).order_by(Worktree.id).limit(n)))
    for wt in ids:  # idempotent; the rows below go only after
        Drafts.of(unitstore).delete_drafts(wt)
    if not ids:
        return 0
    with db.write() as s:
        delete_assets(s, [UnitAsset.worktree_id.in_(ids)], PURGED, n)
        for key in s.scalars(select(UnitAssetUpload.object_key).where(
                UnitAssetUpload.worktree_id.in_(ids))):
            deletion.schedule(s, key, reason)
        s.execute(delete(UnitAssetUpload).where(UnitAssetUpload.worktree_id.in_(ids)))
        s.execute(delete(WorktreeNodeIntent).where(WorktreeNodeIntent.worktree_id.in_(ids)))
        s.execute(delete(WorktreeUnit).where(WorktreeUnit.worktree_id.in_(ids)))
        s.execute(delete(WorktreeEvent).where(WorktreeEvent.worktree_id.in_(ids)))
        s.execute(delete(Worktree).where(Worktree.id.in_(ids)))
    return len(ids)


def purge_uploads(db: Database, blobs: ColumnElement[bool],
                  assets: ColumnElement[bool] | None, n: int, reason: str) -> int:
    """Up to ``n`` blob upload sessions matching ``blobs`` and ``n`` asset uploads matching
    ``assets`` (None: none): their objects are queued for deletion, their rows go."""
    done = 0
    with db.write() as s:
        rows = list(s.execute(select(BlobUploadSession.id, BlobUploadSession.object_key)
                              .where(blobs).limit(n)))
        for _id, key in rows:
            deletion.schedule(s, key, reason)
        s.execute(delete(BlobUploadSession).where(
            BlobUploadSession.id.in_([r[0] for r in rows])))
        done += len(rows)
        if assets is None:
            return done
        rows = list(s.execute(select(UnitAssetUpload.id, UnitAssetUpload.object_key)
                              .where(assets).limit(n)))
        for _id, key in rows:
            deletion.schedule(s, key, reason)
        s.execute(delete(UnitAssetUpload).where(UnitAssetUpload.id.in_([r[0] for r in rows])))
        done += len(rows)
    return done


def purge_leaves(db: Database, unitstore: UnitStore, space_id: str, n: int,
                 reason: str) -> int:
    """Up to ``n`` leaves of the space's tree (nodes without children, trashed or not):
    their units (unit store first), blobs and assets (objects queued), asset uploads in
    flight into those units, comments, protected ranges, stars, recent opens, grants, link
    sharing, the trash batches they root, then the nodes. Leaves first: called until it
    answers 0, it empties the tree."""
    child = Node.__table__.alias("child")
    with db.read() as s:
        leaves = list(s.scalars(select(Node.id).where(
            Node.space_id == space_id,
            ~select(child.c.id).where(child.c.parent_id == Node.id).exists())
            .order_by(Node.id).limit(n)))
        units = list(s.scalars(select(UnitResource.unit_id).join(
            Resource, Resource.id == UnitResource.resource_id).where(
            Resource.node_id.in_(leaves)))) if leaves else []
    for unit_id in units:  # idempotent; the rows go only after
        unitstore.delete_unit(unit_id)
    if not leaves:
        return 0
    with db.write() as s:
        resources = list(s.scalars(select(Resource.id).where(Resource.node_id.in_(leaves))))
        for key in s.scalars(select(BlobResource.object_key).where(
                BlobResource.resource_id.in_(resources))):
            deletion.schedule(s, key, reason)
        delete_assets(s, [UnitAsset.unit_id.in_(units)], PURGED, n)
        uploads = list(s.execute(select(UnitAssetUpload.id, UnitAssetUpload.object_key)
                                 .where(UnitAssetUpload.unit_id.in_(units))))
        for _id, key in uploads:
            deletion.schedule(s, key, reason)
        s.execute(delete(UnitAssetUpload).where(
            UnitAssetUpload.id.in_([u[0] for u in uploads])))
        comments.delete_for_units(s, units)  # others' comments on these units too
        protection.delete_for_units(s, units)  # and the protected ranges in them
        s.execute(delete(RecentOpen).where(RecentOpen.resource_id.in_(resources)))
        s.execute(delete(Star).where(Star.resource_id.in_(resources)))
        s.execute(delete(BlobResource).where(BlobResource.resource_id.in_(resources)))
        s.execute(delete(UnitResource).where(UnitResource.resource_id.in_(resources)))
        s.execute(delete(Resource).where(Resource.id.in_(resources)))
        s.execute(delete(NodeGrant).where(NodeGrant.node_id.in_(leaves)))
        s.execute(delete(LinkSharing).where(LinkSharing.node_id.in_(leaves)))
        s.execute(delete(TrashBatch).where(TrashBatch.root_node_id.in_(leaves)))
        gone = rowcount(s.execute(delete(Node).where(Node.id.in_(leaves))))
    return gone


def has_nodes(s: Session, space_id: str) -> bool:
    return s.scalar(select(Node.id).where(Node.space_id == space_id).limit(1)) is not None
