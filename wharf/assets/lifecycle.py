"""What happens to assets and uploads outside a request: a purged unit's assets go, a
discarded worktree's (or a removed unit's) assets and waiting uploads go, an upload whose
process died is abandoned at its deadline, a stored upload whose message was lost is rung
again. Each runs in the caller's transaction."""
from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, Select, delete, select
from sqlalchemy.orm import Session

from storage.enums import AssetUploadState
from storage.models import Operation, UnitAsset, UnitAssetUpload
from wharf.assets.upload import RESERVATION_GRACE, fail_upload
from wharf.deletion import service as deletion
from wharf.infra.errors import ProblemCode

PURGED = "unit_purged_asset"


def delete_assets(s: Session, where: Sequence[ColumnElement[bool]], reason: str,
                  batch: int = 1000) -> int:
    """Delete the assets matching ``where`` and queue their objects for deletion
    (``reason``), in the caller's transaction, ``batch`` rows at a time (bounded memory and
    statement size, however many there are). Returns how many."""
    total = 0
    while True:
        rows = s.execute(select(UnitAsset.id, UnitAsset.object_key).where(*where)
                         .order_by(UnitAsset.id).limit(batch)).all()
        if not rows:
            return total
        deletion.schedule_many(s, [r.object_key for r in rows], reason)
        s.execute(delete(UnitAsset).where(UnitAsset.id.in_([r.id for r in rows])))
        total += len(rows)


def purge_unit_assets(s: Session, unit_ids: Sequence[str], batch: int = 1000) -> int:
    """Delete the assets of units being purged and queue their objects for deletion (the
    purge's own transaction). Uploads still in flight for them fail at publish."""
    if not unit_ids:
        return 0
    return delete_assets(s, [UnitAsset.unit_id.in_(list(unit_ids))], PURGED, batch)


def fail_uploads(s: Session, where: Sequence[ColumnElement[bool]], code: str, message: str,
                 *, now: datetime, idempotency_key_ttl: int) -> int:
    """Fail the uploads matching ``where`` (``fail_upload``), except those a worker holds
    now (it fails them on its own). Locked: a request storing its bytes right now either
    committed first or finds its upload gone (409). The object of an upload still
    ``receiving`` is deleted at its reservation time, not now: its request may still be
    writing it (and queues it itself if alive). Returns how many were failed."""
    rows = s.execute(select(UnitAssetUpload.id, UnitAssetUpload.operation_id,
                            UnitAssetUpload.object_key, UnitAssetUpload.state,
                            UnitAssetUpload.expires_at, Operation.status)
                     .join(Operation, Operation.id == UnitAssetUpload.operation_id,
                           isouter=True)
                     .where(*where)
                     .with_for_update(of=UnitAssetUpload)).all()
    done = 0
    for r in rows:
        if r.status == "running":
            continue
        fail_upload(s, r.operation_id, r.id, r.object_key, code, message,
                    idempotency_key_ttl=idempotency_key_ttl, now=now,
                    delete_after=r.expires_at + RESERVATION_GRACE
                    if r.state == AssetUploadState.RECEIVING else None)
        done += 1
    return done


def drop_worktree_assets(s: Session, worktree_id: str, *, unit_id: str | None = None,
                         reason: str, code: str, message: str, now: datetime,
                         idempotency_key_ttl: int) -> tuple[int, int]:
    """A worktree's assets (of one unit, or all) deleted with their objects queued, and its
    uploads still waiting failed (``code``): when the worktree is discarded or the unit
    taken out of it. Returns (assets deleted, uploads failed)."""
    assets = [UnitAsset.worktree_id == worktree_id,
              *([UnitAsset.unit_id == unit_id] if unit_id is not None else [])]
    uploads = [UnitAssetUpload.worktree_id == worktree_id,
               *([UnitAssetUpload.unit_id == unit_id] if unit_id is not None else [])]
    return (delete_assets(s, assets, reason),
            fail_uploads(s, uploads, code, message, now=now,
                         idempotency_key_ttl=idempotency_key_ttl))


def expired_receiving(now: datetime) -> Select[str]:
    """Uploads still ``receiving`` past their deadline, oldest first."""
    return (select(UnitAssetUpload.id)
            .where(UnitAssetUpload.state == AssetUploadState.RECEIVING,
                   UnitAssetUpload.expires_at <= now)
            .order_by(UnitAssetUpload.expires_at, UnitAssetUpload.id))


def abandon_expired_uploads(s: Session, ids: Sequence[str], now: datetime,
                            idempotency_key_ttl: int) -> int:
    """Abandon these ``receiving`` uploads (``fail_uploads``: ``upload_abandoned``; a
    request still finishing its last write, its reads stopped at the deadline, queues its
    object itself; a dead one's object goes at the reservation time)."""
    return fail_uploads(s, [UnitAssetUpload.id.in_(list(ids)),
                            UnitAssetUpload.state == AssetUploadState.RECEIVING],
                        ProblemCode.UPLOAD_ABANDONED,
                        "the upload's bytes did not arrive before its deadline",
                        now=now, idempotency_key_ttl=idempotency_key_ttl)


def stored_but_idle(s: Session, now: datetime, limit: int,
                    grace: timedelta) -> list[Operation]:
    """Operations of ``stored`` uploads that are pending, due, unleased and untouched for
    ``grace``: their request's message was lost (under a backlog a younger one's message
    is usually still queued, so it is not rung again). The caller sends ``outbox_for(op)``
    for each."""
    return list(s.scalars(
        select(Operation)
        .join(UnitAssetUpload, UnitAssetUpload.operation_id == Operation.id)
        .where(UnitAssetUpload.state == AssetUploadState.STORED,
               Operation.status == "pending",
               Operation.updated_at <= now - grace,
               (Operation.next_attempt_at.is_(None)) | (Operation.next_attempt_at <= now))
        .order_by(Operation.created_at).limit(limit)))
