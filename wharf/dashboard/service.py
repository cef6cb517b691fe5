"""The operator dashboard's numbers: one function per panel, each a bounded, indexed query.

Rules (what every panel may cost, whatever the size of the tables):

- Open operations (``pending``/``running``) are counted through their indexes
  (``ix_operations_claim``, ``ix_operations_due``, ``ix_operations_lease``), each count
  over at most :data:`OPEN_SCAN` rows: a bigger backlog (an outage: exactly when operators
  look) shows as "at least" (``open_capped``, ``count_cap``), never a slow page. The
  oldest due is an index's first entry, exact. The most retried open operations are the
  last entries of ``ix_operations_retried`` (partial: open rows only).
- Finished operations are read only over a recent window through ``ix_operations_completed``
  (``completed_at``), newest first, and at most ``*_SCAN`` rows of it: counts by status and
  kind over :data:`FINISHED_WINDOW` (24 h), throughput/failures/slowest/most retried over
  :data:`RECENT_WINDOW` (1 h). When the cap is reached the panel says so (``capped``) and
  its numbers are those of the newest ``*_SCAN`` rows — a lower bound, never a slow page.
- Lists are short (:data:`TOP`), attempt histories the last :data:`ATTEMPTS_SHOWN`
  attempts of each listed operation (``uq_attempt_number``, one query), texts cut to
  :data:`TEXT_MAX` characters (errors are user-influenced text: the page escapes them).
- Deletion jobs: ``wharf.deletion.service.failing_jobs`` (failing for more than a day), at most
  :data:`TOP`, on ``ix_deletion_jobs_failing``. Sweeps: ``Scheduler.status()`` plus
  skipped ticks over the last 24 h (``ix_schedule_ticks_status``, at most
  :data:`SKIPPED_SCAN` counted). Processes:
  ``wharf.observability.heartbeats.recent`` over :data:`PROCESS_WINDOW`.

A process computes at most one snapshot per :data:`CACHE_SECONDS` (:class:`SnapshotCache`)
for all its requests.

The result types (``wharf.dashboard.views``) are the wire shape of ``GET /api/ops/dashboard``.
"""
from __future__ import annotations

import contextlib
import heapq
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Select, Subquery, func, select, text
from sqlalchemy.orm import Session

from storage.db import Database
from storage.enums import OperationStatus, TickStatus, UserStatus
from storage.models import Operation, OperationAttempt, ScheduleTick, User
from wharf.dashboard.views import (
    AttemptView,
    Dashboard,
    DeletionJobView,
    DisabledUserView,
    KindCount,
    Minute,
    OperationView,
    ProcessView,
    QueuePanel,
    StatusPanel,
    SweepView,
    ThroughputPanel,
)
from wharf.deletion import service as deletion
from wharf.infra.clock import iso, utcnow
from wharf.infra.settings import Settings
from wharf.observability import heartbeats
from wharf.operations.claiming import CLAIMABLE
from wharf.operations.service import can_retry
from wharf.retention.schedule import Scheduler

#: Finished operations are counted by status and kind over this window.
FINISHED_WINDOW = timedelta(hours=24)
#: Throughput, failure rate, slowest and most retried: finished over this window.
RECENT_WINDOW = timedelta(hours=1)
#: At most this many finished rows are read for the 24 h counts / the last hour's panels.
FINISHED_SCAN = 100_000
RECENT_SCAN = 20_000
#: Open operations (pending/running) are counted over at most this many rows per count:
#: a larger backlog shows as "at least OPEN_SCAN" (``capped``), never a slow page.
OPEN_SCAN = 50_000
#: A snapshot is reused for this long by every request of the process (many open tabs,
#: each refreshing every REFRESH_SECONDS, cost one set of queries).
CACHE_SECONDS = 2.0
#: Rows per list (slowest, most retried, failures, deletion jobs).
TOP = 10
#: Attempts shown per listed operation (the last ones).
ATTEMPTS_SHOWN = 10
#: Error messages and worker ids are cut to this many characters.
TEXT_MAX = 500
#: Deletion jobs failing for longer than this are listed.
DELETION_FAILING_FOR = timedelta(days=1)
#: Skipped sweep ticks are counted over this window, at most SKIPPED_SCAN per sweep.
SKIPPED_WINDOW = timedelta(hours=24)
SKIPPED_SCAN = 10_000
#: Processes whose last heartbeat is at most this old are listed.
PROCESS_WINDOW = timedelta(minutes=5)
PROCESSES_SHOWN = 100
#: How often the page's script refreshes (seconds).
REFRESH_SECONDS = 5
# Disabled accounts: the first TOP by username, and how many up to a cap.
DISABLED_CAP = 1_000

