"""Upload sessions and blob resources (their metadata; the bytes are not JSON)."""
from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec

from api.schemas.common import Id, IdRef, Request, Response, Timestamp
from storage.enums import BlobState, UploadState

Sha256 = Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{64}$",
                                     description="SHA-256 of the bytes, lowercase hex.")]
ETag = Annotated[str, msgspec.Meta(description="The strong ETag of the bytes (quoted), as "
                                               "sent in the `ETag` header.",
                                   examples=['"5d41402abc4b2a76b9719d911017c592"'])]
MimeType = Annotated[str, msgspec.Meta(description="Detected by the server from the bytes.",
                                       examples=["text/csv"])]

#: A raw byte body, OpenAPI 3.1 style (``contentMediaType``). ``format: binary`` stays
#: beside it: generators (openapi-python-client) still read it to type the body as a file.
BINARY: dict[str, Any] = {"type": "string", "contentMediaType": "application/octet-stream",
                          "format": "binary"}


class CreateUploadSessionRequest(Request):
    __example__: ClassVar[dict[str, object]] = {
        "space_id": "0f8fad5bd9cb469fa16570867728950e", "filename": "report.csv",
        "size": 1024}
    space_id: IdRef
    filename: Annotated[str, msgspec.Meta(min_length=1, max_length=255,
                                          examples=["report.csv"])]
    size: Annotated[int, msgspec.Meta(
        ge=0, description="The exact byte count the content PUT sends (its Content-Length); "
                          "at most WHARF_MAX_UPLOAD_SIZE (else 413).")]
    parent_id: Annotated[IdRef | None, msgspec.Meta(
        description="The folder to publish it in (null or absent: the space's root).")] = None


class UploadSession(Response):
    id: Id
    state: UploadState
    space_id: Id
    parent_id: Id | None
    filename: str
    size: int
    received_size: int | None
    sha256: Sha256 | None
    mime_type: MimeType | None
    operation_id: Annotated[Id | None, msgspec.Meta(
        description="The create_blob_resource operation, once completing, or the "
                    "import_file operation that took it (`importing`, `imported`).")]
    error_code: Annotated[str | None, msgspec.Meta(
        description="Why it went back to waiting_for_upload (upload_interrupted) or failed "
                    "(verification_failed, permission_revoked; after an import from it, "
                    "the import's error code).")]
    node_id: Id
    resource_id: Id
    created_at: Timestamp
    updated_at: Timestamp
    expires_at: Timestamp


class UploadResult(Response):
    size: int
    sha256: Sha256
    mime_type: MimeType


class BlobResource(Response):
    resource_id: Id
    node_id: Id
    filename: str
    mime_type: MimeType
    size: int
    sha256: Sha256
    etag: ETag
    state: BlobState
    created_at: Timestamp
    updated_at: Timestamp
