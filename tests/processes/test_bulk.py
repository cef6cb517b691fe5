"""A batch (``POST /api/operations:batch``, issue 43) against a real ``wharf api`` process
on PostgreSQL, killed with SIGKILL while the batch's transaction is in flight: the database
holds none of the batch's operations (its transaction commits all of them or none); the
same batch sent again to a new API process records exactly its 100 operations, and a real
``wharf worker`` completes each of them exactly once.

The kill lands inside the transaction: a statement trigger on ``operations`` (installed
by the test, after sign-up) sleeps in the batch's multi-row INSERT, and the test kills the
API's process group once ``pg_stat_activity`` shows that sleep.
"""
from __future__ import annotations

import subprocess
import uuid

import pytest

from tests.support.processes import (
    PASSWORD,
    ProcessApi,
    ProcessCluster,
    assert_completed_exactly_once,
    cluster_fixture,
    databases_fixture,
    redis_fixture,
)
from tests.support.waiting import free_port, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.redis]

pg_databases = databases_fixture("wharf_bulk_proc")
redis_ns = redis_fixture("bulk-processes")

_SLOW = ("CREATE FUNCTION slow_batch() RETURNS trigger LANGUAGE plpgsql AS "
         "$$ BEGIN PERFORM pg_sleep(5); RETURN NULL; END $$; "
         "CREATE TRIGGER slow_batch AFTER INSERT ON operations "
         "FOR EACH STATEMENT EXECUTE FUNCTION slow_batch()")
_FAST = "DROP TRIGGER slow_batch ON operations; DROP FUNCTION slow_batch()"


class Cluster(ProcessCluster):
    def start_api(self) -> tuple[subprocess.Popen[bytes], ProcessApi]:
        port = free_port()
        proc = self._start("api", ["api", "--port", str(port), "--workers", "1"])
        api = ProcessApi(port)
        self.wait_http(proc, api)
        return proc, api

    def execute(self, statement: str) -> None:
        with self.engine.begin() as conn:
            conn.exec_driver_sql(statement)


cluster = cluster_fixture(Cluster)


def sleeping_in_batch(cluster: Cluster) -> bool:
    return bool(cluster.sql("SELECT 1 FROM pg_stat_activity WHERE state = 'active' "
                            "AND query LIKE 'INSERT INTO operations%'"))


def test_kill_9_during_a_batch_leaves_all_or_none_and_a_retry_records_each_once(cluster):
    import threading

    import requests

    proc, api = cluster.start_api()
    space = api.login()
    items = [{"idempotency_key": f"bulk-kill-{uuid.uuid4().hex}", "kind": "create_resource",
              "input": {"space_id": space, "name": f"Doc {i}", "unit_type": "doc"}}
             for i in range(100)]
    keys = [it["idempotency_key"] for it in items]
    cluster.execute(_SLOW)
    outcome: dict[str, object] = {}

    def send() -> None:
        try:
            outcome["response"] = api.post("/api/operations:batch", json={"items": items},
                                           timeout=60)
        except requests.RequestException as exc:
            outcome["error"] = exc

    sender = threading.Thread(target=send)
    sender.start()
    wait_until(lambda: sleeping_in_batch(cluster), 30, "the batch's INSERT in flight",
               cluster)
    cluster.kill_group(proc)
    sender.join(30)
    assert "error" in outcome, outcome  # the client saw the connection die, no answer
    cluster.execute(_FAST)

    def recorded() -> int:
        return int(cluster.sql("SELECT count(*) FROM operations WHERE idempotency_key "
                               "= ANY(:keys)", keys=keys)[0][0])

    # The server ends the dead client's transaction: none of the batch (it committed
    # nothing), never a part of it.
    wait_until(lambda: not sleeping_in_batch(cluster), 30, "the killed batch to end",
               cluster)
    assert recorded() == 0
    assert cluster.count("outbox") == 0 and cluster.sql(
        "SELECT count(*) FROM audit_logs WHERE action = 'operation.submit'")[0][0] == 0

    # The client retries the same batch on a new API process: 100 operations, once each.
    proc, api = cluster.start_api()
    r = api.post("/api/login-sessions", json={"username": "alice", "password": PASSWORD})
    assert r.status_code == 201, r.text
    r = api.post("/api/operations:batch", json={"items": items}, timeout=60)
    assert r.status_code == 200, r.text
    answers = r.json()["items"]
    assert [a["status"] for a in answers] == [202] * 100
    assert not any(a["replay"] for a in answers)
    assert recorded() == 100
    again = api.post("/api/operations:batch", json={"items": items}, timeout=60).json()
    assert [a["operation"]["id"] for a in again["items"]] == \
        [a["operation"]["id"] for a in answers]
    assert all(a["replay"] for a in again["items"])

    worker = cluster.start_worker(threads=4)
    cluster.wait_worker(worker)
    submitted = [a["operation"] for a in answers]
    for op in submitted[:: 10]:
        assert api.wait_done(op["id"], 60)["status"] == "completed"
    wait_until(lambda: cluster.by_status() == {"completed": 100}, 60,
               "every operation completed", cluster)
    assert_completed_exactly_once(cluster, submitted)
