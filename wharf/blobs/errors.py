"""The problems the blob capability raises (each leaves as an RFC 9457 problem)."""
from __future__ import annotations

from wharf.infra.errors import Conflict, ValidationFailed, WharfError


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

