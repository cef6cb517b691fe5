"""kill -9 of a worker during the permanent delete of a unit another user's worktree
holds (hardening item 4), with real processes: the cluster of
``tests/processes/test_worktree_merge.py`` (``wharf api``, ``wharf worker``, ``wharf
scheduler`` on PostgreSQL + Redis + moto's S3 server).

Bob, once an editor of alice's doc, keeps a draft of it in his user worktree; alice
revokes him, trashes the doc and deletes it permanently. The test holds the row lock of
bob's draft in the unit store, so the worker blocks inside ``perform`` (the trunk unit
already deleted, the draft not yet); the worker's process group is killed with SIGKILL,
the lock released and a new worker started. After the recovery: the operation completed
(attempts ``lost`` then ``completed``), the draft and bob's unit row are gone, and bob's
worktree has exactly one ``unit_purged`` event and one audit row."""
from __future__ import annotations

import time
from pathlib import Path

import pytest
from sqlalchemy import text

from tests.processes.test_assets import Api
from tests.processes.test_worktree_merge import MergeCluster, completed, key, post_op
from tests.support.processes import cluster_for_test, databases_fixture, redis_fixture
from tests.support.s3 import moto_fixture
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.redis]

pg_databases = databases_fixture("wharf_purgeproc")
redis_ns = redis_fixture("purge-worktrees-processes")
moto = moto_fixture()


def test_kill_9_of_the_worker_mid_purge_discards_the_grantees_draft_once(
        tmp_path: Path, pg_databases, redis_ns, moto):
    with cluster_for_test(MergeCluster, tmp_path, pg_databases, redis_ns, moto) as cluster:
        api_proc = cluster.start_api()
        cluster.start_scheduler()
        first = cluster.start_worker("worker-1")
        alice = cluster.wait_api(api_proc)
        cluster.wait_worker(first)
        space = alice.login("alice")
        bob = Api(alice.port)
        bob.login("bob")
        bob_id = bob.get("/api/me").json()["id"]

        doc = completed(alice, [post_op(alice, "/api/resources", {
            "space_id": space, "parent_id": None, "name": "Plan", "unit_type": "doc"})])[0]
        unit, node = doc["unit_id"], doc["node_id"]
        grant = f"/api/nodes/{node}/grants/{bob_id}"
        r = alice.http.put(alice.base + grant, json={"role": "editor"}, timeout=30)
        assert r.status_code in (200, 201), r.text
        wt = completed(bob, [post_op(bob, "/api/worktrees", {"kind": "user",
                                                             "name": "Bob's"})])[0]
        wt = wt["worktree_id"]
        completed(bob, [post_op(bob, f"/api/worktrees/{wt}/units",
                                {"source": "trunk", "resource_id": doc["resource_id"]})])
        r = bob.post(f"/api/worktrees/{wt}/units/{unit}/changesets",
                     json={"base_revision": 0,
                           "changes": [{"op": "add", "path": "/note", "value": "bob"}]})
        assert r.status_code == 200, r.text
        assert alice.delete(grant).status_code in (200, 204)
        assert alice.post(f"/api/nodes/{node}/trash").status_code == 200

        lock = cluster.units_engine.connect()
        lock_tx = lock.begin()
        try:
            assert lock.execute(text(
                "SELECT unit_id FROM worktree_drafts WHERE worktree_id = :wt "
                "AND unit_id = :u FOR UPDATE"), {"wt": wt, "u": unit}).scalar() == unit
            r = alice.delete(f"/api/nodes/{node}", headers={"Idempotency-Key": key()})
            assert r.status_code == 202, r.text
            purge_op = r.json()["id"]

            def blocked() -> bool:  # the trunk unit deleted, the draft's delete waiting
                return cluster.unit_scalar(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND wait_event_type = 'Lock'") == 1 and cluster.unit_scalar(
                    "SELECT count(*) FROM units WHERE id = :u", u=unit) == 0

            wait_until(blocked, 20, "the purge blocked on bob's draft", cluster)
            owner = cluster.scalar("SELECT lease_owner FROM operations WHERE id = :op "
                                   "AND status = 'running'", op=purge_op)
            holder = cluster.group_of(int(owner.split(":")[1]))  # host:pid:thread
            assert holder is first, (owner, cluster.logs())
            cluster.kill_group(holder)
            killed_at = time.monotonic()
        finally:
            lock_tx.rollback()
            lock.close()
        # Nothing of the purge's product transaction happened; the draft is still there.
        assert cluster.unit_scalar("SELECT count(*) FROM worktree_drafts WHERE "
                                   "worktree_id = :wt", wt=wt) == 1
        assert cluster.scalar("SELECT count(*) FROM worktree_units WHERE "
                              "worktree_id = :wt", wt=wt) == 1
        assert cluster.scalar("SELECT count(*) FROM worktree_events") == 0

        second = cluster.start_worker("worker-2")
        op = alice.wait_done(purge_op, 90)
        recovered_in = time.monotonic() - killed_at
        assert op["status"] == "completed", (op, cluster.logs())
        assert [a["outcome"] for a in alice.attempts(purge_op)] == ["lost", "completed"]
        assert second.poll() is None

        assert cluster.unit_scalar("SELECT count(*) FROM worktree_drafts") == 0
        assert cluster.unit_scalar("SELECT count(*) FROM worktree_draft_revisions") == 0
        assert cluster.scalar("SELECT count(*) FROM worktree_units") == 0
        assert cluster.scalar("SELECT count(*) FROM nodes WHERE id = :n", n=node) == 0
        assert cluster.scalar("SELECT count(*) FROM audit_logs WHERE "
                              "action = 'worktree.unit_purged' AND target_id = :wt",
                              wt=wt) == 1
        events = bob.get(f"/api/worktrees/{wt}/events").json()["items"]
        assert [(e["kind"], e["unit_id"], e["operation_id"], e["reason"]) for e in events] \
            == [("unit_purged", unit, purge_op, "purge")]
        detail = bob.get(f"/api/worktrees/{wt}").json()
        assert detail["state"] == "draft" and detail["unit_count"] == 0
        print(f"purge recovered {recovered_in:.1f}s after SIGKILL")
