"""Takeouts (``export_takeout``): a zip of a space, or of every space a user owns, written to
the blob store as a temporary object with the same download and expiry as an export.

1. Submission: ``POST /api/spaces/{space_id}/exports`` (the owner or an admin of a team
   space, the owner of a personal one) or ``POST /api/me/exports`` (the caller's own
   spaces); the export id and object key (``exports/<operation id>``) are fixed in the
   payload.
2. The worker: the first run makes the plan (:mod:`.takeout_plan`) and starts the
   resumable upload in one transaction (a rerun finds both); the archive is written part
   by part (:mod:`.takeout_writer`), resuming after a crash from the last stored part.
3. Completion: the ``exports`` row (scope ``space`` or ``user``) and the audit record;
   the plan's rows go. A failure aborts the upload, queues the object key for deletion
   and drops the plan.
4. The download: the requester, while they still own or administer the space (a user
   takeout: while they are that user), until it expires.
"""
from __future__ import annotations

import threading
from collections.abc import Hashable
from datetime import timedelta
from typing import Any

from sqlalchemy import delete, insert
from sqlalchemy.orm import Session

from storage.blobstore import BlobStore
from storage.db import Database
from storage.enums import Role
from storage.models import Export, Operation, TakeoutItem, TakeoutRun
from storage.unitstore import UnitStore
from wharf.deletion import service as deletion
from wharf.exchange import takeout_plan
from wharf.exchange.export_kinds import ExportUnitResult
from wharf.exchange.exports import FAILED, content_url, object_key_for
from wharf.exchange.takeout_kinds import EXPORT_TAKEOUT, ExportTakeoutPayload
from wharf.exchange.takeout_writer import ArchiveWriter, Written
from wharf.infra import audit
from wharf.infra.clock import iso, utcnow
from wharf.infra.context import Principal, RequestContext
from wharf.infra.ids import new_id
from wharf.infra.settings import Settings
from wharf.operations.kinds import payload
from wharf.operations.service import Operations, Submission
from wharf.spaces.access import require_space

KIND = EXPORT_TAKEOUT
MAX_PARTS = 9_000  # of S3's 10,000, with room for parts larger than planned (rendered units)


def _stamp() -> str:
    return utcnow().strftime("%Y%m%d-%H%M%S")


def submit_space_takeout(ops: Operations, ctx: RequestContext, key: str | None,
                         space_id: str) -> Submission:
    """Record an ``export_takeout`` of the space (its owner, or an admin of a team space)."""
    def prepare(s: Session, op_id: str) -> tuple[str, ExportTakeoutPayload]:
        space, _access = require_space(s, ctx.principal, space_id, Role.ADMIN)
        return space.id, ExportTakeoutPayload(
            scope="space", space_id=space.id, export_id=new_id(),
            object_key=object_key_for(op_id),
            filename=f"{takeout_plan.safe_name(space.name)}-{_stamp()}.zip")

    return ops.submit(ctx, KIND, key, {"space_id": space_id}, prepare,
                      prepare_reads_only=True)


def submit_user_takeout(ops: Operations, ctx: RequestContext, key: str | None) -> Submission:
    """Record an ``export_takeout`` of every space the caller owns."""
    def prepare(s: Session, op_id: str) -> tuple[None, ExportTakeoutPayload]:
        return None, ExportTakeoutPayload(
            scope="user", space_id=None, export_id=new_id(), object_key=object_key_for(op_id),
            filename=f"wharf-takeout-{_stamp()}.zip")

    return ops.submit(ctx, KIND, key, {"me": True}, prepare, prepare_reads_only=True)


def _authorize(s: Session, principal: Principal, p: ExportTakeoutPayload) -> None:
    if p.scope == "space":
        require_space(s, principal, p.space_id, Role.ADMIN)


