"""The product database schema: SQLAlchemy 2 typed models. Ids are generated in Python."""
from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, ClassVar, Self

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, configure_mappers, mapped_column

from storage.clock import utcnow
from storage.ids import new_id
from storage.types import UTCDateTime

ID = String(32)
#: A W3C ``traceparent`` (version 00: ``00-<32 hex>-<16 hex>-<2 hex>``),
#: see wharf.observability.tracing.
TRACE_CONTEXT_LENGTH = 55


class Base(DeclarativeBase):
    # Every model here maps one Table (DeclarativeBase declares the wider FromClause).
    __table__: ClassVar[Table]

    @classmethod
    def detached(cls, values: Mapping[Any, Any]) -> Self:
        """An instance holding ``values`` (column attributes), built the way a query
        loads one: its state without the per-attribute events of ``__init__`` (about a
        sixth of the cost; hot paths build one per operation). Read it, like a loaded
        row; unset attributes read None. Nothing of it is pending in any Session."""
        if not cls.__mapper__.configured:  # __init__ would configure them: a fresh process
            configure_mappers()
        obj: Self = cls.__mapper__.class_manager.new_instance()
        obj.__dict__.update(values)
        return obj


# --- identity -------------------------------------------------------------------------

class User(Base):
    __tablename__ = "users"

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    username: Mapped[str] = mapped_column(String(64))
    username_key: Mapped[str] = mapped_column(String(64), unique=True)  # lower-cased
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # active | deleting (wharf.accounts.service: no access; a delete_account operation runs)
    status: Mapped[str] = mapped_column(String(16), default="active",
                                        server_default=text("'active'"))


class PasswordCredential(Base):
    __tablename__ = "password_credentials"

    user_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id", ondelete="CASCADE"),
                                         primary_key=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class LoginSession(Base):
    __tablename__ = "login_sessions"

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id", ondelete="CASCADE"),
                                         index=True)
    secret_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)


class ApiToken(Base):
    __tablename__ = "api_tokens"

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id", ondelete="CASCADE"),
                                         index=True)
    name: Mapped[str] = mapped_column(String(100))
    prefix: Mapped[str] = mapped_column(String(16), unique=True)
    secret_hash: Mapped[str] = mapped_column(String(64))
    scopes: Mapped[str] = mapped_column(String(64))  # space-separated: "read write"
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime, index=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The token's own quotas (wharf.operations.quotas); NULL: the server's settings.
    quota_pending_operations: Mapped[int | None] = mapped_column(Integer)
    quota_submissions_per_minute: Mapped[int | None] = mapped_column(Integer)


class AuthThrottle(Base):
    """Fixed-window counters of login and registration attempts (see wharf.identity.throttle).

    ``key`` is e.g. ``login:pair:<username>:<addr>``, ``login:user:<username>``,
    ``login:addr:<addr>``, ``register:addr:<addr>`` (``addr``: see ``address_key``).
    """
    __tablename__ = "auth_throttle"

    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    window_start: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    count: Mapped[int] = mapped_column(Integer)


# --- spaces and the tree --------------------------------------------------------------

