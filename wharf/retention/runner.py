"""Running one scheduled tick: claim it, run its sweep, record counts and duration.

A duplicate delivery finds the tick no longer ``enqueued`` and does nothing. A run whose
worker died stays ``running`` until its schedule's ``stale_after``; a later delivery may
then claim it again (sweeps are idempotent, so a re-run converges to the same state).
"""
from __future__ import annotations

import logging
import time
from datetime import datetime

from sqlalchemy import and_, or_, update

from storage.enums import TickStatus
from storage.models import ScheduleTick
from storage.results import rowcount
from wharf.infra.clock import utcnow
from wharf.observability import metrics
from wharf.retention.schedule import Schedule
from wharf.retention.sweeps import SWEEPS, SweepContext

log = logging.getLogger("wharf.sweeps")


def run_tick(ctx: SweepContext, tick_id: str,
             plan: dict[str, Schedule]) -> dict[str, int] | None:
    db = ctx.db
    now = utcnow()
    with db.write() as s:
        tick = s.get(ScheduleTick, tick_id)
        if tick is None or tick.schedule not in SWEEPS:
            return None
        sched = plan.get(tick.schedule)
        stale_before = now - (sched.stale_after if sched else (now - now))
        claimed = rowcount(s.execute(update(ScheduleTick).where(
            ScheduleTick.id == tick_id,
            or_(ScheduleTick.status == TickStatus.ENQUEUED,
                and_(ScheduleTick.status == TickStatus.RUNNING,
                     ScheduleTick.started_at < stale_before))).values(
            status=TickStatus.RUNNING, started_at=now))) == 1
        name, tick_at = tick.schedule, tick.tick_at
    if not claimed:
        return None
    return run_sweep(ctx, name, tick_id=tick_id, tick_at=tick_at)


def run_sweep(ctx: SweepContext, name: str, *, tick_id: str | None = None,
              tick_at: datetime | None = None) -> dict[str, int]:
    started = time.monotonic()
    ctx.now = utcnow()
    try:
        counts = SWEEPS[name](ctx)
        outcome, error = TickStatus.DONE, None
    except Exception as exc:
        log.exception("sweep %s failed", name)
        counts, outcome, error = {}, TickStatus.FAILED, f"{type(exc).__name__}: {exc}"[:2000]
    duration = time.monotonic() - started
    if tick_id is not None:
        with ctx.db.write() as s:
            s.execute(update(ScheduleTick).where(ScheduleTick.id == tick_id).values(
                status=outcome, finished_at=utcnow(), counts=counts, error=error))
    metrics.SWEEP_RUNS.labels(name, outcome).inc()
    metrics.SWEEP_DURATION.labels(name).observe(duration)
    for item, n in counts.items():
        if n:
            metrics.SWEEP_ITEMS.labels(name, item).inc(n)
    # One line per run, its fields as fields (JSON lines: ``sweep``, ``outcome``, ``rows``,
    # ``counts``, ``duration_s``, ``tick``). INFO only when the sweep did something (WARNING
    # if it failed): the recovery sweep runs every few seconds and would otherwise fill the
    # log with empty runs (DEBUG). Nothing is built when the level is off.
    rows = sum(counts.values())
    level = (logging.WARNING if outcome != TickStatus.DONE
             else logging.INFO if rows else logging.DEBUG)
    if log.isEnabledFor(level):
        log.log(level, "sweep %s %s: %d row(s) in %.3fs", name, outcome, rows, duration,
                extra={"sweep": name, "outcome": outcome, "rows": rows, "counts": counts,
                       "duration_s": round(duration, 4),
                       "tick": tick_at.isoformat() if tick_at else None})
    return counts
