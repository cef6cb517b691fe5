"""One error root for everything Wharf refuses, with a stable machine-readable ``code``.

The API maps :class:`WharfError` to RFC 9457 problem+json in one place using ``status``
and ``code``; workers use ``retryable`` to decide between backing off and failing.

The storage layer has errors of its own (:mod:`storage.errors`); :func:`from_storage` is
the one mapping from them to these, used where errors leave Wharf (the API's error
handler, the operations executor).
"""
from __future__ import annotations

from enum import StrEnum
from typing import Any

from storage import errors as storage_errors


class ProblemCode(StrEnum):
    """Every problem ``code`` the server may answer with, declared once (the OpenAPI
    document's ``ProblemCode`` enum comes from here).

    The error classes' ``code`` attributes, the ``code="..."`` arguments, the codes storage
    errors map to (below) and those ``api.errors`` gives Falcon's own errors stay plain
    strings; ``tests/api/test_contract.py`` checks that each of them is a member, and that
    every member is used somewhere. A new code is added here first, and its HTTP status
    in :data:`STATUS` below.
    """

    ACCOUNT_DISABLED = "account_disabled"
    ACTIVATION_BLOCKED = "activation_blocked"
    ANCESTOR_TRASHED = "ancestor_trashed"
    ASSET_TOO_LARGE = "asset_too_large"
    BAD_REQUEST = "bad_request"
    BATCH_RESTORED = "batch_restored"
    BLOB_NOT_FOUND = "blob_not_found"
    BLOB_STORE_BUCKET_MISSING = "blob_store_bucket_missing"
    BLOB_STORE_UNAVAILABLE = "blob_store_unavailable"
    CHANGESET_TOO_LARGE = "changeset_too_large"
    CHECKSUM_MISMATCH = "checksum_mismatch"
    CONFIRM_NAME_MISMATCH = "confirm_name_mismatch"
    CONFLICT = "conflict"
    CROSS_ORIGIN = "cross_origin"
    CROSS_SPACE_MOVE = "cross_space_move"
    DATABASE_BUSY = "database_busy"
    DRAFT_PURGED = "draft_purged"
    FORBIDDEN = "forbidden"
    GRANTS_NOT_ALLOWED = "grants_not_allowed"
    HEADERS_TOO_LARGE = "headers_too_large"
    HTTP_ERROR = "http_error"
    IDEMPOTENCY_KEY_REQUIRED = "idempotency_key_required"
    IDEMPOTENCY_KEY_REUSED = "idempotency_key_reused"
    INCOMPLETE_BODY = "incomplete_body"
    INSUFFICIENT_SCOPE = "insufficient_scope"
    INTERNAL_ERROR = "internal_error"
    INVALID_CHANGESET = "invalid_changeset"
    INVALID_CREDENTIALS = "invalid_credentials"
    INVALID_CURSOR = "invalid_cursor"
    INVALID_IDEMPOTENCY_KEY = "invalid_idempotency_key"
    INVALID_METRICS_TOKEN = "invalid_metrics_token"
    INVALID_RECOVERY_CODE = "invalid_recovery_code"
    INVALID_TICKET = "invalid_ticket"
    INVALID_TOKEN = "invalid_token"
    LENGTH_REQUIRED = "length_required"
    MALFORMED_JSON = "malformed_json"
    MALFORMED_REQUEST = "malformed_request"
    MERGE_CONFLICT = "merge_conflict"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    MOVE_CYCLE = "move_cycle"
    NO_SESSION = "no_session"
    NOT_A_TEAM_SPACE = "not_a_team_space"
    NOT_ACCEPTABLE = "not_acceptable"
    NOT_FOUND = "not_found"
    NOT_TRASHED = "not_trashed"
    OPERATION_STATE_CONFLICT = "operation_state_conflict"
    OWNER_NOT_GRANTEE = "owner_not_grantee"
    OWNER_NOT_MEMBER = "owner_not_member"
    OWNER_REQUIRED = "owner_required"
    PARENT_IN_OTHER_SPACE = "parent_in_other_space"
    PAYLOAD_TOO_LARGE = "payload_too_large"
    PERMISSION_REVOKED = "permission_revoked"
    PRECONDITION_FAILED = "precondition_failed"
    PRECONDITION_REQUIRED = "precondition_required"
    PROTECTED_RANGE = "protected_range"
    PURGE_FORBIDDEN = "purge_forbidden"
    PURGE_IN_PROGRESS = "purge_in_progress"
    RANGE_NOT_SATISFIABLE = "range_not_satisfiable"
    RATE_LIMITED = "rate_limited"
    RETRY_NOT_POSSIBLE = "retry_not_possible"
    REVISION_CONFLICT = "revision_conflict"
    SERVICE_UNAVAILABLE = "service_unavailable"
    SIZE_MISMATCH = "size_mismatch"
    SPACE_DELETED = "space_deleted"
    SPACE_DELETING = "space_deleting"
    SPACE_READ_ONLY = "space_read_only"
    STORAGE_FAILURE = "storage_failure"
    TOKEN_CANNOT_MINT = "token_cannot_mint"
    TOO_MANY_REQUESTS = "too_many_requests"
    TRANSIENT_FAILURE = "transient_failure"
    TREE_TOO_DEEP = "tree_too_deep"
    UNAUTHENTICATED = "unauthenticated"
    UNIT_CONFLICT = "unit_conflict"
    UNIT_TOO_DEEP = "unit_too_deep"
    UNIT_TOO_LARGE = "unit_too_large"
    UNIT_UNAVAILABLE = "unit_unavailable"
    UNITSTORE_UNAVAILABLE = "unitstore_unavailable"
    UNKNOWN_CONFLICT_PATH = "unknown_conflict_path"
    UNKNOWN_KIND = "unknown_kind"
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
    UPLOAD_ABANDONED = "upload_abandoned"
    UPLOAD_EXPIRED = "upload_expired"
    UPLOAD_INCOMPLETE = "upload_incomplete"
    UPLOAD_NOT_RECEIVED = "upload_not_received"
    UPLOAD_SESSION_EXPIRED = "upload_session_expired"
    UPLOAD_SESSION_STATE = "upload_session_state"
    URI_TOO_LONG = "uri_too_long"
    USERNAME_TAKEN = "username_taken"
    USER_NOT_FOUND = "user_not_found"
    VALIDATION_FAILED = "validation_failed"
    VERIFICATION_FAILED = "verification_failed"
    WORKTREE_BUSY = "worktree_busy"
    WORKTREE_DISCARDED = "worktree_discarded"
    WORKTREE_REFERENCE = "worktree_reference"
    WORKTREE_STATE = "worktree_state"
    # units inside worktrees (wharf/worktrees/units.py)
    NOT_A_UNIT = "not_a_unit"
    NOT_LOCAL_UNIT = "not_local_unit"
    OUTSIDE_TEAM_SPACE = "outside_team_space"
    UNIT_ALREADY_ADDED = "unit_already_added"
    WORKTREE_UNIT_LIMIT = "worktree_unit_limit"
    # open worktrees and draft bytes per user (wharf/worktrees/limits.py)
    WORKTREE_LIMIT = "worktree_limit"
    DRAFT_QUOTA_EXCEEDED = "draft_quota_exceeded"
    # worktree retention and re-driven activations (sweeps, wharf/worktrees/activation.py)
    NOT_BLOCKED = "not_blocked"
    UNIT_MISSING = "unit_missing"
    # webhooks (wharf/webhooks)
    WEBHOOK_URL_REFUSED = "webhook_url_refused"
    WEBHOOK_LIMIT = "webhook_limit"
    # team-space issues (wharf/issues)
    NOT_A_MEMBER = "not_a_member"
    ISSUE_STATE = "issue_state"
    LABEL_NAME_TAKEN = "label_name_taken"
    LABEL_LIMIT = "label_limit"
    ISSUE_LABEL_LIMIT = "issue_label_limit"
    ASSIGNEE_LIMIT = "assignee_limit"
    ASSIGNEE_NOT_MEMBER = "assignee_not_member"
    NODE_REF_LIMIT = "node_ref_limit"
    NODE_IN_OTHER_SPACE = "node_in_other_space"
    NODE_TRASHED = "node_trashed"
    # comments on trunk units (wharf/comments)
    COMMENT_CONFLICT = "comment_conflict"
    COMMENT_TOO_LONG = "comment_too_long"
    ANCHOR_TOO_LARGE = "anchor_too_large"
    COMMENT_THREAD_LIMIT = "comment_thread_limit"
    COMMENT_REPLY_LIMIT = "comment_reply_limit"
    # quotas (wharf/operations/quotas.py)
    QUOTA_EXCEEDED = "quota_exceeded"
    # account deletion (wharf/accounts/service.py)
    ACCOUNT_DELETED = "account_deleted"
    REAUTHENTICATION_REQUIRED = "reauthentication_required"
    # a unit's history (wharf/units/service.py, wharf/history)
    HISTORY_PRUNED = "history_pruned"
    # imports of Office files (wharf/exchange): a failed import_file operation's error
    UNSUPPORTED_FORMAT = "unsupported_format"
    FILE_TOO_COMPLEX = "file_too_complex"
    CORRUPT_FILE = "corrupt_file"
    CONVERSION_TIMEOUT = "conversion_timeout"
    # device login (wharf/identity/device.py): RFC 8628's token errors (also as `error`)
    AUTHORIZATION_PENDING = "authorization_pending"
    SLOW_DOWN = "slow_down"
    ACCESS_DENIED = "access_denied"
    EXPIRED_TOKEN = "expired_token"
    INVALID_GRANT = "invalid_grant"
    INVALID_REQUEST = "invalid_request"
    UNSUPPORTED_GRANT_TYPE = "unsupported_grant_type"
    # ... and its approval page's
    DEVICE_AUTHORIZATION_EXPIRED = "device_authorization_expired"
    DEVICE_AUTHORIZATION_DECIDED = "device_authorization_decided"
    # sign-in with an external provider (wharf/identity/external.py)
    EXTERNAL_LOGIN_FAILED = "external_login_failed"
    EXTERNAL_IDENTITY_TAKEN = "external_identity_taken"
    PROVIDER_ALREADY_LINKED = "provider_already_linked"
    LAST_LOGIN_METHOD = "last_login_method"
    # quarantined blobs (wharf/blobs/quarantine.py)
    QUARANTINED = "quarantined"
    # stars (wharf/recent/stars.py)
    STAR_LIMIT = "star_limit"
    # a team space handed over (wharf/spaces/lifecycle.py)
    NEW_OWNER_NOT_MEMBER = "new_owner_not_member"


