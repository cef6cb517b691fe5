"""The retention sweeps. Each is idempotent and works in bounded batches: at most
``batch_size`` rows per transaction, so no sweep holds a long transaction or a table lock.
Each returns counts of what it did."""
from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Select, delete, or_, select, update
from sqlalchemy.orm import Session

from storage.blobstore import BlobStore
from storage.db import Database
from storage.enums import DONE_STATUSES, OperationStatus, UploadState
from storage.models import (
    ApiToken,
    AuthThrottle,
    BlobUploadSession,
    LoginSession,
    Operation,
    OperationAttempt,
    OutboxMessage,
    ScheduleTick,
    Worktree,
    WorktreeUnit,
)
from storage.results import rowcount
from storage.unitstore import UnitStore
from wharf import assets, blobs, search
from wharf.accounts import service as accounts
from wharf.deletion import service as deletion
from wharf.exchange import exports
from wharf.fsck import run_fsck
from wharf.identity import device as device_logins
from wharf.infra.settings import Settings
from wharf.operations import recovery
from wharf.operations.finish import Outcome, finish
from wharf.operations.idempotency import done_before
from wharf.operations.service import outbox_for
from wharf.trash import service as trash
from wharf.webhooks import delivery as webhook_delivery
from wharf.worktrees.drafts import DraftKey, Drafts

log = logging.getLogger("wharf.sweeps")

BATCH_SIZE = 1000
#: How long an outbox row is kept after it was sent to the broker (for looking into a
#: recent delivery; nothing reads it again).
OUTBOX_KEEP = timedelta(hours=1)
#: Upload sessions the expiry sweep may still expire, and those whose key may be released.
#: ``importing`` is neither: an import reads the object; the import's end marks it
#: ``imported`` or ``failed`` and queues the object for deletion.
_UNFINISHED_UPLOADS = (UploadState.WAITING_FOR_UPLOAD, UploadState.UPLOADED,
                       UploadState.VERIFYING)
_FINISHED_UPLOADS = (UploadState.COMPLETED, UploadState.IMPORTED, UploadState.FAILED,
                     UploadState.EXPIRED, UploadState.ABORTED)


@dataclass
class SweepContext:
    db: Database
    settings: Settings
    now: datetime
    send: recovery.Send | None = None             # outbox row -> broker (doorbells)
    blob_store: BlobStore | None = None
    handlers: Mapping[str, Any] | None = None  # operation kind -> handler (failure hooks)
    batch_size: int = BATCH_SIZE
    max_batches: int = 1000
    # Test seam: called after each committed batch with (sweep, batch number, rows).
    on_batch: Callable[[str, int, int], None] | None = None
    batches: dict[str, int] = field(default_factory=dict)
    unitstore: UnitStore | None = None    # the sweeps that delete worktree drafts

    def sender(self) -> recovery.Send:
        """``send``, which the sweeps that ring the broker need."""
        if self.send is None:
            raise RuntimeError("this sweep rings the broker: SweepContext.send is required")
        return self.send

    def store(self) -> BlobStore:
        """``blob_store``, which the sweeps that delete objects need."""
        if self.blob_store is None:
            raise RuntimeError("this sweep deletes objects: SweepContext.blob_store is required")
        return self.blob_store

    def units(self) -> UnitStore:
        """``unitstore``, which the sweeps that delete worktree drafts need."""
        if self.unitstore is None:
            raise RuntimeError("this sweep deletes drafts: SweepContext.unitstore is required")
        return self.unitstore

    def batch_done(self, sweep: str, rows: int) -> None:
        self.batches[sweep] = self.batches.get(sweep, 0) + 1
        if self.on_batch is not None:
            self.on_batch(sweep, self.batches[sweep], rows)


