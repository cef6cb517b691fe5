"""The scheduler and the retention sweeps (DESIGN §6)."""
from __future__ import annotations

import itertools
import json as jsonlib
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select, update

from storage.db import Database
from storage.errors import DatabaseBusy
from storage.models import (
    ApiToken,
    BlobUploadSession,
    LoginSession,
    ObjectDeletionJob,
    Operation,
    OutboxMessage,
    ScheduleTick,
)
from tests.support.waiting import free_port
from wharf.infra.clock import utcnow
from wharf.observability import metrics
from wharf.retention.runner import run_sweep, run_tick
from wharf.retention.schedule import Schedule, Scheduler, schedules
from wharf.retention.sweeps import SweepContext

pytestmark = pytest.mark.both_databases  # the sweeps' batched deletes and claims on each dialect

T0 = datetime(2026, 12, 2, 10, 0, 0, tzinfo=UTC)


def _count(db, model, *where):
    with db.read() as s:
        return s.scalar(select(func.count()).select_from(model).where(*where))


def _ticks(sched: Schedule, start: datetime, seconds: int) -> list[datetime]:
    """The distinct due ticks seen by a scheduler ticking every second for ``seconds``."""
    seen: list[datetime] = []
    for i in range(seconds + 1):
        due = sched.due_tick(start + timedelta(seconds=i))
        if not seen or seen[-1] != due:
            seen.append(due)
    return seen


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize("period", [45, 90, 172800])
def test_a_period_ticks_every_period_at_its_multiples_since_the_epoch(period):
    s = Schedule("x", period, timedelta(minutes=10))
    window = 6 * period if period < 3600 else 10 * 86400
    ticks = _ticks(s, T0, window)
    gaps = {(b - a).total_seconds() for a, b in itertools.pairwise(ticks)}
    assert gaps == {period}  # 45 → 45 s gaps (not 15/45), 90 → 90 s (not 120 s), ...
    assert all((t - EPOCH).total_seconds() % period == 0 for t in ticks)
    assert len(ticks) >= 5
    due = s.due_tick(T0)
    assert due <= T0 < due + timedelta(seconds=period)
    assert s.next_tick(T0) == due + timedelta(seconds=period)
    assert s.due_tick(s.next_tick(T0)) == s.next_tick(T0)  # a tick is due at its instant


def test_a_two_day_period_is_not_daily():
    s = Schedule("x", 172800, timedelta(minutes=10))
    # 2026-12-01 is day 20788 since the epoch (even): a tick at 00:00 UTC,
    # the next two days later, none on 12-02.
    assert (datetime(2026, 12, 1, tzinfo=UTC) - EPOCH).days % 2 == 0
    assert s.due_tick(T0) == datetime(2026, 12, 1, tzinfo=UTC)
    assert s.next_tick(T0) == datetime(2026, 12, 3, tzinfo=UTC)
    assert s.due_tick(datetime(2026, 12, 2, 23, 59, 59, tzinfo=UTC)) == \
        datetime(2026, 12, 1, tzinfo=UTC)


def test_cron_is_used_only_for_a_schedule_written_as_cron():
    s = Schedule("x", None, timedelta(minutes=10), cron="0 3 * * *")
    assert s.spec == "0 3 * * *"
    assert s.due_tick(T0) == datetime(2026, 12, 2, 3, tzinfo=UTC)
    assert s.next_tick(T0) == datetime(2026, 12, 3, 3, tzinfo=UTC)
    assert Schedule("y", 45, timedelta(minutes=10)).spec == "every 45s"
    with pytest.raises(ValueError):
        Schedule("z", 45, timedelta(minutes=10), cron="0 3 * * *")
    with pytest.raises(ValueError):
        Schedule("z", None, timedelta(minutes=10))


