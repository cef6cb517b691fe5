"""What happens to assets and uploads outside a request: a purged unit's assets go, an
upload whose process died is abandoned at its deadline, a stored upload whose message was
lost is rung again. Each runs in the caller's transaction."""
from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import Select, delete, select
from sqlalchemy.orm import Session

from storage.enums import AssetUploadState
from storage.models import Operation, UnitAsset, UnitAssetUpload
from wharf import deletion
from wharf.assets.upload import RESERVATION_GRACE, fail_upload
from wharf.errors import ProblemCode

PURGED = "unit_purged_asset"


def purge_unit_assets(s: Session, unit_ids: Sequence[str], batch: int = 1000) -> int:
    """Delete the assets of units being purged and queue their objects for deletion (the
    purge's own transaction), ``batch`` rows at a time (bounded memory and statement
    size, however many assets the units hold). Uploads still in flight for them fail at
    publish."""
    if not unit_ids:
        return 0
    total = 0
    while True:
        rows = s.execute(select(UnitAsset.id, UnitAsset.object_key)
                         .where(UnitAsset.unit_id.in_(list(unit_ids)))
                         .order_by(UnitAsset.id).limit(batch)).all()
        if not rows:
            return total
        deletion.schedule_many(s, [r.object_key for r in rows], PURGED)
        s.execute(delete(UnitAsset).where(UnitAsset.id.in_([r.id for r in rows])))
        total += len(rows)


def expired_receiving(now: datetime) -> Select[str]:
    """Uploads still ``receiving`` past their deadline, oldest first."""
    return (select(UnitAssetUpload.id)
            .where(UnitAssetUpload.state == AssetUploadState.RECEIVING,
                   UnitAssetUpload.expires_at <= now)
            .order_by(UnitAssetUpload.expires_at, UnitAssetUpload.id))


def abandon_expired_uploads(s: Session, ids: Sequence[str], now: datetime,
                            idempotency_key_ttl: int) -> int:
    """Abandon these ``receiving`` uploads: operation failed ``upload_abandoned`` unless a
    worker holds it now (then it fails the same way on its own), row deleted, object queued
    for deletion now. Returns how many were abandoned."""
    rows = s.execute(select(UnitAssetUpload.id, UnitAssetUpload.operation_id,
                            UnitAssetUpload.object_key, UnitAssetUpload.expires_at,
                            Operation.status)
                     .join(Operation, Operation.id == UnitAssetUpload.operation_id,
                           isouter=True)
                     .where(UnitAssetUpload.id.in_(list(ids)),
                            UnitAssetUpload.state == AssetUploadState.RECEIVING)
                     # Locked: a request storing its bytes right now either committed
                     # first (the row is stored, left alone) or finds it gone (409).
                     .with_for_update(of=UnitAssetUpload)).all()
    done = 0
    for r in rows:
        if r.status == "running":
            continue  # its worker finds the upload incomplete and fails it
        # A request still finishing its last write (its reads stopped at the deadline)
        # queues the object itself; a dead one's object goes with the reservation time.
        fail_upload(s, r.operation_id, r.id, r.object_key, ProblemCode.UPLOAD_ABANDONED,
                    "the upload's bytes did not arrive before its deadline",
                    idempotency_key_ttl=idempotency_key_ttl, now=now,
                    delete_after=r.expires_at + RESERVATION_GRACE)
        done += 1
    return done


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