def _batched(ctx: SweepContext, name: str, pick: Callable[[Session], Select[str]],
             apply: Callable[[Session, list[str]], None]) -> int:
    """Repeat: pick up to batch_size ids, apply to them in one transaction; until none."""
    total = 0
    for _ in range(ctx.max_batches):
        with ctx.db.write() as s:
            ids = list(s.scalars(pick(s).limit(ctx.batch_size)))
            if not ids:
                break
            apply(s, ids)
        total += len(ids)
        ctx.batch_done(name, len(ids))
        if len(ids) < ctx.batch_size:
            break
    return total


def expire_upload_sessions(ctx: SweepContext) -> dict[str, int]:
    """Open sessions past ``expires_at`` → ``expired``; their object → deletion job. A
    session whose completion is still only queued (pending) is expired too, and its
    operation fails with ``upload_expired``."""
    now = ctx.now
    failed_ops = 0

    def pick(s: Session) -> Select[str]:
        return (select(BlobUploadSession.id)
                .where(BlobUploadSession.state.in_(_UNFINISHED_UPLOADS),
                       BlobUploadSession.expires_at <= now)
                .order_by(BlobUploadSession.expires_at))

    def apply(s: Session, ids: list[str]) -> None:
        nonlocal failed_ops
        rows = s.execute(select(BlobUploadSession.id, BlobUploadSession.state,
                                BlobUploadSession.operation_id, BlobUploadSession.object_key)
                         .where(BlobUploadSession.id.in_(ids))).all()
        expire = [r for r in rows if r.state != UploadState.VERIFYING]
        verifying = {r.operation_id: r for r in rows if r.state == UploadState.VERIFYING}
        # Only those still queued: one a worker is verifying right now is left to finish.
        q = select(Operation).where(Operation.id.in_(list(verifying)),
                                    Operation.status == OperationStatus.PENDING)
        ops = list(s.scalars(q.with_for_update() if ctx.db.is_postgres else q))
        error = {"code": "upload_expired", "retryable": False,
                 "message": "the upload session expired before verification"}
        finish(s, [Outcome(op, OperationStatus.FAILED, error=error) for op in ops],
               key_ttl=ctx.settings.idempotency_key_ttl, now=now)
        failed_ops += len(ops)
        expire.extend(verifying[op.id] for op in ops)
        # Conditional on the state, so a session completed meanwhile is left alone.
        s.execute(update(BlobUploadSession).where(
            BlobUploadSession.id.in_([r.id for r in expire]),
            BlobUploadSession.state.in_(_UNFINISHED_UPLOADS))
            .values(state=UploadState.EXPIRED, error_code="upload_expired", updated_at=now))
        deletion.schedule_many(s, [r.object_key for r in expire], "upload_expired")

    expired = _batched(ctx, "expire_upload_sessions", pick, apply)
    return {"expired": expired, "operations_failed": failed_ops}


def sweep_asset_uploads(ctx: SweepContext) -> dict[str, int]:
    """Asset uploads still ``receiving`` past their deadline (the request's process died)
    → operation failed ``upload_abandoned``, row deleted, object queued for deletion;
    ``stored`` uploads whose operation is due but was never delivered → rung again. By
    deadline only, so uploads other processes are streaming right now are left alone."""
    now = ctx.now
    abandoned = 0

    def apply(s: Session, ids: list[str]) -> None:
        nonlocal abandoned
        abandoned += assets.abandon_expired_uploads(s, ids, now,
                                                    ctx.settings.idempotency_key_ttl)

    _batched(ctx, "sweep_asset_uploads", lambda s: assets.expired_receiving(now), apply)
    with ctx.db.read() as s:
        idle = assets.stored_but_idle(
            s, now, ctx.batch_size,
            timedelta(seconds=max(5.0, ctx.settings.operation_lease_seconds)))
    for op in idle:
        ctx.sender()(outbox_for(op))
    return {"abandoned": abandoned, "republished": len(idle)}