@pytest.mark.parametrize("period", [45, 90, 172800])
def test_the_scheduler_enqueues_one_tick_per_period(db, settings, period):
    """Through the scheduler's tick decision: ticking every few seconds over six periods,
    each tick is enqueued exactly once, at the multiples of the period."""
    settings = settings.replace(sweep_interval=period, recovery_interval=period)
    plan = [s for s in schedules(settings) if s.name == "expire_upload_sessions"]
    assert plan[0].period == period
    sched = Scheduler(db, settings, "solo", plan)
    step = 5 if period < 3600 else 3600
    for i in range(0, 6 * period + 1, step):
        now = T0 + timedelta(seconds=i)
        sched.tick(now)
        with db.write() as s:  # the worker finished it, so no tick is skipped
            s.execute(update(ScheduleTick).where(ScheduleTick.status == "enqueued")
                      .values(status="done", finished_at=now))
    with db.read() as s:
        rows = list(s.execute(select(ScheduleTick.tick_at, ScheduleTick.status)
                              .order_by(ScheduleTick.tick_at)))
    ticks = [r[0].replace(tzinfo=UTC) if r[0].tzinfo is None else r[0] for r in rows]
    assert {r[1] for r in rows} == {"done"}
    assert len(ticks) in (6, 7)
    assert all((t - EPOCH).total_seconds() % period == 0 for t in ticks)
    assert all((b - a).total_seconds() == period for a, b in itertools.pairwise(ticks))


def _scheduler_process(url: str, name: str, times: list[str], barrier) -> None:
    """One scheduler process walking the shared simulated timeline; also plays the worker
    that finishes enqueued sweeps, so no tick is skipped for a still-running one."""
    from wharf.infra.settings import Settings
    db = Database(url)
    settings = Settings.from_env({"WHARF_DATABASE_URL": url, "WHARF_SWEEP_INTERVAL": "60",
                                  "WHARF_RECOVERY_INTERVAL": "60",
                                  "WHARF_FSCK_INTERVAL": "60"})
    sched = Scheduler(db, settings, name)
    barrier.wait()
    for raw in times:
        now = datetime.fromisoformat(raw)
        _again_while_busy(lambda: sched.tick(now))
        _again_while_busy(lambda: _finish_due(db, now))
    db.dispose()


def _again_while_busy(step) -> None:
    """``step`` again while the database is busy (SQLite's write lock held past the busy
    timeout by a process the loaded machine descheduled), as ``wharf scheduler``'s loop
    (``tasks.loops.Periodic``) runs a failed tick again; the process used to die."""
    while True:
        try:
            step()
            return
        except DatabaseBusy:
            time.sleep(0.05)


def _finish_due(db: Database, now: datetime) -> None:
    with db.write() as s:
        # as workers do: every due tick finished before this process ticks again. The
        # rows are locked in one order (id) by every process, so three cannot deadlock
        # (a multi-row UPDATE, each process taking the rows in its own order, did once
        # the plan had 15 sweeps); waiting for a row another process holds, rather than
        # skipping it (SKIP LOCKED), keeps it from being still "enqueued" at this
        # process's next tick, which the scheduler then rightly marks "skipped" (CI)
        due = list(s.scalars(select(ScheduleTick.id).where(
            ScheduleTick.status == "enqueued", ScheduleTick.tick_at < now)
            .order_by(ScheduleTick.id).with_for_update()))
        if due:
            s.execute(update(ScheduleTick).where(ScheduleTick.id.in_(due))
                      .values(status="done", finished_at=now))


def test_three_schedulers_enqueue_each_tick_exactly_once(db, settings):
    times = [(T0 + timedelta(seconds=s)).isoformat() for s in range(0, 3600, 7)]
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(3)
    procs = [ctx.Process(target=_scheduler_process,
                         args=(settings.database_url, f"sched-{i}", times, barrier))
             for i in range(3)]
    for p in procs:
        p.start()
    try:
        for p in procs:
            p.join(240)
            assert p.exitcode == 0
    finally:  # a failed process must not leave the others writing into the next tests
        for p in procs:
            if p.is_alive():
                p.kill()
                p.join(10)
    plan = schedules(settings.replace(sweep_interval=60, recovery_interval=60,
                                      fsck_interval=60))
    expected_ticks = 60  # 10:00 .. 10:59, one per minute
    with db.read() as s:
        for sched in plan:
            rows = list(s.execute(select(ScheduleTick.tick_at, ScheduleTick.status,
                                         ScheduleTick.id)
                                  .where(ScheduleTick.schedule == sched.name)))
            assert len(rows) == expected_ticks, sched.name
            assert len({r[0] for r in rows}) == expected_ticks
            assert all(r[1] != "skipped" for r in rows)
            ids = [r[2] for r in rows]
            messages = s.scalar(select(func.count()).select_from(OutboxMessage).where(
                OutboxMessage.subject_id.in_(ids)))
            assert messages == expected_ticks, sched.name  # one enqueue per tick
        by = dict(s.execute(select(ScheduleTick.scheduler_id, func.count())
                            .group_by(ScheduleTick.scheduler_id)).all())
    assert sum(by.values()) == expected_ticks * len(plan)


