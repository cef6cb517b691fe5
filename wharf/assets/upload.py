"""An asset upload: check the request, reserve the asset (operation ``publish_asset``
recorded, not yet due), stream the bytes into the reserved key, mark the upload
``stored`` and ring the operation. A replay of the key answers the recorded operation if
it carries the same bytes: compared by ``Content-SHA256`` without reading the body, or
by hashing the body (nothing stored)."""
from __future__ import annotations

import hashlib
import hmac
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from storage.blobstore import BlobStore
from storage.db import Database
from storage.enums import AssetUploadState, OperationStatus
from storage.errors import StorageError
from storage.models import Operation, UnitAssetUpload
from wharf.assets import scope
from wharf.assets.errors import AssetTooLarge, ChecksumMismatch, IncompleteBody, UploadExpired
from wharf.assets.kinds import PUBLISH_ASSET, PublishAssetPayload
from wharf.assets.stored import ABANDONED, mark_stored
from wharf.blobs import LengthRequired, SizeMismatch, body_chunks, ingest
from wharf.blobs.ingest import asset_key_for
from wharf.deletion import service as deletion
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import RequestContext
from wharf.infra.errors import ProblemCode, ValidationFailed, WharfError
from wharf.infra.ids import new_id
from wharf.infra.settings import Settings
from wharf.infra.validation import clean_name
from wharf.observability import metrics
from wharf.operations.errors import IdempotencyKeyReused
from wharf.operations.finish import Outcome, finish
from wharf.operations.idempotency import check_key
from wharf.operations.kinds import payload, read_result
from wharf.operations.service import Operations, Submission

log = logging.getLogger("wharf.assets")

KIND = PUBLISH_ASSET
DEFAULT_FILENAME = "asset"
OCTETS = "application/octet-stream"
#: ``type/subtype`` (RFC 9110 tokens); parameters after ``;`` are not kept.
_TOKEN = r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}"
MEDIA_TYPE_PATTERN = rf"^{_TOKEN}/{_TOKEN}$"
SHA256_PATTERN = r"^[0-9a-fA-F]{64}$"
_MEDIA_TYPE = re.compile(MEDIA_TYPE_PATTERN)
_SHA256 = re.compile(SHA256_PATTERN)
#: The reservation of an upload's key comes due this long after the upload's deadline:
#: the second net under the sweep (which abandons the upload at its deadline).
RESERVATION_GRACE = timedelta(minutes=5)


@dataclass(frozen=True)
class AssetUpload:
    """A checked upload request, into a trunk unit (``worktree_id`` None) or a worktree's
    unit."""

    unit_id: str
    filename: str
    media_type: str
    size: int
    content_sha256: str | None = None
    worktree_id: str | None = None

    def request(self) -> dict[str, Any]:
        """What the Idempotency-Key fingerprint covers (not the bytes: a replay is
        recognised before they are read, then checked against the recorded digest)."""
        return {"scope": self.worktree_id or "trunk", "unit_id": self.unit_id,
                "filename": self.filename, "content_type": self.media_type,
                "content_length": self.size}


def _media_type(content_type: str | None) -> str:
    if content_type is None or not content_type.strip():
        return OCTETS
    main = content_type.split(";", 1)[0].strip()
    if not _MEDIA_TYPE.match(main):
        raise ValidationFailed("Content-Type must be a media type (type/subtype)",
                               details={"field": "Content-Type"})
    return main.lower()


def too_large(limit: int) -> AssetTooLarge:
    """413 ``asset_too_large``, naming the limit."""
    return AssetTooLarge(f"assets are at most {limit} bytes", details={"limit": limit})


