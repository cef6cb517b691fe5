"""The operator dashboard's result types: the wire shape of ``GET /api/ops/dashboard``
(msgspec Structs), so the page, the JSON and the OpenAPI document cannot drift apart. The
panels that fill them are ``wharf.dashboard.service``'s."""
from __future__ import annotations

from typing import Annotated, Any

import msgspec

Timestamp = Annotated[str, msgspec.Meta(extra_json_schema={"format": "date-time"})]


class KindCount(msgspec.Struct):
    """How many operations of ``kind`` are in ``status``."""

    kind: str
    status: str
    count: int


class StatusPanel(msgspec.Struct):
    """Operations by status and kind: open ones exactly, finished ones over the window."""

    open: list[KindCount]
    finished: list[KindCount]
    finished_window_seconds: int
    finished_capped: Annotated[bool, msgspec.Meta(
        description="More finished rows than the scan cap: `finished` counts the newest.")]
    open_capped: Annotated[bool, msgspec.Meta(
        description="More open rows than `open_cap`: `open` counts the oldest `open_cap`.")]
    open_cap: int


class Minute(msgspec.Struct):
    """Operations finished in one minute (``start``: its first instant, UTC)."""

    start: Timestamp
    completed: int
    failed: int


class ThroughputPanel(msgspec.Struct):
    """Finished per minute over the last hour (oldest minute first) and the failure rate."""

    window_seconds: int
    minutes: list[Minute]
    completed: int
    failed: int
    failure_rate: Annotated[float | None, msgspec.Meta(
        description="failed / (completed + failed) over the window; null when none.")]
    capped: bool


class QueuePanel(msgspec.Struct):
    """Queue lag: operations due now (pending and due, or running with an expired lease)
    and the age of the oldest of them (since it became due)."""

    due: int
    oldest_due_at: Timestamp | None
    lag_seconds: float
    running: int
    expired_leases: int
    count_cap: Annotated[int, msgspec.Meta(
        description="Each count stops here: a count equal to it means at least that many.")]


class AttemptView(msgspec.Struct):
    number: int
    worker_id: str
    started_at: Timestamp
    finished_at: Timestamp | None
    outcome: str | None
    error_code: str | None
    error_message: str | None


class OperationView(msgspec.Struct):
    """A listed operation with its last attempts; ``can_retry``/``can_cancel`` say which
    of ``POST /api/operations/{id}/retry|cancel`` would be accepted (``can_retry``: the
    retry endpoint's own rule, ``wharf.operations.service.can_retry``)."""

    id: str
    kind: str
    status: str
    actor: str | None
    attempts: int
    max_attempts: int
    created_at: Timestamp
    completed_at: Timestamp | None
    duration_seconds: float | None
    error_code: str | None
    error_message: str | None
    can_retry: bool
    can_cancel: bool
    history: list[AttemptView]


class DeletionJobView(msgspec.Struct):
    object_key: str
    reason: str
    attempts: int
    created_at: Timestamp
    next_attempt_at: Timestamp
    last_error: str | None


class SweepView(msgspec.Struct):
    schedule: str
    spec: str
    last_tick: Timestamp | None
    last_status: str | None
    next_tick: Timestamp | None
    skipped: Annotated[int, msgspec.Meta(description="Skipped ticks over the last 24 h.")]
    last_skipped_at: Timestamp | None


class ProcessView(msgspec.Struct):
    """A process seen within the window (``wharf.observability.heartbeats``); ``state``:
    ``running``, ``stopped`` (a clean stop, ``stopped_at``) or ``silent`` (missed its last
    beats)."""

    process_id: str
    role: str
    hostname: str
    pid: int
    version: str
    started_at: Timestamp
    last_seen_at: Timestamp
    stopped_at: Timestamp | None
    state: str
    age_seconds: Annotated[float, msgspec.Meta(description="Since its last heartbeat.")]
    details: dict[str, Any]


class DisabledUserView(msgspec.Struct):
    """A disabled account (``wharf user disable NAME``): refused on every request, its
    operations waiting (``pending_operations``, counted up to the panel's cap)."""

    id: str
    username: str
    created_at: Timestamp
    pending_operations: int


class Dashboard(msgspec.Struct):
    """Everything the operator dashboard shows, as of ``generated_at``."""

    generated_at: Timestamp
    refresh_seconds: int
    statuses: StatusPanel
    throughput: ThroughputPanel
    queue: QueuePanel
    slowest: list[OperationView]
    most_retried: list[OperationView]
    failures: list[OperationView]
    deletion_jobs: list[DeletionJobView]
    deletion_failing_for_seconds: int
    sweeps: list[SweepView]
    processes: list[ProcessView]
    process_window_seconds: int
    disabled_users: list[DisabledUserView]
    disabled_total: Annotated[int, msgspec.Meta(
        description="Disabled accounts, counted up to `disabled_cap`; `disabled_users` "
                    "lists the first ones by username.")]
    disabled_cap: int
