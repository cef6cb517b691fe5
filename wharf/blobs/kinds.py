"""The kinds of the blobs capability: ``create_blob_resource`` (a completed upload
verified and published) and ``replace_blob_content`` (a blob's bytes replaced), their
payloads and results, declared once here (``wharf.operations.registry``).

Both are long (reading a whole upload back) and their failure disposes of their input
(the session's object is quarantined, or the session sent back to waiting_for_upload;
the staged object is queued for deletion).
"""
from __future__ import annotations

from wharf.operations.kinds import Shape
from wharf.operations.registry import Collaborators, KindSpec, register

CREATE_BLOB_RESOURCE = "create_blob_resource"
REPLACE_BLOB_CONTENT = "replace_blob_content"


class CreateBlobResourcePayload(Shape, frozen=True):
    """The verified upload to publish: the session's reserved ids and its object."""

    session_id: str
    space_id: str
    parent_id: str | None
    filename: str
    node_id: str
    resource_id: str
    object_key: str
    size: int
    sha256: str
    mime_type: str
    object_etag: str


class CreateBlobResourceResult(Shape, frozen=True):
    node_id: str
    resource_id: str


class ReplaceBlobContentPayload(Shape, frozen=True):
    """The staged object that replaces a blob's content if ``if_match`` still holds."""

    resource_id: str
    node_id: str
    if_match: str
    object_key: str
    size: int
    sha256: str
    mime_type: str
    object_etag: str


class ReplaceBlobContentResult(Shape, frozen=True):
    resource_id: str
    etag: str



def _create_blob_resource(c: Collaborators) -> object:
    # imported here: the handler's module imports this one
    from wharf.blobs.handlers import CreateBlobResource
    return CreateBlobResource(c.blob_store, c.settings)


def _replace_blob_content(c: Collaborators) -> object:
    # imported here: the handler's module imports this one
    from wharf.blobs.handlers import ReplaceBlobContent
    return ReplaceBlobContent(c.blob_store, c.settings)


register(KindSpec(
    name=CREATE_BLOB_RESOURCE, payload=CreateBlobResourcePayload,
    result=CreateBlobResourceResult, handler=_create_blob_resource,
    long=True, failure_consumes_input=True, object_keys=("object_key",),
    doc="``create_blob_resource``: a completed upload verified and published.",
    result_doc="Once completed: the new node and blob resource."))
register(KindSpec(
    name=REPLACE_BLOB_CONTENT, payload=ReplaceBlobContentPayload,
    result=ReplaceBlobContentResult, handler=_replace_blob_content,
    long=True, failure_consumes_input=True, object_keys=("object_key",),
    doc="``replace_blob_content``: a blob's bytes replaced.",
    result_doc="Once completed: the blob's new ETag."))
