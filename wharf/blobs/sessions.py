"""The upload-session lifecycle: create, stream content in, complete (submits
``create_blob_resource``) or hand the bytes to an import (``import_file``), abort, and
recovery of sessions an operation left behind."""
from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from storage.blobstore import BlobStore
from storage.db import Database
from storage.enums import OperationStatus, UploadState
from storage.models import BlobUploadSession, Operation
from wharf.blobs.errors import LengthRequired, SizeMismatch, UploadSessionState
from wharf.blobs.handlers import CREATE_KIND
from wharf.blobs.ingest import Ingested, _drop, ingest, object_key_for
from wharf.blobs.kinds import CreateBlobResourcePayload
from wharf.deletion import service as deletion
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import RequestContext
from wharf.infra.errors import Conflict, NotFound, PayloadTooLarge, ValidationFailed
from wharf.infra.ids import is_id, new_id
from wharf.infra.settings import Settings
from wharf.infra.transactions import in_read
from wharf.infra.validation import clean_name
from wharf.operations.idempotency import check_key, check_same_request, fingerprint
from wharf.operations.service import Operations, Submission
from wharf.spaces.nodes import resolve_parent

OPEN_STATES = (UploadState.WAITING_FOR_UPLOAD, UploadState.UPLOADED)
#: Consumed by an operation (its publish, or an import): no abort, no second use.
TAKEN_STATES = (UploadState.VERIFYING, UploadState.COMPLETED, UploadState.IMPORTING,
                UploadState.IMPORTED)


def _check_size(size: Any, settings: Settings) -> int:
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ValidationFailed("size must be a non-negative integer", details={"field": "size"})
    if size > settings.max_upload_size:
        raise PayloadTooLarge(f"size exceeds the limit of {settings.max_upload_size} bytes",
                              details={"limit": settings.max_upload_size})
    return size


def create_session(db: Database, settings: Settings, ctx: RequestContext, key: str | None,
                   body: dict[str, Any]) -> tuple[BlobUploadSession, bool]:
    key = check_key(key)
    request = {k: body.get(k) for k in ("space_id", "parent_id", "filename", "size")}
    fp = fingerprint("blob_upload_session", request)
    for _ in range(3):
        try:
            with db.write() as s:
                existing = s.scalar(select(BlobUploadSession).where(
                    BlobUploadSession.actor_id == ctx.principal.user_id,
                    BlobUploadSession.idempotency_key == key))
                if existing is not None:
                    check_same_request(existing.request_fingerprint, fp,
                                       {"upload_session_id": existing.id})
                    return existing, False
                filename = clean_name(request["filename"], "filename")
                size = _check_size(request["size"], settings)
                space, parent = resolve_parent(s, ctx, request["space_id"], request["parent_id"])
                now = utcnow()
                upload = BlobUploadSession(
                    id=new_id(), actor_id=ctx.principal.user_id, idempotency_key=key,
                    request_fingerprint=fp, space_id=space.id,
                    parent_id=parent.id if parent else None, filename=filename,
                    declared_size=size, state=UploadState.WAITING_FOR_UPLOAD, node_id=new_id(),
                    resource_id=new_id(), object_key=object_key_for(new_id()),
                    created_at=now, updated_at=now,
                    expires_at=now + timedelta(seconds=settings.upload_session_ttl))
                s.add(upload)
                s.flush()
                audit.record(s, ctx, "upload_session.create", "upload_session", upload.id,
                             space_id=space.id, details={"size": size})
                return upload, True
        except IntegrityError:
            continue
    raise Conflict("Could not record the upload session; retry.")


def _own_session(s: Session, ctx: RequestContext, session_id: str,
                 lock: bool = False) -> BlobUploadSession:
    upload = s.get(BlobUploadSession, session_id, with_for_update=lock) \
        if is_id(session_id) else None
    if upload is None or upload.actor_id != ctx.principal.user_id:
        raise NotFound("No such upload session.")
    return upload


def get_session(s: Session, ctx: RequestContext, session_id: str) -> BlobUploadSession:
    return _own_session(s, ctx, session_id)


class HasDeadline(Protocol):
    state: str
    expires_at: datetime


