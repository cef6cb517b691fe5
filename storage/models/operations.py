"""The operations engine: operations, their attempts, and the outbox."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    ColumnElement,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
    and_,
    or_,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from storage.clock import utcnow
from storage.enums import OperationStatus
from storage.ids import new_id
from storage.models.base import ID, TRACE_CONTEXT_LENGTH, Base
from storage.types import UTCDateTime


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
        # The batched claim: oldest due first (``claiming.claim_order``), over the rows
        # that can still be due only, so completed history does not slow it down.
        Index("ix_operations_claim", "created_at", "id",
              postgresql_where=text("status IN ('pending', 'running')"),
              sqlite_where=text("status IN ('pending', 'running')")),
        # The dashboard's "most retried" open operations: the index's last entries.
        Index("ix_operations_retried", "attempts",
              postgresql_where=text("status IN ('pending', 'running')"),
              sqlite_where=text("status IN ('pending', 'running')")),
        # Fair claiming (``claiming.claim_statement``): the distinct actors with due
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


#: The WHERE of the partial index ``ix_operations_claim``, verbatim.
CLAIMABLE = text("operations.status IN ('pending', 'running')")


def due(now: datetime | ColumnElement[Any], *,
        index_hint: bool = False) -> ColumnElement[bool]:
    """Pending and due, or running with an expired lease; attempts left (what a worker may
    claim: ``wharf.operations.claiming``, and the ``wharf_operations_due`` gauge).

    PostgreSQL proves from this OR that the partial index ``ix_operations_claim`` applies
    (an explicit ``status IN`` beside it would count the status selectivity twice and turn
    the plan into a sort of every pending row). SQLite only uses a partial index whose
    WHERE appears word for word in the query: ``index_hint`` adds it."""
    c = Operation.__table__.c
    cond = and_(or_(and_(c.status == OperationStatus.PENDING,
                         or_(c.next_attempt_at.is_(None), c.next_attempt_at <= now)),
                    and_(c.status == OperationStatus.RUNNING, c.lease_expires_at < now)),
                c.attempts < c.max_attempts)
    return and_(CLAIMABLE, cond) if index_hint else cond


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
