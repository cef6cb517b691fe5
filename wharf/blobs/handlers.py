"""The two operation handlers: ``create_blob_resource`` (publish a completed upload) and
``replace_blob_content`` (switch a blob to new content)."""
from __future__ import annotations

import secrets
from typing import Any

from sqlalchemy.orm import Session

from storage.blobstore import BlobStore
from storage.enums import BlobState, Role, UploadState
from storage.models import BlobResource, BlobUploadSession, Node, Operation
from wharf.blobs.errors import UploadSessionState
from wharf.blobs.kinds import (
    CREATE_BLOB_RESOURCE,
    REPLACE_BLOB_CONTENT,
    CreateBlobResourcePayload,
    CreateBlobResourceResult,
    ReplaceBlobContentPayload,
    ReplaceBlobContentResult,
)
from wharf.blobs.reading import etag_header
from wharf.blobs.verify import verify_object
from wharf.deletion import service as deletion
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import Principal, RequestContext
from wharf.infra.errors import NotFound, PreconditionFailed
from wharf.infra.settings import Settings
from wharf.operations.kinds import payload
from wharf.spaces.access import require_node
from wharf.spaces.nodes import resolve_parent
from wharf.units.resources import publish_node

CREATE_KIND = CREATE_BLOB_RESOURCE
REPLACE_KIND = REPLACE_BLOB_CONTENT


class CreateBlobResource:
    """``create_blob_resource``: verify the uploaded object, then publish it in the tree."""

    kind = CREATE_KIND

    def __init__(self, store: BlobStore, settings: Settings):
        self.store = store
        self.settings = settings

    def authorize(self, session: Session, op: Operation, actor: Principal) -> None:
        p = payload(op, CreateBlobResourcePayload)
        resolve_parent(session, RequestContext(principal=actor), p.space_id, p.parent_id)

    def perform(self, op: Operation) -> None:
        p = payload(op, CreateBlobResourcePayload)
        verify_object(self.store, p.object_key, p.size, p.object_etag, p.sha256,
                      self.settings.verify_rehash)

    def commit(self, session: Session, op: Operation,
               ctx: RequestContext) -> CreateBlobResourceResult:
        p = payload(op, CreateBlobResourcePayload)
        upload = session.get(BlobUploadSession, p.session_id, with_for_update=True)
        if upload is None or upload.state != UploadState.VERIFYING or upload.operation_id != op.id:
            raise UploadSessionState("the upload session is no longer verifying")
        publish_node(session, op, node_id=p.node_id, resource_id=p.resource_id,
                     space_id=p.space_id, parent_id=p.parent_id, name=p.filename, kind="blob")
        session.add(BlobResource(resource_id=p.resource_id, object_key=p.object_key,
                                 filename=p.filename, mime_type=p.mime_type,
                                 size=p.size, sha256=p.sha256,
                                 object_etag=p.object_etag, etag=secrets.token_hex(16),
                                 state=BlobState.READY))
        upload.state = UploadState.COMPLETED
        upload.updated_at = utcnow()
        session.flush()
        audit.record(session, ctx, "blob.publish", "resource", p.resource_id,
                     space_id=p.space_id, details={"node_id": p.node_id, "size": p.size,
                                                   "on_behalf_of": op.actor_id})
        return CreateBlobResourceResult(node_id=p.node_id, resource_id=p.resource_id)

    def on_failed(self, session: Session, op: Operation, error: dict[str, Any]) -> None:
        upload = session.get(BlobUploadSession, payload(op, CreateBlobResourcePayload).session_id,
                             with_for_update=True)
        if upload is None or upload.state != UploadState.VERIFYING:
            return
        upload.updated_at = utcnow()
        if error.get("code") in ("verification_failed", "permission_revoked"):
            # Quarantined: never published; the object is queued for deletion.
            upload.state = UploadState.FAILED
            upload.error_code = error["code"]
            deletion.schedule(session, upload.object_key, error["code"])
        else:
            # Interrupted (retries exhausted, storage down): the client uploads again.
            upload.state = UploadState.WAITING_FOR_UPLOAD
            upload.error_code = "upload_interrupted"

    def compensate(self, op: Operation) -> None:
        pass


class ReplaceBlobContent:
    """``replace_blob_content``: verify the new object, switch it in, retire the old one."""

    kind = REPLACE_KIND

    def __init__(self, store: BlobStore, settings: Settings):
        self.store = store
        self.settings = settings

    def authorize(self, session: Session, op: Operation, actor: Principal) -> None:
        require_node(session, actor, payload(op, ReplaceBlobContentPayload).node_id, Role.EDITOR)

    def perform(self, op: Operation) -> None:
        p = payload(op, ReplaceBlobContentPayload)
        verify_object(self.store, p.object_key, p.size, p.object_etag, p.sha256,
                      self.settings.verify_rehash)

    def commit(self, session: Session, op: Operation,
               ctx: RequestContext) -> ReplaceBlobContentResult:
        p = payload(op, ReplaceBlobContentPayload)
        blob = session.get(BlobResource, p.resource_id, with_for_update=True)
        if blob is None:
            raise NotFound("The blob resource is gone.")
        if etag_header(blob) != p.if_match:
            raise PreconditionFailed("Another change replaced the content first.")
        old_key = blob.object_key
        blob.object_key = p.object_key
        blob.size = p.size
        blob.sha256 = p.sha256
        blob.mime_type = p.mime_type
        blob.object_etag = p.object_etag
        blob.etag = secrets.token_hex(16)
        blob.updated_at = utcnow()
        session.flush()
        deletion.schedule(session, old_key, "replaced")
        node = session.get(Node, p.node_id)
        audit.record(session, ctx, "blob.replace", "resource", p.resource_id,
                     space_id=node.space_id if node else None,
                     details={"size": p.size, "on_behalf_of": op.actor_id})
        return ReplaceBlobContentResult(resource_id=p.resource_id, etag=etag_header(blob))

    def on_failed(self, session: Session, op: Operation, error: dict[str, Any]) -> None:
        deletion.schedule(session, payload(op, ReplaceBlobContentPayload).object_key,
                          "replace_failed")

    def compensate(self, op: Operation) -> None:
        pass