def visible_state(upload: HasDeadline) -> str:
    """The state a client sees: an open session past its deadline is already ``expired``
    (the sweep records it and queues the object for deletion shortly after)."""
    if upload.state in OPEN_STATES and upload.expires_at <= utcnow():
        return UploadState.EXPIRED
    return upload.state


def _usable(s: Session, ctx: RequestContext, upload: BlobUploadSession,
            states: tuple[str, ...]) -> None:
    """409 unless the session is in one of ``states`` and not past its deadline; its
    target folder must still take a new file from the caller."""
    if upload.state not in states:
        raise UploadSessionState(f"the upload session is {upload.state}",
                                 details={"state": upload.state})
    if upload.expires_at <= utcnow():
        raise UploadSessionState("the upload session has expired",
                                 code="upload_session_expired")
    resolve_parent(s, ctx, upload.space_id, upload.parent_id)


def put_content(db: Database, store: BlobStore, settings: Settings, ctx: RequestContext,
                session_id: str, content_length: int | None,
                read: Callable[[int], bytes]) -> Ingested:
    """Stream the body into a fresh object; on success the session points at it and the
    object of any earlier PUT is queued for deletion.

    Every PUT writes its own key, reserved first (a deletion job due when the session
    expires), so a PUT that loses a race with complete, abort or another PUT never
    overwrites bytes someone else relies on, and an upload killed midway is cleaned up.
    """
    with db.read() as s:
        upload = _own_session(s, ctx, session_id)
        _usable(s, ctx, upload, OPEN_STATES)
        filename, declared, expires_at = upload.filename, upload.declared_size, upload.expires_at
    if content_length is None:
        raise LengthRequired("Send the Content-Length header.")
    if content_length != declared:
        raise SizeMismatch(f"Content-Length {content_length} differs from the declared "
                           f"size {declared}", details={"declared": declared})
    key = object_key_for(new_id())
    with db.write() as s:
        deletion.schedule(s, key, "upload_reservation", not_before=expires_at)
    try:
        result = ingest(store, key, read, declared, filename)
    except BaseException:
        _drop(db, key)
        raise
    with db.write() as s:
        current = s.get(BlobUploadSession, session_id, with_for_update=True)
        stored = current is not None and current.state in OPEN_STATES
        if current is not None and stored:
            previous = current.object_key
            current.object_key = key
            current.state = UploadState.UPLOADED
            current.received_size = result.size
            current.sha256 = result.sha256
            current.mime_type = result.mime_type
            current.object_etag = result.object_etag
            current.error_code = None
            current.updated_at = utcnow()
            deletion.release(s, key)
            deletion.schedule(s, previous, "upload_replaced")
            audit.record(s, ctx, "upload_session.content", "upload_session", session_id,
                         details={"size": result.size, "sha256": result.sha256})
        else:
            # Completed, aborted or expired while the bytes streamed in: nobody will
            # reference this object.
            deletion.schedule(s, key, "upload_abandoned")
    if not stored:
        raise UploadSessionState("the upload session changed while uploading")
    return result


def complete_session(ops: Operations, ctx: RequestContext, key: str | None,
                     session_id: str) -> Submission:
    request = {"session_id": session_id}

    def prepare(s: Session, op_id: str) -> tuple[str, CreateBlobResourcePayload]:
        upload = _own_session(s, ctx, session_id, lock=True)
        if upload.state == UploadState.WAITING_FOR_UPLOAD:
            raise UploadSessionState("upload the content before completing",
                                     code="upload_not_received")
        _usable(s, ctx, upload, (UploadState.UPLOADED,))
        upload.state = UploadState.VERIFYING
        upload.operation_id = op_id
        upload.updated_at = utcnow()
        assert upload.received_size is not None and upload.sha256 is not None \
            and upload.mime_type is not None and upload.object_etag is not None  # uploaded
        return upload.space_id, CreateBlobResourcePayload(
            session_id=upload.id, space_id=upload.space_id, parent_id=upload.parent_id,
            filename=upload.filename, node_id=upload.node_id,
            resource_id=upload.resource_id, object_key=upload.object_key,
            size=upload.received_size, sha256=upload.sha256,
            mime_type=upload.mime_type, object_etag=upload.object_etag)

    return ops.submit(ctx, CREATE_KIND, key, request, prepare)


