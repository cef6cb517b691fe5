"""A team space's deletion against real processes (issue 41): ``wharf worker`` killed with
SIGKILL in the middle of a ``delete_space`` operation on PostgreSQL + Redis; a new worker
converges: the space and everything in it are gone, another space is untouched, no object
of it is left once the deletion jobs ran.
"""
from __future__ import annotations

import uuid

import pytest

from tests.processes.test_account_deletion import _scalar, _upload, kill_midway_then_converge
from tests.processes.test_operations import Cluster, wait_done
from tests.support.processes import cluster_fixture, databases_fixture, redis_fixture
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.redis]

pg_databases = databases_fixture("wharf_proc")
redis_ns = redis_fixture("space-deletion-processes")


cluster = cluster_fixture(Cluster)


def test_kill_9_mid_space_deletion_converges(cluster):
    cluster.env.update({"WHARF_ACCOUNT_DELETION_BATCH": "10", "WHARF_SWEEP_INTERVAL": "1"})
    alice = cluster.api()
    cluster.login(alice, "alice")
    cluster.start_scheduler()
    cluster.start_worker("first")
    team = alice.post("/api/spaces", json={"name": "Atlas", "type": "team"}).json["id"]
    other = alice.post("/api/spaces", json={"name": "Kept", "type": "team"}).json["id"]
    # 4 folders of 5 nodes, 6 documents, 2 blobs; one blob in the other space
    folders = []
    for i in range(4):
        r = alice.post("/api/nodes", json={"space_id": team, "name": f"f{i}"})
        assert r.status_code == 201, r.text
        folders.append(r.json["id"])
        for j in range(5):
            assert alice.post("/api/nodes", json={"space_id": team, "name": f"n{j}",
                                                  "parent_id": r.json["id"]}).status_code == 201
    ops = [alice.post("/api/resources", json={"space_id": team, "name": f"d{i}",
                                              "unit_type": "doc", "parent_id": folders[i % 4]},
                      headers={"Idempotency-Key": uuid.uuid4().hex}).json for i in range(6)]
    ops += [_upload(alice, team, f"team {i}".encode() * 200) for i in range(2)]
    ops.append(_upload(alice, other, b"kept bytes" * 100))
    for op in ops:
        assert wait_done(alice, op["id"], 60)["status"] == "completed"
    kept_key = _scalar(cluster, "SELECT object_key FROM blob_resources br JOIN resources r "
                       "ON r.id = br.resource_id JOIN nodes n ON n.id = r.node_id "
                       "WHERE n.space_id = :s", s=other)
    initial = _scalar(cluster, "SELECT count(*) FROM nodes WHERE space_id = :s", s=team)
    assert initial == 4 * 6 + 8

    def submit() -> str:
        r = alice.delete(f"/api/spaces/{team}", json_body={"confirm_name": "Atlas"},
                         headers={"Idempotency-Key": uuid.uuid4().hex})
        assert r.status_code == 202, r.text
        return r.json["id"]
    kill_midway_then_converge(cluster, submit, team, initial)

    assert _scalar(cluster, "SELECT count(*) FROM spaces WHERE id = :s", s=team) == 0
    assert _scalar(cluster, "SELECT count(*) FROM nodes WHERE space_id = :s", s=team) == 0
    assert cluster.count("units") == 0
    assert alice.get(f"/api/spaces/{team}").status_code == 404
    assert alice.get(f"/api/spaces/{other}").status_code == 200

    def no_jobs() -> bool:
        return _scalar(cluster, "SELECT count(*) FROM object_deletion_jobs") == 0
    wait_until(no_jobs, 60, "the deletion jobs to run", cluster, interval=0.2)
    blobs = cluster.tmp / "data" / "blobs"
    stored = {p.relative_to(blobs).as_posix() for p in blobs.rglob("*") if p.is_file()}
    objects = {k for k in stored if not k.startswith(("ledger/", ".tmp/"))}
    assert objects == {kept_key}, objects  # none of the space's, the other space's kept
