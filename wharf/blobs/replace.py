"""Replacing a blob's content: stream the new bytes in, then submit
``replace_blob_content`` (or answer a replay)."""
from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from sqlalchemy.orm import Session

from storage.blobstore import BlobStore
from storage.db import Database
from storage.enums import Role
from storage.models import Operation
from wharf.blobs.errors import LengthRequired
from wharf.blobs.handlers import REPLACE_KIND
from wharf.blobs.ingest import _drop, body_chunks, ingest, object_key_for
from wharf.blobs.kinds import ReplaceBlobContentPayload
from wharf.blobs.reading import blob_for_read, etag_header
from wharf.blobs.sessions import _check_size
from wharf.deletion import service as deletion
from wharf.infra.clock import utcnow
from wharf.infra.context import RequestContext
from wharf.infra.errors import PreconditionFailed, PreconditionRequired
from wharf.infra.ids import new_id
from wharf.infra.settings import Settings
from wharf.operations.errors import IdempotencyKeyReused
from wharf.operations.idempotency import check_key
from wharf.operations.kinds import payload
from wharf.operations.service import Operations, Submission


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
            blob, _node, _ = blob_for_read(s, ctx, resource_id, Role.EDITOR)
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

        def prepare(s: Session, op_id: str) -> tuple[str, ReplaceBlobContentPayload]:
            current, node, _ = blob_for_read(s, ctx, resource_id, Role.EDITOR)
            if if_match != etag_header(current):
                raise PreconditionFailed("The content changed; If-Match does not match.")
            deletion.release(s, new_key)
            return node.space_id, ReplaceBlobContentPayload(
                resource_id=resource_id, node_id=node.id, if_match=if_match,
                object_key=new_key, size=result.size, sha256=result.sha256,
                mime_type=result.mime_type, object_etag=result.object_etag)

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
    if existing.kind != REPLACE_KIND or any(
            getattr(payload(existing, ReplaceBlobContentPayload), k) != v
            for k, v in head.items()):
        raise IdempotencyKeyReused("This Idempotency-Key was used for a different request.",
                                   details={"operation_id": existing.id})
    return existing


def _answer_replay(ops: Operations, db: Database, ctx: RequestContext,
                   head: dict[str, Any], replay: Operation,
                   read: Callable[[int], bytes]) -> Submission:
    sha = hashlib.sha256()
    for data in body_chunks(read, head["size"]):
        sha.update(data)
    if not hmac.compare_digest(sha.hexdigest(),
                               payload(replay, ReplaceBlobContentPayload).sha256):
        raise IdempotencyKeyReused("This Idempotency-Key was used for a different request "
                                   "(the same headers, different content).",
                                   details={"operation_id": replay.id})
    with db.read() as s:  # the current state of the operation
        return Submission(ops.find(s, ctx, replay.id), False)
