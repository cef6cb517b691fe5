"""Uploaded files ("blobs"): upload sessions, streamed content, verification by workers,
ranged reads, and content replacement.

Bytes go to the BlobStore under a key reserved when the upload starts; the product DB
keeps metadata. Nothing appears in the tree before the publish transaction. Every object
that stops being referenced is queued in ``object_deletion_jobs`` in the same transaction.
"""
from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Callable

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from storage.blobstore import BlobNotFound, BlobStore
from storage.db import Database
from storage.models import (BlobResource, BlobUploadSession, Node, Operation, Resource)
from wharf import audit, deletion
from wharf.access import Access, require_node
from wharf.clock import utcnow
from wharf.config import Settings
from wharf.context import Principal, RequestContext
from wharf.errors import (Conflict, NotFound, PayloadTooLarge, PreconditionFailed,
                          PreconditionRequired, ValidationFailed, WharfError)
from wharf.ids import is_id, new_id
from wharf.nodes import resolve_parent
from wharf.resources import publish_node
from wharf.operations.errors import IdempotencyKeyReused
from wharf.operations.service import Operations, Submission, check_key, fingerprint
from wharf.validation import clean_name

log = logging.getLogger("wharf.blobs")

CHUNK = 1024 * 1024
SNIFF_BYTES = 64 * 1024
OPEN_STATES = ("waiting_for_upload", "uploaded")
CREATE_KIND = "create_blob_resource"
REPLACE_KIND = "replace_blob_content"


class LengthRequired(WharfError):
    """Content uploads need a ``Content-Length`` header."""

    status = 411
    code = "length_required"
    title = "Length required"


class SizeMismatch(ValidationFailed):
    """The body is shorter or longer than the size declared for the upload."""

    code = "size_mismatch"
    title = "Size mismatch"


class VerificationFailed(WharfError):
    """The stored object does not match what was uploaded (size, ETag or SHA-256)."""

    status = 422
    code = "verification_failed"
    title = "Verification failed"


class UploadSessionState(Conflict):
    """The upload session is not in a state that allows this (e.g. completing twice)."""

    code = "upload_session_state"
    title = "Upload session state"


class RangeNotSatisfiable(WharfError):
    """The requested byte range lies outside the content."""

    status = 416
    code = "range_not_satisfiable"
    title = "Range not satisfiable"


def object_key_for(object_id: str) -> str:
    """The store key of a new object: the bare id. Where objects live is the operator's
    choice, made once in ``WHARF_BLOB_STORE_URL`` (``s3://bucket/objects`` → bucket keys
    ``objects/<id>``; ``file:///srv/blobs`` → ``/srv/blobs/<id>``). Keys recorded by
    earlier releases (``objects/<id>``, under the same URL prefix) stay readable as they are.
    """
    return object_id


# --- streaming in: count, hash and sniff in one pass -----------------------------------

@dataclass(frozen=True)
class Ingested:
    size: int
    sha256: str
    mime_type: str
    object_etag: str


_RISKY = re.compile(r"^(text/html|application/xhtml|image/svg|text/xml|application/xml|"
                    r"application/javascript|text/javascript)")


def sniff(head: bytes, filename: str) -> str:
    """The server-detected MIME type, from the first bytes (libmagic via python-magic)."""
    if not head:
        return "application/octet-stream"
    import magic
    mime = magic.from_buffer(head, mime=True) or "application/octet-stream"
    lower = filename.lower()
    if mime == "text/plain" and lower.endswith(".csv"):
        mime = "text/csv"  # libmagic calls short CSV samples plain text
    if mime in ("application/zip", "application/octet-stream") and lower.endswith(".docx") \
            and b"word/" in head:
        mime = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    return mime


