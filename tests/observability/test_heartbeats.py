"""Process heartbeats (wharf.observability.heartbeats) on both databases: the upsert, recent()'s order,
window and bound, the stopped mark, stale rows deleted, a failing database survived."""
from __future__ import annotations

import logging
import threading
import time
from datetime import timedelta

import pytest
from sqlalchemy import select, update

from storage.db import Database
from storage.models import ProcessHeartbeat
from wharf.infra.clock import utcnow
from wharf.infra.settings import ConfigError, Settings
from wharf.observability import heartbeats
from wharf.observability.heartbeats import Heartbeat, recent


def _age(db, process_id: str, seconds: float) -> None:
    """Move a row's last_seen_at ``seconds`` into the past."""
    with db.write() as s:
        s.execute(update(ProcessHeartbeat).where(ProcessHeartbeat.process_id == process_id)
                  .values(last_seen_at=utcnow() - timedelta(seconds=seconds)))


def test_beat_upserts_one_row_per_process(db, settings):
    calls = []
    hb = Heartbeat(db, settings, "worker", lambda: {"threads": 4, "n": len(calls.append(1)
                                                                           or calls)})
    hb.beat()
    first = recent(db, timedelta(minutes=1))
    assert [b.process_id for b in first] == [hb.process_id]
    beat = first[0]
    assert (beat.role, beat.pid, beat.hostname) == ("worker", hb.pid, hb.hostname)
    assert beat.details == {"threads": 4, "n": 1, "heartbeat_seconds": hb.interval}
    assert beat.stopped_at is None
    assert hb.process_id == f"{hb.hostname}:{hb.pid}:{int(hb.started_at.timestamp())}"
    hb.beat()
    again = recent(db, timedelta(minutes=1))
    assert len(again) == 1
    assert again[0].last_seen_at >= beat.last_seen_at
    assert again[0].details["n"] == 2
    assert again[0].started_at == beat.started_at


def test_recent_is_newest_first_within_the_window(db, settings):
    beats = [Heartbeat(db, settings, role) for role in ("api", "worker", "scheduler")]
    for hb in beats:
        hb.process_id += f":{hb.role}"  # three processes of one pid in this test
        hb.beat()
    _age(db, beats[0].process_id, 30)
    _age(db, beats[1].process_id, 10)
    _age(db, beats[2].process_id, 7200)
    seen = recent(db, timedelta(minutes=1))
    assert [b.role for b in seen] == ["worker", "api"]
    assert [b.role for b in recent(db, timedelta(hours=3))] == ["worker", "api", "scheduler"]
    assert len(recent(db, timedelta(hours=3), limit=2)) == 2
    assert recent(db, timedelta(hours=3), limit=10**9)  # capped, not refused
    assert len(recent(db, timedelta.max)) == 3  # the window is capped too


def test_stop_marks_the_row_stopped_and_a_new_beat_clears_it(db, settings):
    hb = Heartbeat(db, settings, "scheduler", interval=0.05).start()
    assert hb.alive()
    hb.stop()
    assert not hb.alive()
    (beat,) = recent(db, timedelta(minutes=1))
    assert beat.stopped_at is not None
    hb.beat()
    assert recent(db, timedelta(minutes=1))[0].stopped_at is None


def test_rows_not_seen_for_a_day_are_deleted_by_the_writers(db, settings):
    old = Heartbeat(db, settings, "api")
    old.process_id += ":old"
    old.beat()
    _age(db, old.process_id, heartbeats.RETENTION.total_seconds() + 60)
    recent_one = Heartbeat(db, settings, "api")
    recent_one.process_id += ":recent"
    recent_one.beat()
    _age(db, recent_one.process_id, 3600)
    Heartbeat(db, settings, "worker").beat()  # a writer's first beat prunes
    with db.read() as s:
        ids = set(s.scalars(select(ProcessHeartbeat.process_id)))
    assert old.process_id not in ids
    assert recent_one.process_id in ids and len(ids) == 2