def test_busy_ticks_are_skipped_and_missed_ticks_run_once(db, settings):
    settings = settings.replace(sweep_interval=60)
    plan = [Schedule("expire_upload_sessions", 60, timedelta(minutes=10))]
    sched = Scheduler(db, settings, "solo", plan)
    before = metrics.SWEEP_SKIPPED.labels("expire_upload_sessions")._value.get()
    assert sched.tick(T0) == {"expire_upload_sessions": "enqueued"}
    assert sched.tick(T0 + timedelta(seconds=30)) == {}  # same tick: nothing to decide
    assert sched.tick(T0 + timedelta(seconds=60)) == {"expire_upload_sessions": "skipped"}
    assert metrics.SWEEP_SKIPPED.labels("expire_upload_sessions")._value.get() == before + 1
    with db.write() as s:
        s.execute(update(ScheduleTick).values(status="done"))
    # Downtime of 2 hours: only the latest missed tick runs.
    assert sched.tick(T0 + timedelta(hours=2, seconds=5)) == {"expire_upload_sessions": "enqueued"}
    assert _count(db, ScheduleTick) == 3


def test_a_stale_running_tick_does_not_block_forever(db, settings):
    plan = [Schedule("expire_upload_sessions", 60, timedelta(minutes=10))]
    sched = Scheduler(db, settings, "solo", plan)
    sched.tick(T0)
    with db.write() as s:
        s.execute(update(ScheduleTick).values(status="running", started_at=T0))
    assert sched.tick(T0 + timedelta(minutes=11)) == {"expire_upload_sessions": "enqueued"}


def _expired_sessions(db, n: int, user_id: str, space_id: str) -> None:
    past = utcnow() - timedelta(hours=1)
    rows = [dict(id=uuid.uuid4().hex, actor_id=user_id, idempotency_key=None,
                 request_fingerprint="x", space_id=space_id, parent_id=None,
                 filename=f"f{i}", declared_size=1, state="waiting_for_upload",
                 node_id=uuid.uuid4().hex, resource_id=uuid.uuid4().hex,
                 object_key=f"objects/{uuid.uuid4().hex}", created_at=past, updated_at=past,
                 expires_at=past) for i in range(n)]
    with db.write() as s:
        s.execute(BlobUploadSession.__table__.insert(), rows)


def test_sweep_works_in_bounded_batches_and_survives_a_crash(world, db, settings):
    alice = world.user("alice")
    _expired_sessions(db, 2500, alice.user_id, alice.personal_space_id)
    batches: list[int] = []

    def crash_after_first(sweep, number, rows):
        batches.append(rows)
        if number == 1:
            raise KeyboardInterrupt("killed midway")

    ctx = SweepContext(db=db, settings=settings, now=utcnow(), batch_size=1000,
                       on_batch=crash_after_first)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(ctx, "expire_upload_sessions")
    # The first batch committed; the rest is untouched.
    assert _count(db, BlobUploadSession, BlobUploadSession.state == "expired") == 1000
    ctx = SweepContext(db=db, settings=settings, now=utcnow(), batch_size=1000,
                       on_batch=lambda sweep, number, rows: batches.append(rows))
    counts = run_sweep(ctx, "expire_upload_sessions")
    assert counts == {"expired": 1500, "operations_failed": 0}
    assert batches == [1000, 1000, 500]
    assert all(b <= 1000 for b in batches)
    # Same end state as one clean run: every session expired, one deletion job each.
    assert _count(db, BlobUploadSession, BlobUploadSession.state == "expired") == 2500
    assert _count(db, ObjectDeletionJob) == 2500
    assert run_sweep(ctx, "expire_upload_sessions") == {"expired": 0, "operations_failed": 0}


