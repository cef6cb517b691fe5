"""An asset upload's bytes are stored: its upload row marked ``stored`` (with the digest,
ETag and detected type), its key's reservation released, its operation made due and
rung -- all or nothing. On PostgreSQL in ONE statement (in a transaction of its own);
elsewhere in a transaction of four. Not autocommitted (``Database.unbundled``): a
statement blocked on the upload row's lock when its API process is killed would still
commit once the lock is released, where a transaction dies with its client -- the
behaviour the kill -9 tests (``tests/processes/test_assets.py``) rely on. None of it
happens if the upload is no longer ``receiving`` (abandoned meanwhile): the same
transaction then queues the object the request just wrote (``_abandoned``), so no moment
exists where its bytes are stored and nothing will delete them."""
from __future__ import annotations

from typing import Any

from sqlalchemy import Integer, bindparam, delete, func, insert, literal, select, update
from sqlalchemy.orm import Session

from storage.db import Database, OutboxNotice, announce_after_commit, send_after_commit
from storage.enums import AssetUploadState
from storage.models import ObjectDeletionJob, Operation, OutboxMessage, UnitAssetUpload
from storage.results import rowcount
from wharf.assets.kinds import PublishAssetPayload
from wharf.blobs.ingest import Ingested
from wharf.deletion import service as deletion
from wharf.deletion.references import referenced
from wharf.infra.clock import utcnow
from wharf.infra.ids import new_id
from wharf.operations.service import QUEUE, actor_name, outbox_for

#: The deletion reason of an abandoned upload's object.
ABANDONED = "asset_upload_abandoned"

_U = UnitAssetUpload.__table__
_J = ObjectDeletionJob.__table__
_O = Operation.__table__
_OB = OutboxMessage.__table__


def _statement() -> Any:
    now = bindparam("s_now", type_=_U.c.updated_at.type)
    stored = (update(_U).where(_U.c.id == bindparam("s_upload"),
                               _U.c.state == AssetUploadState.RECEIVING)
              .values(state=AssetUploadState.STORED, received_size=bindparam("s_size"),
                      sha256=bindparam("s_sha256"), etag=bindparam("s_etag"),
                      detected_media_type=bindparam("s_mime"), updated_at=now)
              .returning(_U.c.id).cte("stored"))
    was_stored = select(stored.c.id).exists()
    released = (delete(_J).where(_J.c.object_key == bindparam("s_key"), was_stored)
                .returning(_J.c.id).cte("released"))
    due = (update(_O).where(_O.c.id == bindparam("s_op"), _O.c.status == "pending", was_stored)
           .values(next_attempt_at=None, updated_at=now).returning(_O.c.id).cte("due"))
    rung = (insert(_OB).from_select(
        ["id", "actor_name", "queue_name", "subject_id", "delay_ms", "created_at",
         "send_attempts", "trace_context"],
        select(bindparam("s_ob"), bindparam("s_actor"), bindparam("s_queue"),
               bindparam("s_op2"), literal(0, Integer), now, literal(0, Integer),
               bindparam("s_trace", type_=_OB.c.trace_context.type)).where(was_stored))
        .returning(_OB.c.id).cte("rung"))
    return select(func.count()).select_from(stored).add_cte(released, due, rung)


_STORED = _statement()


def mark_stored(db: Database, op: Operation, p: PublishAssetPayload, got: Ingested) -> bool:
    """True: stored and rung; False: the upload was abandoned meanwhile (nothing of it
    changed; its object queued for deletion in the same transaction)."""
    now = utcnow()
    if db.is_postgres:
        ob = OutboxNotice(id=new_id(), queue_name=QUEUE,
                          actor_name=actor_name(op.kind), subject_id=op.id,
                          trace_context=op.trace_context)
        with db.write() as s:
            n = s.connection().execute(_STORED, {
                "s_upload": p.upload_id, "s_size": got.size, "s_sha256": got.sha256,
                "s_etag": got.object_etag, "s_mime": got.mime_type, "s_now": now,
                "s_key": p.object_key, "s_op": op.id, "s_op2": op.id, "s_ob": ob.id,
                "s_actor": ob.actor_name, "s_queue": ob.queue_name,
                "s_trace": ob.trace_context}).scalar_one()
            if n:
                announce_after_commit(s, ob)
            else:
                _abandoned(s, p)
        return bool(n)
    with db.write() as s:
        return _in_transaction(s, op, p, got, now)


def _in_transaction(s: Session, op: Operation, p: PublishAssetPayload, got: Ingested,
                    now: Any) -> bool:
    stored = s.execute(update(UnitAssetUpload).where(
        UnitAssetUpload.id == p.upload_id,
        UnitAssetUpload.state == AssetUploadState.RECEIVING).values(
        state=AssetUploadState.STORED, received_size=got.size, sha256=got.sha256,
        etag=got.object_etag, detected_media_type=got.mime_type, updated_at=now))
    if rowcount(stored) != 1:
        _abandoned(s, p)
        return False
    # The stored row names the object from now on (every path that deletes the row queues
    # the object), so the reservation goes: a publish delayed past the deadline must not
    # find its bytes deleted.
    deletion.release(s, p.object_key)
    s.execute(update(Operation).where(Operation.id == op.id,
                                      Operation.status == "pending").values(
        next_attempt_at=None, updated_at=now))
    send_after_commit(s, outbox_for(op))
    return True


def _abandoned(s: Session, p: PublishAssetPayload) -> None:
    """The upload was abandoned while its bytes streamed in (deadline passed, operation
    cancelled): its deletion job may already have run, before these bytes existed, so the
    object is queued again -- unless a row holds it (a second mark of a stored upload)."""
    if not any(r.needs for r in referenced(s, [p.object_key], deletion_jobs=False)
               .get(p.object_key, ())):
        deletion.schedule(s, p.object_key, ABANDONED)