_C = ProblemCode
#: Each problem code's HTTP status, declared once: an error answers with its code's status
#: (:class:`WharfError` takes it from here, whatever class raises it), so a code never
#: means two statuses. Every member has one except :data:`NO_STATUS`'s
#: (``tests/api/test_contract.py`` checks, and that each raiser's class agrees).
STATUS: dict[str, int] = {
    **dict.fromkeys((
        _C.BAD_REQUEST, _C.CHECKSUM_MISMATCH, _C.IDEMPOTENCY_KEY_REQUIRED, _C.INCOMPLETE_BODY,
        _C.INVALID_CHANGESET, _C.INVALID_CURSOR, _C.INVALID_IDEMPOTENCY_KEY,
        _C.MALFORMED_JSON, _C.MALFORMED_REQUEST, _C.PARENT_IN_OTHER_SPACE, _C.SIZE_MISMATCH,
        _C.UNIT_TOO_DEEP, _C.UNKNOWN_CONFLICT_PATH, _C.UNKNOWN_KIND, _C.VALIDATION_FAILED,
        _C.NOT_A_UNIT, _C.NOT_LOCAL_UNIT, _C.OUTSIDE_TEAM_SPACE, _C.WEBHOOK_URL_REFUSED,
        _C.WEBHOOK_LIMIT, _C.COMMENT_TOO_LONG, _C.CONFIRM_NAME_MISMATCH), 400),
    **dict.fromkeys((
        _C.INVALID_CREDENTIALS, _C.INVALID_METRICS_TOKEN, _C.INVALID_RECOVERY_CODE,
        _C.INVALID_TICKET, _C.INVALID_TOKEN,
        _C.NO_SESSION, _C.UNAUTHENTICATED), 401),
    **dict.fromkeys((
        _C.ACCOUNT_DISABLED, _C.CROSS_ORIGIN, _C.FORBIDDEN, _C.INSUFFICIENT_SCOPE,
        _C.OWNER_REQUIRED, _C.PROTECTED_RANGE,
        _C.PERMISSION_REVOKED, _C.PURGE_FORBIDDEN, _C.SPACE_READ_ONLY, _C.TOKEN_CANNOT_MINT,
        _C.NOT_A_MEMBER, _C.REAUTHENTICATION_REQUIRED), 403),
    **dict.fromkeys((_C.BLOB_NOT_FOUND, _C.NOT_FOUND, _C.USER_NOT_FOUND), 404),
    _C.METHOD_NOT_ALLOWED: 405,
    _C.NOT_ACCEPTABLE: 406,
    **dict.fromkeys((
        _C.ACTIVATION_BLOCKED, _C.ANCESTOR_TRASHED, _C.BATCH_RESTORED, _C.CONFLICT,
        _C.CROSS_SPACE_MOVE, _C.GRANTS_NOT_ALLOWED, _C.IDEMPOTENCY_KEY_REUSED,
        _C.MERGE_CONFLICT, _C.MOVE_CYCLE, _C.NOT_A_TEAM_SPACE, _C.NOT_TRASHED,
        _C.OPERATION_STATE_CONFLICT, _C.OWNER_NOT_GRANTEE, _C.OWNER_NOT_MEMBER,
        _C.PURGE_IN_PROGRESS, _C.RETRY_NOT_POSSIBLE, _C.REVISION_CONFLICT, _C.TREE_TOO_DEEP,
        _C.UNIT_CONFLICT, _C.UNIT_UNAVAILABLE, _C.UPLOAD_EXPIRED, _C.UPLOAD_INCOMPLETE,
        _C.UPLOAD_NOT_RECEIVED, _C.UPLOAD_SESSION_EXPIRED, _C.UPLOAD_SESSION_STATE,
        _C.USERNAME_TAKEN, _C.WORKTREE_BUSY, _C.WORKTREE_DISCARDED, _C.WORKTREE_REFERENCE,
        _C.WORKTREE_STATE, _C.UNIT_ALREADY_ADDED, _C.WORKTREE_UNIT_LIMIT, _C.NOT_BLOCKED,
        _C.UNIT_MISSING, _C.ISSUE_STATE, _C.LABEL_NAME_TAKEN, _C.LABEL_LIMIT,
        _C.ISSUE_LABEL_LIMIT, _C.ASSIGNEE_LIMIT, _C.ASSIGNEE_NOT_MEMBER, _C.NODE_REF_LIMIT,
        _C.NODE_IN_OTHER_SPACE, _C.NODE_TRASHED, _C.WORKTREE_LIMIT, _C.DRAFT_QUOTA_EXCEEDED,
        _C.COMMENT_CONFLICT, _C.COMMENT_THREAD_LIMIT, _C.COMMENT_REPLY_LIMIT,
        _C.STAR_LIMIT, _C.QUARANTINED, _C.NEW_OWNER_NOT_MEMBER, _C.SPACE_DELETING), 409),
    _C.DRAFT_PURGED: 410,
    _C.HISTORY_PRUNED: 410,
    _C.LENGTH_REQUIRED: 411,
    _C.PRECONDITION_FAILED: 412,
    **dict.fromkeys((_C.ANCHOR_TOO_LARGE, _C.ASSET_TOO_LARGE, _C.CHANGESET_TOO_LARGE,
                     _C.PAYLOAD_TOO_LARGE, _C.UNIT_TOO_LARGE), 413),
    _C.URI_TOO_LONG: 414,
    _C.UNSUPPORTED_MEDIA_TYPE: 415,
    _C.RANGE_NOT_SATISFIABLE: 416,
    # device login: RFC 6749 section 5.2 answers every token error 400
    **dict.fromkeys((_C.AUTHORIZATION_PENDING, _C.SLOW_DOWN, _C.ACCESS_DENIED,
                     _C.EXPIRED_TOKEN, _C.INVALID_GRANT, _C.INVALID_REQUEST,
                     _C.UNSUPPORTED_GRANT_TYPE), 400),
    **dict.fromkeys((_C.DEVICE_AUTHORIZATION_EXPIRED, _C.DEVICE_AUTHORIZATION_DECIDED), 409),
    _C.VERIFICATION_FAILED: 422,
    # imports (wharf/exchange): only in a failed import_file operation's error so far, but a
    # WharfError's code needs a status; the file, not the request, is what cannot be processed
    **dict.fromkeys((_C.UNSUPPORTED_FORMAT, _C.FILE_TOO_COMPLEX, _C.CORRUPT_FILE,
                     _C.CONVERSION_TIMEOUT), 422),
    _C.PRECONDITION_REQUIRED: 428,
    # sign-in with an external provider (wharf/identity/external.py)
    _C.EXTERNAL_LOGIN_FAILED: 400,
    **dict.fromkeys((_C.EXTERNAL_IDENTITY_TAKEN, _C.PROVIDER_ALREADY_LINKED,
                     _C.LAST_LOGIN_METHOD), 409),
    **dict.fromkeys((_C.RATE_LIMITED, _C.TOO_MANY_REQUESTS, _C.QUOTA_EXCEEDED), 429),
    _C.HEADERS_TOO_LARGE: 431,
    _C.INTERNAL_ERROR: 500,
    **dict.fromkeys((
        _C.BLOB_STORE_BUCKET_MISSING, _C.BLOB_STORE_UNAVAILABLE, _C.DATABASE_BUSY,
        _C.SERVICE_UNAVAILABLE, _C.STORAGE_FAILURE, _C.TRANSIENT_FAILURE,
        _C.UNITSTORE_UNAVAILABLE), 503),
}
#: The codes without a status of their own: ``http_error`` stands for any Falcon error
#: whose status has no code (it answers with that status); the others only ever appear in
#: a failed operation's ``error``, never as an HTTP answer.
NO_STATUS = frozenset((_C.HTTP_ERROR, _C.ACCOUNT_DELETED, _C.SPACE_DELETED,
                       _C.UPLOAD_ABANDONED))


