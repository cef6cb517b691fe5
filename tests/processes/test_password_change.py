"""A password change, and disabling an account, against two ``wharf api`` processes on
PostgreSQL (issue 40 items 1 and 6): the user's other login session is refused at once by
the process that changed the password and by the other within ``WHARF_AUTH_CACHE_SECONDS``
(which had it cached); the session that made the change keeps working on both. A disabled
user is refused by both within the bound, and enabling restores both.
"""
from __future__ import annotations

import subprocess
import time

import pytest

from tests.support.processes import (
    PASSWORD,
    ProcessApi,
    ProcessCluster,
    cluster_fixture,
    databases_fixture,
    redis_fixture,
)
from tests.support.waiting import free_port

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.redis]

pg_databases = databases_fixture("wharf_pw_proc")
redis_ns = redis_fixture("password-change-processes")
BOUND = 2.0


class Cluster(ProcessCluster):
    def __init__(self, *args, **kwargs):
        self.ports = [free_port(), free_port()]
        super().__init__(*args, **kwargs)
        self.env["WHARF_AUTH_CACHE_SECONDS"] = str(BOUND)

    def start_api(self, n: int) -> subprocess.Popen:
        return self._start(f"api{n}", ["api", "--port", str(self.ports[n]), "--workers", "1"])


cluster = cluster_fixture(Cluster)


def test_other_sessions_end_on_every_api_process_within_the_bound(cluster):
    procs = [cluster.start_api(0), cluster.start_api(1)]
    apis = [ProcessApi(port) for port in cluster.ports]
    for proc, api in zip(procs, apis):
        cluster.wait_http(proc, api)
    apis[0].login()  # alice, session one: the one that changes the password
    laptop = ProcessApi(cluster.ports[1])  # session two, on the other process
    r = laptop.post("/api/login-sessions", json={"username": "alice", "password": PASSWORD})
    assert r.status_code == 201, r.text
    laptop_on_0 = ProcessApi(cluster.ports[0])
    laptop_on_0.http.cookies.update(laptop.http.cookies)
    mine_on_1 = ProcessApi(cluster.ports[1])
    mine_on_1.http.cookies.update(apis[0].http.cookies)
    for client in (laptop, laptop_on_0, mine_on_1):
        assert client.get("/api/me").status_code == 200  # now cached in both processes

    r = apis[0].http.put(apis[0].base + "/api/me/password", timeout=30, json={
        "current_password": PASSWORD, "new_password": "a brand new password"})
    changed_at = time.monotonic()
    assert r.status_code == 204, r.text
    assert laptop_on_0.get("/api/me").status_code == 401  # the process that changed it
    while laptop.get("/api/me").status_code == 200:
        assert time.monotonic() - changed_at < BOUND + 1.0, "still accepted past the bound"
        time.sleep(0.1)
    assert laptop.get("/api/me").status_code == 401
    assert apis[0].get("/api/me").status_code == 200  # the session that changed it stays
    assert mine_on_1.get("/api/me").status_code == 200
    r = laptop.post("/api/login-sessions", json={"username": "alice", "password": PASSWORD})
    assert r.status_code == 401


def test_disable_and_enable_reach_every_api_process(cluster):
    """``wharf user disable`` (its own process) is refused by both API processes within the
    bound, session and token alike; ``enable`` restores both (issue 40 item 6)."""
    procs = [cluster.start_api(0), cluster.start_api(1)]
    apis = [ProcessApi(port) for port in cluster.ports]
    for proc, api in zip(procs, apis):
        cluster.wait_http(proc, api)
    apis[0].login()
    r = apis[0].http.post(apis[0].base + "/api/api-tokens", timeout=30,
                          json={"name": "ci", "scopes": ["read"]})
    assert r.status_code == 201, r.text
    token = r.json()["token"]
    clients = []
    for port in cluster.ports:
        by_session, by_token = ProcessApi(port), ProcessApi(port)
        by_session.http.cookies.update(apis[0].http.cookies)
        by_token.http.headers["Authorization"] = f"Bearer {token}"
        clients += [by_session, by_token]
    for c in clients:
        assert c.get("/api/me").status_code == 200  # cached in both processes

    def command(verb: str) -> None:
        done = cluster.run_command("user", verb, "alice")
        assert done.returncode == 0, done.stdout + done.stderr

    for verb, expected in (("disable", 403), ("enable", 200)):
        command(verb)
        at = time.monotonic()
        for c in clients:
            while (status := c.get("/api/me").status_code) != expected:
                assert time.monotonic() - at < BOUND + 1.0, (verb, status)
                time.sleep(0.1)
