"""Throughput under faults: 1,000 ``create_resource`` operations, 4 worker processes,
5 random SIGKILLs (issue 12).

One ``wharf worker --processes 4`` supervisor (a real process tree on PostgreSQL + Redis)
executes the operations while the test submits them through the API (in-process
``Components.api_app()`` behind the contract-checking ``ApiClient``, as in
``test_operations_processes.py``) and a ``wharf scheduler`` runs the recovery sweep. Five
times, at a random point of the run (a random number of finished operations, then a
random delay), the test SIGKILLs one of the supervisor's worker children, chosen at random
among those that hold an unfinished attempt (the children are held before their
completion commits from the look until the kill, so the one seen busy dies busy: see
``kill_a_busy_child``); the supervisor starts a new child in its place (the test waits for
it before the next kill).

Then every operation must be ``completed`` exactly once: 1,000 operations, 1,000 nodes,
resources and unit_resources carrying exactly the ids fixed in the payloads (no
duplicates, no extras), 1,000 units in the UnitStore, one ``resource.create`` audit row
per resource, and each operation's attempt rows numbered 1..``attempts``, all finished,
the last ``completed`` and every earlier one ``lost`` or ``retry``. At least one attempt
must have been ``lost``, or no kill hit work in flight and the test proved nothing.

Time bound: the leases are 5 s and the recovery sweep runs every second
(``WHARF_OPERATION_LEASE_SECONDS=5``, ``WHARF_RECOVERY_INTERVAL=1``), so an orphaned
operation is re-run seconds after its worker died. The whole run (submission, kills,
completion) must finish within ``RUN_DEADLINE`` seconds, or the test fails with the
counts by status; the time from each kill to the completion of the operations it
orphaned is printed (``-s``). PostgreSQL and Redis are required (skipped without them,
failed under ``WHARF_TEST_REQUIRE_SERVICES=1``); SQLite is not covered: many worker
processes on one SQLite file is not a deployment Wharf supports at this scale.
"""
from __future__ import annotations

import random
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from tests.support import services
from tests.support.processes import (
    GatedSubmitter,
    ProcessCluster,
    as_dict,
    assert_completed_exactly_once,
    attempt_history,
    cluster_fixture,
    databases_fixture,
    kill_a_busy_child,
    redis_fixture,
    sign_up,
    wait_replaced,
    worker_children,
)
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.redis]

OPERATIONS = 1000
WORKER_PROCESSES = 4
WORKER_THREADS = 4
KILLS = 5
LEASE_SECONDS = 5
BUSY_LOOK_SECONDS = 2.0  # how long a kill looks for a child holding work
SUBMIT_AHEAD = 20  # operations the submitter may run ahead of the next kill
RUN_DEADLINE = 300.0  # seconds from the first submission until all are done
RESPAWN_DEADLINE = 60.0  # the supervisor replaces a killed child within this


pg_databases = databases_fixture("wharf_proc")
redis_ns = redis_fixture("throughput-faults")


class Cluster(ProcessCluster):
    def __init__(self, tmp_path: Path, product_url: str, units_url: str,
                 redis_ns: services.RedisNamespace):
        super().__init__(tmp_path, product_url, units_url, redis_ns,
                         WHARF_OPERATION_LEASE_SECONDS=str(LEASE_SECONDS),
                         WHARF_RECOVERY_INTERVAL="1", WHARF_LOG_LEVEL="WARNING",
                         # Kills pick a worker holding work, which after an earlier kill is
                         # often the one that re-claimed that kill's orphans: one operation
                         # can lose an attempt to every kill. With the default 5 attempts,
                         # 5 kills could then fail it (correctly: it used them up); this
                         # test is about nothing lost or doubled, so give it room.
                         WHARF_OPERATION_MAX_ATTEMPTS=str(KILLS + 2))

    def state(self) -> list[str]:
        return [f"--- operations by status: {self.by_status()}"]


cluster = cluster_fixture(Cluster)


