"""The problems the asset capability raises (each leaves as an RFC 9457 problem)."""
from __future__ import annotations

from wharf.infra.errors import Conflict, PayloadTooLarge, ValidationFailed


class AssetTooLarge(PayloadTooLarge):
    """The declared ``Content-Length`` exceeds ``WHARF_MAX_ASSET_SIZE`` (nothing is read or
    recorded)."""

    code = "asset_too_large"
    title = "Asset too large"


class IncompleteBody(ValidationFailed):
    """The body ended before (or ran past) its ``Content-Length``; the upload is abandoned."""

    code = "incomplete_body"
    title = "Incomplete body"


class ChecksumMismatch(ValidationFailed):
    """The bytes do not hash to the ``Content-SHA256`` the client sent; nothing is
    published."""

    code = "checksum_mismatch"
    title = "Checksum mismatch"


class UploadExpired(Conflict):
    """The upload outlived ``WHARF_ASSET_UPLOAD_TTL`` (or its operation was cancelled) while
    its bytes streamed in: it was abandoned and its object queued for deletion."""

    code = "upload_expired"
    title = "Upload expired"


class UploadIncomplete(Conflict):
    """The worker found no complete (``stored``) upload to publish: the request that
    streamed it died or was abandoned."""

    code = "upload_incomplete"
    title = "Upload incomplete"