class ExportTakeout:
    """The ``export_takeout`` handler."""

    kind = KIND

    def __init__(self, db: Database, unitstore: UnitStore, store: BlobStore,
                 settings: Settings):
        self.db, self.unitstore, self.store, self.settings = db, unitstore, store, settings
        self.writer = ArchiveWriter(db, unitstore, store)
        self._written: dict[str, Written] = {}  # by operation id, for its commit
        self._lock = threading.Lock()

    def target_key(self, op: Operation) -> Hashable:
        p = payload(op, ExportTakeoutPayload)
        return (op.actor_id, p.scope, p.space_id)

    def authorize(self, session: Session, op: Operation, actor: Principal) -> None:
        _authorize(session, actor, payload(op, ExportTakeoutPayload))

    def perform(self, op: Operation) -> None:
        p = payload(op, ExportTakeoutPayload)
        with self.db.read() as s:
            planned = s.get(TakeoutRun, op.id) is not None
        if not planned:
            self._plan(op, p)
        written = self.writer.write(op.id, p.object_key)
        with self._lock:
            self._written[op.id] = written

    def _plan(self, op: Operation, p: ExportTakeoutPayload) -> None:
        """The plan and the upload, recorded together once (a rerun finds them)."""
        as_of = utcnow().replace(microsecond=0)
        with self.db.read() as s:
            members = takeout_plan.plan(s, self.unitstore, p.scope, p.space_id, op.actor_id,
                                        self.settings.takeout_max_files)
        known = sum(m.size or 0 for m in members)
        part_size = max(self.settings.takeout_part_size, -(-known // MAX_PARTS))
        upload_id = self.store.start_upload(p.object_key)
        with self.db.write() as s:
            if s.get(TakeoutRun, op.id, with_for_update=True) is not None:
                self.store.abort_upload(p.object_key, upload_id)  # another run planned it
                return
            s.add(TakeoutRun(operation_id=op.id, as_of=as_of, upload_id=upload_id,
                             part_size=part_size, parts=[], written=0, next_seq=0,
                             data_offset=0, data_crc=0, items=len(members)))
            rows = [{"operation_id": op.id, "seq": n, "path": m.path, "source": m.source,
                     "ref": m.ref, "revision": m.revision, "unit_type": m.unit_type,
                     "format": m.format, "size": m.size, "sha256": m.sha256}
                    for n, m in enumerate(members)]
            for i in range(0, len(rows), 1000):
                s.execute(insert(TakeoutItem), rows[i:i + 1000])

    def _result(self, op: Operation, key: str) -> Written:
        with self._lock:
            got = self._written.pop(op.id, None)
        if got is not None:
            return got
        # Not performed by this handler (it cannot happen within one execution): the
        # stored object read back.
        return self.writer.written_back(key)

    @staticmethod
    def _drop_plan(s: Session, op_id: str) -> TakeoutRun | None:
        run = s.get(TakeoutRun, op_id)
        s.execute(delete(TakeoutItem).where(TakeoutItem.operation_id == op_id))
        s.execute(delete(TakeoutRun).where(TakeoutRun.operation_id == op_id))
        return run

    def commit(self, session: Session, op: Operation, ctx: RequestContext) -> ExportUnitResult:
        p = payload(op, ExportTakeoutPayload)
        written = self._result(op, p.object_key)
        run = self._drop_plan(session, op.id)
        now = utcnow()
        expires = now + timedelta(seconds=self.settings.export_ttl)
        session.add(Export(id=p.export_id, scope=p.scope, unit_id=None, space_id=p.space_id,
                           owner_id=op.actor_id, format="zip", filename=p.filename,
                           object_key=p.object_key, size=written.size,
                           sha256=written.sha256, created_at=now, expires_at=expires))
        session.flush()
        audit.record(session, ctx, "takeout.export", "space" if p.space_id else "user",
                     p.space_id or op.actor_id, space_id=p.space_id,
                     details={"export_id": p.export_id, "size": written.size,
                              "files": run.items if run else None,
                              "on_behalf_of": op.actor_id})
        expires_at = iso(expires)
        assert expires_at is not None
        return ExportUnitResult(export_id=p.export_id, content_url=content_url(p.export_id),
                                size=written.size, sha256=written.sha256,
                                expires_at=expires_at)

    def on_failed(self, session: Session, op: Operation, error: dict[str, Any]) -> None:
        p = payload(op, ExportTakeoutPayload)
        run = self._drop_plan(session, op.id)
        if run is not None:
            try:
                self.store.abort_upload(p.object_key, run.upload_id)
            except Exception:
                pass
        deletion.schedule(session, p.object_key, FAILED)
        with self._lock:
            self._written.pop(op.id, None)

    def compensate(self, op: Operation) -> None:
        pass

