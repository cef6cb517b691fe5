"""The closed vocabularies of the model, declared once.

Storage is the lowest layer, so the enums live here: the models and the unit store use
them, the core (``wharf``) checks input against them and the API derives its schemas (and
the OpenAPI ``enum`` components) from them. Each is a :class:`enum.StrEnum`, so a member is
the very string stored in the database (no migration) and compares equal to it.

A capability's vocabulary that storage itself never uses lives with the capability
instead (the worktrees': ``wharf.worktrees.enums``).
"""
from __future__ import annotations

from enum import StrEnum


class OperationStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"


#: Statuses an operation never leaves (except through an explicit retry).
DONE_STATUSES: tuple[OperationStatus, ...] = (OperationStatus.COMPLETED, OperationStatus.FAILED)
#: Statuses of operations still to be executed.
OPEN_STATUSES: tuple[OperationStatus, ...] = (OperationStatus.PENDING, OperationStatus.RUNNING)


class AttemptOutcome(StrEnum):
    COMPLETED = "completed"
    FAILED = "failed"
    RETRY = "retry"
    LOST = "lost"


class SpaceType(StrEnum):
    PERSONAL = "personal"
    TEAM = "team"


class Role(StrEnum):
    """The effective role of a principal on a space or node, weakest first."""

    VIEWER = "viewer"
    EDITOR = "editor"
    ADMIN = "admin"
    OWNER = "owner"


class MemberRole(StrEnum):
    """A team space member's stored role (the owner is not a member)."""

    ADMIN = "admin"
    EDITOR = "editor"
    VIEWER = "viewer"


class ShareRole(StrEnum):
    """The role a direct grant or link sharing gives on a node."""

    EDITOR = "editor"
    VIEWER = "viewer"


class TokenScope(StrEnum):
    READ = "read"
    WRITE = "write"


class AuthMethod(StrEnum):
    SESSION = "session"
    TOKEN = "token"


class UserStatus(StrEnum):
    """``users.status``: only an active user authenticates; a user being deleted never
    again (wharf.accounts.service); a disabled one not until an operator enables them
    (``wharf user disable|enable``, wharf.accounts.disabling)."""

    ACTIVE = "active"
    DELETING = "deleting"
    DISABLED = "disabled"


class ResourceKind(StrEnum):
    UNIT = "unit"
    BLOB = "blob"


class UnitType(StrEnum):
    SHEET = "sheet"
    DOC = "doc"
    SLIDE = "slide"
    BOARD = "board"
    BASE = "base"


class ActorType(StrEnum):
    USER = "user"
    SYSTEM = "system"
    ANONYMOUS = "anonymous"


class BlobState(StrEnum):
    READY = "ready"
    QUARANTINED = "quarantined"


class UploadState(StrEnum):
    """A blob upload session (``blob_upload_sessions.state``). ``verifying`` and
    ``completed``: consumed by its own publish (``create_blob_resource``); ``importing``
    and ``imported``: consumed by an import (``import_file`` reads the bytes; once it is
    done, completed or failed, the object is queued for deletion: ``imported``, or
    ``failed`` with the import's error code)."""

    WAITING_FOR_UPLOAD = "waiting_for_upload"
    UPLOADED = "uploaded"
    VERIFYING = "verifying"
    COMPLETED = "completed"
    IMPORTING = "importing"
    IMPORTED = "imported"
    FAILED = "failed"
    EXPIRED = "expired"
    ABORTED = "aborted"


class AssetUploadState(StrEnum):
    """An asset upload in flight (``unit_asset_uploads.state``); the row is deleted once
    the asset is published or the upload abandoned."""

    RECEIVING = "receiving"
    STORED = "stored"


class DraftSource(StrEnum):
    """Where a draft's unit comes from: a trunk unit, or new in the worktree (local)."""

    TRUNK = "trunk"
    WORKTREE = "worktree"


class DraftRevisionKind(StrEnum):
    EDIT = "edit"              # a changeset posted to the draft
    REBASE = "rebase"          # the draft moved onto a new trunk head (resolutions applied)
    MERGE_SYNC = "merge_sync"  # a merge took trunk's changes into the draft


class MergeOutcome(StrEnum):
    """A unit's outcome in one merge operation (spec §8.2), as its merge record stores it."""

    UNCHANGED = "unchanged"
    FAST_FORWARD = "fast_forward"
    MERGED = "merged"
    CREATED = "created"
    CONFLICT = "conflict"
    FAILED = "failed"


class PurgeReason(StrEnum):
    """Who deleted the trash: its owner or a space admin (``purge``), or the trash
    retention sweep (``retention``)."""

    PURGE = "purge"
    RETENTION = "retention"


class TickStatus(StrEnum):
    """A scheduled job run (``schedule_ticks.status``)."""

    ENQUEUED = "enqueued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    SKIPPED = "skipped"


def values(enum: type[StrEnum]) -> tuple[str, ...]:
    """The stored strings of ``enum``, in declaration order."""
    return tuple(member.value for member in enum)


# --- team-space issues (wharf.issues) ---------------------------------------------------

class IssueState(StrEnum):
    OPEN = "open"
    CLOSED = "closed"


class IssueStateReason(StrEnum):
    """Why a closed issue was closed (an open issue has none)."""

    COMPLETED = "completed"
    NOT_PLANNED = "not_planned"


class IssueEventKind(StrEnum):
    """What an ``issue_events`` row records (its payload snapshots the names involved)."""

    CLOSED = "closed"
    REOPENED = "reopened"
    RENAMED = "renamed"
    LABELED = "labeled"
    UNLABELED = "unlabeled"
    ASSIGNED = "assigned"
    UNASSIGNED = "unassigned"
    NODE_REFERENCED = "node_referenced"
    NODE_UNREFERENCED = "node_unreferenced"


class LabelColor(StrEnum):
    """The palette keys of issue labels (checked by the service only: changing the palette
    needs no migration)."""

    GRAY = "gray"
    BLUE = "blue"
    GREEN = "green"
    YELLOW = "yellow"
    ORANGE = "orange"
    RED = "red"
    PURPLE = "purple"
    PINK = "pink"


class DeliveryStatus(StrEnum):
    """A webhook delivery's state (``webhook_deliveries.status``): declared here, beside
    the table's other vocabularies, so the webhooks capability and the metrics (which
    sit below it) spell it once."""

    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"  # gave up (or the endpoint was disabled or deleted meanwhile)


# --- protected ranges (wharf.protection) ------------------------------------------------

class ReadScope(StrEnum):
    """Who views a permission object (``content_permission_objects.read_scope``)."""

    ALL_COLLABORATORS = "all_collaborators"  # whoever may open the document
    SPECIFIED = "specified"  # its explicit collaborators


class EditScope(StrEnum):
    """Who edits under a permission object's target (``edit_scope``)."""

    ONE_SELF = "one_self"  # its creator (and the document's owner and admins)
    SPECIFIED = "specified"  # and its explicit ``editor`` collaborators


class StrategyLevel(StrEnum):
    """The least right an action (copy, print, export) on a permission object needs."""

    READER = "reader"
    EDITOR = "editor"
    OWNER = "owner"


class ObjectRole(StrEnum):
    """An explicit collaborator's role on a permission object."""

    EDITOR = "editor"
    VIEWER = "viewer"
