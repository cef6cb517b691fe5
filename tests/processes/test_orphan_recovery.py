"""An operation orphaned by kill -9 completes within 15 s (issue 12), with the DEFAULT lease
and recovery settings -- the process tests elsewhere shorten both; this one must not.

Two real ``wharf worker`` processes and a ``wharf scheduler`` on PostgreSQL + Redis. The
worker that claims the operation is paused (``WHARF_TEST_PAUSE_FILE``) after its side
effect and before its completion commit, then killed with SIGKILL at once: its lease runs
nearly its whole length (``WHARF_OPERATION_LEASE_SECONDS``, 8 s; the pause is outside the
lease keeper, so it is not renewed -- as after a renewal just before the kill, the worst
case), then the recovery sweep (every 2 s) re-rings and the other worker finishes it.
"""
from __future__ import annotations

import os
import time
import uuid

import pytest
from sqlalchemy import text

from tests.support import services
from tests.support.processes import (
    ProcessCluster,
    databases_fixture,
    one_test,
    redis_fixture,
    sign_up,
)
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.redis]

TARGET = 15.0  # seconds from the SIGKILL to the operation's completion
#: The timing settings the harness shortens for the other process tests: defaults here.
TIMING = ("WHARF_OPERATION_LEASE_SECONDS", "WHARF_RECOVERY_INTERVAL", "WHARF_RELAY_INTERVAL")


pg_databases = databases_fixture("wharf_orphan")
# The same lock as the other process tests: they measure recovery times too.
redis_ns = redis_fixture("operations-processes")


@pytest.fixture
def cluster(tmp_path, pg_databases, redis_ns):
    services.need(services.postgres_error())
    services.need(services.redis_error())
    product_url, units_url = pg_databases
    c = Cluster(tmp_path, product_url, units_url, redis_ns)
    for name in TIMING:
        del c.env[name]
    with one_test(c):
        yield c


class Cluster(ProcessCluster):
    def api(self, **env: str):
        client = super().api(**env)
        # the default, not the harness's
        assert self.components[-1].settings.operation_lease_seconds == 8
        return client

    def lease_owner(self, op_id: str) -> str | None:
        with self.engine.connect() as conn:
            return conn.execute(text("SELECT lease_owner FROM operations WHERE id = :id"),
                                {"id": op_id}).scalar_one()


def consuming(proc) -> bool:
    return "consuming with" in ProcessCluster.log_text(proc)


def test_an_orphan_of_kill_9_completes_within_15_seconds(cluster):
    client = cluster.api()
    space = sign_up(client)["personal_space_id"]
    cluster.start_scheduler()
    workers = [cluster.start_worker("a"), cluster.start_worker("b")]
    for w in workers:
        wait_until(lambda w=w: consuming(w), 60, f"worker {w.name} to consume", cluster)
    cluster.pause_file.touch()
    try:
        r = client.post("/api/resources",
                        json={"space_id": space, "parent_id": None, "name": "orphan",
                              "unit_type": "sheet"},
                        headers={"Idempotency-Key": uuid.uuid4().hex})
        assert r.status_code == 202, r.text
        op_id = r.json["id"]
        owner = wait_until(lambda: cluster.lease_owner(op_id), 30, "a worker's claim", cluster)
        # Paused before its completion commit: the side effect happened, the product rows
        # did not.
        wait_until(lambda: cluster.count("units") == 1, 30, "the unit side effect", cluster)
        assert cluster.count("nodes") == 0
        # lease_owner is host:pid:thread of the worker child; its process group is the
        # ``wharf worker`` parent's (each started in a session of its own).
        pgid = os.getpgid(int(owner.split(":")[1]))
        victim = next(w for w in workers if w.pid == pgid)
        cluster.kill_group(victim)
        killed_at = time.monotonic()
    finally:
        cluster.pause_file.unlink(missing_ok=True)

    def done():
        r = client.get(f"/api/operations/{op_id}", params={"wait": "1"})
        assert r.status_code == 200, r.text
        return r.json if r.json["done"] else None

    op = wait_until(done, TARGET + 15, "the orphan to complete", cluster, interval=0)
    recovered_in = time.monotonic() - killed_at
    print(f"orphan completed {recovered_in:.1f}s after SIGKILL (default lease and recovery)")
    assert op["status"] == "completed", (op, cluster.logs())
    assert recovered_in < TARGET, (recovered_in, cluster.logs())
    assert op["attempts"] == 2

    # Exactly one product effect, one unit.
    assert (cluster.count("nodes"), cluster.count("resources"),
            cluster.count("unit_resources"), cluster.count("units")) == (1, 1, 1, 1)
    history = client.get(f"/api/operations/{op_id}/attempts").json["items"]
    assert [a["outcome"] for a in history] == ["lost", "completed"]
    assert history[0]["error"]["code"] == "lease_expired"
    assert history[0]["worker_id"] == owner
    assert history[1]["worker_id"] != owner
