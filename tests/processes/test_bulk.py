"""A batch (``POST /api/operations:batch``, issue 43) against a real ``wharf api`` process
on PostgreSQL, killed with SIGKILL: the batch's transaction commits all of its operations
or none, and a client that resends it gets each of them recorded exactly once.

- ``test_kill_9_during_a_batch_...``: the kill lands inside the transaction. A statement
  trigger on ``operations`` (installed by the test, after sign-up) sleeps in the batch's
  multi-row INSERT, and the test kills the API's process group once ``pg_stat_activity``
  shows that sleep: the database holds none of the batch; the same batch sent again to a
  new API process records exactly its 100 operations, and a real ``wharf worker``
  completes each of them exactly once.
- ``test_kill_9_at_random_moments_...``: the kill lands anywhere, after commits too.
  Client threads post batches (keys derived from the batch number) and the API is killed
  at a random moment, over three rounds; each round also holds one batch mid-body (it must
  record nothing) and one whose 200 the client never reads, the kill coming once the test
  sees that batch's keys committed (all of it stays: the "committed, answer lost" case,
  forced without a test hook). Every batch sent has 0 or 100 operations, outbox rows and
  audit rows, never a part; all of them resent to a new API end with 100 operations each
  (the committed ones replayed with the same ids), completed once each by a worker.
"""
from __future__ import annotations

import http.client
import json
import random
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

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


# --- kill -9 at random moments, before and after commits -------------------------------------

_PATH = "/api/operations:batch"
_ROUNDS = 3
_POSTERS = 2


def batch_items(space: str, b: int) -> list[dict[str, Any]]:
    """Batch ``b``'s 100 items: its keys are ``bulkkill-<b>-<i>``, so the test can count
    them in the database whatever the client saw."""
    return [{"idempotency_key": f"bulkkill-{b:04d}-{i:03d}", "kind": "create_resource",
             "input": {"space_id": space, "name": f"B{b} doc {i}", "unit_type": "doc"}}
            for i in range(100)]


def _cookie_header(api: ProcessApi) -> str:
    return "; ".join(f"{c.name}={c.value}" for c in api.http.cookies)


