"""One error root for everything Wharf refuses, with a stable machine-readable ``code``.

The API maps :class:`WharfError` to RFC 9457 problem+json in one place using ``status``
and ``code``; workers use ``retryable`` to decide between backing off and failing.

The storage layer has errors of its own (:mod:`storage.errors`); :func:`from_storage` is
the one mapping from them to these, used where errors leave Wharf (the API's error
handler, the operations executor).
"""
from __future__ import annotations

from typing import Any

from storage import errors as storage_errors


class WharfError(Exception):
    """Root of every domain error."""

    status: int = 400
    code: str = "bad_request"
    title: str = "Bad request"
    retryable: bool = False

    def __init__(self, message: str | None = None, *, code: str | None = None,
                 title: str | None = None, details: dict[str, Any] | None = None,
                 headers: dict[str, str] | None = None):
        if title:
            self.title = title
        super().__init__(message or self.title)
        self.message = message or self.title
        if code:
            self.code = code
        self.details = details or {}
        self.headers = headers or {}

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"code": self.code, "message": self.message,
                                "retryable": self.retryable}
        if self.details:
            data["details"] = self.details
        return data


class ValidationFailed(WharfError):
    """The request is well-formed JSON but a field is missing, of the wrong type or out of range."""

    status = 400
    code = "validation_failed"
    title = "Validation failed"


class MalformedRequest(WharfError):
    """The body is not parseable (bad JSON, wrong content type)."""

    status = 400
    code = "malformed_request"
    title = "Malformed request"


class InvalidCursor(WharfError):
    """A pagination cursor that this server did not issue."""

    status = 400
    code = "invalid_cursor"
    title = "Invalid cursor"


class Unauthenticated(WharfError):
    """No valid session or token; or credentials were wrong."""

    status = 401
    code = "unauthenticated"
    title = "Authentication required"


class Forbidden(WharfError):
    """The caller can see the target but may not do this to it."""

    status = 403
    code = "forbidden"
    title = "Forbidden"


class NotFound(WharfError):
    """The target does not exist or the caller cannot discover it (ids leak nothing)."""

    status = 404
    code = "not_found"
    title = "Not found"


class Conflict(WharfError):
    """The request conflicts with the current state (duplicate name, cycle, wrong state)."""

    status = 409
    code = "conflict"
    title = "Conflict"


class PreconditionFailed(WharfError):
    """An ``If-Match`` or similar precondition did not hold."""

    status = 412
    code = "precondition_failed"
    title = "Precondition failed"


class PreconditionRequired(WharfError):
    """The request must be conditional (``If-Match``) and was not."""

    status = 428
    code = "precondition_required"
    title = "Precondition required"


class PayloadTooLarge(WharfError):
    """The body or declared size exceeds the configured limit."""

    status = 413
    code = "payload_too_large"
    title = "Payload too large"


class RateLimited(WharfError):
    """Too many attempts (login failures, registrations) from this client or for this name."""

    status = 429
    code = "rate_limited"
    title = "Too many requests"
    retryable = True

    def __init__(self, message: str | None = None, *, retry_after: int = 1,
                 **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.headers.setdefault("Retry-After", str(retry_after))
        self.details.setdefault("retry_after", retry_after)


class Unavailable(WharfError):
    """A dependency is busy or down (database lock, broker, storage); try again later."""

    status = 503
    code = "service_unavailable"
    title = "Service unavailable"
    retryable = True

    def __init__(self, message: str | None = None, *, retry_after: int = 1,
                 **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.headers.setdefault("Retry-After", str(retry_after))


class TransientFailure(WharfError):
    """A worker-side failure that is expected to go away (storage timeout, lock); retried."""

    status = 503
    code = "transient_failure"
    title = "Transient failure"
    retryable = True


# --- storage's errors, mapped ----------------------------------------------------------

# Storage error class -> (the core's class, problem code, title). The most specific class
# of an error that has a rule decides; every class in storage.errors has one
# (tests/test_storage_errors.py checks).
_FROM_STORAGE: dict[type[storage_errors.StorageError], tuple[type[WharfError], str, str]] = {
    storage_errors.StorageError: (TransientFailure, "storage_failure", "Storage failure"),
    storage_errors.StorageNotFound: (NotFound, "not_found", "Not found"),
    storage_errors.BlobNotFound: (NotFound, "blob_not_found", "Blob not found"),
    storage_errors.UnitNotFound: (NotFound, "not_found", "Not found"),
    storage_errors.StorageConflict: (Conflict, "conflict", "Conflict"),
    storage_errors.RevisionConflict: (Conflict, "revision_conflict", "Revision conflict"),
    storage_errors.UnitConflict: (Conflict, "unit_conflict", "Unit conflict"),
    storage_errors.StorageUnavailable: (TransientFailure, "transient_failure",
                                        "Transient failure"),
    storage_errors.DatabaseBusy: (Unavailable, "database_busy", "Service unavailable"),
    storage_errors.UnitStoreUnavailable: (TransientFailure, "unitstore_unavailable",
                                          "Transient failure"),
    storage_errors.BlobStoreUnavailable: (TransientFailure, "blob_store_unavailable",
                                          "Blob store unavailable"),
    storage_errors.BucketNotFound: (TransientFailure, "blob_store_bucket_missing",
                                    "Blob store bucket missing"),
    storage_errors.StorageTooLarge: (PayloadTooLarge, "payload_too_large", "Payload too large"),
    storage_errors.ChangesetTooLarge: (PayloadTooLarge, "changeset_too_large",
                                       "Changeset too large"),
    storage_errors.UnitTooLarge: (PayloadTooLarge, "unit_too_large", "Unit too large"),
    storage_errors.InvalidChangeset: (ValidationFailed, "invalid_changeset",
                                      "Invalid changeset"),
    storage_errors.UnitTooDeep: (ValidationFailed, "unit_too_deep", "Unit too deep"),
}

#: The problem codes storage errors are answered with (the table above).
STORAGE_PROBLEM_CODES = frozenset(code for _, code, _ in _FROM_STORAGE.values())


def from_storage(exc: storage_errors.StorageError) -> WharfError:
    """The core's error for a storage error: status, problem ``code``, title and
    ``retryable`` from the table above; message and ``details`` from ``exc``
    (``Unavailable`` adds ``Retry-After: 1``). Raise it ``from exc``."""
    for cls in type(exc).__mro__:
        rule = _FROM_STORAGE.get(cls)
        if rule is not None:
            break
    else:  # unreachable: StorageError itself has a rule
        raise TypeError(f"not a storage error: {exc!r}")
    kind, code, title = rule
    return kind(exc.message, code=code, title=title, details=dict(exc.details) or None)