def body_chunks(read: Callable[[int], bytes], size: int):
    """Yield exactly ``size`` bytes of the body; SizeMismatch if it is shorter or longer."""
    received = 0
    while received < size:
        data = read(min(CHUNK, size - received))
        if not data:
            raise SizeMismatch(f"the body ended after {received} of {size} bytes")
        received += len(data)
        if received > size:
            raise SizeMismatch(f"the body is longer than the declared {size} bytes")
        yield data
    if read(1):
        raise SizeMismatch(f"the body is longer than the declared {size} bytes")


def ingest(store: BlobStore, key: str, read: Callable[[int], bytes], size: int,
           filename: str) -> Ingested:
    """Stream exactly ``size`` bytes from ``read`` into ``key``; all or nothing."""
    sha = hashlib.sha256()
    head = bytearray()
    received = 0

    def chunks():
        nonlocal received
        for data in body_chunks(read, size):
            received += len(data)
            sha.update(data)
            if len(head) < SNIFF_BYTES:
                head.extend(data[:SNIFF_BYTES - len(head)])
            yield data

    try:
        info = store.put_stream(key, chunks())
    finally:
        if received >= TRIM_AFTER:
            release_free_memory()
    return Ingested(info.size, sha.hexdigest(), sniff(bytes(head), filename), info.etag)


TRIM_AFTER = 16 * 1024 * 1024
_malloc_trim: Any = None


def release_free_memory() -> None:
    """Hand the heap pages freed by a large upload back to the OS (glibc's ``malloc_trim``;
    a no-op elsewhere).

    The body arrives in socket reads of up to 1 MiB. Once glibc's dynamic mmap threshold
    has grown, those buffers come from the request thread's malloc arena, and the space
    they leave behind stays resident: without this, the API worker's RSS crept up by
    3-10 MiB for each gunicorn thread that had served an upload
    (tests/benchmarks/bench_blobs.py, section (b))."""
    global _malloc_trim
    if _malloc_trim is None:
        try:
            import ctypes
            _malloc_trim = ctypes.CDLL(None).malloc_trim
            _malloc_trim.argtypes = [ctypes.c_size_t]
        except Exception:  # not glibc (or no libc symbols): nothing to do
            _malloc_trim = False
    if _malloc_trim:
        _malloc_trim(0)


def verify_object(store: BlobStore, key: str, size: int, object_etag: str, sha256: str,
                  rehash: bool) -> None:
    """Re-check a stored object: size and ETag always, the SHA-256 when ``rehash``."""
    try:
        info = store.head(key)
    except BlobNotFound:
        raise VerificationFailed("the uploaded object is missing") from None
    if info.size != size:
        raise VerificationFailed(f"stored size {info.size} != uploaded size {size}")
    if not hmac.compare_digest(info.etag, object_etag):
        raise VerificationFailed("the stored object changed since it was uploaded")
    if rehash:
        digest = hashlib.sha256()
        for chunk in store.open(key):
            digest.update(chunk)
        if not hmac.compare_digest(digest.hexdigest(), sha256):
            raise VerificationFailed("the stored bytes do not hash to the uploaded SHA-256")