def _text(value: Any) -> str | None:
    return None if value is None else str(value)[:TEXT_MAX]


# --- panels -----------------------------------------------------------------------------

def statuses(s: Session, now: datetime) -> StatusPanel:
    """Open operations by kind (the oldest :data:`OPEN_SCAN`, exactly); finished over
    :data:`FINISHED_WINDOW` (capped)."""
    open_scan = (select(Operation.kind, Operation.status)  # ix_operations_claim, oldest
                 .where(CLAIMABLE)
                 .order_by(Operation.created_at, Operation.id).limit(OPEN_SCAN).subquery())
    open_rows = s.execute(select(open_scan.c.kind, open_scan.c.status, func.count())
                          .group_by(open_scan.c.kind, open_scan.c.status)).all()
    recent = (select(Operation.kind, Operation.status)
              .where(Operation.completed_at >= now - FINISHED_WINDOW)
              .order_by(Operation.completed_at.desc()).limit(FINISHED_SCAN).subquery())
    finished_rows = s.execute(select(recent.c.kind, recent.c.status, func.count())
                              .group_by(recent.c.kind, recent.c.status)).all()
    return StatusPanel(
        open=sorted((KindCount(k, st, n) for k, st, n in open_rows),
                    key=lambda c: (c.status, c.kind)),
        finished=sorted((KindCount(k, st, n) for k, st, n in finished_rows),
                        key=lambda c: (c.status, c.kind)),
        finished_window_seconds=int(FINISHED_WINDOW.total_seconds()),
        finished_capped=sum(n for *_, n in finished_rows) >= FINISHED_SCAN,
        open_capped=sum(n for *_, n in open_rows) >= OPEN_SCAN, open_cap=OPEN_SCAN)


