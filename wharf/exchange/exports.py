"""Exports of trunk units to Office files: ``export_unit`` (an operation), the download
and the expiry.

1. Submission (``submit_export``): the caller's view right on the trunk unit, a format
   that fits its type (400 ``validation_failed``, ``details.field``), and the unit's
   revision at that moment, fixed in the payload with the export id and the object key
   ``exports/<operation id>``.
2. The worker (``ExportUnit``) re-checks the view right, reads the document at that
   revision, writes the file to a temporary file and streams it into the blob store under
   the key (a retry overwrites the same object, never a second one); the ``exports`` row
   is written with the operation's completion. A failed export queues its key for
   deletion in the transaction that fails it.
3. The download (``export_for_download``): the requester only, while they may still view
   the unit, until ``expires_at`` (404 otherwise).
4. Expiry (``expired`` / ``expire``, the ``expire_exports`` sweep): rows past
   ``expires_at`` are deleted and their objects queued for deletion, in bounded batches.
"""
from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
from collections.abc import Hashable, Iterator
from datetime import datetime, timedelta
from typing import Any

import msgspec
from sqlalchemy import Select, delete, select
from sqlalchemy.orm import Session

from storage.blobstore import BlobStore
from storage.blobstore.interface import CHUNK
from storage.enums import Role
from storage.models import Export, Operation
from storage.unitstore import UnitStore
from wharf.deletion import service as deletion
from wharf.exchange import writers
from wharf.exchange.export_kinds import EXPORT_UNIT, ExportUnitPayload, ExportUnitResult
from wharf.infra import audit
from wharf.infra.clock import iso, utcnow
from wharf.infra.context import Principal, RequestContext
from wharf.infra.errors import Forbidden, NotFound, ValidationFailed
from wharf.infra.ids import new_id
from wharf.infra.settings import Settings
from wharf.operations.kinds import payload
from wharf.operations.service import Operations, Submission
from wharf.protection.enforce import check_export
from wharf.spaces.access import require_space
from wharf.units.resources import find_unit

log = logging.getLogger("wharf.exchange.exports")

KIND = EXPORT_UNIT
FAILED = "export_failed"
EXPIRED = "export_expired"


def object_key_for(operation_id: str) -> str:
    """The store key of an export's file: ``exports/<operation id>``."""
    return f"exports/{operation_id}"


def content_url(export_id: str) -> str:
    return f"/api/exports/{export_id}/content"


def _file_name(name: str, fmt: str) -> str:
    stem = name.rsplit(".", 1)[0] if name.lower().endswith("." + fmt) else name
    return f"{stem[:200] or 'export'}.{fmt}"


def submit_export(ops: Operations, store: UnitStore, ctx: RequestContext, key: str | None,
                  unit_id: str, fmt: str, sheet: str | None) -> Submission:
    """Record an ``export_unit`` of the trunk unit ``unit_id`` to ``fmt`` (view right; 403
    ``protected_range`` when a protected range's Export strategy forbids the caller)."""
    request = {"unit_id": unit_id, "format": fmt, "sheet": sheet}

    def prepare(s: Session, op_id: str) -> tuple[str, ExportUnitPayload]:
        unit, _res, node, access = find_unit(s, ctx, unit_id, Role.VIEWER)
        check_export(s, store, ctx.principal, access, unit_id)
        fits = writers.FORMATS.get(unit.unit_type, ())
        if fmt not in fits:
            raise ValidationFailed(
                f"A {unit.unit_type} unit exports to {', '.join(fits) or 'no format'}, "
                f"not {fmt}.", details={"field": "format", "allowed": list(fits)})
        if sheet is not None and fmt != "csv":
            raise ValidationFailed("sheet is only for a CSV export",
                                   details={"field": "sheet"})
        head = store.head(unit_id)
        if head is None:
            raise NotFound("No such unit.")
        return node.space_id, ExportUnitPayload(
            unit_id=unit_id, unit_type=unit.unit_type, format=fmt, revision=head.revision,
            export_id=new_id(), object_key=object_key_for(op_id),
            filename=_file_name(node.name, fmt), sheet=sheet)

    return ops.submit(ctx, KIND, key, request, prepare, prepare_reads_only=True)


def _chunks(path: str, digest: Any, counted: list[int]) -> Iterator[bytes]:
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
            counted[0] += len(chunk)
            yield chunk