def test_retention_sweeps(world, components, db, settings):
    alice = world.user("alice")
    now = utcnow()
    old = now - timedelta(days=40)
    with db.write() as s:
        for i, (status, done_at, key_exp) in enumerate([
                ("completed", old, old), ("failed", old, old),
                ("completed", now, now - timedelta(seconds=1)),
                ("completed", now, now + timedelta(hours=1))]):
            s.add(Operation(id=uuid.uuid4().hex, kind="create_resource", status=status,
                            actor_id=alice.user_id, idempotency_key=f"key-{i}-" + "x" * 16,
                            request_fingerprint="f", payload={}, attempts=1, max_attempts=5,
                            created_at=old, updated_at=done_at, completed_at=done_at,
                            key_expires_at=key_exp))
        s.add(LoginSession(id=uuid.uuid4().hex, user_id=alice.user_id, secret_hash="x" * 64,
                           expires_at=now - timedelta(seconds=1)))
        s.add(ApiToken(id=uuid.uuid4().hex, user_id=alice.user_id, name="t", prefix="abcdef",
                       secret_hash="x" * 64, scopes="read", expires_at=now - timedelta(days=1)))
    ctx = SweepContext(db=db, settings=settings, now=now, send=components.dispatcher.send,
                       blob_store=components.blob_store)
    assert run_sweep(ctx, "delete_finished_operations")["operations"] == 2
    released = run_sweep(ctx, "release_idempotency_keys")
    assert released["operations"] == 1
    with db.read() as s:
        keys = sorted(k for k in s.scalars(select(Operation.idempotency_key)) if k)
    assert keys == ["key-3-" + "x" * 16]
    creds = run_sweep(ctx, "delete_expired_credentials")
    assert creds == {"login_sessions": 1, "api_tokens": 1, "device_authorizations": 0,
                     "auth_throttle": 0}
    assert alice.get("/api/me").status_code == 200  # the live session survives
    body = alice.get("/metrics").content.decode()
    assert 'wharf_sweep_runs_total{outcome="done",sweep="delete_expired_credentials"}' in body
    assert "wharf_sweep_items_total" in body and "wharf_sweep_duration_seconds" in body
    assert "wharf_operation_queue_lag_seconds" in body and "wharf_deletion_jobs" in body