def abort_session(db: Database, ctx: RequestContext, session_id: str) -> None:
    with db.write() as s:
        upload = _own_session(s, ctx, session_id, lock=True)
        if upload.state == UploadState.ABORTED:
            return
        if upload.state in TAKEN_STATES:
            raise UploadSessionState(f"the upload session is {upload.state}",
                                     details={"state": upload.state})
        previous = upload.state
        upload.state = UploadState.ABORTED
        upload.updated_at = utcnow()
        if previous != UploadState.FAILED:  # a failed session's object is already queued
            deletion.schedule(s, upload.object_key, "upload_aborted")
        audit.record(s, ctx, "upload_session.abort", "upload_session", upload.id,
                     space_id=upload.space_id)


def take_for_import(s: Session, ctx: RequestContext, session_id: str,
                    op_id: str) -> BlobUploadSession:
    """``POST /api/imports`` from an upload session's bytes: the caller's own session
    (else 404), ``uploaded`` and not past its deadline (else 409 ``upload_session_state``
    naming the state ``GET`` shows), now ``importing`` for ``op_id``, in the transaction
    that records the operation. From then on it cannot be completed, aborted, uploaded
    to or imported again, and the expiry sweep leaves it (and its object) alone: the
    import owns the object until :func:`finish_import`."""
    upload = _own_session(s, ctx, session_id, lock=True)
    state = visible_state(upload)
    if state != UploadState.UPLOADED:
        raise UploadSessionState(f"the upload session is {state}", details={"state": state})
    upload.state = UploadState.IMPORTING
    upload.operation_id = op_id
    upload.error_code = None
    upload.updated_at = utcnow()
    return upload


def finish_import(s: Session, session_id: str, op_id: str, object_key: str, *,
                  error_code: str | None) -> None:
    """The import ``op_id`` of a session ended, in the transaction that completes
    (``error_code`` None) or fails it: the session becomes ``imported`` (the unit holds
    the content now) or ``failed`` with the import's code (a failed import consumed it
    too), and its object is queued for deletion either way. The key is the session's
    own (unique, never a blob's: the session left ``uploaded`` for the import), so it is
    queued even if the row is gone (an account deletion)."""
    upload = s.get(BlobUploadSession, session_id, with_for_update=True)
    if upload is not None and upload.state == UploadState.IMPORTING \
            and upload.operation_id == op_id:
        upload.state = UploadState.IMPORTED if error_code is None else UploadState.FAILED
        upload.error_code = error_code
        upload.updated_at = utcnow()
    deletion.schedule(s, object_key, "upload_imported" if error_code is None
                      else "import_failed")


def importing(s: Session, session_id: str, op_id: str) -> bool:
    """Whether the session is still being imported by ``op_id`` (its completion may
    publish)."""
    upload = s.get(BlobUploadSession, session_id, with_for_update=True)
    return upload is not None and upload.state == UploadState.IMPORTING \
        and upload.operation_id == op_id


def recover_interrupted_sessions(db: Database, limit: int = 1000) -> int:
    """Sessions left ``verifying`` by an operation that ended without publishing (cancelled,
    lost) go back to ``waiting_for_upload`` with ``upload_interrupted``; sessions left
    ``importing`` by an import failed without its failure hook become ``failed`` and
    their object is queued for deletion (what the hook does)."""
    with db.write() as s:
        rows = list(s.execute(
            select(BlobUploadSession).join(Operation,
                                           Operation.id == BlobUploadSession.operation_id)
            .where(BlobUploadSession.state.in_([UploadState.VERIFYING,
                                                UploadState.IMPORTING]),
                   Operation.status == OperationStatus.FAILED)
            .limit(limit)).scalars())
        for upload in rows:
            if upload.state == UploadState.IMPORTING:
                assert upload.operation_id is not None  # joined on it
                finish_import(s, upload.id, upload.operation_id, upload.object_key,
                              error_code="import_interrupted")
                continue
            upload.state = UploadState.WAITING_FOR_UPLOAD
            upload.error_code = "upload_interrupted"
            upload.updated_at = utcnow()
        return len(rows)


#: ``GET /api/upload-sessions/{id}``: the caller's session, in a read transaction of its own.
read_session = in_read(get_session)
