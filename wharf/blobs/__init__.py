"""Uploaded files ("blobs"): upload sessions, streamed content, verification by workers,
ranged reads, and content replacement.

Bytes go to the BlobStore under a key reserved when the upload starts; the product DB
keeps metadata. Nothing appears in the tree before the publish transaction. Every object
that stops being referenced is queued in ``object_deletion_jobs`` in the same transaction.

The package, by concern:

- ``errors``: the problems it raises;
- ``ingest``: streaming a body into a new object (length, SHA-256 and MIME sniffing in one
  pass) and the keys new objects get;
- ``verify``: re-checking a stored object before it is published;
- ``sessions``: the upload-session lifecycle;
- ``reading``: finding a blob to read, and its ETag;
- ``replace``: replacing a blob's content;
- ``handlers``: the operation handlers ``create_blob_resource`` and ``replace_blob_content``.

HTTP header parsing (Range, If-None-Match, Content-Disposition) lives in ``api/headers.py``;
handing freed memory back to the OS in ``storage/memory.py``.
"""
from __future__ import annotations

from wharf.blobs import kinds  # noqa: F401  (registers its operation kinds)
from wharf.blobs.errors import LengthRequired, SizeMismatch, UploadSessionState, VerificationFailed
from wharf.blobs.handlers import CREATE_KIND, REPLACE_KIND, CreateBlobResource, ReplaceBlobContent
from wharf.blobs.ingest import (
                                CHUNK,
                                SNIFF_BYTES,
                                TRIM_AFTER,
                                Ingested,
                                body_chunks,
                                ingest,
                                object_key_for,
                                sniff,
)
from wharf.blobs.reading import (
                                blob_for_download,
                                blob_for_read,
                                describe_blob,
                                etag_header,
                                publicly_readable,
)
from wharf.blobs.replace import replace_content
from wharf.blobs.sessions import (
                                OPEN_STATES,
                                TAKEN_STATES,
                                abort_session,
                                complete_session,
                                create_session,
                                finish_import,
                                get_session,
                                importing,
                                put_content,
                                read_session,
                                recover_interrupted_sessions,
                                take_for_import,
                                visible_state,
)
from wharf.blobs.verify import verify_object

__all__ = [
                                "CHUNK",
                                "CREATE_KIND",
                                "OPEN_STATES",
                                "REPLACE_KIND",
                                "SNIFF_BYTES",
                                "TAKEN_STATES",
                                "TRIM_AFTER",
                                "CreateBlobResource",
                                "Ingested",
                                "LengthRequired",
                                "ReplaceBlobContent",
                                "SizeMismatch",
                                "UploadSessionState",
                                "VerificationFailed",
                                "abort_session",
                                "blob_for_download",
                                "blob_for_read",
                                "body_chunks",
                                "complete_session",
                                "create_session",
                                "describe_blob",
                                "etag_header",
                                "finish_import",
                                "get_session",
                                "importing",
                                "ingest",
                                "object_key_for",
                                "publicly_readable",
                                "put_content",
                                "read_session",
                                "recover_interrupted_sessions",
                                "replace_content",
                                "sniff",
                                "take_for_import",
                                "verify_object",
                                "visible_state",
]
