"""Changesets to one unit through two ``wharf api`` processes on PostgreSQL, one of them
killed with SIGKILL again and again while the changesets go on.

Each process keeps its own copy of the document (``storage/unitheads.py``) and learns of
the other's changesets from the revision log. What must hold: every changeset either lands
exactly once, at the revision its answer names, or is refused with 409
``revision_conflict`` (or was cut off by the kill, then landed once or not at all); the
revisions are contiguous; the document both processes serve, and a cold read from the
checkpoint, is the one all landed changesets make.
"""
from __future__ import annotations

import random
import subprocess
import threading
import time
import uuid

import pytest
import requests

from tests.support.processes import (
    ProcessApi,
    ProcessCluster,
    cluster_fixture,
    databases_fixture,
    redis_fixture,
)
from tests.support.waiting import free_port

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.redis]

pg_databases = databases_fixture("wharf_units_proc")
redis_ns = redis_fixture("unit-changesets-processes")


class Cluster(ProcessCluster):
    def __init__(self, *args, **kwargs):
        self.ports = [free_port(), free_port()]
        super().__init__(*args, **kwargs)

    def start_api(self, n: int) -> subprocess.Popen:
        return self._start(f"api{n}", ["api", "--port", str(self.ports[n]), "--workers", "1"])


cluster = cluster_fixture(Cluster)

WRITERS = 4
KILLS = 3


def _unit(api: ProcessApi, space_id: str) -> str:
    r = api.post("/api/resources", json={"space_id": space_id, "name": "Sheet",
                                         "unit_type": "sheet"},
                 headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 202, r.text
    op = api.wait_done(r.json()["id"], 60)
    assert op["status"] == "completed", op
    return str(op["result"]["unit_id"])


def test_two_api_processes_and_kills_land_each_changeset_once_or_refuse_it(cluster):
    procs = [cluster.start_api(0), cluster.start_api(1)]
    worker = cluster.start_worker()
    apis = [ProcessApi(port) for port in cluster.ports]
    for proc, api in zip(procs, apis):
        cluster.wait_http(proc, api)
    cluster.wait_worker(worker)
    space_id = apis[0].login()
    apis[1].http.cookies.update(apis[0].http.cookies)
    unit_id = _unit(apis[0], space_id)

    landed: dict[str, int] = {}       # token -> revision its 200 named
    refused: set[str] = set()         # 409 revision_conflict
    cut: set[str] = set()             # no answer: the process was killed under it
    lock = threading.Lock()
    stop = threading.Event()

    def writer(seed: int) -> None:
        rng = random.Random(seed)
        while not stop.is_set():
            api = apis[rng.randrange(2)]
            token = uuid.uuid4().hex[:12]
            try:
                base = api.get(f"/api/units/{unit_id}", timeout=5).json()["revision"]
                r = api.post(f"/api/units/{unit_id}/changesets", timeout=5,
                             headers={"Prefer": "return=minimal"},
                             json={"base_revision": base, "changes": [
                                 {"op": "add", "path": f"/body/{token}", "value": seed}]})
            except (requests.RequestException, ValueError):
                with lock:
                    cut.add(token)
                time.sleep(0.05)
                continue
            with lock:
                if r.status_code == 200:
                    landed[token] = r.json()["revision"]
                elif r.status_code == 409 and r.json()["code"] == "revision_conflict":
                    refused.add(token)
                else:
                    raise AssertionError(f"{r.status_code} {r.text}")

    threads = [threading.Thread(target=writer, args=(n,), daemon=True) for n in range(WRITERS)]
    for t in threads:
        t.start()
    rng = random.Random(7)
    for _ in range(KILLS):
        time.sleep(rng.uniform(1.0, 2.0))
        victim = rng.randrange(2)
        cluster.kill_group(procs[victim])
        time.sleep(0.3)
        procs[victim] = cluster.start_api(victim)
        cluster.wait_http(procs[victim], apis[victim])
    time.sleep(1.0)
    stop.set()
    for t in threads:
        t.join(30)
    assert len(landed) >= 20 and len(refused) >= 1, (len(landed), len(refused))

    revisions = []
    after = 0
    while True:
        page = apis[0].get(f"/api/units/{unit_id}/changesets",
                           params={"after": str(after), "limit": "200"}).json()
        revisions += page["items"]
        if page["next_after"] is None:
            break
        after = page["next_after"]
    numbers = [r["revision"] for r in revisions]
    assert numbers == list(range(1, len(numbers) + 1))  # contiguous, no gap, no double
    tokens = [r["changes"][0]["path"].rsplit("/", 1)[1] for r in revisions]
    assert len(tokens) == len(set(tokens))  # each changeset at most once
    at = dict(zip(tokens, numbers))
    for token, revision in landed.items():  # every 200 is there, where its answer said
        assert at.get(token) == revision, token
    assert not refused & set(at)  # a 409 wrote nothing
    assert set(at) <= set(landed) | cut  # nothing landed that nobody sent

    expected = {token: 1 for token in tokens}
    for api in apis:
        unit = api.get(f"/api/units/{unit_id}").json()
        assert unit["revision"] == len(numbers)
        assert set(unit["snapshot"]["body"]) == set(expected)
    # and a process that never held the unit reads the same from checkpoint and log
    cluster.api()
    fresh = cluster.components[-1].unitstore.get(unit_id)
    assert fresh is not None and fresh.revision == len(numbers)
    assert set(fresh.snapshot["body"]) == set(expected)