def recover_operations(ctx: SweepContext) -> dict[str, int]:
    """Re-enqueue pending operations that are due (lost message, retry time came) and
    running ones whose lease expired; fail those that used up their attempts."""
    requeued = expired = 0
    for _ in range(ctx.max_batches):
        # A pending operation is re-enqueued only after a lease length without progress:
        # under a backlog its message is usually still queued, and a lost one waits at most
        # that long (plus the sweep period) before it rings again.
        report = recovery.recover(ctx.db, ctx.sender(), batch=ctx.batch_size,
                                  grace_seconds=max(5.0, ctx.settings.operation_lease_seconds),
                                  handlers=ctx.handlers,
                                  key_ttl=ctx.settings.idempotency_key_ttl)
        requeued += report.requeued
        expired += report.expired
        ctx.batch_done("recover_operations", report.requeued + report.expired)
        if report.requeued + report.expired < ctx.batch_size:
            break
    sessions = blobs.recover_interrupted_sessions(ctx.db, limit=ctx.batch_size)
    relayed = recovery.relay(ctx.db, ctx.sender(), batch=ctx.batch_size)
    return {"requeued": requeued, "expired": expired, "sessions_reset": sessions,
            "relayed": relayed}


def release_idempotency_keys(ctx: SweepContext) -> dict[str, int]:
    """Forget idempotency keys of finished operations after WHARF_IDEMPOTENCY_KEY_TTL."""
    now = ctx.now

    def pick(s: Session) -> Select[str]:
        return (select(Operation.id).where(Operation.idempotency_key.is_not(None),
                                           Operation.key_expires_at <= now))

    def apply(s: Session, ids: list[str]) -> None:
        s.execute(update(Operation).where(Operation.id.in_(ids)).values(idempotency_key=None))

    cutoff = done_before(now, ctx.settings.idempotency_key_ttl)

    def pick_sessions(s: Session) -> Select[str]:
        return (select(BlobUploadSession.id).where(
            BlobUploadSession.idempotency_key.is_not(None),
            BlobUploadSession.state.in_(_FINISHED_UPLOADS),
            BlobUploadSession.updated_at <= cutoff))

    def apply_sessions(s: Session, ids: list[str]) -> None:
        s.execute(update(BlobUploadSession).where(BlobUploadSession.id.in_(ids))
                  .values(idempotency_key=None))

    return {"operations": _batched(ctx, "release_idempotency_keys", pick, apply),
            "upload_sessions": _batched(ctx, "release_idempotency_keys", pick_sessions,
                                        apply_sessions)}


def delete_finished_operations(ctx: SweepContext) -> dict[str, int]:
    """Delete finished operations (and their attempts) after WHARF_OPERATION_RETENTION,
    schedule ticks of the same age, and outbox rows sent to the broker more than
    :data:`OUTBOX_KEEP` ago (nothing reads a sent row again; one not sent yet stays until
    the relay sends it)."""
    cutoff = ctx.now - timedelta(seconds=ctx.settings.operation_retention)

    def pick(s: Session) -> Select[str]:
        return (select(Operation.id).where(Operation.status.in_(DONE_STATUSES),
                                           Operation.completed_at <= cutoff)
                .order_by(Operation.completed_at))

    def apply(s: Session, ids: list[str]) -> None:
        s.execute(delete(OperationAttempt).where(OperationAttempt.operation_id.in_(ids)))
        s.execute(delete(Operation).where(Operation.id.in_(ids)))

    def pick_ticks(s: Session) -> Select[str]:
        return select(ScheduleTick.id).where(ScheduleTick.created_at <= cutoff)

    def apply_ticks(s: Session, ids: list[str]) -> None:
        s.execute(delete(ScheduleTick).where(ScheduleTick.id.in_(ids)))

    sent_before = ctx.now - OUTBOX_KEEP

    def pick_sent(s: Session) -> Select[str]:  # on ix_outbox_pending (dispatched_at, …)
        return select(OutboxMessage.id).where(OutboxMessage.dispatched_at <= sent_before)

    def apply_sent(s: Session, ids: list[str]) -> None:
        s.execute(delete(OutboxMessage).where(OutboxMessage.id.in_(ids)))

    return {"operations": _batched(ctx, "delete_finished_operations", pick, apply),
            "ticks": _batched(ctx, "delete_finished_operations", pick_ticks, apply_ticks),
            "outbox": _batched(ctx, "delete_finished_operations", pick_sent, apply_sent)}


