"""The engine, relay and recovery on the other brokers (issue 19, item 3), with real
``wharf`` processes on PostgreSQL:

- RabbitMQ (``WHARF_BROKER_URL=amqp://``, the suite's server, queues ``<namespace>.*``):
  500 ``create_resource`` operations while one ``wharf worker --processes 3`` supervisor
  executes them; six times the test SIGKILLs a worker child holding an unfinished attempt
  (the supervisor replaces it), and once it "restarts the broker" for Wharf: it closes,
  server side (``rabbitmqctl close_connection``), every connection of the test's processes
  -- consumers, publishers, the API's -- which is what a RabbitMQ restart does to them
  (durable queues and persistent messages survive a restart; closing the connections is
  used instead of ``rabbitmqctl stop_app`` because the server is shared and a restart of it
  would disturb whatever else uses it). Every operation must complete exactly once, with a
  consistent attempt history (1..attempts, the last ``completed``, earlier ones ``lost`` or
  ``retry``), and the test's queues are deleted afterwards.
- Redis behind Sentinel (``redis+sentinel://``, a private master and sentinel started by
  the test): 50 operations, a SIGKILL of a worker child -> all completed exactly once;
  the broker's keys are on the master the sentinel named.

Time bounds: leases of 5 s and a recovery sweep every second, as in
``tests/processes/test_throughput_faults.py``; the RabbitMQ run must finish within ``RUN_DEADLINE``
(about 2 minutes on an idle 2-core machine).
"""
from __future__ import annotations

import contextlib
import random
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support import services
from tests.support.processes import (
    GatedSubmitter,
    ProcessCluster,
    assert_completed_exactly_once,
    cluster_for_test,
    databases_fixture,
    kill_a_busy_child,
    sign_up,
    wait_replaced,
    worker_children,
)
from tests.support.sentinel import sentinel_error, sentinel_redis
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

LEASE_SECONDS = 5
WORKER_THREADS = 4
RUN_DEADLINE = 420.0  # generous: a correctness test, on a machine shared with others
RESPAWN_DEADLINE = 60.0
BUSY_LOOK_SECONDS = 2.0


pg_databases = databases_fixture("wharf_brk")


@pytest.fixture
def rabbit_ns():
    services.need(services.rabbitmq_error())
    ns = services.RabbitNamespace("brokers")
    try:
        yield ns
    finally:
        left = ns.close()
    assert left == [], "the test's queues were not deleted"


class Cluster(ProcessCluster):
    def __init__(self, tmp_path: Path, product_url: str, units_url: str, namespace: Any,
                 kills: int):
        super().__init__(tmp_path, product_url, units_url, namespace,
                         WHARF_OPERATION_LEASE_SECONDS=str(LEASE_SECONDS),
                         WHARF_RECOVERY_INTERVAL="1", WHARF_LOG_LEVEL="WARNING",
                         # one operation may lose an attempt to every kill (see
                         # tests/processes/test_throughput_faults.py): room for all of them
                         WHARF_OPERATION_MAX_ATTEMPTS=str(kills + 2))

    def start_workers(self, processes: int) -> subprocess.Popen[bytes]:
        return self.start_worker(processes=processes, threads=WORKER_THREADS)

    def done(self) -> int:
        return int(self.sql("SELECT count(*) FROM operations "
                            "WHERE status IN ('completed', 'failed')")[0][0])

    def state(self) -> list[str]:
        return [f"--- operations by status: {self.by_status()}"]


def make_cluster(tmp_path: Path, pg_databases: Any, namespace: Any,
                 kills: int) -> contextlib.AbstractContextManager[Cluster]:
    """:func:`one_test` of a Cluster on ``namespace`` (RabbitMQ or Sentinel: no Redis
    needed)."""
    return cluster_for_test(Cluster, tmp_path, pg_databases, namespace, kills,
                            need_redis=False)