def check_upload(settings: Settings, unit_id: str, *, filename: str | None,
                 content_type: str | None, content_length: int | None,
                 content_sha256: str | None, worktree_id: str | None = None) -> AssetUpload:
    """The request's limits, before anything is read or recorded: 411 without a length,
    413 above ``WHARF_MAX_ASSET_SIZE``, 400 for a bad filename, media type or digest."""
    if content_length is None:
        raise LengthRequired("Send the Content-Length header.")
    if content_length > settings.max_asset_size:
        raise too_large(settings.max_asset_size)
    name = clean_name(DEFAULT_FILENAME if filename is None else filename, "filename")
    digest = None
    if content_sha256 is not None:
        if not _SHA256.match(content_sha256):
            raise ValidationFailed("Content-SHA256 must be 64 hexadecimal digits",
                                   details={"field": "Content-SHA256"})
        digest = content_sha256.lower()
    return AssetUpload(unit_id=unit_id, filename=name, media_type=_media_type(content_type),
                       size=content_length, content_sha256=digest, worktree_id=worktree_id)


def upload_asset(ops: Operations, db: Database, store: BlobStore, settings: Settings,
                 ctx: RequestContext, key: str | None, upload: AssetUpload,
                 read: Callable[[int], bytes]) -> Submission:
    """Reserve, stream, store: the ``publish_asset`` operation (202), or the one this key
    already recorded (if the replay carries the same bytes: ``_check_replay``)."""
    key = check_key(key)
    expires = utcnow() + timedelta(seconds=settings.asset_upload_ttl)

    def prepare(s: Session, op_id: str) -> tuple[str | None, PublishAssetPayload]:
        space_id = scope.check(s, ctx.principal, upload.unit_id, upload.worktree_id,
                               scope.EDIT)
        now = utcnow()
        p = PublishAssetPayload(upload_id=new_id(), asset_id=new_id(), unit_id=upload.unit_id,
                                object_key=asset_key_for(new_id()), filename=upload.filename,
                                media_type=upload.media_type, size=upload.size,
                                worktree_id=upload.worktree_id,
                                content_sha256=upload.content_sha256)
        # If this process dies mid-stream, the reservation deletes the partial object.
        deletion.reserve(s, p.object_key, "asset_upload_reservation",
                         expires + RESERVATION_GRACE)
        s.add(UnitAssetUpload(
            id=p.upload_id, operation_id=op_id, asset_id=p.asset_id,
            object_key=p.object_key, unit_id=p.unit_id, worktree_id=p.worktree_id,
            actor_id=ctx.principal.user_id, filename=p.filename,
            declared_media_type=p.media_type, expected_size=p.size,
            state=AssetUploadState.RECEIVING, created_at=now, updated_at=now,
            expires_at=expires))
        audit.record_core(s, ctx, "asset.upload", "asset", p.asset_id, space_id=space_id,
                          details={"unit_id": p.unit_id, "worktree_id": p.worktree_id,
                                   "size": p.size, "media_type": p.media_type,
                                   "operation_id": op_id})
        return space_id, p

    # Due (if nothing rang it before) once the request can no longer store the bytes: its
    # reads stop at the deadline, and its last write and commit finish within the grace.
    sub = ops.submit(ctx, KIND, key, upload.request(), prepare,
                     due_at=expires + RESERVATION_GRACE)
    if not sub.created:
        _check_replay(db, sub.operation, upload, read)
        metrics.ASSET_UPLOADS.labels("replayed").inc()
        return sub
    op = sub.operation
    p = payload(op, PublishAssetPayload)

    def read_in_time(n: int) -> bytes:
        if utcnow() >= expires:
            raise UploadExpired("the upload did not finish before its deadline")
        return read(n)

    try:
        got = ingest(store, p.object_key, read_in_time, p.size, p.filename)
        if p.content_sha256 is not None and not hmac.compare_digest(got.sha256,
                                                                    p.content_sha256):
            raise ChecksumMismatch("the bytes do not hash to Content-SHA256",
                                   details={"expected": p.content_sha256,
                                            "actual": got.sha256})
    except SizeMismatch as exc:
        _abandon(db, settings, op.id, p, "incomplete_body", exc.message)
        raise IncompleteBody(exc.message) from None
    except WharfError as exc:
        _abandon(db, settings, op.id, p, exc.code, exc.message)
        raise
    except StorageError as exc:
        _abandon(db, settings, op.id, p, "storage_failure", exc.message)
        raise
    except BaseException:
        _abandon(db, settings, op.id, p, ProblemCode.UPLOAD_ABANDONED,
                 "the request ended before its body")
        raise
    if not mark_stored(db, op, p, got):
        # Abandoned meanwhile (deadline passed, or the operation was cancelled): the mark's
        # transaction queued the object again (its deletion job may have run before these
        # bytes existed).
        metrics.ASSET_UPLOADS.labels("abandoned").inc()
        raise UploadExpired("the upload was abandoned while its bytes streamed in "
                            "(deadline passed or operation cancelled)")
    metrics.ASSET_UPLOADS.labels("stored").inc()
    metrics.ASSET_UPLOAD_BYTES.inc(got.size)
    return sub