def retry_deletion_jobs(ctx: SweepContext) -> dict[str, int]:
    """Run due object deletion jobs (failed ones come due again on their backoff, so a
    batch never sees the same job twice)."""
    counts = {"deleted": 0, "retry": 0}
    for _ in range(ctx.max_batches):
        batch = deletion.run_due(ctx.db, ctx.store(), ctx.batch_size)
        ran = sum(batch.values())
        for outcome, n in batch.items():
            counts[outcome] = counts.get(outcome, 0) + n
        if not ran:
            break
        ctx.batch_done("retry_deletion_jobs", ran)
        if ran < ctx.batch_size:
            break
    return counts


def retry_webhook_deliveries(ctx: SweepContext) -> dict[str, int]:
    """Ring again for webhook deliveries whose message was lost, and delete finished ones
    past their retention (``wharf.webhooks.delivery``): one bounded batch of rings, and
    bounded batches of deletions within ``prune``'s time budget. A delivery is rung again
    once overdue by ``WHARF_WEBHOOK_CLAIM_MARGIN_SECONDS``."""
    return {"rung": webhook_delivery.rering_due(
                ctx.db, ctx.batch_size,
                grace_seconds=ctx.settings.webhook_claim_margin_seconds),
            "pruned": webhook_delivery.prune(ctx.db, ctx.batch_size)}


def delete_expired_credentials(ctx: SweepContext) -> dict[str, int]:
    """Delete expired login sessions and device logins, expired or revoked API tokens,
    and ended login and registration throttle windows."""
    now = ctx.now

    def pick_sessions(s: Session) -> Select[str]:
        return select(LoginSession.id).where(LoginSession.expires_at <= now)

    def apply_sessions(s: Session, ids: list[str]) -> None:
        s.execute(delete(LoginSession).where(LoginSession.id.in_(ids)))

    def pick_tokens(s: Session) -> Select[str]:
        return select(ApiToken.id).where(or_(ApiToken.expires_at <= now,
                                             ApiToken.revoked_at.is_not(None)))

    def apply_tokens(s: Session, ids: list[str]) -> None:
        s.execute(delete(ApiToken).where(ApiToken.id.in_(ids)))

    # Login/registration throttle counters whose window has ended (the longest window, so
    # no live counter is dropped early).
    throttle_cutoff = now - timedelta(seconds=max(ctx.settings.login_window,
                                                  ctx.settings.register_window))

    def pick_throttle(s: Session) -> Select[str]:
        return select(AuthThrottle.key).where(AuthThrottle.window_start <= throttle_cutoff)

    def apply_throttle(s: Session, keys: list[str]) -> None:
        s.execute(delete(AuthThrottle).where(AuthThrottle.key.in_(keys),
                                             AuthThrottle.window_start <= throttle_cutoff))

    sweep = "delete_expired_credentials"
    return {"login_sessions": _batched(ctx, sweep, pick_sessions, apply_sessions),
            "api_tokens": _batched(ctx, sweep, pick_tokens, apply_tokens),
            "device_authorizations": _batched(ctx, sweep, device_logins.pick_expired(now),
                                              device_logins.delete_ids),
            "auth_throttle": _batched(ctx, sweep, pick_throttle, apply_throttle)}


def purge_old_trash(ctx: SweepContext) -> dict[str, int]:
    """Trash older than WHARF_TRASH_RETENTION → ``purge_trash`` operations."""
    return {"purges_submitted": trash.submit_due_purges(ctx.db, ctx.settings, ctx.now,
                                                  limit=ctx.batch_size)}


#: A unit-store draft with no product row is an orphan only after this long: the
#: operation that adds a unit writes the draft first and its product row at completion.
ORPHAN_DRAFT_AGE = timedelta(hours=1)


