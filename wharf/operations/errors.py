"""Errors of the operations engine."""
from __future__ import annotations

from wharf.infra.errors import Conflict, RateLimited, ValidationFailed, WharfError


class IdempotencyKeyRequired(ValidationFailed):
    """An operation-creating request came without an ``Idempotency-Key`` header."""

    code = "idempotency_key_required"
    title = "Idempotency-Key required"


class InvalidIdempotencyKey(ValidationFailed):
    """The ``Idempotency-Key`` is not 16-200 characters of ``[A-Za-z0-9_-]``."""

    code = "invalid_idempotency_key"
    title = "Invalid Idempotency-Key"


class IdempotencyKeyReused(Conflict):
    """The key was already used by this actor for a different request."""

    code = "idempotency_key_reused"
    title = "Idempotency-Key reused"


class OperationStateConflict(Conflict):
    """Retry of a non-failed operation, or cancel of one that is no longer pending."""

    code = "operation_state_conflict"
    title = "Operation state conflict"


class RetryNotPossible(Conflict):
    """The operation's kind consumes its input when it fails (e.g. the staged upload is
    queued for deletion), so re-running it could only fail again or publish an object
    that is about to be deleted: submit a new request instead."""

    code = "retry_not_possible"
    title = "Retry not possible"


class PermissionRevoked(WharfError):
    """The actor lost permission on the target between submission and execution."""

    status = 403
    code = "permission_revoked"
    title = "Permission revoked"


class ActorDisabled(WharfError):
    """The actor's account is disabled (``wharf user disable``): the operation waits,
    pending, until they are enabled (``wharf.operations.outcomes``); it never fails for it."""

    status = 403
    code = "account_disabled"
    title = "Account disabled"


class QuotaExceeded(RateLimited):
    """The actor is at one of its quotas (``wharf.operations.quotas``): operations pending
    at once, or submissions per minute. ``details``: ``quota``, ``limit``, ``current``,
    ``retry_after``."""

    code = "quota_exceeded"
    title = "Quota exceeded"