class HeldBatch:
    """A batch sent on its own connection by a client that stalls: ``half`` sends the
    headers and half the body, then nothing more (the server is still reading the request
    when it dies: the batch must record nothing); otherwise it sends the whole request and
    never reads the answer (the batch commits, and its answer is lost with the process)."""

    def __init__(self, api: ProcessApi, body: bytes, half: bool):
        self.conn = http.client.HTTPConnection("127.0.0.1", api.port, timeout=60)
        self.conn.putrequest("POST", _PATH)
        for name, value in (("Content-Type", "application/json"),
                            ("Content-Length", str(len(body))),
                            ("Cookie", _cookie_header(api))):
            self.conn.putheader(name, value)
        self.conn.endheaders()
        self.conn.send(body[: len(body) // 2] if half else body)

    def close(self) -> None:
        self.conn.close()


class Posters:
    """``_POSTERS`` client threads posting batches one after another (numbers from
    ``next_batch``) to ``api`` until :meth:`stop` or ``limit`` batches started;
    ``answers[b]`` is the 200's JSON of each batch that got one (any other outcome: no
    entry), ``started`` every batch sent."""

    def __init__(self, api: ProcessApi, space: str, next_batch: Callable[[], int],
                 limit: int):
        self.api, self.space, self.next_batch = api, space, next_batch
        self.limit = limit
        self.started: list[int] = []
        self.answers: dict[int, dict[str, Any]] = {}
        self.problems: list[str] = []
        self.cond = threading.Condition()
        self.halt = threading.Event()
        self.threads = [threading.Thread(target=self._run, daemon=True)
                        for _ in range(_POSTERS)]
        for t in self.threads:
            t.start()

    def _run(self) -> None:
        import requests
        http = requests.Session()
        http.trust_env = False
        http.cookies.update(self.api.http.cookies)
        while not self.halt.is_set():
            with self.cond:
                if len(self.started) >= self.limit:
                    return
                b = self.next_batch()
                self.started.append(b)
                self.cond.notify_all()
            try:
                r = http.post(self.api.base + _PATH, json={"items": batch_items(self.space, b)},
                              timeout=60)
            except requests.RequestException:
                return  # the API died under this batch
            if r.status_code != 200 or [(a["status"], a["replay"]) for a in
                                        r.json()["items"]] != [(202, False)] * 100:
                self.problems.append(f"batch {b}: {r.status_code} {r.text[:300]}")
                return
            self.answers[b] = r.json()

    def wait_started(self, n: int, cluster: ProcessCluster) -> None:
        with self.cond:
            if not self.cond.wait_for(lambda: len(self.started) >= n or self.problems, 60):
                raise AssertionError(f"{n} batches did not start\n{cluster.logs()}")
        assert not self.problems, self.problems

    def stop(self) -> None:
        self.halt.set()

    def join(self) -> None:
        for t in self.threads:
            t.join(60)
            assert not t.is_alive(), "a poster did not end after the kill"
        assert not self.problems, self.problems


def _batch_counts(cluster: Cluster, table_sql: str) -> dict[int, int]:
    return {int(b): int(n) for b, n in cluster.sql(
        "SELECT split_part(o.idempotency_key, '-', 2), count(*) FROM operations o "
        f"{table_sql} GROUP BY 1")}


def _other_backends(cluster: Cluster) -> int:
    """Sessions on the product database still inside a statement or a transaction,
    other than the test's own (a killed API's backends finish, or roll back, first)."""
    return int(cluster.sql(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND backend_type = 'client backend' AND pid <> pg_backend_pid() "
        "AND state <> 'idle'")[0][0])


def test_kill_9_at_random_moments_leaves_each_batch_all_or_none(cluster):
    """Three rounds: client threads post batches of 100 to a ``wharf api`` process, and
    the test kills its process group (SIGKILL) at a jittered moment, once a random number
    of batches started and the held batch below committed. Each round also holds one
    batch mid-body (in flight, never complete: none of it may commit) and one whose answer
    is never read (the kill lands after the test saw its 100 keys committed: the answer
    is lost, the operations stay). After each kill, every batch
    sent so far has all of its 100 operations (each with its outbox and audit row) or
    none. Then every batch is sent again to a new API: each ends with exactly its 100
    operations, the committed ones answered as replays with the same ids, and a worker
    completes each operation exactly once."""
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    print(f"seed {seed}")  # shown when the test fails
    counter = iter(range(10_000))
    space = ""
    sent: list[int] = []
    answers: dict[int, dict[str, Any]] = {}
    unread: list[int] = []  # committed, answer never read
    cut: list[int] = []  # killed mid-body
    for round_no in range(_ROUNDS):
        proc, api = cluster.start_api()
        if round_no == 0:
            space = api.login()
        else:
            r = api.post("/api/login-sessions", json={"username": "alice",
                                                      "password": PASSWORD})
            assert r.status_code == 201, r.text
        b_cut, b_unread = next(counter), next(counter)
        held = [HeldBatch(api, json.dumps({"items": batch_items(space, b_cut)}).encode(),
                          half=True)]
        n = rng.randint(1, 3)  # the kill's moment: after n batches started, ...
        posters = Posters(api, space, lambda: next(counter), n + _POSTERS + 1)
        posters.wait_started(n, cluster)
        held.append(HeldBatch(api, json.dumps({"items": batch_items(space, b_unread)})
                              .encode(), half=False))
        # ... and once the held batch committed (the posters' still going on)
        wait_until(lambda: _batch_counts(cluster, "").get(b_unread) == 100, 30,
                   f"batch {b_unread} committed", cluster)
        time.sleep(rng.uniform(0, 0.05))  # jitter: the posters' batches at any stage
        cluster.kill_group(proc)
        posters.stop()
        posters.join()
        for h in held:
            h.close()
        wait_until(lambda: _other_backends(cluster) == 0, 30,
                   "the killed API's sessions to end", cluster)
        sent += [b_cut, b_unread, *posters.started]
        answers.update(posters.answers)
        cut.append(b_cut)
        unread.append(b_unread)

        ops = _batch_counts(cluster, "")
        outbox = _batch_counts(cluster, "JOIN outbox x ON x.subject_id = o.id")
        audit = _batch_counts(cluster, "JOIN audit_logs a ON a.target_id = o.id "
                                       "AND a.action = 'operation.submit'")
        assert set(ops) <= set(sent), (ops, sent)
        partial = {b: (ops.get(b, 0), outbox.get(b, 0), audit.get(b, 0)) for b in sent
                   if (ops.get(b, 0), outbox.get(b, 0), audit.get(b, 0))
                   not in ((0, 0, 0), (100, 100, 100))}
        assert not partial, f"batches neither all nor none: {partial}"
        assert cluster.count("outbox") == sum(ops.values())
        assert cluster.sql("SELECT count(*) FROM audit_logs "
                           "WHERE action = 'operation.submit'")[0][0] == sum(ops.values())
        assert all(ops.get(b) == 100 for b in answers), "an answered batch is missing"
        assert all(b not in ops for b in cut), "a batch cut mid-body recorded something"
        assert all(ops.get(b) == 100 for b in unread)

    # Both outcomes of a batch whose answer the client never got, in every round.
    ops = _batch_counts(cluster, "")
    lost = [b for b in sent if b not in answers]
    none = [b for b in lost if b not in ops]
    committed = [b for b in lost if b in ops]
    print(f"{len(sent)} batches, {len(answers)} answered, unanswered: {len(committed)} "
          f"committed, {len(none)} none")
    assert none and committed  # both outcomes, forced in every round
    assert set(cut) <= set(none) and set(unread) <= set(committed)
    before = {b: i for b, i in cluster.sql(
        "SELECT split_part(idempotency_key, '-', 2)::int, "
        "array_agg(id ORDER BY idempotency_key) FROM operations GROUP BY 1")}

    # Every batch again, to a new API: 100 operations each, the committed ones replayed.
    proc, api = cluster.start_api()
    r = api.post("/api/login-sessions", json={"username": "alice", "password": PASSWORD})
    assert r.status_code == 201, r.text
    worker = cluster.start_worker(threads=4)
    submitted: list[dict[str, Any]] = []
    recorded: dict[int, list[str]] = {}
    for b in sorted(sent):
        r = api.post(_PATH, json={"items": batch_items(space, b)}, timeout=60)
        assert r.status_code == 200, r.text
        items = r.json()["items"]
        replay = b in before
        # (a replay of an operation the worker already completed answers 200)
        assert all(a["status"] in ((200, 202) if replay else (202,)) for a in items), b
        assert all(a["replay"] == replay for a in items), b
        recorded[b] = [a["operation"]["id"] for a in items]
        if replay:
            assert recorded[b] == list(before[b]), f"batch {b} replayed with other ids"
        if b in answers:
            assert recorded[b] == [a["operation"]["id"] for a in answers[b]["items"]], b
        submitted += [a["operation"] for a in items]
    for b in cut:  # recorded by the resend above: a further resend replays them
        items = api.post(_PATH, json={"items": batch_items(space, b)}, timeout=60).json()
        assert all(a["replay"] for a in items["items"])
        assert [a["operation"]["id"] for a in items["items"]] == recorded[b]

    cluster.wait_worker(worker)
    wait_until(lambda: cluster.by_status() == {"completed": len(submitted)}, 60,
               "every operation completed", cluster, interval=0.2)
    assert_completed_exactly_once(cluster, submitted)