def _delete_orphan(ctx: SweepContext, store: UnitStore, key: DraftKey) -> bool:
    """Delete a draft that had no ``worktree_units`` row, holding its worktree's row lock
    as a unit's addition does when it inserts that row and checks its draft: either the
    addition committed first (its row is seen here and the draft stays) or it finds the
    draft gone and writes it again. True if a draft was deleted."""
    with ctx.db.write() as s:
        s.get(Worktree, key.worktree_id, with_for_update=True)
        if s.scalar(select(WorktreeUnit.unit_id).where(
                WorktreeUnit.worktree_id == key.worktree_id,
                WorktreeUnit.unit_id == key.unit_id)) is not None:
            return False
        return Drafts.of(store).delete_draft(key.worktree_id, key.unit_id)


def sweep_worktree_drafts(ctx: SweepContext) -> dict[str, int]:
    """(a) Worktrees merged or discarded more than WHARF_WORKTREE_RETENTION ago: their
    drafts are deleted from the unit store, then ``drafts_purged_at`` is set (the
    worktree and its unit rows stay, listed as processed; a unit's draft answers 410
    ``draft_purged``). (b) Unit-store drafts older than an hour with no
    ``worktree_units`` row (an addition whose compensation did not run) are deleted."""
    store = ctx.units()
    cutoff = ctx.now - timedelta(seconds=ctx.settings.worktree_retention)
    purged = 0
    for _ in range(ctx.max_batches):
        with ctx.db.read() as s:
            ids = list(s.scalars(
                select(Worktree.id).where(Worktree.processed_at <= cutoff,
                                          Worktree.drafts_purged_at.is_(None))
                .order_by(Worktree.processed_at, Worktree.id).limit(ctx.batch_size)))
        if not ids:
            break
        for wt_id in ids:  # idempotent: a crash before the mark below deletes nothing twice
            Drafts.of(store).delete_drafts(wt_id)
        with ctx.db.write() as s:
            purged += rowcount(s.execute(
                update(Worktree).where(Worktree.id.in_(ids),
                                       Worktree.drafts_purged_at.is_(None))
                .values(drafts_purged_at=ctx.now)))
        ctx.batch_done("sweep_worktree_drafts", len(ids))
        if len(ids) < ctx.batch_size:
            break
    orphans = 0
    after: DraftKey | None = None
    for _ in range(ctx.max_batches):
        keys = Drafts.of(store).orphan_drafts(ctx.now - ORPHAN_DRAFT_AGE, after=after,
                                   limit=ctx.batch_size)
        if not keys:
            break
        with ctx.db.read() as s:
            known = {(r[0], r[1]) for r in s.execute(
                select(WorktreeUnit.worktree_id, WorktreeUnit.unit_id).where(
                    WorktreeUnit.worktree_id.in_({k.worktree_id for k in keys}),
                    WorktreeUnit.unit_id.in_({k.unit_id for k in keys})))}
        for k in keys:
            if (k.worktree_id, k.unit_id) not in known and _delete_orphan(ctx, store, k):
                orphans += 1
        ctx.batch_done("sweep_worktree_drafts", len(keys))
        after = keys[-1]
        if len(keys) < ctx.batch_size:
            break
    if purged or orphans:
        log.info("sweep_worktree_drafts: %d worktree(s) purged, %d orphan draft(s) deleted",
                 purged, orphans)
    return {"purged_worktrees": purged, "orphan_drafts": orphans}


#: The ``fsck`` sweep's bounds: findings logged in detail (and repaired) per run, and wall
#: time (20 minutes in all, under the sweep actors' 30-minute limit): the object side's,
#: then the unit side's own (it runs even when the object side ran out of time); the
#: counts cover what was compared.
FSCK_MAX_FINDINGS = 100
FSCK_BUDGET_SECONDS = 15 * 60
FSCK_UNIT_BUDGET_SECONDS = 5 * 60