class Space(Base):
    __tablename__ = "spaces"
    __table_args__ = (
        Index("uq_spaces_personal_owner", "owner_id", unique=True,
              sqlite_where=text("type = 'personal'"),
              postgresql_where=text("type = 'personal'")),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    type: Mapped[str] = mapped_column(String(16))  # personal | team
    name: Mapped[str] = mapped_column(String(100))
    owner_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id"), index=True)
    public_read: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # A team space whose owner's account was deleted with no admin to take it over: owned
    # by the deleted-account placeholder, members read only, until an operator acts.
    read_only: Mapped[bool] = mapped_column(Boolean, default=False,
                                            server_default=text("false"))


class SpaceMember(Base):
    __tablename__ = "space_members"

    space_id: Mapped[str] = mapped_column(ID, ForeignKey("spaces.id", ondelete="CASCADE"),
                                          primary_key=True)
    user_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id", ondelete="CASCADE"),
                                         primary_key=True, index=True)
    role: Mapped[str] = mapped_column(String(16))  # admin | editor | viewer
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Node(Base):
    __tablename__ = "nodes"
    __table_args__ = (
        Index("ix_nodes_parent", "space_id", "parent_id", "name", "id"),
        Index("ix_nodes_trash", "trash_batch_id"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    space_id: Mapped[str] = mapped_column(ID, ForeignKey("spaces.id"))
    parent_id: Mapped[str | None] = mapped_column(ID, ForeignKey("nodes.id"))
    name: Mapped[str] = mapped_column(String(255))
    created_by: Mapped[str] = mapped_column(ID, ForeignKey("users.id"))
    trash_batch_id: Mapped[str | None] = mapped_column(ID)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Resource(Base):
    __tablename__ = "resources"

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    node_id: Mapped[str] = mapped_column(ID, ForeignKey("nodes.id"), unique=True)
    kind: Mapped[str] = mapped_column(String(8))  # unit | blob
    created_by: Mapped[str] = mapped_column(ID, ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class UnitResource(Base):
    __tablename__ = "unit_resources"

    resource_id: Mapped[str] = mapped_column(ID, ForeignKey("resources.id", ondelete="CASCADE"),
                                             primary_key=True)
    unit_id: Mapped[str] = mapped_column(ID, unique=True)
    unit_type: Mapped[str] = mapped_column(String(8))  # sheet | doc | slide | board | base


# --- audit ----------------------------------------------------------------------------

class AuditLog(Base):
    __tablename__ = "audit_logs"
    __table_args__ = (Index("ix_audit_scope", "space_id", "at"),
                      # an account deletion walks its user's rows (wharf.accounts.service._audit)
                      Index("ix_audit_actor", "actor_id", "id"))

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    actor_type: Mapped[str] = mapped_column(String(16))  # user | system | anonymous
    actor_id: Mapped[str | None] = mapped_column(String(64))
    action: Mapped[str] = mapped_column(String(64))
    target_type: Mapped[str] = mapped_column(String(32))
    target_id: Mapped[str | None] = mapped_column(String(64))
    space_id: Mapped[str | None] = mapped_column(ID)
    request_id: Mapped[str | None] = mapped_column(String(128))
    client_ip: Mapped[str | None] = mapped_column(String(64))
    user_agent: Mapped[str | None] = mapped_column(String(512))
    details: Mapped[dict[str, Any] | None] = mapped_column(JSON)


# --- the operations engine ------------------------------------------------------------

class Operation(Base):
    """A durable, idempotent unit of cross-system work; the database is its source of truth."""

    __tablename__ = "operations"
    __table_args__ = (
        UniqueConstraint("actor_id", "idempotency_key", name="uq_operations_actor_key"),
        Index("ix_operations_actor", "actor_id", "id"),
        Index("ix_operations_due", "status", "next_attempt_at"),
        Index("ix_operations_lease", "status", "lease_expires_at"),
        Index("ix_operations_key_expiry", "key_expires_at"),
        Index("ix_operations_completed", "completed_at"),
        # The batched claim: oldest due first (``executor.claim_order``), over the rows
        # that can still be due only, so completed history does not slow it down.
        Index("ix_operations_claim", "created_at", "id",
              postgresql_where=text("status IN ('pending', 'running')"),
              sqlite_where=text("status IN ('pending', 'running')")),
        # The dashboard's "most retried" open operations: the index's last entries.
        Index("ix_operations_retried", "attempts",
              postgresql_where=text("status IN ('pending', 'running')"),
              sqlite_where=text("status IN ('pending', 'running')")),
        # Fair claiming (``executor.claim_statement``): the distinct actors with due
        # operations of a kind (a loose index scan), then each one's oldest.
        Index("ix_operations_fair", "kind", "actor_id", "created_at", "id",
              postgresql_where=text("status IN ('pending', 'running')"),
              sqlite_where=text("status IN ('pending', 'running')")),
        # Quotas (wharf.operations.quotas): an actor's open operations, counted bounded.
        Index("ix_operations_open", "actor_id",
              postgresql_where=text("status IN ('pending', 'running')"),
              sqlite_where=text("status IN ('pending', 'running')")),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    kind: Mapped[str] = mapped_column(String(40))
    status: Mapped[str] = mapped_column(String(16))  # pending | running | completed | failed
    actor_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id", ondelete="CASCADE"))
    scope_id: Mapped[str | None] = mapped_column(ID)
    idempotency_key: Mapped[str | None] = mapped_column(String(200))
    request_fingerprint: Mapped[str] = mapped_column(String(64))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    error: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    max_attempts: Mapped[int] = mapped_column(Integer)
    lease_owner: Mapped[str | None] = mapped_column(String(128))
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    completed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    key_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The submitting request's trace (a W3C ``traceparent``; NULL when tracing is off):
    # every attempt's span is its child, retries and re-runs after a crash included.
    trace_context: Mapped[str | None] = mapped_column(String(TRACE_CONTEXT_LENGTH))


class OperationAttempt(Base):
    """One execution attempt: who ran it, when, and how it ended."""

    __tablename__ = "operation_attempts"
    __table_args__ = (UniqueConstraint("operation_id", "number", name="uq_attempt_number"),)

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    operation_id: Mapped[str] = mapped_column(ID, ForeignKey("operations.id", ondelete="CASCADE"))
    number: Mapped[int] = mapped_column(Integer)
    worker_id: Mapped[str] = mapped_column(String(128))
    started_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    outcome: Mapped[str | None] = mapped_column(String(16))  # completed|failed|retry|lost
    error: Mapped[dict[str, Any] | None] = mapped_column(JSON)


class OutboxMessage(Base):
    """A message announced by a committed state change, waiting to be sent to the broker."""

    __tablename__ = "outbox"
    __table_args__ = (Index("ix_outbox_pending", "dispatched_at", "created_at"),)

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    actor_name: Mapped[str] = mapped_column(String(64))
    queue_name: Mapped[str] = mapped_column(String(64))
    # The id handed to the actor: an operation id, or an object deletion job id.
    subject_id: Mapped[str | None] = mapped_column(ID)
    delay_ms: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    dispatched_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    send_attempts: Mapped[int] = mapped_column(Integer, default=0)
    # The trace the message is sent in (the operation's ``trace_context``; NULL when
    # tracing is off or for rows that announce no operation).
    trace_context: Mapped[str | None] = mapped_column(String(TRACE_CONTEXT_LENGTH))


# --- blobs ----------------------------------------------------------------------------

class BlobResource(Base):
    """Metadata of a blob resource; the bytes live in the BlobStore under ``object_key``."""

    __tablename__ = "blob_resources"

    resource_id: Mapped[str] = mapped_column(ID, ForeignKey("resources.id", ondelete="CASCADE"),
                                             primary_key=True)
    object_key: Mapped[str] = mapped_column(String(255), unique=True)
    filename: Mapped[str] = mapped_column(String(255))
    mime_type: Mapped[str] = mapped_column(String(255))
    size: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))
    object_etag: Mapped[str] = mapped_column(String(128))
    etag: Mapped[str] = mapped_column(String(64))  # the HTTP strong ETag; random per content
    state: Mapped[str] = mapped_column(String(16), default="ready")  # ready | quarantined
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class BlobUploadSession(Base):
    """An upload in progress: ids reserved at creation, nothing in the tree until publish."""

    __tablename__ = "blob_upload_sessions"
    __table_args__ = (
        Index("ix_upload_sessions_expiry", "state", "expires_at"),
        UniqueConstraint("actor_id", "idempotency_key", name="uq_upload_sessions_actor_key"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    actor_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id", ondelete="CASCADE"))
    idempotency_key: Mapped[str | None] = mapped_column(String(200))
    request_fingerprint: Mapped[str] = mapped_column(String(64))
    space_id: Mapped[str] = mapped_column(ID)
    parent_id: Mapped[str | None] = mapped_column(ID)
    filename: Mapped[str] = mapped_column(String(255))
    declared_size: Mapped[int] = mapped_column(BigInteger)
    # waiting_for_upload | uploaded | verifying | completed | failed | expired | aborted
    state: Mapped[str] = mapped_column(String(24))
    node_id: Mapped[str] = mapped_column(ID)
    resource_id: Mapped[str] = mapped_column(ID)
    object_key: Mapped[str] = mapped_column(String(255), unique=True)
    received_size: Mapped[int | None] = mapped_column(BigInteger)
    sha256: Mapped[str | None] = mapped_column(String(64))
    mime_type: Mapped[str | None] = mapped_column(String(255))
    object_etag: Mapped[str | None] = mapped_column(String(128))
    operation_id: Mapped[str | None] = mapped_column(ID)
    error_code: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)

# --- worktrees -----------------------------------------------------------------------

class Worktree(Base):
    """An isolated draft of units, merged back into trunk by an operation. Its state is
    product data (listing needs no unit-store call); the drafts live in the unit store."""

    __tablename__ = "worktrees"
    __table_args__ = (
        Index("ix_worktrees_creator", "creator_id", "processed_at", "updated_at", "id"),
        Index("ix_worktrees_team", "team_space_id", "processed_at", "updated_at", "id"),
        CheckConstraint("(kind = 'user' AND team_space_id IS NULL AND visibility = 'private')"
                        " OR (kind = 'team' AND team_space_id IS NOT NULL)",
                        name="ck_worktrees_kind_scope"),
        CheckConstraint("(processed_at IS NOT NULL) = (state IN ('merged', 'discarded'))",
                        name="ck_worktrees_processed"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    kind: Mapped[str] = mapped_column(String(8))  # WorktreeKind
    name: Mapped[str] = mapped_column(String(255))
    summary: Mapped[str | None] = mapped_column(Text)
    creator_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id"))
    team_space_id: Mapped[str | None] = mapped_column(ID, ForeignKey("spaces.id"))
    visibility: Mapped[str] = mapped_column(String(8))  # WorktreeVisibility
    state: Mapped[str] = mapped_column(String(16))  # WorktreeState
    busy_operation_id: Mapped[str | None] = mapped_column(ID)
    last_merge_operation_id: Mapped[str | None] = mapped_column(ID)
    processed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    drafts_purged_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class WorktreeUnit(Base):
    """A unit in a worktree: a trunk unit's copy, or a worktree-local unit whose
    ``resource_id`` is reserved (no ``resources`` row until the merge activates it)."""

    __tablename__ = "worktree_units"
    __table_args__ = (
        UniqueConstraint("worktree_id", "resource_id", name="uq_worktree_units_resource"),
        Index("ix_worktree_units_resource", "resource_id"),
        CheckConstraint("ordinal >= 0", name="ck_worktree_units_ordinal"),
    )

    worktree_id: Mapped[str] = mapped_column(ID, ForeignKey("worktrees.id"), primary_key=True)
    unit_id: Mapped[str] = mapped_column(ID, primary_key=True)
    resource_id: Mapped[str] = mapped_column(ID)
    source: Mapped[str] = mapped_column(String(8))  # WorktreeUnitSource
    unit_type: Mapped[str] = mapped_column(String(8))
    ordinal: Mapped[int] = mapped_column(Integer)
    added_by: Mapped[str] = mapped_column(ID, ForeignKey("users.id"))
    added_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    merge_state: Mapped[str] = mapped_column(String(24), default="pending")  # MergeState
    merged_trunk_revision: Mapped[int | None] = mapped_column(Integer)
    conflict_count: Mapped[int] = mapped_column(Integer, default=0)
    last_merge_operation_id: Mapped[str | None] = mapped_column(ID)


class WorktreeNodeIntent(Base):
    """Where a worktree-local unit's node will be created when the worktree is merged
    (ids reserved at submission, never chosen by the client)."""

    __tablename__ = "worktree_node_intents"
    __table_args__ = (
        ForeignKeyConstraint(["worktree_id", "unit_id"],
                             ["worktree_units.worktree_id", "worktree_units.unit_id"],
                             ondelete="CASCADE"),
        Index("ix_worktree_intents_parent", "target_parent_id"),
        CheckConstraint("activated_at IS NULL OR discarded_at IS NULL",
                        name="ck_worktree_intents_outcome"),
    )

    worktree_id: Mapped[str] = mapped_column(ID, primary_key=True)
    unit_id: Mapped[str] = mapped_column(ID, primary_key=True)
    node_id: Mapped[str] = mapped_column(ID, unique=True)
    target_space_id: Mapped[str] = mapped_column(ID, ForeignKey("spaces.id"))
    # No foreign key: the parent may be purged once the intent is activated or discarded
    # (while the intent waits, the purge is refused); activation re-checks it.
    target_parent_id: Mapped[str | None] = mapped_column(ID)
    name: Mapped[str] = mapped_column(String(255))
    unit_type: Mapped[str] = mapped_column(String(8))
    created_by: Mapped[str] = mapped_column(ID, ForeignKey("users.id"))
    activated_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    discarded_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class WorktreeEvent(Base):
    """Something that happened to a worktree that its creator did not do and must be
    able to see afterwards: a permanent delete of trash took a unit out of it
    (``unit_purged``: its draft discarded) or removed the folder a unit new in it was to be
    created in (``target_purged``). Written in the purge's completion transaction."""

    __tablename__ = "worktree_events"
    __table_args__ = (Index("ix_worktree_events_worktree", "worktree_id", "id"),)

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    worktree_id: Mapped[str] = mapped_column(ID, ForeignKey("worktrees.id"))
    kind: Mapped[str] = mapped_column(String(32))  # WorktreeEventKind
    unit_id: Mapped[str] = mapped_column(ID)
    resource_id: Mapped[str | None] = mapped_column(ID)
    # The purge_trash operation, and whether the trash retention submitted it.
    operation_id: Mapped[str | None] = mapped_column(ID)
    reason: Mapped[str] = mapped_column(String(16))  # "purge" | "retention"
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


# --- unit assets ------------------------------------------------------------------------

class UnitAsset(Base):
    """A file embedded in a unit (an image in a doc): not a node, not a resource; it
    inherits the permission of its unit. Snapshots name it by ``id`` only; ``object_key``
    never leaves the server. ``worktree_id`` NULL = a trunk asset."""

    __tablename__ = "unit_assets"
    __table_args__ = (
        Index("ix_unit_assets_unit", "unit_id", "created_at", "id"),
        Index("ix_unit_assets_worktree", "worktree_id", "unit_id", "created_at", "id"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    unit_id: Mapped[str] = mapped_column(ID)
    worktree_id: Mapped[str | None] = mapped_column(ID)
    object_key: Mapped[str] = mapped_column(String(255), unique=True)
    filename: Mapped[str] = mapped_column(String(255))
    declared_media_type: Mapped[str] = mapped_column(String(255))
    detected_media_type: Mapped[str] = mapped_column(String(255))
    size: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))
    etag: Mapped[str] = mapped_column(String(128))  # the store's ETag of the object
    created_by: Mapped[str] = mapped_column(ID, ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    published_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class UnitAssetUpload(Base):
    """An asset upload in flight: reserves the asset id and object key and fixes the unit
    scope. ``receiving`` while the request streams the bytes, ``stored`` once they are
    complete; deleted when the asset is published or the upload abandoned."""

    __tablename__ = "unit_asset_uploads"
    __table_args__ = (
        Index("ix_asset_uploads_expiry", "state", "expires_at", "id"),
        CheckConstraint("state = 'receiving' OR (received_size = expected_size AND "
                        "sha256 IS NOT NULL AND etag IS NOT NULL)",
                        name="ck_asset_uploads_stored_complete"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    # No foreign key: the row is written in the submitting transaction before the
    # operation row, and outlives nothing (deleted when the operation finishes).
    operation_id: Mapped[str] = mapped_column(ID, unique=True)
    asset_id: Mapped[str] = mapped_column(ID, unique=True)
    object_key: Mapped[str] = mapped_column(String(255), unique=True)
    unit_id: Mapped[str] = mapped_column(ID)
    worktree_id: Mapped[str | None] = mapped_column(ID)
    actor_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id", ondelete="CASCADE"))
    filename: Mapped[str] = mapped_column(String(255))
    declared_media_type: Mapped[str] = mapped_column(String(255))
    detected_media_type: Mapped[str | None] = mapped_column(String(255))
    expected_size: Mapped[int] = mapped_column(BigInteger)
    received_size: Mapped[int | None] = mapped_column(BigInteger)
    sha256: Mapped[str | None] = mapped_column(String(64))
    etag: Mapped[str | None] = mapped_column(String(128))
    state: Mapped[str] = mapped_column(String(16))  # AssetUploadState
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)


class ObjectDeletionJob(Base):
    """An object to delete from the BlobStore, written in the transaction that orphans it.

    ``next_attempt_at`` in the future also serves as a *reservation*: an object being
    uploaded is announced here first, and the row is removed once something references it;
    if the upload dies, the object is deleted when the reservation comes due.
    """

    __tablename__ = "object_deletion_jobs"
    __table_args__ = (
        Index("ix_deletion_jobs_due", "next_attempt_at"),
        # ``wharf.deletion.service.failing_jobs``: failing ones (attempted at least once), oldest.
        Index("ix_deletion_jobs_failing", "created_at",
              postgresql_where=text("attempts > 0"), sqlite_where=text("attempts > 0")),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    object_key: Mapped[str] = mapped_column(String(255), unique=True)
    reason: Mapped[str] = mapped_column(String(64))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_error: Mapped[str | None] = mapped_column(Text)
    last_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


# --- the scheduler --------------------------------------------------------------------

class ScheduleTick(Base):
    """One tick of one schedule. The unique (schedule, tick_at) decides which scheduler
    enqueues it; the row then records the sweep's run."""

    __tablename__ = "schedule_ticks"
    __table_args__ = (
        UniqueConstraint("schedule", "tick_at", name="uq_schedule_tick"),
        Index("ix_schedule_ticks_status", "schedule", "status"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    schedule: Mapped[str] = mapped_column(String(64))
    tick_at: Mapped[datetime] = mapped_column(UTCDateTime)
    status: Mapped[str] = mapped_column(String(16))  # enqueued|running|done|failed|skipped
    scheduler_id: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    counts: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    error: Mapped[str | None] = mapped_column(Text)


# --- sharing, trash, recent -----------------------------------------------------------

class NodeGrant(Base):
    """A direct grant on a personal-space node; inherited by its descendants."""

    __tablename__ = "node_grants"

    node_id: Mapped[str] = mapped_column(ID, ForeignKey("nodes.id", ondelete="CASCADE"),
                                         primary_key=True)
    user_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id", ondelete="CASCADE"),
                                         primary_key=True, index=True)
    role: Mapped[str] = mapped_column(String(16))  # editor | viewer
    created_by: Mapped[str] = mapped_column(ID)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class LinkSharing(Base):
    """Link sharing on a node: anyone with the node's link gets ``role`` (anonymous: viewer)."""

    __tablename__ = "link_sharing"

    node_id: Mapped[str] = mapped_column(ID, ForeignKey("nodes.id", ondelete="CASCADE"),
                                         primary_key=True)
    role: Mapped[str] = mapped_column(String(16))  # editor | viewer
    created_by: Mapped[str] = mapped_column(ID)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class TrashBatch(Base):
    """Nodes trashed together: a root and its descendants that were not already trashed."""

    __tablename__ = "trash_batches"
    __table_args__ = (Index("ix_trash_batches_space", "space_id", "created_at"),)

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    space_id: Mapped[str] = mapped_column(ID, ForeignKey("spaces.id"))
    root_node_id: Mapped[str] = mapped_column(ID, ForeignKey("nodes.id"), unique=True)
    created_by: Mapped[str] = mapped_column(ID, ForeignKey("users.id"))
    node_count: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class RecentOpen(Base):
    """The last successful open of a resource by a user (names come from the node)."""

    __tablename__ = "recent_opens"
    __table_args__ = (Index("ix_recent_user_time", "user_id", "opened_at"),)

    user_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id", ondelete="CASCADE"),
                                         primary_key=True)
    resource_id: Mapped[str] = mapped_column(ID, ForeignKey("resources.id", ondelete="CASCADE"),
                                             primary_key=True)
    opened_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


# --- process heartbeats (issue 15) ----------------------------------------------------

class ProcessHeartbeat(Base):
    """One running (or lately stopped) Wharf process: its writer upserts the row every
    ``WHARF_HEARTBEAT_SECONDS`` (``wharf.observability.heartbeats``)."""

    __tablename__ = "process_heartbeats"
    __table_args__ = (Index("ix_process_heartbeats_seen", "last_seen_at"),)

    # host:pid:started-epoch
    process_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    role: Mapped[str] = mapped_column(String(16))  # api | worker | scheduler | serve
    hostname: Mapped[str] = mapped_column(String(200))
    pid: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime)
    last_seen_at: Mapped[datetime] = mapped_column(UTCDateTime)
    stopped_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    version: Mapped[str] = mapped_column(String(64))
    details: Mapped[dict[str, Any] | None] = mapped_column(JSON)


# --- wharf fsck's bytewise key order on PostgreSQL (migration 0012) ------------------------
#: ``wharf fsck`` reads each object-key column (and ``unit_resources.unit_id``) in keyset
#: pages ``ORDER BY key COLLATE "C"`` when the database's default collation is not
#: bytewise: these indexes serve those pages. PostgreSQL only: SQLite's default order
#: already is bytewise, and its unique indexes serve it.
#: (The collation rides in ``postgresql_ops``, rendered after the column, because
#: PostgreSQL reflects such an index as a plain column index, which is what Alembic's
#: comparison then sees on both sides.)
FSCK_KEY_ORDER_INDEXES: tuple[Index, ...] = tuple(
    Index(f"ix_{column.class_.__tablename__}_{column.key}_c", column,
          postgresql_ops={column.key: 'COLLATE "C"'}).ddl_if(dialect="postgresql")
    for column in (BlobResource.object_key, BlobUploadSession.object_key,
                   UnitAsset.object_key, UnitAssetUpload.object_key,
                   ObjectDeletionJob.object_key, UnitResource.unit_id))


# --- webhooks (wharf.webhooks) ----------------------------------------------------------

class Webhook(Base):
    """An endpoint a user registered to be told when their operations finish."""

    __tablename__ = "webhooks"
    __table_args__ = (Index("ix_webhooks_user", "user_id", "enabled"),)

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id", ondelete="CASCADE"))
    url: Mapped[str] = mapped_column(String(2048))
    events: Mapped[list[str]] = mapped_column(JSON)
    secret: Mapped[str] = mapped_column(String(128))
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    disabled_reason: Mapped[str | None] = mapped_column(String(500))
    disabled_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    consecutive_failures: Mapped[int] = mapped_column(Integer, default=0)
    # The first failed attempt since the last success (None: the last attempt succeeded).
    failing_since: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class WebhookDelivery(Base):
    """One event for one endpoint: written with the change it announces, sent by workers
    until it succeeds or gives up. Its id is the ``webhook-id`` header (same on retries)."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        Index("ix_webhook_deliveries_webhook", "webhook_id", "id"),
        Index("ix_webhook_deliveries_due", "next_attempt_at"),
        Index("ix_webhook_deliveries_created", "created_at"),  # retention
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    webhook_id: Mapped[str] = mapped_column(ID, ForeignKey("webhooks.id",
                                                           ondelete="CASCADE"))
    event_type: Mapped[str] = mapped_column(String(64))
    subject_id: Mapped[str] = mapped_column(ID)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_status_code: Mapped[int | None] = mapped_column(Integer)
    last_error: Mapped[str | None] = mapped_column(String(500))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # The token of the send in progress: only the worker holding it records the attempt.
    claim: Mapped[str | None] = mapped_column(String(32))
    # ``data`` of the body, as the operation was when it finished (written by ``announce``).
    payload: Mapped[dict[str, Any] | None] = mapped_column(JSON)


# --- team-space issues (wharf.issues) ---------------------------------------------------

class IssueCounter(Base):
    """The last ``#N`` handed out in a space: creating an issue increments it in the same
    transaction (the row lock serialises creators of one space; a rollback takes the number
    back, so numbers have no gaps)."""

    __tablename__ = "issue_counters"

    space_id: Mapped[str] = mapped_column(ID, ForeignKey("spaces.id", ondelete="CASCADE"),
                                          primary_key=True)
    last_number: Mapped[int] = mapped_column(Integer, default=0)


class Issue(Base):
    """An issue of a team space, numbered ``#N`` per space."""

    __tablename__ = "issues"
    __table_args__ = (
        UniqueConstraint("space_id", "number", name="uq_issues_space_number"),
        Index("ix_issues_space_state", "space_id", "state", "number"),
        CheckConstraint("(state = 'open' AND state_reason IS NULL) OR "
                        "(state = 'closed' AND state_reason IS NOT NULL AND "
                        "state_reason IN ('completed', 'not_planned'))",
                        name="ck_issues_state_reason"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    space_id: Mapped[str] = mapped_column(ID, ForeignKey("spaces.id", ondelete="CASCADE"))
    number: Mapped[int] = mapped_column(Integer)
    title: Mapped[str] = mapped_column(String(256))
    # The title lower-cased (Python's str.lower, the same on both databases): the text search.
    title_key: Mapped[str] = mapped_column(String(1024))
    body: Mapped[str] = mapped_column(Text)
    state: Mapped[str] = mapped_column(String(16))  # open | closed
    state_reason: Mapped[str | None] = mapped_column(String(16))  # completed | not_planned
    author_user_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id"), index=True)
    closed_by_user_id: Mapped[str | None] = mapped_column(ID, ForeignKey("users.id"))
    closed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # The number of its comments, kept in the transaction that adds or deletes one (the
    # issue row is locked): listings read it instead of counting.
    comment_count: Mapped[int] = mapped_column(Integer, default=0)


class IssueComment(Base):
    __tablename__ = "issue_comments"
    __table_args__ = (Index("ix_issue_comments_timeline", "issue_id", "created_at", "id"),)

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    issue_id: Mapped[str] = mapped_column(ID, ForeignKey("issues.id", ondelete="CASCADE"))
    author_user_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id"))
    body: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class IssueEvent(Base):
    """One change of an issue; ``payload`` snapshots the names involved (label name and
    colour, username, node name) so the history stays readable after they change."""

    __tablename__ = "issue_events"
    __table_args__ = (Index("ix_issue_events_timeline", "issue_id", "created_at", "id"),)

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    issue_id: Mapped[str] = mapped_column(ID, ForeignKey("issues.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(32))
    # None: the system (a node purged by retention or by an operation).
    actor_user_id: Mapped[str | None] = mapped_column(ID, ForeignKey("users.id"))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class IssueLabel(Base):
    __tablename__ = "issue_labels"
    __table_args__ = (UniqueConstraint("space_id", "name_key", name="uq_issue_labels_name"),)

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    space_id: Mapped[str] = mapped_column(ID, ForeignKey("spaces.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(50))
    name_key: Mapped[str] = mapped_column(String(200))  # lower-cased: unique per space
    color: Mapped[str] = mapped_column(String(16))  # a LabelColor key
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class IssueLabelLink(Base):
    __tablename__ = "issue_label_links"

    issue_id: Mapped[str] = mapped_column(ID, ForeignKey("issues.id", ondelete="CASCADE"),
                                          primary_key=True)
    label_id: Mapped[str] = mapped_column(ID, ForeignKey("issue_labels.id", ondelete="CASCADE"),
                                          primary_key=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class IssueAssignee(Base):
    __tablename__ = "issue_assignees"

    issue_id: Mapped[str] = mapped_column(ID, ForeignKey("issues.id", ondelete="CASCADE"),
                                          primary_key=True)
    user_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id", ondelete="CASCADE"),
                                         primary_key=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class IssueNodeRef(Base):
    """A node an issue references (same space). Deleted with the node's purge, which writes
    a ``node_unreferenced`` event (``wharf.issues.service.unreference_purged``)."""

    __tablename__ = "issue_node_refs"

    issue_id: Mapped[str] = mapped_column(ID, ForeignKey("issues.id", ondelete="CASCADE"),
                                          primary_key=True)
    node_id: Mapped[str] = mapped_column(ID, ForeignKey("nodes.id", ondelete="CASCADE"),
                                         primary_key=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # The node's name when the reference was made: the node_unreferenced events carry it.
    name: Mapped[str] = mapped_column(String(255))


# --- the deletion ledger (wharf.accounts.service, issue 18) --------------------------------------

class DeletionRecord(Base):
    """A permanent deletion (an account, or an object key), appended in the transaction
    that decides it and shipped to the blob store's ``ledger/`` prefix by a sweep; a
    restored backup replays them (``wharf restore-check``)."""

    __tablename__ = "deletion_records"
    __table_args__ = (
        Index("ix_deletion_records_shipping", "shipped_at", "recorded_at", "id"),
        Index("ix_deletion_records_recorded", "recorded_at"),
        Index("ix_deletion_records_username", "username_digest", "recorded_at"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    kind: Mapped[str] = mapped_column(String(16))  # account | object
    subject: Mapped[str] = mapped_column(String(255))  # a user id, or an object key
    # SHA-256 of the lower-cased username (accounts): holds the name for a while.
    username_digest: Mapped[str | None] = mapped_column(String(64))
    reason: Mapped[str] = mapped_column(String(64))
    recorded_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    shipped_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    ledger_key: Mapped[str | None] = mapped_column(String(255))