def submit(client: Any, space: str, i: int) -> dict[str, Any]:
    r = client.post("/api/resources", json={"space_id": space, "parent_id": None,
                                            "name": f"op-{i:04d}", "unit_type": "doc"},
                    headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 202, r.text
    return dict(r.json)


def kill_busy_child(cluster: Cluster, supervisor: subprocess.Popen[bytes], processes: int,
                    rng: random.Random,
                    while_held: Callable[[], None] | None = None) -> dict[str, Any]:
    """SIGKILL a worker child holding an unfinished attempt (any child after a few seconds
    of finding none busy); wait for the supervisor to replace it."""
    victim, busy = kill_a_busy_child(cluster, supervisor.pid, rng, BUSY_LOOK_SECONDS,
                                     while_held)
    wait_replaced(cluster, supervisor.pid, victim, processes, RESPAWN_DEADLINE)
    return {"pid": victim, "busy": busy}


# -- RabbitMQ ---------------------------------------------------------------------------------
RABBIT_OPERATIONS = 500
RABBIT_KILLS = 6
RABBIT_PROCESSES = 3
SUBMIT_AHEAD = 20  # operations the submitter may run ahead of the next event


def test_rabbitmq_500_operations_6_kills_and_a_broker_restart_complete_exactly_once(
        tmp_path, pg_databases, rabbit_ns):
    rng = random.Random()
    seed = rng.randrange(1 << 30)
    rng.seed(seed)
    print(f"random seed {seed}")
    with make_cluster(tmp_path, pg_databases, rabbit_ns, RABBIT_KILLS) as cluster:
        client = cluster.api()
        space = sign_up(client)["personal_space_id"]
        cluster.start_scheduler()
        supervisor = cluster.start_workers(RABBIT_PROCESSES)
        wait_until(lambda: len(worker_children(supervisor.pid)) == RABBIT_PROCESSES, 60,
                   f"{RABBIT_PROCESSES} worker processes", cluster)

        # Six kills and one broker restart, at random numbers of finished operations.
        # Submission runs beside them, a few operations ahead of the next event (the
        # workers would otherwise finish all 500 before the first kill).
        points = sorted(rng.sample(range(20, int(RABBIT_OPERATIONS * 0.8)), RABBIT_KILLS + 1))
        restart_at = rng.choice(points[1:-1])
        ahead = [*(p + SUBMIT_AHEAD for p in points[1:]), RABBIT_OPERATIONS]
        submitter = GatedSubmitter(lambda i: submit(client, space, i), RABBIT_OPERATIONS,
                                   points[0] + SUBMIT_AHEAD)
        started = time.monotonic()
        deadline = started + RUN_DEADLINE
        submitter.start()
        events: list[str] = []
        for point, gate in zip(points, ahead, strict=True):
            while cluster.done() < point:
                assert not submitter.problems, submitter.problems
                assert time.monotonic() < deadline, (
                    f"only {cluster.done()} operations done after {RUN_DEADLINE:.0f}s "
                    f"(waiting for {point}): {cluster.by_status()}\n{cluster.logs()}")
                time.sleep(0.05)
            time.sleep(rng.uniform(0, 0.3))
            if point == restart_at:
                # A child replaced after a kill may still be connecting: restart once every
                # worker process holds its connections (each has one per queue it consumes).
                wait_until(lambda: len(rabbit_ns.connections()) >= 2 * RABBIT_PROCESSES, 60,
                           "the workers' RabbitMQ connections", cluster, interval=0.5)
                submitter.release(gate)
                closed = rabbit_ns.close_connections()
                assert closed >= RABBIT_PROCESSES, (
                    f"closed {closed} connections: the workers' were not found")
                # The workers reconnect (consumers and publishers), and work goes on.
                wait_until(lambda: len(rabbit_ns.connections()) >= RABBIT_PROCESSES, 60,
                           "the workers to reconnect to RabbitMQ", cluster, interval=0.5)
                events.append(f"broker restart after {point} done: {closed} connections "
                              "closed")
            else:
                kill = kill_busy_child(cluster, supervisor, RABBIT_PROCESSES, rng,
                                       lambda gate=gate: submitter.release(gate))
                events.append(f"kill of {kill['pid']} after {point} done "
                              f"({'busy' if kill['busy'] else 'chosen blind'})")

        assert submitter.join(max(0.0, deadline - time.monotonic())), (
            f"submission did not finish in {RUN_DEADLINE:.0f}s")
        assert not submitter.problems, submitter.problems
        submitted = submitter.submitted
        assert len(submitted) == RABBIT_OPERATIONS
        wait_until(lambda: cluster.done() == RABBIT_OPERATIONS,
                   max(1.0, deadline - time.monotonic()),
                   f"all {RABBIT_OPERATIONS} operations done within {RUN_DEADLINE:.0f}s",
                   cluster, interval=0.25)
        elapsed = time.monotonic() - started
        assert supervisor.poll() is None, "the worker supervisor died"

        lost = assert_completed_exactly_once(cluster, submitted)
        assert lost >= 1, "no attempt was lost: none of the kills hit work in flight"
        # The messages went through the namespace's own queues.
        assert f"{rabbit_ns.name}.operations" in rabbit_ns.queues()
        print(f"{RABBIT_OPERATIONS} operations completed on RabbitMQ in {elapsed:.1f}s; "
              f"{lost} attempts lost; " + "; ".join(events))


def test_rabbitmq_long_poll_answers_when_a_worker_completes(tmp_path, pg_databases,
                                                            rabbit_ns):
    """No pub/sub on RabbitMQ: the API process's long-poll re-reads the database
    (``PollingNotifier``), so it answers within about half a second of the completion in
    the worker process, well before its wait ends."""
    with make_cluster(tmp_path, pg_databases, rabbit_ns, 0) as cluster:
        client = cluster.api()
        space = sign_up(client)["personal_space_id"]
        op = submit(client, space, 0)
        answer: dict[str, Any] = {}

        def long_poll() -> None:
            t0 = time.monotonic()
            # 60 s (the server's most): the wait spans a cold worker start on a loaded machine
            r = client.get(f"/api/operations/{op['id']}?wait=60")
            answer.update(status=r.status_code, body=r.json, seconds=time.monotonic() - t0)

        poller = threading.Thread(target=long_poll, daemon=True)
        poller.start()
        time.sleep(1.0)
        assert poller.is_alive(), f"the long-poll answered at once: {answer}"
        cluster.start_workers(1)
        wait_until(lambda: cluster.by_status().get("completed") == 1, 60,
                   "the operation to complete", cluster)
        completed = time.monotonic()
        poller.join(10)
        assert not poller.is_alive(), "the long-poll did not answer"
        assert answer["status"] == 200 and answer["body"]["status"] == "completed", answer
        assert time.monotonic() - completed < 2.0
        assert answer["seconds"] < 55, answer  # woken by the completion, not its wait's end


def test_rabbitmq_down_at_submit_the_relay_sends_it_later(tmp_path, pg_databases, rabbit_ns):
    """An API process whose RabbitMQ is unreachable still records the operation (202); the
    relay of a worker on the real RabbitMQ sends it later and the operation completes."""
    with make_cluster(tmp_path, pg_databases, rabbit_ns, 0) as cluster:
        client = cluster.api()
        space = sign_up(client)["personal_space_id"]
        down = cluster.api(WHARF_BROKER_URL="amqp://guest:guest@127.0.0.1:1/%2F")
        down.cookies = dict(client.cookies)  # the same login session
        t0 = time.monotonic()
        op = submit(down, space, 0)
        assert time.monotonic() - t0 < 15, "the submit waited long for a dead broker"
        assert op["status"] == "pending"
        row = cluster.sql("SELECT dispatched_at FROM outbox WHERE subject_id = :id",
                          id=op["id"])
        assert row and row[0][0] is None  # left for the relay
        cluster.start_workers(1)  # its relay sends the row (no scheduler: not the sweep)
        wait_until(lambda: cluster.by_status().get("completed") == 1, 60,
                   "the relayed operation to complete", cluster)
        wait_until(lambda: cluster.sql("SELECT dispatched_at FROM outbox WHERE "
                                       "subject_id = :id", id=op["id"])[0][0], 10,
                   "the relay to mark the row dispatched", cluster)
        assert_completed_exactly_once(cluster, [op])


# -- Redis behind Sentinel ----------------------------------------------------------------------
SENTINEL_OPERATIONS = 50


def test_sentinel_50_operations_and_a_kill_complete_exactly_once(tmp_path, pg_databases):
    services.need(sentinel_error())
    with sentinel_redis("sentinel") as redis_ns, \
            make_cluster(tmp_path, pg_databases, redis_ns, 1) as cluster:
        assert cluster.env["WHARF_BROKER_URL"].startswith("redis+sentinel://")
        client = cluster.api()
        space = sign_up(client)["personal_space_id"]
        cluster.start_scheduler()
        supervisor = cluster.start_workers(2)
        wait_until(lambda: len(worker_children(supervisor.pid)) == 2, 60,
                   "2 worker processes", cluster)
        submitted = [submit(client, space, i) for i in range(SENTINEL_OPERATIONS // 2)]
        wait_until(lambda: cluster.done() >= 5, 60, "a few operations done", cluster,
                   interval=0.02)
        kill_busy_child(cluster, supervisor, 2, random.Random())
        submitted += [submit(client, space, i)
                      for i in range(SENTINEL_OPERATIONS // 2, SENTINEL_OPERATIONS)]
        wait_until(lambda: cluster.done() == SENTINEL_OPERATIONS, 120,
                   f"all {SENTINEL_OPERATIONS} operations done", cluster, interval=0.25)
        assert_completed_exactly_once(cluster, submitted)
        # The broker's keys and connections are on the master the sentinel named.
        with redis_ns.client() as master:
            keys = [k.decode() for k in master.scan_iter(match=f"{redis_ns.name}:*")]
            named = [c for c in master.client_list() if c.get("name") == redis_ns.name]
        assert keys, "no key of the namespace on the master"
        assert named, "no connection of the test's processes on the master"
