"""What the storage layer refuses or fails with: one root, :class:`StorageError`.

Storage knows nothing of HTTP or of the core's error family. Each error says what went
wrong in storage terms, with a message and, where a caller needs them, ``details`` (e.g.
the ``op_index`` of a changeset operation). The core maps these to its own errors in one
place, ``wharf.infra.errors.from_storage`` (status, problem ``code``, ``retryable``), applied
where errors leave Wharf: the API's error handler and the operations executor.

The groups below tell a caller what kind of trouble it is; catch the group, or the one
error, that you can do something about:

- :class:`StorageNotFound`: :class:`BlobNotFound`, :class:`UnitNotFound`
- :class:`StorageConflict`: :class:`RevisionConflict`, :class:`UnitConflict`,
  :class:`DraftQuotaExceeded`
- :class:`StorageUnavailable` (transient: try again later): :class:`DatabaseBusy`,
  :class:`UnitStoreUnavailable`, :class:`BlobStoreUnavailable` (:class:`BucketNotFound`)
- :class:`StorageTooLarge`: :class:`ChangesetTooLarge`, :class:`UnitTooLarge`
- :class:`InvalidChangeset` (:class:`UnitTooDeep`)
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class StorageError(Exception):
    """Root of every error the storage layer raises on purpose.

    ``message`` is safe to show to the client whose request caused it (it never contains
    a stored value); ``details`` holds machine-readable facts about it."""

    def __init__(self, message: str, *, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = dict(details or {})


# --- not found -------------------------------------------------------------------------

class StorageNotFound(StorageError):
    """The thing asked for does not exist."""


class BlobNotFound(StorageNotFound):
    """The object key does not exist in the blob store."""


class UnitNotFound(StorageNotFound):
    """No unit with this id in the unit store."""


# --- conflicts -------------------------------------------------------------------------

class StorageConflict(StorageError):
    """The change does not fit the stored state; retrying the same request will not help."""


class RevisionConflict(StorageConflict):
    """The changeset's base revision is not the unit's current revision
    (``details["current_revision"]`` when known)."""


class UnitConflict(StorageConflict):
    """A unit with this id exists with a different type: a permanent clash."""


class DraftQuotaExceeded(StorageConflict):
    """A draft changeset would grow the draft past what its owner's draft quota has left
    (``details["bytes"]``, ``details["available"]``)."""


# --- transient -------------------------------------------------------------------------

class StorageUnavailable(StorageError):
    """A store is busy or cannot be reached now; the same request may succeed later."""


class DatabaseBusy(StorageUnavailable):
    """A transaction hit a transient database failure: a SQLite lock held past the busy
    timeout, a PostgreSQL serialization failure, deadlock or lock timeout, a lost
    connection."""


class UnitStoreUnavailable(StorageUnavailable):
    """The unit store's database is busy or unreachable."""


class BlobStoreUnavailable(StorageUnavailable):
    """The blob store could not be reached or answered with a server error."""


class BucketNotFound(BlobStoreUnavailable):
    """The configured bucket does not exist: a deployment problem, never "no such object".

    Transient like any unavailable store (operations and deletion jobs wait for the
    bucket instead of failing verification or counting a delete as done); the message
    names the bucket, and ``/healthz/details`` (to holders of the metrics token) and the
    CLI show it."""

    operator_message = True  # useful to operators: /healthz/details (with the token), CLI


# --- changesets ------------------------------------------------------------------------

class StorageTooLarge(StorageError):
    """A limit on size would be exceeded (``details`` names the limit)."""


class ChangesetTooLarge(StorageTooLarge):
    """The changeset has more operations than ``WHARF_UNIT_MAX_CHANGESET_OPS``
    (``details["max_ops"]``)."""


class UnitTooLarge(StorageTooLarge):
    """Applying the changeset would grow the unit past ``WHARF_UNIT_MAX_SNAPSHOT_BYTES``
    (``details["max_bytes"]``, and ``details["op_index"]`` when one operation's copy crossed
    the budget)."""


class InvalidChangeset(StorageError):
    """The changeset is not a valid RFC 6902 patch, or does not apply to the snapshot
    (``details["op_index"]`` names the operation when one is at fault)."""


class UnitTooDeep(InvalidChangeset):
    """Applying the changeset would nest the unit deeper than ``WHARF_UNIT_MAX_DEPTH``
    (``details["op_index"]``, ``details["max_depth"]``)."""