def test_a_failing_database_does_not_stop_the_loop(settings, tmp_path, caplog):
    broken = Database(f"sqlite:///{tmp_path}/missing-dir/nothing.db")
    hb = Heartbeat(broken, settings, "worker", interval=0.05).start()
    try:
        import time
        time.sleep(0.3)
        assert hb.alive()
    finally:
        hb.stop()
    warnings = [r for r in caplog.records
                if r.name == "wharf.observability.heartbeats" and r.levelno >= logging.WARNING]
    # one warning for the streak of failed beats; no stopped mark is even tried
    assert len(warnings) == 1


def test_state_says_running_stopped_or_silent(db, settings):
    hb = Heartbeat(db, settings, "worker", interval=10)
    hb.beat()
    (beat,) = recent(db, timedelta(minutes=1))
    assert beat.state(10) == "running"
    assert beat.state(10, now=beat.last_seen_at + timedelta(seconds=31)) == "silent"
    hb.stop()
    (beat,) = recent(db, timedelta(minutes=1))
    assert beat.state(10, now=beat.last_seen_at + timedelta(days=1)) == "stopped"
    assert beat.as_json()["stopped_at"] is not None



def test_wharf_processes_prints_a_table_or_json_lines(db, settings):
    import json
    import os
    import subprocess

    from tests.support import zygote
    hb = Heartbeat(db, settings, "scheduler")
    hb.beat()
    env = {**os.environ, "WHARF_DATA_DIR": str(settings.data_dir),
           "WHARF_DATABASE_URL": settings.database_url, "WHARF_LOG_LEVEL": "WARNING"}

    def wharf(*args: str) -> subprocess.CompletedProcess[str]:
        return zygote.run(["processes", "--json", *args], env)

    out = wharf()
    assert out.returncode == 0, out.stderr
    (line,) = [json.loads(ln) for ln in out.stdout.splitlines()]
    assert line["process_id"] == hb.process_id and line["state"] == "running"
    assert line["role"] == "scheduler" and line["stopped_at"] is None
    assert "1 process(es)" in out.stderr
    table = zygote.run(["processes"], env)
    assert table.returncode == 0, table.stderr
    header, row = table.stdout.splitlines()
    assert header.split()[:4] == ["role", "state", "host", "pid"]
    assert row.split()[:2] == ["scheduler", "running"] and str(line["pid"]) in row.split()
    _age(db, hb.process_id, 600)
    assert wharf().stdout == ""  # not seen in the last 300 s
    assert len(wharf("--within", "3600").stdout.splitlines()) == 1
    for bad in ("0", "-5", str(10**12)):
        refused = wharf("--within", bad)
        assert refused.returncode == 2 and "--within" in refused.stderr


# --- review fixes -----------------------------------------------------------------------


def _heartbeat_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("heartbeat-")]


def test_an_interval_past_the_wait_limit_is_refused_and_never_kills_the_loop(db, settings):
    # Event.wait(1e10) raises OverflowError: the setting refuses it, and a Heartbeat given
    # one directly waits at most TIMEOUT_MAX, so its thread lives on after the first beat.
    with pytest.raises(ConfigError, match=r"^WHARF_HEARTBEAT_SECONDS="):
        Settings.from_env({"WHARF_HEARTBEAT_SECONDS": "1e10"})
    assert Settings.from_env({"WHARF_HEARTBEAT_SECONDS": "3600"}).heartbeat_seconds == 3600
    hb = Heartbeat(db, settings, "worker", interval=1e10).start()
    try:
        deadline = time.monotonic() + 10
        while not recent(db, timedelta(minutes=1)) and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.1)  # the loop is now waiting for its next beat
        assert recent(db, timedelta(minutes=1)) and hb.alive()
    finally:
        hb.stop()


def _message(message_id: str):
    import dramatiq
    from dramatiq.broker import MessageProxy
    return MessageProxy(dramatiq.Message(queue_name="default", actor_name="a", args=(),
                                         kwargs={}, options={}, message_id=message_id))


def test_a_skip_of_a_message_never_counted_in_does_not_undercount_in_flight():
    from tasks.heartbeat import HeartbeatMiddleware
    mw = HeartbeatMiddleware(lambda details: None)  # type: ignore[arg-type,return-value]
    running, skipped_early = _message("running"), _message("skipped-before-us")
    mw.before_process_message(None, running)
    mw.after_skip_message(None, skipped_early)  # skipped by a middleware added before us
    assert mw.details()["in_flight"] == 1
    mw.after_process_message(None, running)
    assert mw.details()["in_flight"] == 0 and mw.details()["messages_handled"] == 2
    counted_then_skipped = _message("late-skip")
    mw.before_process_message(None, counted_then_skipped)
    mw.after_skip_message(None, counted_then_skipped)
    assert mw.details()["in_flight"] == 0


