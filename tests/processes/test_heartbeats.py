"""Heartbeats of real processes (PostgreSQL + Redis): every ``wharf worker`` child and
``wharf scheduler`` writes its row; a child killed with SIGKILL stops beating while its
sibling goes on (and its restarted successor is a new row); a clean SIGTERM marks the rows
stopped; ``wharf processes`` lists them."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from sqlalchemy import text

from tests.support.processes import (
    REPO,
    ProcessCluster,
    cluster_fixture,
    databases_fixture,
    redis_fixture,
)
from tests.support.waiting import free_port, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.redis]


pg_databases = databases_fixture("wharf_beats")
redis_ns = redis_fixture("heartbeats")


cluster = cluster_fixture(ProcessCluster, WHARF_HEARTBEAT_SECONDS="1")


def rows(cluster: ProcessCluster, role: str) -> dict[int, dict]:
    """The role's heartbeat rows by pid."""
    with cluster.engine.connect() as conn:
        found = conn.execute(text(
            "SELECT pid, process_id, last_seen_at, stopped_at, details "
            "FROM process_heartbeats WHERE role = :role"), {"role": role}).mappings().all()
    return {r["pid"]: dict(r) for r in found}


def test_worker_children_beat_and_a_killed_one_stops(cluster):
    parent = cluster.start_worker(processes=2)
    cluster.start_scheduler()
    first = wait_until(lambda: (lambda r: r if len(r) == 2 else None)(rows(cluster, "worker")),
                       60, "two worker heartbeat rows", cluster)
    assert all(r["stopped_at"] is None for r in first.values())
    assert sorted(r["details"]["index"] for r in first.values()) == [0, 1]
    assert all(r["details"]["threads"] == 1 and "operations" in r["details"]["queues"]
               for r in first.values())
    wait_until(lambda: rows(cluster, "scheduler"), 30, "the scheduler's heartbeat", cluster)

    victim, survivor = sorted(first)
    os.kill(victim, signal.SIGKILL)
    time.sleep(1.5)  # a beat the victim might have been writing lands by now
    frozen = rows(cluster, "worker")[victim]["last_seen_at"]
    before = rows(cluster, "worker")[survivor]["last_seen_at"]
    time.sleep(3)
    after = rows(cluster, "worker")
    assert after[victim]["last_seen_at"] == frozen and after[victim]["stopped_at"] is None
    assert after[survivor]["last_seen_at"] > before
    # the parent restarts the killed child: a new process, a new row
    replaced = wait_until(lambda: set(rows(cluster, "worker")) - {victim, survivor}, 30,
                          "the restarted child's row", cluster)
    assert len(replaced) == 1

    listed = subprocess.run(
        [sys.executable, "-m", "wharfd.cli", "processes", "--json", "--within", "60"], cwd=REPO,
        env={**os.environ, **cluster.env, "WHARF_LOG_LEVEL": "WARNING"},
        capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    beats = [json.loads(line) for line in listed.stdout.splitlines()]
    assert {b["role"] for b in beats} == {"worker", "scheduler"}
    assert {b["pid"] for b in beats if b["role"] == "worker"} >= {survivor} | replaced
    states = {b["pid"]: b["state"] for b in beats}
    assert states[victim] == "silent" and states[survivor] == "running"
    seen = [b["last_seen_at"] for b in beats]
    assert seen == sorted(seen, reverse=True)  # newest first

    # a clean stop marks the live children's rows stopped
    parent.send_signal(signal.SIGTERM)
    assert parent.wait(60) == 0
    final = rows(cluster, "worker")
    assert final[survivor]["stopped_at"] is not None
    assert all(final[pid]["stopped_at"] is not None for pid in replaced)
    assert final[victim]["stopped_at"] is None  # died silently


def test_each_api_gunicorn_worker_beats_and_stops_cleanly(cluster):
    api = cluster._start("api", ["api", "--port", str(free_port()), "--workers", "2",
                                 "--threads", "2"])
    beats = wait_until(lambda: (lambda r: r if len(r) == 2 else None)(rows(cluster, "api")),
                       60, "two api heartbeat rows", cluster)
    assert api.pid not in beats  # the gunicorn workers beat, not the master
    assert all(r["details"]["gunicorn_master_pid"] == api.pid and r["details"]["threads"] == 2
               for r in beats.values())
    api.send_signal(signal.SIGTERM)
    api.wait(60)
    assert all(r["stopped_at"] is not None for r in rows(cluster, "api").values())


def test_wharf_serve_beats_as_one_process(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHARF_")}
    env.update(WHARF_DATA_DIR=str(tmp_path / "data"), WHARF_PORT=str(free_port()),
               WHARF_HEARTBEAT_SECONDS="1", WHARF_LOG_LEVEL="WARNING")
    log = open(tmp_path / "serve.log", "w+")
    proc = subprocess.Popen([sys.executable, "-m", "wharfd.cli", "serve"], env=env,
                            cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    db = tmp_path / "data" / "wharf.db"

    def serve_rows() -> list[tuple]:
        if not db.exists():
            return []
        with sqlite3.connect(db) as conn:
            try:
                return conn.execute("SELECT pid, stopped_at, details FROM process_heartbeats "
                                    "WHERE role = 'serve'").fetchall()
            except sqlite3.OperationalError:
                return []  # not migrated yet

    try:
        deadline = time.monotonic() + 60
        while not serve_rows() and time.monotonic() < deadline:
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()
            time.sleep(0.2)
        ((pid, stopped, details),) = serve_rows()
        assert pid == proc.pid and stopped is None
        assert json.loads(details)["threads"] >= 1
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)
        log.close()
    ((_, stopped, _),) = serve_rows()
    assert stopped is not None