def window_start(now: datetime) -> datetime:
    """The last hour's panels cover whole minutes: from the start of the minute 59 minutes
    before the current one, to now (the current minute, partial, last)."""
    minutes = int(RECENT_WINDOW.total_seconds() // 60)
    return now.replace(second=0, microsecond=0) - timedelta(minutes=minutes - 1)


def recent_finished(since: datetime) -> Subquery:
    """The operations finished since ``since``, newest first, at most :data:`RECENT_SCAN`
    (``ix_operations_completed``): what throughput, slowest, most retried and failures
    are computed from, in SQL (only their few results come back)."""
    return (select(Operation.id, Operation.status, Operation.created_at,
                   Operation.completed_at, Operation.attempts)
            .where(Operation.completed_at >= since)
            .order_by(Operation.completed_at.desc()).limit(RECENT_SCAN).subquery())


def _postgres(s: Session) -> bool:
    return s.get_bind().dialect.name == "postgresql"


def _epoch(s: Session, column: Any) -> ColumnElement[Any]:
    """Seconds since the Unix epoch of a ``UTCDateTime`` column, in SQL."""
    if _postgres(s):
        return func.extract("epoch", column)
    return (func.julianday(column) - 2440587.5) * 86400.0  # SQLite: UTC text


def _minute_index(s: Session, column: Any) -> ColumnElement[Any]:
    """The minute of ``column``, exactly (no float rounding: an
    operation finished at ``hh:mm:00.000000`` is in minute ``hh:mm``). PostgreSQL: the
    truncated minute (``date_trunc`` on UTC); SQLite stores ``YYYY-MM-DD HH:MM:SS.ffffff``
    text (``storage.types.UTCDateTime``): its first 16 characters are the minute."""
    if _postgres(s):
        return func.date_trunc("minute", func.timezone("UTC", column))
    return func.substr(column, 1, 16)


def throughput(s: Session, now: datetime) -> ThroughputPanel:
    """Per minute over the last hour (the current, partial minute last)."""
    first = window_start(now)
    minutes = int(RECENT_WINDOW.total_seconds() // 60)
    recent = recent_finished(first)
    minute = _minute_index(s, recent.c.completed_at)
    done: Counter[tuple[int, str]] = Counter()
    for m, status, n in s.execute(select(minute, recent.c.status, func.count())
                                  .group_by(minute, recent.c.status)):
        at = _aware(m)
        assert at is not None
        i = int((at - first).total_seconds() // 60)
        done[(min(max(i, 0), minutes - 1), status)] += n
    series = [Minute(start=iso(first + timedelta(minutes=i)) or "",
                     completed=done[(i, OperationStatus.COMPLETED)],
                     failed=done[(i, OperationStatus.FAILED)])
              for i in range(minutes)]
    completed = sum(m.completed for m in series)
    failed = sum(m.failed for m in series)
    return ThroughputPanel(
        window_seconds=int(RECENT_WINDOW.total_seconds()), minutes=series,
        completed=completed, failed=failed,
        failure_rate=failed / (completed + failed) if completed + failed else None,
        capped=sum(done.values()) >= RECENT_SCAN)


def _capped_count(s: Session, *where: ColumnElement[bool]) -> int:
    """How many operations match, counting at most :data:`OPEN_SCAN` of them."""
    rows = select(Operation.id).where(*where).limit(OPEN_SCAN).subquery()
    return int(s.scalar(select(func.count()).select_from(rows)) or 0)


def _first(s: Session, column: Any, *where: ColumnElement[bool]) -> datetime | None:
    """The smallest ``column`` among the matching operations (an index's first entry)."""
    return _aware(s.scalar(select(column).where(*where).order_by(column).limit(1)))


def queue(s: Session, now: datetime) -> QueuePanel:
    """Due operations and the oldest one's lag (the same ``due`` as the executor's claim,
    over the open rows only). Every count is an index range (``ix_operations_due``,
    ``ix_operations_lease``) cut at :data:`OPEN_SCAN`; each oldest is one index entry."""
    live = Operation.attempts < Operation.max_attempts
    pending = Operation.status == OperationStatus.PENDING
    running = Operation.status == OperationStatus.RUNNING
    now_due = (pending, Operation.next_attempt_at.is_(None), live)
    retry_due = (pending, Operation.next_attempt_at <= now, live)
    expired = (running, Operation.lease_expires_at < now, live)
    due_count = min(OPEN_SCAN, _capped_count(s, *now_due) + _capped_count(s, *retry_due))
    expired_count = _capped_count(s, *expired)
    starts = [t for t in (_first(s, Operation.created_at, *now_due),
                          _first(s, Operation.next_attempt_at, *retry_due),
                          _first(s, Operation.lease_expires_at, *expired)) if t is not None]
    oldest_due = min(starts) if starts else None
    return QueuePanel(due=min(OPEN_SCAN, due_count + expired_count),
                      oldest_due_at=iso(oldest_due),
                      lag_seconds=max(0.0, (now - oldest_due).total_seconds()) if oldest_due
                      else 0.0, running=_capped_count(s, running),
                      expired_leases=expired_count, count_cap=OPEN_SCAN)


def _aware(value: Any) -> datetime | None:
    """``min()`` over a ``UTCDateTime`` column comes back raw (SQLite: text, naive)."""
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    assert isinstance(value, datetime)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def slowest(s: Session, now: datetime) -> list[str]:
    """Ids of the :data:`TOP` longest (submitted → finished) of the last hour."""
    recent = recent_finished(window_start(now))
    took = _epoch(s, recent.c.completed_at) - _epoch(s, recent.c.created_at)
    return list(s.scalars(select(recent.c.id).order_by(took.desc()).limit(TOP)))


def most_retried(s: Session, now: datetime) -> list[str]:
    """Ids of the :data:`TOP` operations with the most attempts (more than one): open ones
    (partial index ``ix_operations_retried``) and those finished in the last hour."""
    recent = recent_finished(window_start(now))
    # ix_operations_retried: the index's last TOP entries (SQLite, without statistics,
    # would rather search ix_operations_lease/_due by status and sort every open row)
    hint = "" if _postgres(s) else " INDEXED BY ix_operations_retried"
    open_rows = s.execute(text(
        f"SELECT id, attempts FROM operations{hint} WHERE {CLAIMABLE} AND attempts > 1 "
        "ORDER BY attempts DESC LIMIT :top"), {"top": TOP}).all()
    finished = s.execute(select(recent.c.id, recent.c.attempts).where(recent.c.attempts > 1)
                         .order_by(recent.c.attempts.desc()).limit(TOP)).all()
    top = heapq.nlargest(TOP, [(i, a) for i, a in [*open_rows, *finished]],
                         key=lambda r: r[1])
    return [i for i, _ in top]


def failures(s: Session, now: datetime) -> list[str]:
    """Ids of the :data:`TOP` newest failed operations of the last hour."""
    recent = recent_finished(window_start(now))
    return list(s.scalars(select(recent.c.id).where(recent.c.status == OperationStatus.FAILED)
                          .order_by(recent.c.completed_at.desc()).limit(TOP)))


def operations(s: Session, ids: Sequence[str]) -> dict[str, OperationView]:
    """The listed operations (at most a few times :data:`TOP`) with their last
    :data:`ATTEMPTS_SHOWN` attempts and their actor's username."""
    if not ids:
        return {}
    rows = s.execute(select(Operation, User.username).outerjoin(
        User, User.id == Operation.actor_id).where(Operation.id.in_(ids))).all()
    # one query: each listed operation's last ATTEMPTS_SHOWN attempts (window function,
    # SQLite >= 3.25 and PostgreSQL), on uq_attempt_number
    ranked = (select(OperationAttempt.id,
                     func.row_number().over(partition_by=OperationAttempt.operation_id,
                                            order_by=OperationAttempt.number.desc())
                     .label("rank"))
              .where(OperationAttempt.operation_id.in_(ids)).subquery())
    history: dict[str, list[AttemptView]] = {op_id: [] for op_id in ids}
    for a in s.scalars(select(OperationAttempt)
                       .join(ranked, ranked.c.id == OperationAttempt.id)
                       .where(ranked.c.rank <= ATTEMPTS_SHOWN)
                       .order_by(OperationAttempt.operation_id, OperationAttempt.number)):
        history[a.operation_id].append(AttemptView(
            number=a.number, worker_id=_text(a.worker_id) or "",
            started_at=iso(a.started_at) or "", finished_at=iso(a.finished_at),
            outcome=a.outcome, error_code=_text((a.error or {}).get("code")),
            error_message=_text((a.error or {}).get("message"))))
    out: dict[str, OperationView] = {}
    for op, username in rows:
        error = op.error or {}
        end = op.completed_at
        out[op.id] = OperationView(
            id=op.id, kind=op.kind, status=op.status, actor=username, attempts=op.attempts,
            max_attempts=op.max_attempts, created_at=iso(op.created_at) or "",
            completed_at=iso(end),
            duration_seconds=round((end - op.created_at).total_seconds(), 3) if end else None,
            error_code=_text(error.get("code")), error_message=_text(error.get("message")),
            can_retry=can_retry(op.status, op.kind, op.payload),
            can_cancel=op.status == OperationStatus.PENDING, history=history[op.id])
    return out


def deletion_jobs(db: Database) -> list[DeletionJobView]:
    return [DeletionJobView(object_key=j.object_key, reason=j.reason, attempts=j.attempts,
                            created_at=iso(j.created_at) or "",
                            next_attempt_at=iso(j.next_attempt_at) or "",
                            last_error=_text(j.last_error))
            for j in deletion.failing_jobs(db, DELETION_FAILING_FOR, limit=TOP)]


def sweeps(db: Database, settings: Settings, now: datetime) -> list[SweepView]:
    """Every schedule's last and next run (``wharf sweeps``) and its skipped ticks."""
    out = []
    rows = Scheduler(db, settings, "dashboard").status()
    with db.read() as s:
        for r in rows:
            skipped = (select(ScheduleTick.tick_at)
                       .where(ScheduleTick.schedule == r["schedule"],
                              ScheduleTick.status == TickStatus.SKIPPED,
                              ScheduleTick.tick_at >= now - SKIPPED_WINDOW)
                       .limit(SKIPPED_SCAN).subquery())
            count, last = s.execute(select(func.count(), func.max(skipped.c.tick_at))).one()
            out.append(SweepView(schedule=r["schedule"], spec=r["spec"],
                                 last_tick=iso(r["last_tick"]), last_status=r["last_status"],
                                 next_tick=iso(r["next_tick"]), skipped=count or 0,
                                 last_skipped_at=iso(_aware(last))))
    return out


def processes(db: Database, settings: Settings, now: datetime) -> list[ProcessView]:
    return [ProcessView(process_id=b.process_id, role=b.role, hostname=b.hostname, pid=b.pid,
                        version=b.version, started_at=iso(b.started_at) or "",
                        last_seen_at=iso(b.last_seen_at) or "", stopped_at=iso(b.stopped_at),
                        state=b.state(settings.heartbeat_seconds, now),
                        age_seconds=round(max(0.0, (now - b.last_seen_at).total_seconds()), 1),
                        details=b.details)
            for b in heartbeats.recent(db, PROCESS_WINDOW, limit=PROCESSES_SHOWN)]


def _count_upto(s: Session, rows: Select[Any]) -> int:
    return int(s.scalar(select(func.count()).select_from(
        rows.limit(DISABLED_CAP).subquery())) or 0)


def disabled_users(s: Session) -> tuple[list[DisabledUserView], int]:
    """The first disabled accounts by username with their waiting operations, and how
    many accounts are disabled (up to :data:`DISABLED_CAP`)."""
    disabled = User.status == UserStatus.DISABLED
    total = _count_upto(s, select(User.id).where(disabled))
    users = s.scalars(select(User).where(disabled).order_by(User.username_key).limit(TOP))
    out = []
    for u in users:
        pending = _count_upto(s, select(Operation.id).where(
            Operation.actor_id == u.id, Operation.status == OperationStatus.PENDING))
        out.append(DisabledUserView(id=u.id, username=u.username,
                                    created_at=iso(u.created_at) or "",
                                    pending_operations=pending))
    return out, total


def _pick(views: dict[str, OperationView], ids: Iterable[str]) -> list[OperationView]:
    return [views[i] for i in ids if i in views]


def snapshot(db: Database, settings: Settings, *,
             timer: Callable[[str], Any] | None = None) -> Dashboard:
    """Every panel as of now. ``timer(name)``, if given, is a context manager wrapped
    around each panel (the benchmark's per-panel figures)."""
    step = timer or (lambda _name: contextlib.nullcontext())
    now = utcnow()
    with db.read() as s:
        with step("statuses"):
            status_panel = statuses(s, now)
        with step("throughput"):
            rate = throughput(s, now)
        with step("queue"):
            lag = queue(s, now)
        with step("slowest"):
            slow = slowest(s, now)
        with step("most_retried"):
            retried = most_retried(s, now)
        with step("failures"):
            failed = failures(s, now)
        with step("operations"):
            views = operations(s, list(dict.fromkeys([*slow, *retried, *failed])))
        with step("disabled_users"):
            disabled, disabled_total = disabled_users(s)
    with step("deletion_jobs"):
        jobs = deletion_jobs(db)
    with step("sweeps"):
        sweep_rows = sweeps(db, settings, now)
    with step("processes"):
        procs = processes(db, settings, now)
    return Dashboard(
        generated_at=iso(now) or "", refresh_seconds=REFRESH_SECONDS, statuses=status_panel,
        throughput=rate, queue=lag, slowest=_pick(views, slow),
        most_retried=_pick(views, retried), failures=_pick(views, failed),
        deletion_jobs=jobs, deletion_failing_for_seconds=int(
            DELETION_FAILING_FOR.total_seconds()),
        sweeps=sweep_rows, processes=procs,
        process_window_seconds=int(PROCESS_WINDOW.total_seconds()),
        disabled_users=disabled, disabled_total=disabled_total, disabled_cap=DISABLED_CAP)


class SnapshotCache:
    """One :func:`snapshot` per :data:`CACHE_SECONDS` for the whole process: every open
    tab refreshes every :data:`REFRESH_SECONDS`, and all of them within the window share
    one set of queries (concurrent requests wait for the one computing it)."""

    def __init__(self, db: Database, settings: Settings, *,
                 max_age: float = CACHE_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.db, self.settings, self.max_age, self.clock = db, settings, max_age, clock
        self._lock = threading.Lock()
        self._value: Dashboard | None = None
        self._at = 0.0

    def get(self) -> Dashboard:
        with self._lock:
            if self._value is None or self.clock() - self._at >= self.max_age:
                self._value = snapshot(self.db, self.settings)
                self._at = self.clock()
            return self._value