def test_a_failing_prune_is_not_a_failed_beat(db, settings, monkeypatch, caplog):
    def broken_prune(*args, **kwargs):
        raise RuntimeError("prune broke")
    monkeypatch.setattr(heartbeats, "prune", broken_prune)
    hb = Heartbeat(db, settings, "worker")
    for _ in range(3):
        hb._next_prune = 0.0  # a prune is due at every beat
        hb._safe_beat()
    assert not hb._failing
    assert recent(db, timedelta(minutes=1))[0].process_id == hb.process_id
    messages = [r.getMessage() for r in caplog.records if r.name == "wharf.observability.heartbeats"]
    assert not any("not written" in m for m in messages)
    assert sum("not deleted" in m for m in messages) == 1  # once per streak


def test_a_prune_does_not_wait_for_another_writers_prune(db, settings):
    stale = Heartbeat(db, settings, "api")
    stale.process_id += ":stale"
    stale.beat()
    _age(db, stale.process_id, heartbeats.RETENTION.total_seconds() + 60)
    if not db.is_postgres:  # SQLite has one writer: a plain prune
        assert heartbeats.prune(db) == 1
        return
    done: list[int] = []
    with db.write() as s:  # another writer's prune holds the stale row
        s.execute(select(ProcessHeartbeat.process_id)
                  .where(ProcessHeartbeat.process_id == stale.process_id).with_for_update())
        t = threading.Thread(target=lambda: done.append(heartbeats.prune(db)), daemon=True)
        t.start()
        t.join(5)
        assert done == [0]  # it skipped the locked row instead of blocking on it
    assert heartbeats.prune(db) == 1


def test_stop_after_failed_beats_returns_at_once_without_writing(settings, tmp_path, caplog):
    broken = Database(f"sqlite:///{tmp_path}/missing-dir/nothing.db")
    hb = Heartbeat(broken, settings, "worker", interval=0.05).start()
    deadline = time.monotonic() + 10
    while not hb._failing and time.monotonic() < deadline:
        time.sleep(0.02)
    assert hb._failing
    writes = []

    def hanging_write():  # the database no longer answers: a write would hang
        writes.append(1)
        time.sleep(30)
    broken.write = hanging_write  # type: ignore[method-assign]
    began = time.monotonic()
    hb.stop()
    assert time.monotonic() - began < heartbeats.STOP_WAIT + 0.5
    assert writes == [] and not hb.alive()
    assert not any("not marked stopped" in r.getMessage() and r.levelno >= logging.WARNING
                   for r in caplog.records)


def test_silent_is_judged_with_the_writers_interval(db, settings):
    hb = Heartbeat(db, settings, "worker", interval=60)
    hb.beat()
    (beat,) = recent(db, timedelta(minutes=1))
    assert beat.details["heartbeat_seconds"] == 60
    later = beat.last_seen_at + timedelta(seconds=100)
    assert beat.state(10, now=later) == "running"  # a reader's 10 s would say silent
    assert beat.state(10, now=beat.last_seen_at + timedelta(seconds=181)) == "silent"
    old_row = heartbeats.ProcessBeat(**{**beat.__dict__, "details": {}})
    assert old_row.state(10, now=later) == "silent"  # an old row: the reader's interval
    junk = heartbeats.ProcessBeat(**{**beat.__dict__, "details": {"heartbeat_seconds": "x"}})
    assert junk.state(10, now=later) == "silent"


def test_start_is_idempotent(db, settings):
    before = len(_heartbeat_threads())
    hb = Heartbeat(db, settings, "scheduler", interval=0.05).start()
    try:
        first = hb._thread
        assert hb.start() is hb and hb._thread is first
        assert len(_heartbeat_threads()) == before + 1
    finally:
        hb.stop()
    assert len(_heartbeat_threads()) == before
    hb.start()  # a stopped heartbeat starts again
    try:
        assert hb.alive() and len(_heartbeat_threads()) == before + 1
    finally:
        hb.stop()