# --- upload sessions --------------------------------------------------------------------

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
                    if existing.request_fingerprint != fp:
                        raise IdempotencyKeyReused("This Idempotency-Key was used for a "
                                                   "different request.")
                    return existing, False
                filename = clean_name(request["filename"], "filename")
                size = _check_size(request["size"], settings)
                space, parent = resolve_parent(s, ctx, request["space_id"], request["parent_id"])
                now = utcnow()
                upload = BlobUploadSession(
                    id=new_id(), actor_id=ctx.principal.user_id, idempotency_key=key,
                    request_fingerprint=fp, space_id=space.id,
                    parent_id=parent.id if parent else None, filename=filename,
                    declared_size=size, state="waiting_for_upload", node_id=new_id(),
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


def visible_state(upload: BlobUploadSession) -> str:
    """The state a client sees: an open session past its deadline is already ``expired``
    (the sweep records it and queues the object for deletion shortly after)."""
    if upload.state in OPEN_STATES and upload.expires_at <= utcnow():
        return "expired"
    return upload.state


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
        if upload.state not in OPEN_STATES:
            raise UploadSessionState(f"the upload session is {upload.state}",
                                     details={"state": upload.state})
        if upload.expires_at <= utcnow():
            raise UploadSessionState("the upload session has expired",
                                     code="upload_session_expired")
        resolve_parent(s, ctx, upload.space_id, upload.parent_id)
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
            current.state = "uploaded"
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

    def prepare(s: Session, op_id: str):
        upload = _own_session(s, ctx, session_id, lock=True)
        if upload.state == "waiting_for_upload":
            raise UploadSessionState("upload the content before completing",
                                     code="upload_not_received")
        if upload.state != "uploaded":
            raise UploadSessionState(f"the upload session is {upload.state}",
                                     details={"state": upload.state})
        if upload.expires_at <= utcnow():
            raise UploadSessionState("the upload session has expired",
                                     code="upload_session_expired")
        resolve_parent(s, ctx, upload.space_id, upload.parent_id)
        upload.state = "verifying"
        upload.operation_id = op_id
        upload.updated_at = utcnow()
        return upload.space_id, {
            "session_id": upload.id, "space_id": upload.space_id, "parent_id": upload.parent_id,
            "filename": upload.filename, "node_id": upload.node_id,
            "resource_id": upload.resource_id, "object_key": upload.object_key,
            "size": upload.received_size, "sha256": upload.sha256,
            "mime_type": upload.mime_type, "object_etag": upload.object_etag}

    return ops.submit(ctx, CREATE_KIND, key, request, prepare)


def abort_session(db: Database, ctx: RequestContext, session_id: str) -> None:
    with db.write() as s:
        upload = _own_session(s, ctx, session_id, lock=True)
        if upload.state == "aborted":
            return
        if upload.state in ("verifying", "completed"):
            raise UploadSessionState(f"the upload session is {upload.state}",
                                     details={"state": upload.state})
        previous = upload.state
        upload.state = "aborted"
        upload.updated_at = utcnow()
        if previous != "failed":  # a failed session's object is already queued
            deletion.schedule(s, upload.object_key, "upload_aborted")
        audit.record(s, ctx, "upload_session.abort", "upload_session", upload.id,
                     space_id=upload.space_id)


class CreateBlobResource:
    """``create_blob_resource``: verify the uploaded object, then publish it in the tree."""

    kind = CREATE_KIND
    # A failure quarantines the session's object (queued for deletion) or sends the
    # session back to waiting_for_upload: nothing is left to publish.
    input_consumed_on_failure = True

    def __init__(self, store: BlobStore, settings: Settings):
        self.store = store
        self.settings = settings

    def authorize(self, session: Session, op: Operation, actor: Principal) -> None:
        p = op.payload
        resolve_parent(session, RequestContext(principal=actor), p["space_id"], p["parent_id"])

    def perform(self, op: Operation) -> None:
        p = op.payload
        verify_object(self.store, p["object_key"], p["size"], p["object_etag"], p["sha256"],
                      self.settings.verify_rehash)

    def commit(self, session: Session, op: Operation, ctx: RequestContext) -> dict[str, Any]:
        p = op.payload
        upload = session.get(BlobUploadSession, p["session_id"], with_for_update=True)
        if upload is None or upload.state != "verifying" or upload.operation_id != op.id:
            raise UploadSessionState("the upload session is no longer verifying")
        publish_node(session, op, name=p["filename"], kind="blob")
        session.add(BlobResource(resource_id=p["resource_id"], object_key=p["object_key"],
                                 filename=p["filename"], mime_type=p["mime_type"],
                                 size=p["size"], sha256=p["sha256"],
                                 object_etag=p["object_etag"], etag=secrets.token_hex(16),
                                 state="ready"))
        upload.state = "completed"
        upload.updated_at = utcnow()
        session.flush()
        audit.record(session, ctx, "blob.publish", "resource", p["resource_id"],
                     space_id=p["space_id"], details={"node_id": p["node_id"],
                                                      "size": p["size"],
                                                      "on_behalf_of": op.actor_id})
        return {"node_id": p["node_id"], "resource_id": p["resource_id"]}

    def on_failed(self, session: Session, op: Operation, error: dict) -> None:
        upload = session.get(BlobUploadSession, op.payload["session_id"], with_for_update=True)
        if upload is None or upload.state != "verifying":
            return
        upload.updated_at = utcnow()
        if error.get("code") in ("verification_failed", "permission_revoked"):
            # Quarantined: never published; the object is queued for deletion.
            upload.state = "failed"
            upload.error_code = error["code"]
            deletion.schedule(session, upload.object_key, error["code"])
        else:
            # Interrupted (retries exhausted, storage down): the client uploads again.
            upload.state = "waiting_for_upload"
            upload.error_code = "upload_interrupted"

    def compensate(self, op: Operation) -> None:
        pass


def recover_interrupted_sessions(db: Database, limit: int = 1000) -> int:
    """Sessions left ``verifying`` by an operation that ended without publishing (cancelled,
    lost) go back to ``waiting_for_upload`` with ``upload_interrupted``."""
    with db.write() as s:
        rows = list(s.execute(
            select(BlobUploadSession).join(Operation,
                                           Operation.id == BlobUploadSession.operation_id)
            .where(BlobUploadSession.state == "verifying", Operation.status == "failed")
            .limit(limit)).scalars())
        for upload in rows:
            upload.state = "waiting_for_upload"
            upload.error_code = "upload_interrupted"
            upload.updated_at = utcnow()
        return len(rows)


# --- reading ---------------------------------------------------------------------------

def blob_for_read(s: Session, ctx: RequestContext, resource_id: str,
                  need: str = "viewer") -> tuple[BlobResource, Node, Access]:
    res = s.get(Resource, resource_id) if is_id(resource_id) else None
    blob = s.get(BlobResource, resource_id) if res is not None else None
    if res is None or blob is None:
        raise NotFound("No such blob resource.")
    try:
        node, access = require_node(s, ctx.principal, res.node_id, need)
    except NotFound:
        raise NotFound("No such blob resource.") from None
    return blob, node, access


def publicly_readable(s: Session, node: Node) -> bool:
    """Whether an anonymous visitor may read this node (public read or link sharing)."""
    from wharf.context import ANONYMOUS
    from wharf.access import node_access
    return node_access(s, ANONYMOUS, node).role is not None


RANGE_DIGITS = 19  # beyond any object size (2**63 has 19 digits)


def _position(digits: str) -> int | None:
    """A byte position of a Range header; None for one too large to be any object's size.

    The digits are never converted when there are more than RANGE_DIGITS of them (after
    leading zeros): Python refuses int() on more than 4,300 digits, and such a number
    is larger than any content anyway, which the callers treat as RFC 9110 says."""
    digits = digits.lstrip("0") or "0"
    return int(digits) if len(digits) <= RANGE_DIGITS else None


def _magnitude(digits: str) -> tuple[int, str]:
    """Orders decimal strings of any length by value without converting them."""
    digits = digits.lstrip("0") or "0"
    return len(digits), digits


def parse_range(header: str | None, size: int) -> tuple[int, int] | None:
    """A single ``bytes=`` range → (start, end) inclusive; None means the whole content.

    Malformed or multi-range headers are ignored (the whole content is served, as RFC 9110
    allows); a syntactically valid but unsatisfiable range raises RangeNotSatisfiable.
    Positions of any length are valid syntax: one too large for any content is treated as
    "beyond the end" (a first position → 416, a last position or a suffix length → up to
    the end), without ever building the huge integer.
    """
    if not header:
        return None
    m = re.fullmatch(r"\s*bytes\s*=\s*([0-9]*)\s*-\s*([0-9]*)\s*", header)
    if not m or (not m.group(1) and not m.group(2)):
        return None
    first, last = m.group(1), m.group(2)
    if not first:  # suffix: the last N bytes
        n = _position(last)
        if n == 0 or size == 0:
            raise RangeNotSatisfiable("empty suffix range", headers={
                "Content-Range": f"bytes */{size}"})
        return (0 if n is None else max(0, size - n)), size - 1
    if last and _magnitude(last) < _magnitude(first):
        return None  # invalid (last < first): ignored
    start = _position(first)
    end = _position(last) if last else size - 1
    if start is None or start >= size:
        raise RangeNotSatisfiable(f"range starts beyond the content's {size} bytes",
                                  headers={"Content-Range": f"bytes */{size}"})
    return start, size - 1 if end is None else min(end, size - 1)


def etag_header(blob: BlobResource) -> str:
    return f'"{blob.etag}"'


def if_none_match(header: str | None, blob: BlobResource) -> bool:
    """True when the client's copy is current (answer 304)."""
    if not header:
        return False
    tags = [t.strip() for t in header.split(",")]
    return "*" in tags or etag_header(blob) in tags or f"W/{etag_header(blob)}" in tags


# --- replacing content ------------------------------------------------------------------

def replace_content(ops: Operations, db: Database, store: BlobStore, settings: Settings,
                    ctx: RequestContext, resource_id: str, key: str | None,
                    if_match: str | None, content_length: int | None,
                    read: Callable[[int], bytes]) -> Submission:
    """Stream new content into a reserved key and submit ``replace_blob_content``.

    The request's identity (its Idempotency-Key fingerprint) includes the body's SHA-256,
    known only once the body has been read. Every precondition that does not need the body
    (key syntax, If-Match present, Content-Length, size limit, a replayed key's resource,
    If-Match and size, permission, the current ETag) is decided before the first read, so
    a client that sent ``Expect: 100-continue`` gets its 4xx without sending the body. A
    replay (same key, same headers) is answered only after its body hashes to the first
    request's SHA-256; the replay's bytes are hashed, not stored. Different bytes → 409
    ``idempotency_key_reused``.
    """
    key = check_key(key)
    if if_match is None:
        raise PreconditionRequired("Send If-Match with the current ETag.")
    if content_length is None:
        raise LengthRequired("Send the Content-Length header.")
    _check_size(content_length, settings)
    if_match = if_match.strip()
    head = {"resource_id": resource_id, "if_match": if_match, "size": content_length}
    with db.read() as s:
        replay = _replayed(ops, s, ctx, key, head)
        if replay is None:
            blob, node, _ = blob_for_read(s, ctx, resource_id, "editor")
            if if_match != etag_header(blob):
                raise PreconditionFailed("The content changed; If-Match does not match its "
                                         "ETag.", details={"etag": etag_header(blob)})
            filename = blob.filename
    if replay is not None:
        return _answer_replay(ops, db, ctx, head, replay, read)
    new_key = object_key_for(new_id())
    with db.write() as s:  # reservation: deleted later unless an operation takes it over
        deletion.schedule(s, new_key, "upload_reservation",
                          not_before=utcnow() + timedelta(seconds=settings.upload_session_ttl))
    try:
        result = ingest(store, new_key, read, content_length, filename)

        def prepare(s: Session, op_id: str):
            current, node, _ = blob_for_read(s, ctx, resource_id, "editor")
            if if_match != etag_header(current):
                raise PreconditionFailed("The content changed; If-Match does not match.")
            deletion.release(s, new_key)
            return node.space_id, {
                "resource_id": resource_id, "node_id": node.id, "if_match": if_match,
                "object_key": new_key, "size": result.size, "sha256": result.sha256,
                "mime_type": result.mime_type, "object_etag": result.object_etag}

        # A concurrent first request with the same key that recorded first is found here:
        # the same bytes answer its operation, different bytes are 409 (both drop new_key).
        sub = ops.submit(ctx, REPLACE_KIND, key, {**head, "sha256": result.sha256}, prepare)
    except BaseException:
        _drop(db, new_key)
        raise
    if not sub.created:
        _drop(db, new_key)
    return sub


def _replayed(ops: Operations, s: Session, ctx: RequestContext, key: str,
              head: dict[str, Any]) -> Operation | None:
    """The operation already recorded under ``key``, or None; 409 at once (before the body
    is read) when what can be compared without the body differs."""
    existing = ops.by_key(s, ctx, key)
    if existing is None:
        return None
    p = existing.payload or {}
    if existing.kind != REPLACE_KIND or any(p.get(k) != v for k, v in head.items()):
        raise IdempotencyKeyReused("This Idempotency-Key was used for a different request.",
                                   details={"operation_id": existing.id})
    return existing


def _answer_replay(ops: Operations, db: Database, ctx: RequestContext,
                   head: dict[str, Any], replay: Operation,
                   read: Callable[[int], bytes]) -> Submission:
    sha = hashlib.sha256()
    for data in body_chunks(read, head["size"]):
        sha.update(data)
    if not hmac.compare_digest(sha.hexdigest(), replay.payload.get("sha256", "")):
        raise IdempotencyKeyReused("This Idempotency-Key was used for a different request "
                                   "(the same headers, different content).",
                                   details={"operation_id": replay.id})
    with db.read() as s:  # the current state of the operation
        return Submission(ops.get(s, ctx, replay.id), False)


def _drop(db: Database, key: str) -> None:
    try:
        with db.write() as s:
            deletion.schedule(s, key, "upload_abandoned")
    except Exception:  # the reservation stays and comes due later
        log.warning("could not queue %s for deletion now", key, exc_info=True)


class ReplaceBlobContent:
    """``replace_blob_content``: verify the new object, switch it in, retire the old one."""

    kind = REPLACE_KIND
    # A failure queues the staged object for deletion (on_failed).
    input_consumed_on_failure = True

    def __init__(self, store: BlobStore, settings: Settings):
        self.store = store
        self.settings = settings

    def authorize(self, session: Session, op: Operation, actor: Principal) -> None:
        require_node(session, actor, op.payload["node_id"], "editor")

    def perform(self, op: Operation) -> None:
        p = op.payload
        verify_object(self.store, p["object_key"], p["size"], p["object_etag"], p["sha256"],
                      self.settings.verify_rehash)

    def commit(self, session: Session, op: Operation, ctx: RequestContext) -> dict[str, Any]:
        p = op.payload
        blob = session.get(BlobResource, p["resource_id"], with_for_update=True)
        if blob is None:
            raise NotFound("The blob resource is gone.")
        if etag_header(blob) != p["if_match"]:
            raise PreconditionFailed("Another change replaced the content first.")
        old_key = blob.object_key
        blob.object_key = p["object_key"]
        blob.size = p["size"]
        blob.sha256 = p["sha256"]
        blob.mime_type = p["mime_type"]
        blob.object_etag = p["object_etag"]
        blob.etag = secrets.token_hex(16)
        blob.updated_at = utcnow()
        session.flush()
        deletion.schedule(session, old_key, "replaced")
        node = session.get(Node, p["node_id"])
        audit.record(session, ctx, "blob.replace", "resource", p["resource_id"],
                     space_id=node.space_id if node else None,
                     details={"size": p["size"], "on_behalf_of": op.actor_id})
        return {"resource_id": p["resource_id"], "etag": etag_header(blob)}

    def on_failed(self, session: Session, op: Operation, error: dict) -> None:
        deletion.schedule(session, op.payload["object_key"], "replace_failed")

    def compensate(self, op: Operation) -> None:
        pass