# -- the test ---------------------------------------------------------------------------------
def test_1000_operations_4_workers_5_random_kills_complete_exactly_once(cluster):
    rng = random.Random()
    seed = rng.randrange(1 << 30)
    rng.seed(seed)
    print(f"random seed {seed}")
    client = cluster.api()
    space = sign_up(client)["personal_space_id"]

    cluster.start_scheduler()
    # one supervisor of WORKER_PROCESSES children (it restarts one that dies)
    supervisor = cluster.start_worker(processes=WORKER_PROCESSES, threads=WORKER_THREADS)
    wait_until(lambda: len(worker_children(supervisor.pid)) == WORKER_PROCESSES, 60,
               f"{WORKER_PROCESSES} worker processes", cluster)

    def submit_one(i: int) -> dict[str, Any]:
        r = client.post("/api/resources",
                        json={"space_id": space, "parent_id": None,
                              "name": f"op-{i:04d}", "unit_type": "doc"},
                        headers={"Idempotency-Key": uuid.uuid4().hex})
        assert r.status_code == 202, f"POST {i}: {r.status_code} {r.text}"
        return dict(r.json)

    # Kill at random points of the run: after a random number of finished operations
    # (spread over the first 80 %), plus a random delay. A thread submits beside the
    # kills, a few operations ahead of the next one (the workers would otherwise finish
    # everything before the first kill).
    thresholds = sorted(rng.sample(range(20, int(OPERATIONS * 0.8)), KILLS))
    gates = [*(t + SUBMIT_AHEAD for t in thresholds[1:]), OPERATIONS]
    submitter = GatedSubmitter(submit_one, OPERATIONS, thresholds[0] + SUBMIT_AHEAD)
    started = time.monotonic()
    deadline = started + RUN_DEADLINE
    submitter.start()
    kills: list[dict[str, Any]] = []
    for threshold, gate in zip(thresholds, gates, strict=True):
        while True:
            done = cluster.sql("SELECT count(*) FROM operations "
                               "WHERE status IN ('completed', 'failed')")[0][0]
            if done >= threshold:
                break
            assert not submitter.problems, submitter.problems
            assert time.monotonic() < deadline, (
                f"kill {len(kills) + 1}/{KILLS}: only {done} operations done after "
                f"{RUN_DEADLINE:.0f}s: {cluster.by_status()}\n{cluster.logs()}")
            time.sleep(0.05)
        time.sleep(rng.uniform(0, 0.3))
        # Batches finish in milliseconds: look for a child holding work for a moment (a
        # kill of an idle child proves nothing) before falling back to any child; the
        # next operations go once the children are held.
        victim, busy = kill_a_busy_child(cluster, supervisor.pid, rng, BUSY_LOOK_SECONDS,
                                         lambda gate=gate: submitter.release(gate))
        killed_at = cluster.sql("SELECT now()")[0][0]
        kills.append({"pid": victim, "at": killed_at, "done": done, "busy": busy})
        # The supervisor replaces the child before the next kill: 4 processes run again.
        wait_replaced(cluster, supervisor.pid, victim, WORKER_PROCESSES, RESPAWN_DEADLINE)

    assert submitter.join(max(0.0, deadline - time.monotonic())), (
        f"submission did not finish in {RUN_DEADLINE:.0f}s")
    assert not submitter.problems, submitter.problems
    submitted = submitter.submitted
    assert len(submitted) == OPERATIONS

    def all_done() -> bool:
        status = cluster.by_status()
        return status.get("completed", 0) + status.get("failed", 0) == OPERATIONS

    wait_until(all_done, max(1.0, deadline - time.monotonic()),
               f"all {OPERATIONS} operations done within {RUN_DEADLINE:.0f}s of the first "
               f"submission", cluster, interval=0.25)
    elapsed = time.monotonic() - started
    assert supervisor.poll() is None, "the worker supervisor died"

    # -- every operation completed, exactly once, with a consistent attempt history -------
    lost = assert_completed_exactly_once(cluster, submitted)
    node_ids = {row[0] for row in cluster.sql("SELECT id FROM nodes")}
    assert node_ids == {as_dict(row[0])["node_id"]
                        for row in cluster.sql("SELECT payload FROM operations")}
    assert lost >= 1, f"no attempt was lost: none of the {KILLS} kills hit work in flight"
    history = attempt_history(cluster)

    # -- report: what the kills orphaned and how long until it completed ----------------
    multi = sum(1 for rows in history.values() if len(rows) > 1)
    print(f"{OPERATIONS} operations completed in {elapsed:.1f}s with {KILLS} SIGKILLs; "
          f"{multi} took more than one attempt, {lost} attempts lost")
    for n, kill in enumerate(kills, 1):
        # What the kill orphaned: the attempts of the killed pid that ended ``lost`` (where
        # the worker id carries the pid, ``host:pid:thread`` today).
        orphans, worst = cluster.sql(
            "SELECT count(*), max(extract(epoch FROM o.completed_at - :at)) "
            "FROM operation_attempts a JOIN operations o ON o.id = a.operation_id "
            "WHERE a.outcome = 'lost' AND a.worker_id LIKE :pattern",
            at=kill["at"], pattern=f"%:{kill['pid']}:%")[0]
        line = (f"kill {n}: pid {kill['pid']} after {kill['done']} done "
                f"({'busy' if kill['busy'] else 'chosen blind'}), {orphans} attempts lost")
        if orphans:
            line += f", their operations completed within {float(worst):.1f}s of the kill"
        print(line)