def test_recovery_sweep_logs_at_info_only_when_it_did_something(world, components, db,
                                                                 settings, caplog):
    """The recovery sweep runs every few seconds: an idle run logs at DEBUG, a run that
    re-enqueued something at INFO."""
    import logging
    ctx = SweepContext(db=db, settings=settings, now=utcnow(), send=components.dispatcher.send,
                       blob_store=components.blob_store)
    caplog.set_level(logging.DEBUG, logger="wharf.sweeps")
    assert not any(run_sweep(ctx, "recover_operations").values())
    idle = [r for r in caplog.records if r.name == "wharf.sweeps"]
    assert len(idle) == 1 and idle[0].levelno == logging.DEBUG, idle
    assert idle[0].sweep == "recover_operations" and idle[0].rows == 0

    alice = world.user("alice")
    r = alice.post("/api/resources", json={"space_id": alice.personal_space_id,
                                           "parent_id": None, "name": "lost",
                                           "unit_type": "sheet"},
                   headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 202, r.text
    components.dispatcher.flush()  # its outbox row is marked sent (not left to the relay)
    with db.write() as s:  # its message was lost long ago
        s.execute(update(Operation).values(updated_at=utcnow() - timedelta(hours=1)))
    caplog.clear()
    assert run_sweep(ctx, "recover_operations")["requeued"] == 1
    busy = [r for r in caplog.records if r.name == "wharf.sweeps"]
    assert len(busy) == 1 and busy[0].levelno == logging.INFO, busy
    assert busy[0].counts["requeued"] == 1 and busy[0].rows >= 1


def test_run_tick_claims_once(db, settings, components):
    plan = {s.name: s for s in schedules(settings)}
    sched = Scheduler(db, settings, "solo")
    sched.tick(utcnow())
    with db.read() as s:
        tick_id = s.scalar(select(ScheduleTick.id).where(
            ScheduleTick.schedule == "delete_expired_credentials"))
    ctx = SweepContext(db=db, settings=settings, now=utcnow(), send=components.dispatcher.send,
                       blob_store=components.blob_store)
    assert run_tick(ctx, tick_id, plan) is not None
    assert run_tick(ctx, tick_id, plan) is None  # duplicate delivery does nothing
    with db.read() as s:
        tick = s.get(ScheduleTick, tick_id)
    assert tick.status == "done" and tick.counts == {"login_sessions": 0, "api_tokens": 0,
                                                  "device_authorizations": 0,
                                                  "auth_throttle": 0}


# --- the embedded server with short TTLs ------------------------------------------------

def _http(method, url, body=None, headers=None):
    data = jsonlib.dumps(body).encode() if isinstance(body, dict) else body
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    if isinstance(body, dict):
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.read(), dict(resp.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), dict(exc.headers)


@pytest.mark.slow
def test_serve_expires_uploads_and_deletes_their_objects(tmp_path):
    port = free_port()
    data_dir = tmp_path / "var"
    env = {**os.environ, "WHARF_DATA_DIR": str(data_dir), "WHARF_UPLOAD_SESSION_TTL": "3",
           "WHARF_SWEEP_INTERVAL": "1", "WHARF_ARGON2_TIME_COST": "1",
           "WHARF_ARGON2_MEMORY_COST": "8", "WHARF_ARGON2_PARALLELISM": "1",
           "WHARF_LOG_LEVEL": "WARNING"}
    env.pop("WHARF_DATABASE_URL", None)
    env.pop("WHARF_BROKER_URL", None)
    log = open(tmp_path / "serve.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "wharfd.cli", "serve", "--port", str(port)],
                            env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if _http("GET", base + "/healthz")[0] == 200:
                    break
            except OSError:
                time.sleep(0.2)
        creds = {"username": "alice", "password": "correct horse battery staple"}
        status, body, _ = _http("POST", base + "/api/users", creds)
        assert status == 201
        space = jsonlib.loads(body)["personal_space_id"]
        status, body, headers = _http("POST", base + "/api/login-sessions", creds)
        cookie = headers["Set-Cookie"].split(";")[0]
        auth = {"Cookie": cookie}
        status, body, _ = _http("POST", base + "/api/blob-upload-sessions",
                                {"space_id": space, "filename": "late.bin", "size": 5},
                                {**auth, "Idempotency-Key": uuid.uuid4().hex})
        assert status == 201
        sid = jsonlib.loads(body)["id"]
        status, _, _ = _http("PUT", f"{base}/api/blob-upload-sessions/{sid}/content", b"hello",
                             {**auth, "Content-Type": "application/octet-stream"})
        assert status == 200
        blobs_dir = data_dir / "blobs"  # objects are <id> files beside the store's .tmp

        def objects():  # (ledger/: the shipped deletion ledger, docs/accounts.md)
            return [p for p in blobs_dir.iterdir() if p.name not in (".tmp", "ledger")]

        assert len(objects()) == 1
        deadline = time.monotonic() + 20
        state = None
        while time.monotonic() < deadline:
            _, body, _ = _http("GET", f"{base}/api/blob-upload-sessions/{sid}", headers=auth)
            state = jsonlib.loads(body)["state"]
            if state == "expired" and not objects():
                break
            time.sleep(0.3)
        assert state == "expired"
        assert objects() == [], (tmp_path / "serve.log").read_text()[-3000:]
        status, body, _ = _http("POST", f"{base}/api/blob-upload-sessions/{sid}/complete",
                                headers={**auth, "Idempotency-Key": uuid.uuid4().hex})
        assert status == 409
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
    log.close()
    assert proc.returncode == 0, (tmp_path / "serve.log").read_text()[-3000:]


def test_sent_outbox_rows_are_deleted_an_hour_after_they_were_sent(components, db, settings):
    """The outbox does not grow without bound: ``delete_finished_operations`` deletes rows
    sent to the broker more than ``OUTBOX_KEEP`` ago; a recently sent row and one never
    sent (the relay's work) stay."""
    from storage.models import OutboxMessage
    from wharf.retention.sweeps import OUTBOX_KEEP
    now = utcnow()
    rows = {"old": now - OUTBOX_KEEP - timedelta(seconds=1), "recent": now, "unsent": None}
    ids = {}
    with db.write() as s:
        for name, sent in rows.items():
            ids[name] = uuid.uuid4().hex
            s.add(OutboxMessage(id=ids[name], actor_name="a", queue_name="q",
                                subject_id=uuid.uuid4().hex, created_at=now - timedelta(days=1),
                                dispatched_at=sent))
    ctx = SweepContext(db=db, settings=settings, now=now, send=components.dispatcher.send,
                       blob_store=components.blob_store)
    assert run_sweep(ctx, "delete_finished_operations")["outbox"] >= 1
    with db.read() as s:
        left = set(s.scalars(select(OutboxMessage.id).where(
            OutboxMessage.id.in_(list(ids.values())))))
    assert left == {ids["recent"], ids["unsent"]}