def _recorded_digest(db: Database, op: Operation) -> str | None:
    """The SHA-256 of the bytes the key's first request recorded, when known: declared
    by it (``Content-SHA256``), in its completed result, or on its stored upload row.
    None while they still stream in, or when the upload failed before they were stored."""
    p = payload(op, PublishAssetPayload)
    if p.content_sha256 is not None:
        return p.content_sha256
    if op.status == "completed":
        result = read_result(op.kind, op.result)
        return getattr(result, "sha256", None)
    with db.read() as s:
        row = s.get(UnitAssetUpload, p.upload_id)
        return row.sha256 if row is not None else None


def _check_replay(db: Database, op: Operation, upload: AssetUpload,
                  read: Callable[[int], bytes]) -> None:
    """A replay must carry the recorded bytes (409 ``idempotency_key_reused`` otherwise).
    With ``Content-SHA256`` the digest is compared and the body is not read; without
    it the body is hashed (not stored) and compared. While the first request's bytes
    still stream in (no digest known yet) a replay is answered unread."""
    known = _recorded_digest(db, op)
    if known is None:
        return
    claimed = upload.content_sha256
    if claimed is None:
        digest = hashlib.sha256()
        try:
            for chunk in body_chunks(read, upload.size):
                digest.update(chunk)
        except SizeMismatch as exc:
            raise IncompleteBody(exc.message) from None
        claimed = digest.hexdigest()
    if not hmac.compare_digest(claimed, known):
        raise IdempotencyKeyReused("This Idempotency-Key was used for different bytes.",
                                   details={"operation_id": op.id})


def fail_upload(s: Session, op_id: str, upload_id: str, object_key: str, code: str,
                message: str, *, idempotency_key_ttl: int, now: datetime | None = None,
                delete_after: datetime | None = None) -> bool:
    """Abandon an upload in ``s``: its operation failed (if still pending), the upload row
    deleted, the object queued for deletion (now, or not before ``delete_after`` when a
    request may still be writing it). True if the operation was failed here."""
    now = now or utcnow()
    op = s.scalars(select(Operation).where(Operation.id == op_id,
                                           Operation.status == "pending")
                   .with_for_update()).first()
    if op is not None:  # (wharf.operations.finish: counted, logged, its waiters woken)
        finish(s, [Outcome(op, OperationStatus.FAILED, error={"code": str(code), "message": message,
                                                "retryable": False})],
               key_ttl=idempotency_key_ttl, now=now)
    s.execute(delete(UnitAssetUpload).where(UnitAssetUpload.id == upload_id))
    deletion.schedule(s, object_key, ABANDONED,
                      not_before=delete_after if delete_after and delete_after > now else None)
    return op is not None


def _abandon(db: Database, settings: Settings, op_id: str, p: PublishAssetPayload,
             code: str, message: str) -> None:
    metrics.ASSET_UPLOADS.labels("refused" if code != ProblemCode.UPLOAD_ABANDONED
                                 else "abandoned").inc()
    try:
        with db.write() as s:
            fail_upload(s, op_id, p.upload_id, p.object_key, code, message,
                        idempotency_key_ttl=settings.idempotency_key_ttl)
    except Exception:  # the sweep abandons it at its deadline; the reservation is next
        log.warning("asset upload %s: could not record its failure now", p.upload_id,
                    exc_info=True)