# -- orphan recovery time at the default settings ---------------------------------------------
ORPHAN_TARGET = 15.0  # issue 12: an operation orphaned by kill -9 completes within 15 s


def test_orphan_of_kill_9_completes_within_15s_at_default_settings(cluster):
    """The issue 12 bound, with the lease and recovery settings a deployment gets by
    default (not the short ones of the other process tests). Two single-process workers
    are up; the one that claims the operation pauses before its completion commit (the
    side effect done, the test hook) and is SIGKILLed at once, so nearly its whole lease
    is left; the other must complete the operation within ORPHAN_TARGET seconds of the
    kill (measured to the ``completed`` status in the database, polled every 0.1 s)."""
    for name in ("WHARF_OPERATION_LEASE_SECONDS", "WHARF_RECOVERY_INTERVAL",
                 "WHARF_RELAY_INTERVAL"):
        cluster.env.pop(name)
    cluster.env["WHARF_LOG_LEVEL"] = "INFO"
    client = cluster.api()
    space = sign_up(client)["personal_space_id"]
    cluster.start_scheduler()
    cluster.pause_file.touch()
    workers = [cluster.start_worker("first"), cluster.start_worker("second")]
    ready = time.monotonic() + 60
    while (not all("consuming" in cluster.log_text(w) for w in workers)
           and time.monotonic() < ready):
        time.sleep(0.2)
    r = client.post("/api/resources", json={"space_id": space, "parent_id": None,
                                            "name": "orphan", "unit_type": "doc"},
                    headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 202, r.text
    op_id = r.json["id"]

    def status() -> str:
        return str(cluster.sql("SELECT status FROM operations WHERE id = :id", id=op_id)[0][0])

    def units() -> int:
        with cluster.units_engine.connect() as conn:
            return int(conn.execute(text("SELECT count(*) FROM units")).scalar_one())

    wait_until(lambda: status() == "running" and units() == 1, 60,
               "a worker to claim the operation and create the unit", cluster, interval=0.05)
    owner, held = cluster.sql(
        "SELECT lease_owner, extract(epoch FROM now() - a.started_at) FROM operations o "
        "JOIN operation_attempts a ON a.operation_id = o.id AND a.number = o.attempts "
        "WHERE o.id = :id", id=op_id)[0]
    holder = [w for w in workers
              if any(f":{pid}:" in f"{owner}:" for pid in worker_children(w.pid))]
    assert len(holder) == 1, f"which worker holds the lease? lease_owner={owner!r}"
    cluster.kill_group(holder[0])
    killed = time.monotonic()
    cluster.pause_file.unlink()  # the survivor must not pause
    while status() != "completed" and time.monotonic() - killed < 4 * ORPHAN_TARGET:
        time.sleep(0.1)
    recovered_in = time.monotonic() - killed
    final = status()
    print(f"orphaned operation {final} {recovered_in:.1f}s after SIGKILL (killed "
          f"{float(held):.1f}s after its claim; default lease and recovery settings)")
    assert final == "completed", f"not completed {recovered_in:.0f}s after the kill"
    assert recovered_in <= ORPHAN_TARGET, (
        f"completed {recovered_in:.1f}s after the kill; the bound is {ORPHAN_TARGET:.0f}s")
    outcomes = [row[0] for row in cluster.sql(
        "SELECT outcome FROM operation_attempts WHERE operation_id = :id ORDER BY number",
        id=op_id)]
    assert outcomes == ["lost", "completed"]
    assert units() == 1
    assert [r[0] for r in cluster.sql("SELECT count(*) FROM nodes")] == [1]
