"""The live change feed with real processes (issue 39): ``wharf api`` (gunicorn), ``wharf
worker`` and ``wharf feed`` (uvicorn) on PostgreSQL and Redis (the stream in the test's
namespace).

- Each event kind is delivered for its change: a resource created by the worker
  (``operation.done``, ``tree.changed``), a changeset (``unit.changed`` with the new
  revision), a comment (``comments.changed``), an issue (``issues.changed``), a worktree
  (``worktrees.changed``), each to a WebSocket subscribed to it, with ids and no content.
- kill -9 of the feed process: its connections drop; writes go on meanwhile (they never
  depend on the feed); a new feed process starts and the client, reconnecting with a new
  ticket and its last cursor, gets every event it missed, in order, without a gap, then
  ``ready``.
(A Redis outage degrading to ``resync`` is tests/feed/test_feed_redis.py, through a proxy
that cuts the connections.)"""
from __future__ import annotations

import json
import uuid

import pytest
from websockets.sync.client import connect

from tests.support.processes import (
    ProcessApi,
    ProcessCluster,
    cluster_for_test,
    databases_fixture,
    redis_fixture,
)
from tests.support.waiting import free_port, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.redis]

pg_databases = databases_fixture("wharf_feedproc")
redis_ns = redis_fixture("feed-processes")


class Cluster(ProcessCluster):
    def start_api(self, port: int) -> ProcessApi:
        proc = self._start("api", ["api", "--port", str(port), "--workers", "1"])
        api = ProcessApi(port)
        self.wait_http(proc, api, 60)
        return api

    def start_feed(self, port: int):
        proc = self._start("feed", ["feed", "--port", str(port)])
        feed = ProcessApi(port)
        self.wait_http(proc, feed, 60)
        return proc


def ticket(api: ProcessApi) -> str:
    r = api.post("/api/feed-tickets")
    assert r.status_code == 201, r.text
    return str(r.json()["ticket"])


def recv(ws, timeout: float = 15.0) -> dict:
    return json.loads(ws.recv(timeout=timeout))


def until(ws, type_: str, timeout: float = 15.0) -> dict:
    while True:
        event = recv(ws, timeout)
        if event["type"] == type_:
            return event


def key() -> dict[str, str]:
    return {"Idempotency-Key": uuid.uuid4().hex}


def test_each_event_kind_and_a_killed_feed_resumed_by_cursor(tmp_path, pg_databases, redis_ns):
    with cluster_for_test(Cluster, tmp_path, pg_databases, redis_ns) as cluster:
        api = cluster.start_api(free_port())
        worker = cluster.start_worker()
        feed_port = free_port()
        feed = cluster.start_feed(feed_port)
        cluster.wait_worker(worker)
        api.login("alice")
        r = api.post("/api/spaces", json={"name": "Team", "type": "team"})
        assert r.status_code == 201, r.text
        space = r.json()["id"]
        base = f"ws://127.0.0.1:{feed_port}/api/feed"

        with connect(f"{base}?ticket={ticket(api)}&spaces={space}&operations=mine"
                     "&worktrees=1") as ws:
            ready = recv(ws)
            assert ready["type"] == "ready" and ready["cursor"]
            r = api.post("/api/resources", json={"space_id": space, "name": "Plan",
                                                 "unit_type": "doc"}, headers=key())
            assert r.status_code == 202, r.text
            op_id = r.json()["id"]
            done = until(ws, "operation.done")
            assert (done["operation_id"], done["status"]) == (op_id, "completed")
            unit = api.wait_done(op_id, 30)["result"]["unit_id"]
            r = api.post(f"/api/spaces/{space}/issues", json={"title": "Ship it"})
            assert r.status_code == 201, r.text
            issue = until(ws, "issues.changed")
            assert (issue["space_id"], issue["number"]) == (space, r.json()["number"])
            r = api.post("/api/worktrees", json={"kind": "team", "name": "Review",
                                                 "team_space_id": space}, headers=key())
            assert r.status_code == 202, r.text
            assert until(ws, "worktrees.changed")["space_id"] == space

        with connect(f"{base}?ticket={ticket(api)}&units={unit}") as ws:
            assert recv(ws)["type"] == "ready"
            r = api.post(f"/api/units/{unit}/changesets", json={
                "base_revision": 0, "changes": [{"op": "add", "path": "/body",
                                                 "value": {"title": "secret"}}]})
            assert r.status_code == 200, r.text
            changed = until(ws, "unit.changed")
            assert (changed["unit_id"], changed["revision"]) == (unit, 1)
            assert "secret" not in json.dumps(changed)
            r = api.post(f"/api/units/{unit}/comments", json={"anchor": {"at": 1},
                                                              "body": "private words"})
            assert r.status_code == 201, r.text
            comment = until(ws, "comments.changed")
            assert comment["unit_id"] == unit and "private" not in json.dumps(comment)

        # kill -9 of the feed while a client follows the space
        with connect(f"{base}?ticket={ticket(api)}&spaces={space}") as ws:
            cursor = recv(ws)["cursor"]
            r = api.post("/api/nodes", json={"space_id": space, "name": "before"})
            assert r.status_code == 201, r.text
            cursor = until(ws, "tree.changed")["cursor"]
            cluster.kill_group(feed)
            with pytest.raises(Exception):  # noqa: B017 (the connection is gone, however)
                while True:
                    recv(ws, 5)
        missed = []
        for n in range(3):  # writes do not depend on the feed
            r = api.post("/api/nodes", json={"space_id": space, "name": f"during {n}"})
            assert r.status_code == 201, r.text
            missed.append(r.json()["id"])
        feed = cluster.start_feed(feed_port)
        with connect(f"{base}?ticket={ticket(api)}&spaces={space}&cursor={cursor}") as ws:
            replayed = [recv(ws) for _ in range(4)]
        assert [e["type"] for e in replayed] == ["tree.changed"] * 3 + ["ready"], replayed
        cursors = [e["cursor"] for e in replayed[:3]]
        assert cursors == sorted(cursors) and cursors[0] > cursor
        assert all(e["space_id"] == space for e in replayed[:3])
        wait_until(lambda: feed.poll() is None, 1)
