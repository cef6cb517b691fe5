"""Schedules and the scheduler's tick decision.

A schedule is a period or a cron expression. A period of N seconds (every setting such as
``WHARF_SWEEP_INTERVAL``) ticks at the multiples of N seconds since the Unix epoch (UTC):
45 fires every 45 s, 90 every 90 s, 172800 every two days at 00:00 UTC — fixed instants
every scheduler computes alike. A cron expression (croniter, seconds as an optional 6th
field) is used only for a schedule written as cron. Any number of
schedulers may run: for every schedule the latest due tick is inserted into
``schedule_ticks`` with INSERT ... ON CONFLICT DO NOTHING on (schedule, tick_at); only the
scheduler whose insert took effect enqueues the sweep (an outbox row in the same
transaction). Only the latest due tick is considered, so ticks missed during downtime run
once. A tick whose previous run is still going is recorded as ``skipped`` and counted.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from croniter import croniter
from sqlalchemy import and_, or_, select
from sqlalchemy.dialects.postgresql import Insert as PgInsert
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import Insert as SqliteInsert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from storage.db import Database, send_after_commit
from storage.enums import TickStatus
from storage.models import OutboxMessage, ScheduleTick
from wharf.infra.clock import utcnow
from wharf.infra.ids import new_id
from wharf.infra.settings import Settings
from wharf.observability import metrics

log = logging.getLogger("wharf.scheduler")

QUEUE = "maintenance"


def actor_for(schedule: str) -> str:
    return f"sweep_{schedule}"


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Schedule:
    """When a sweep is due: every ``period`` seconds (ticks at multiples of it since the
    Unix epoch) or, only for a schedule written as cron, at the instants of ``cron``."""
    name: str
    period: int | None
    # A run older than this is presumed dead (its worker was killed): do not skip for it.
    stale_after: timedelta
    # A tick still ``enqueued`` (never picked up) older than this is presumed lost (the
    # broker was flushed, or a killed worker had prefetched it): do not skip for it.
    # None: same as ``stale_after``.
    lost_after: timedelta | None = None
    cron: str | None = None

    def __post_init__(self) -> None:
        if (self.period is None) == (self.cron is None):
            raise ValueError(f"schedule {self.name}: give a period or a cron expression")
        if self.period is not None and self.period < 1:
            raise ValueError(f"schedule {self.name}: period {self.period} < 1 second")
        if self.cron is not None and not croniter.is_valid(self.cron):
            raise ValueError(f"schedule {self.name}: invalid cron expression {self.cron!r}")

    @property
    def spec(self) -> str:
        """How ``wharf sweeps`` shows it: ``every 45s`` or the cron expression."""
        return f"every {self.period}s" if self.period is not None else str(self.cron)

    def due_tick(self, now: datetime) -> datetime:
        """The latest tick at or before ``now``."""
        if self.period is not None:
            epoch = EPOCH if now.tzinfo else EPOCH.replace(tzinfo=None)  # naive: UTC
            elapsed = (now - epoch) // timedelta(seconds=1)
            tick = epoch + timedelta(seconds=elapsed - elapsed % self.period)
            return tick.astimezone(now.tzinfo) if now.tzinfo else tick
        return croniter(self._cron(), now + timedelta(microseconds=1)).get_prev(datetime)

    def next_tick(self, now: datetime) -> datetime:
        """The first tick after ``now``."""
        if self.period is not None:
            return self.due_tick(now) + timedelta(seconds=self.period)
        return croniter(self._cron(), now).get_next(datetime)

    def _cron(self) -> str:
        if self.cron is None:  # __post_init__ requires one of period and cron
            raise ValueError(f"schedule {self.name}: neither a period nor a cron expression")
        return self.cron


def schedules(settings: Settings) -> list[Schedule]:
    every = settings.sweep_interval

    def make(name: str, period: int) -> Schedule:
        return Schedule(name, period, timedelta(seconds=max(60, 10 * period)),
                        lost_after=timedelta(seconds=max(5, 2 * period)))

    return [
        make("recover_operations", max(1, int(settings.recovery_interval))),
        make("expire_upload_sessions", every),
        make("sweep_asset_uploads", every),
        make("release_idempotency_keys", every),
        make("delete_finished_operations", every),
        make("retry_deletion_jobs", every),
        make("purge_old_trash", every),
        make("delete_expired_credentials", every),
        make("sweep_worktree_drafts", every),
        make("retry_webhook_deliveries", every),
        make("deletion_ledger", every),
        make("prune_unit_checkpoints", every),
        make("prune_unit_history", every),
        make("expire_exports", every),
        make("index_content", every),
        # A run is bounded (FSCK_BUDGET_SECONDS + FSCK_UNIT_BUDGET_SECONDS, 20 min): after
        # an hour it is presumed dead, not after ten periods (ten weeks).
        Schedule("fsck", settings.fsck_interval, stale_after=timedelta(hours=1),
                 lost_after=timedelta(hours=1)),
    ]


def _insert(db: Database) -> Callable[[type[ScheduleTick]], PgInsert | SqliteInsert]:
    return pg_insert if db.is_postgres else sqlite_insert


class Scheduler:
    def __init__(self, db: Database, settings: Settings, scheduler_id: str,
                 plan: list[Schedule] | None = None):
        self.db = db
        self.settings = settings
        self.scheduler_id = scheduler_id[:128]
        self.plan = plan if plan is not None else schedules(settings)
        self._seen: dict[str, datetime] = {}

    def tick(self, now: datetime) -> dict[str, str]:
        """Decide every schedule's latest due tick; returns what this scheduler did."""
        done: dict[str, str] = {}
        for sched in self.plan:
            due = sched.due_tick(now)
            if self._seen.get(sched.name) == due:
                continue
            done[sched.name] = self._decide(sched, due, now)
            metrics.SCHEDULE_TICKS.labels(sched.name, done[sched.name]).inc()
            self._seen[sched.name] = due
        return done

    def _decide(self, sched: Schedule, due: datetime, now: datetime) -> str:
        with self.db.write() as s:
            if s.scalar(select(ScheduleTick.id).where(ScheduleTick.schedule == sched.name,
                                                      ScheduleTick.tick_at == due)):
                return "taken"
            lost_after = sched.lost_after if sched.lost_after is not None else sched.stale_after
            busy = s.scalar(select(ScheduleTick.id).where(
                ScheduleTick.schedule == sched.name,
                or_(and_(ScheduleTick.status == TickStatus.RUNNING,
                         ScheduleTick.created_at > now - sched.stale_after),
                    and_(ScheduleTick.status == TickStatus.ENQUEUED,
                         ScheduleTick.created_at > now - lost_after))).limit(1))
            status = TickStatus.SKIPPED if busy else TickStatus.ENQUEUED
            tick_id = new_id()
            stmt = _insert(self.db)(ScheduleTick).values(
                id=tick_id, schedule=sched.name, tick_at=due, status=status,
                scheduler_id=self.scheduler_id, created_at=now,
            ).on_conflict_do_nothing(index_elements=["schedule", "tick_at"]).returning(
                ScheduleTick.id)
            inserted = s.execute(stmt).scalar() is not None
            if not inserted:
                return "taken"
            if status == TickStatus.ENQUEUED:
                send_after_commit(s, OutboxMessage(
                    id=new_id(), actor_name=actor_for(sched.name), queue_name=QUEUE,
                    subject_id=tick_id, delay_ms=0))
        if status == TickStatus.SKIPPED:
            metrics.SWEEP_SKIPPED.labels(sched.name).inc()
            log.info('{"event": "sweep_skipped", "sweep": "%s", "tick": "%s"}', sched.name,
                     due.isoformat())
        return status

    def status(self) -> list[dict[str, Any]]:
        """Every schedule with its last run and next run (``wharf sweeps``)."""
        now = utcnow()
        out: list[dict[str, Any]] = []
        with self.db.read() as s:
            for sched in self.plan:
                last = s.scalar(select(ScheduleTick).where(
                    ScheduleTick.schedule == sched.name,
                    ScheduleTick.status.in_((TickStatus.DONE, TickStatus.FAILED,
                                             TickStatus.RUNNING)))
                    .order_by(ScheduleTick.tick_at.desc()).limit(1))
                out.append({"schedule": sched.name, "spec": sched.spec,
                            "last_tick": last.tick_at if last else None,
                            "last_status": last.status if last else None,
                            "last_counts": last.counts if last else None,
                            "next_tick": sched.next_tick(now)})
        return out