def status_of(code: str) -> int:
    """The HTTP status of problem ``code`` (:data:`STATUS`; KeyError for a code that has
    none, which ``tests/api/test_contract.py`` rules out for every raised code)."""
    return STATUS[code]


class WharfError(Exception):
    """Root of every domain error."""

    status: int = 400
    code: str = "bad_request"
    title: str = "Bad request"
    retryable: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A class's status is its code's (:data:`STATUS`): one it declares must agree."""
        super().__init_subclass__(**kwargs)
        declared = cls.__dict__.get("status")
        if declared is not None and declared != status_of(cls.code):
            raise TypeError(f"{cls.__name__}: status {declared} but {cls.code!r} is "
                            f"{status_of(cls.code)} (wharf.infra.errors.STATUS)")
        cls.status = status_of(cls.code)

    def __init__(self, message: str | None = None, *, code: str | None = None,
                 title: str | None = None, details: dict[str, Any] | None = None,
                 headers: dict[str, str] | None = None):
        if title:
            self.title = title
        super().__init__(message or self.title)
        self.message = message or self.title
        if code:
            self.code = code
            self.status = status_of(code)
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
# (tests/storage/test_storage_errors.py checks).
_FROM_STORAGE: dict[type[storage_errors.StorageError], tuple[type[WharfError], str, str]] = {
    storage_errors.StorageError: (TransientFailure, "storage_failure", "Storage failure"),
    storage_errors.StorageNotFound: (NotFound, "not_found", "Not found"),
    storage_errors.BlobNotFound: (NotFound, "blob_not_found", "Blob not found"),
    storage_errors.UnitNotFound: (NotFound, "not_found", "Not found"),
    storage_errors.StorageConflict: (Conflict, "conflict", "Conflict"),
    storage_errors.RevisionConflict: (Conflict, "revision_conflict", "Revision conflict"),
    storage_errors.UnitConflict: (Conflict, "unit_conflict", "Unit conflict"),
    storage_errors.DraftQuotaExceeded: (Conflict, "draft_quota_exceeded",
                                        "Draft quota exceeded"),
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
