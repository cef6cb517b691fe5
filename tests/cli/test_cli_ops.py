"""`wharf sweeps` and `wharf deletion-jobs`: what operators look at."""
from __future__ import annotations

import json
import os
from datetime import timedelta

from sqlalchemy import update

from storage.models import ObjectDeletionJob
from tests.support import zygote
from wharf.deletion import service as deletion
from wharf.infra.clock import utcnow
from wharf.retention.runner import run_tick
from wharf.retention.sweeps import SweepContext


def wharf(settings, *args):
    env = {**os.environ, "WHARF_DATA_DIR": str(settings.data_dir),
           "WHARF_DATABASE_URL": settings.database_url, "WHARF_LOG_LEVEL": "WARNING"}
    return zygote.run(list(args), env)


def test_sweeps_lists_last_and_next_run(settings, db, components):
    sched = components.scheduler("test")
    sched.tick(utcnow())
    ctx = SweepContext(db=db, settings=settings, now=utcnow(),
                       send=components.dispatcher.send, blob_store=components.blob_store)
    plan = {s.name: s for s in sched.plan}
    from sqlalchemy import select

    from storage.models import ScheduleTick
    with db.read() as s:
        tick_id = s.scalar(select(ScheduleTick.id).where(
            ScheduleTick.schedule == "delete_expired_credentials"))
    run_tick(ctx, tick_id, plan)
    out = wharf(settings, "sweeps")
    assert out.returncode == 0, out.stderr
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("delete_expired_credentials"))
    assert " done " in line and '"login_sessions": 0' in line
    assert " every 60s " in line  # WHARF_SWEEP_INTERVAL is a period, shown as one
    never = next(ln for ln in out.stdout.splitlines() if ln.startswith("purge_old_trash"))
    assert " - " in never  # enqueued but not run yet: no last run


def test_deletion_jobs_reports_jobs_failing_for_a_day(settings, db):
    with db.write() as s:
        deletion.schedule(s, "objects/stuck", "test")
        deletion.schedule(s, "objects/fresh", "test")
    with db.write() as s:
        s.execute(update(ObjectDeletionJob).where(ObjectDeletionJob.object_key == "objects/stuck")
                  .values(attempts=12, created_at=utcnow() - timedelta(days=2),
                          last_error="AccessDenied"))
    out = wharf(settings, "deletion-jobs")
    assert out.returncode == 1
    jobs = [json.loads(ln) for ln in out.stdout.splitlines()]
    assert [j["object_key"] for j in jobs] == ["objects/stuck"]
    assert jobs[0]["attempts"] == 12 and jobs[0]["last_error"] == "AccessDenied"
    assert wharf(settings, "deletion-jobs", "--failing-for", str(3 * 86400)).returncode == 0