def fsck(ctx: SweepContext) -> dict[str, int]:
    """``wharf fsck`` on a schedule (``WHARF_FSCK_INTERVAL``, weekly): report-only unless
    ``WHARF_FSCK_REPAIR`` (then old orphaned objects are queued for deletion). Each finding
    listed is logged as a JSON line; the counts, recorded on the tick, feed the
    ``wharf_fsck_*`` gauges."""

    def log_finding(finding: Any) -> None:
        log.warning(json.dumps({"event": "fsck_finding", **finding.as_json()}))

    report = run_fsck(ctx.db, ctx.store(), ctx.units(), ctx.settings, now=ctx.now,
                      repair=ctx.settings.fsck_repair, max_findings=FSCK_MAX_FINDINGS,
                      max_seconds=FSCK_BUDGET_SECONDS,
                      unit_max_seconds=FSCK_UNIT_BUDGET_SECONDS, emit=log_finding)
    log.info(json.dumps({"event": "fsck", **report.summary()}))
    return report.counts_for_sweep()


def deletion_ledger(ctx: SweepContext) -> dict[str, int]:
    """Ship the deletion ledger to the blob store (``ledger/``), prune shipped rows past
    ``WHARF_DELETION_LEDGER_RETENTION``, re-drive account deletions that lost their
    operation (``wharf.accounts.service``)."""
    return accounts.sweep(ctx.db, ctx.store(), ctx.settings, batch=ctx.batch_size)


def prune_unit_checkpoints(ctx: SweepContext) -> dict[str, int]:
    """Delete trunk checkpoints no document read needs (each unit keeps its first and its
    newest: ``storage.unitstore.UnitStore.prune_checkpoints``), in bounded batches."""
    pruned = 0
    for _ in range(ctx.max_batches):
        n = ctx.units().prune_checkpoints(ctx.batch_size)
        pruned += n
        if n:
            ctx.batch_done("prune_unit_checkpoints", n)
        if n < ctx.batch_size:
            break
    return {"checkpoints": pruned}


def prune_unit_history(ctx: SweepContext) -> dict[str, int]:
    """With ``WHARF_HISTORY_RETENTION`` set, delete trunk revisions older than it down to
    each unit's newest checkpoint before then (``UnitStore.prune_history``), in bounded
    batches; nothing otherwise."""
    if not ctx.settings.history_retention:
        return {"revisions": 0}
    older_than = ctx.now - timedelta(seconds=ctx.settings.history_retention)
    pruned = 0
    for _ in range(ctx.max_batches):
        n = ctx.units().prune_history(older_than, ctx.batch_size)
        pruned += n
        if n:
            ctx.batch_done("prune_unit_history", n)
        if n < ctx.batch_size:
            break
    return {"revisions": pruned}


def expire_exports(ctx: SweepContext) -> dict[str, int]:
    """Exports past ``expires_at`` (``WHARF_EXPORT_TTL``): rows deleted, objects queued."""
    return {"expired": _batched(ctx, "expire_exports", lambda s: exports.expired(ctx.now),
                                exports.expire)}


SWEEPS: dict[str, Callable[[SweepContext], dict[str, int]]] = {
    "recover_operations": recover_operations,
    "expire_upload_sessions": expire_upload_sessions,
    "sweep_asset_uploads": sweep_asset_uploads,
    "release_idempotency_keys": release_idempotency_keys,
    "delete_finished_operations": delete_finished_operations,
    "retry_deletion_jobs": retry_deletion_jobs,
    "purge_old_trash": purge_old_trash,
    "delete_expired_credentials": delete_expired_credentials,
    "sweep_worktree_drafts": sweep_worktree_drafts,
    "fsck": fsck,
    "retry_webhook_deliveries": retry_webhook_deliveries,
    "deletion_ledger": deletion_ledger,
    "prune_unit_checkpoints": prune_unit_checkpoints,
    "prune_unit_history": prune_unit_history,
    "expire_exports": expire_exports,
    "index_content": lambda ctx: search.indexing.sweep(ctx.db, ctx.units(), ctx.settings),
}