class ExportUnit:
    """The ``export_unit`` handler: the file is written and stored in ``perform``; the
    ``exports`` row appears with the operation's completion."""

    kind = KIND

    def __init__(self, unitstore: UnitStore, store: BlobStore, settings: Settings):
        self.unitstore, self.store, self.settings = unitstore, store, settings
        # What perform stored, by operation id, for its commit (same process and call).
        self._stored: dict[str, tuple[int, str]] = {}
        self._lock = threading.Lock()

    def target_key(self, op: Operation) -> Hashable:
        return (op.actor_id, payload(op, ExportUnitPayload).unit_id)

    def authorize(self, session: Session, op: Operation, actor: Principal) -> None:
        unit_id = payload(op, ExportUnitPayload).unit_id
        _, _, _, access = find_unit(session, RequestContext(principal=actor), unit_id,
                                    Role.VIEWER)
        check_export(session, self.unitstore, actor, access, unit_id)

    def perform(self, op: Operation) -> None:
        p = payload(op, ExportUnitPayload)
        found = self.unitstore.document_at(p.unit_id, p.revision)
        if found is None:
            raise NotFound(f"The unit's revision {p.revision} is gone.")
        document = msgspec.json.decode(found[1])
        body = document.get("body") if isinstance(document, dict) else None
        fd, path = tempfile.mkstemp(prefix="wharf-export-", suffix="." + p.format)
        os.close(fd)
        try:
            try:
                writers.write(p.unit_type, p.format, body if isinstance(body, dict) else {},
                              path, p.sheet)
            except writers.SheetNotFound as e:
                raise ValidationFailed(str(e), details={"field": "sheet"}) from None
            digest, counted = hashlib.sha256(), [0]
            self.store.put_stream(p.object_key, _chunks(path, digest, counted))
        finally:
            os.unlink(path)
        with self._lock:
            self._stored[op.id] = (counted[0], digest.hexdigest())

    def _written(self, op: Operation, key: str) -> tuple[int, str]:
        with self._lock:
            got = self._stored.pop(op.id, None)
        if got is not None:
            return got
        # Not performed by this handler (it cannot happen within one execution): hash
        # the stored object back.
        digest, size = hashlib.sha256(), 0
        for chunk in self.store.open(key):
            digest.update(chunk)
            size += len(chunk)
        return size, digest.hexdigest()

    def commit(self, session: Session, op: Operation, ctx: RequestContext) -> ExportUnitResult:
        p = payload(op, ExportUnitPayload)
        size, sha256 = self._written(op, p.object_key)
        now = utcnow()
        expires = now + timedelta(seconds=self.settings.export_ttl)
        session.add(Export(id=p.export_id, unit_id=p.unit_id, owner_id=op.actor_id,
                           format=p.format, filename=p.filename, object_key=p.object_key,
                           size=size, sha256=sha256, created_at=now, expires_at=expires))
        session.flush()
        audit.record(session, ctx, "unit.export", "unit", p.unit_id, space_id=op.scope_id,
                     details={"export_id": p.export_id, "format": p.format,
                              "revision": p.revision, "size": size,
                              "on_behalf_of": op.actor_id})
        expires_at = iso(expires)
        assert expires_at is not None
        return ExportUnitResult(export_id=p.export_id, content_url=content_url(p.export_id),
                                size=size, sha256=sha256, expires_at=expires_at)

    def on_failed(self, session: Session, op: Operation, error: dict[str, Any]) -> None:
        # Whatever perform may have stored goes (a missing object counts as deleted).
        deletion.schedule(session, payload(op, ExportUnitPayload).object_key, FAILED)
        with self._lock:
            self._stored.pop(op.id, None)

    def compensate(self, op: Operation) -> None:
        pass


# -- download ---------------------------------------------------------------------------------

def etag_header(export: Export) -> str:
    return f'"{export.sha256}"'


def media_type(export: Export) -> str:
    if export.format == "zip":
        return "application/zip"
    return writers.MEDIA_TYPES.get(export.format, "application/octet-stream")


def export_for_download(s: Session, ctx: RequestContext, export_id: str,
                        now: datetime | None = None) -> Export:
    """The export, for its requester while they may view the unit (a space's takeout: while
    they own or administer the space) and until it expires; 404 otherwise (whichever the
    reason: ids leak nothing)."""
    export = s.get(Export, export_id) if export_id.isalnum() else None
    if export is None or ctx.principal.user_id != export.owner_id \
            or export.expires_at <= (now or utcnow()):
        raise NotFound("No such export.")
    try:
        if export.scope == "unit":  # the view right on the unit
            assert export.unit_id is not None
            find_unit(s, ctx, export.unit_id, Role.VIEWER)
        elif export.scope == "space":  # a takeout of a space: still its owner or an admin
            require_space(s, ctx.principal, export.space_id, Role.ADMIN)
        # a takeout of a user's spaces: that user (checked above)
    except (NotFound, Forbidden):
        raise NotFound("No such export.") from None
    return export


# -- expiry (the ``expire_exports`` sweep) ----------------------------------------------------

def expired(now: datetime) -> Select[str]:
    """The exports past ``expires_at``, oldest first (the sweep limits each batch)."""
    return select(Export.id).where(Export.expires_at <= now).order_by(Export.expires_at)


def expire(s: Session, ids: list[str]) -> None:
    """Delete these exports' rows and queue their objects for deletion, in ``s``."""
    keys = list(s.scalars(select(Export.object_key).where(Export.id.in_(ids))))
    s.execute(delete(Export).where(Export.id.in_(ids)))
    if keys:
        deletion.schedule_many(s, keys, EXPIRED)
