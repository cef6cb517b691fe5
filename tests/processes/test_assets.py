"""Fault injection for unit assets with real processes: a ``wharf api`` (gunicorn), ``wharf
worker`` and ``wharf scheduler`` subprocesses on PostgreSQL + Redis + a real S3-compatible
server (moto's server mode, a dedicated subprocess for this module).

The issue's promise: kill -9 of the API mid-upload and of a worker mid-publish converge;
every asset is either published once or its object deleted; the bucket holds no key the
database does not name.

- kill -9 of the API while it streams two asset bodies: one still arriving (a multipart
  upload in progress), one whose object S3 already holds but whose ``stored`` mark never
  committed (the test holds the upload row's lock so the kill lands exactly there). After a
  restart and the ``sweep_asset_uploads`` and ``retry_deletion_jobs`` sweeps (run here,
  in-process, once ``WHARF_ASSET_UPLOAD_TTL`` passed): both operations failed
  ``upload_abandoned``, no upload or asset row for them, the stored orphan deleted, an
  asset published before the crash intact, and the bucket == ``unit_assets`` keys.
- kill -9 of workers mid-publish: workers paused before the publish commit are killed (an
  operation killed on both of its attempts fails, ``lease_expired``), then workers are
  killed while they hold publish leases under a stream of uploads. Every operation ends
  completed with exactly one asset (the result's ``asset_id``, the uploaded bytes) or
  failed with no asset and its object deleted; the bucket == ``unit_assets`` keys.
- a cancel while the bytes still stream in leaves no object behind: the request's 409
  ``upload_expired`` queues the object it stored, even when the cancel's deletion job ran
  before the object existed (the bug this test found).

Each test gets its own bucket, truncated PostgreSQL databases (created for this module)
and its own Redis namespace in the DB of ``WHARF_TEST_REDIS_URL`` (deleted afterwards);
a file lock serializes the process tests of this label across pytest-xdist workers.
"""
from __future__ import annotations

import hashlib
import http.client
import os
import random
import subprocess
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from sqlalchemy import text

from tests.support.processes import (
    ProcessApi,
    ProcessCluster,
    cluster_for_test,
    databases_fixture,
    redis_fixture,
)
from tests.support.s3 import MotoServer, moto_fixture, s3_client
from tests.support.waiting import free_port, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.redis]

KiB = 1024
MiB = 1024 * KiB
PASSWORD = "correct horse battery staple"
PREFIX = "wharf"
UPLOAD_TTL = 5  # seconds: WHARF_ASSET_UPLOAD_TTL of the API-kill test


def data(seed: int, size: int) -> bytes:
    return random.Random(seed).randbytes(size)


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


# -- fixtures -----------------------------------------------------------------------------------
pg_databases = databases_fixture("wharf_assetproc")
redis_ns = redis_fixture("assets-processes")
moto = moto_fixture()


class Api(ProcessApi):
    """HTTP against the ``wharf api`` subprocess (requests; http.client for bodies sent in
    pieces)."""

    max_wait = 10.0  # longest long-poll of wait_done

    def create_unit(self, space_id: str) -> str:
        r = self.post("/api/resources", json={"space_id": space_id, "name": "Doc",
                                              "unit_type": "doc"},
                      headers={"Idempotency-Key": uuid.uuid4().hex})
        assert r.status_code == 202, r.text
        op = self.wait_done(r.json()["id"], 90)
        assert op["status"] == "completed", op
        return op["result"]["unit_id"]

    def upload(self, unit_id: str, body: bytes, filename: str) -> dict:
        """POST an asset whole; the ``publish_asset`` operation (202)."""
        r = self.post(f"/api/units/{unit_id}/assets", params={"filename": filename},
                      data=body, headers={"Idempotency-Key": uuid.uuid4().hex,
                                          "Content-Type": "application/octet-stream",
                                          "Content-SHA256": sha(body)})
        assert r.status_code == 202, r.text
        return r.json()

    def open_upload(self, unit_id: str, size: int, filename: str) -> http.client.HTTPConnection:
        """Start an asset POST of ``size`` bytes: headers only; the caller sends the body
        (``conn.send``) at its own pace."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        conn.putrequest("POST", f"/api/units/{unit_id}/assets?filename={filename}")
        cookie = "; ".join(f"{c.name}={c.value}" for c in self.http.cookies)
        for name, value in {"Content-Type": "application/octet-stream",
                            "Content-Length": str(size), "Cookie": cookie,
                            "Idempotency-Key": uuid.uuid4().hex}.items():
            conn.putheader(name, value)
        conn.endheaders()
        return conn

    def content(self, asset_id: str) -> bytes:
        r = self.get(f"/api/assets/{asset_id}/content")
        assert r.status_code == 200, r.text
        return r.content

    def listed_assets(self, unit_id: str) -> set[str]:
        ids: set[str] = set()
        cursor = None
        while True:
            params = {"limit": "100", **({"cursor": cursor} if cursor else {})}
            r = self.get(f"/api/units/{unit_id}/assets", params=params)
            assert r.status_code == 200, r.text
            page = r.json()
            ids |= {a["id"] for a in page["items"]}
            cursor = page.get("next_cursor")
            if not cursor:
                return ids


class Cluster(ProcessCluster):
    """One test's bucket, databases, environment and processes."""

    def __init__(self, tmp_path: Path, product_url: str, units_url: str, redis_ns,
                 moto: MotoServer, **env: str):
        self.s3 = s3_client(moto.endpoint)
        self.bucket = f"wharf-assets-{uuid.uuid4().hex[:12]}"
        self.s3.create_bucket(Bucket=self.bucket)
        self.api_port = free_port()
        self.product_url = product_url
        super().__init__(
            tmp_path, product_url, units_url, redis_ns,
            WHARF_BLOB_STORE_URL=f"s3://{self.bucket}/{PREFIX}",
            WHARF_S3_ENDPOINT_URL=moto.endpoint,
            AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test",
            AWS_DEFAULT_REGION="us-east-1", NO_PROXY="127.0.0.1,localhost",
            WHARF_SWEEP_INTERVAL="1", **env)
        from storage.blobstore import S3BlobStore
        self.store = S3BlobStore(self.bucket, PREFIX, client=self.s3)

    # -- processes ---------------------------------------------------------------------------
    def start_api(self, name: str = "api", port: int | None = None,
                  **env: str) -> subprocess.Popen:
        """``wharf api`` (one gunicorn worker) on ``port`` (the cluster's by default), with
        ``env`` over the cluster's settings."""
        saved = dict(self.env)
        self.env.update(env)
        try:
            return self._start(name, ["api", "--port", str(port or self.api_port),
                                      "--workers", "1"])
        finally:
            self.env = saved

    def wait_api(self, proc: subprocess.Popen, timeout: float = 30,
                 port: int | None = None) -> Api:
        api = Api(port or self.api_port)
        self.wait_http(proc, api, timeout)
        return api

    def workers(self) -> list[subprocess.Popen]:
        return [p for p in self.processes
                if p.name.startswith("worker") and p.poll() is None]  # type: ignore[attr-defined]

    def group_of(self, pid: int) -> subprocess.Popen | None:
        """The live ``wharf`` process whose process group ``pid`` belongs to."""
        try:
            pgid = os.getpgid(pid)
        except ProcessLookupError:
            return None
        return next((p for p in self.processes if p.pid == pgid and p.poll() is None), None)

    # -- observations ------------------------------------------------------------------------
    def rows(self, sql: str, **params) -> list:
        with self.engine.connect() as conn:
            return list(conn.execute(text(sql), params).all())

    def scalar(self, sql: str, **params):
        with self.engine.connect() as conn:
            return conn.execute(text(sql), params).scalar()

    def execute(self, sql: str, **params) -> None:
        with self.engine.begin() as conn:
            conn.execute(text(sql), params)

    def stored_keys(self) -> set[str]:
        """The objects (not the shipped deletion ledger, ``ledger/``)."""
        return {k for k in self.store.list_keys() if not k.startswith("ledger/")}

    def asset_keys(self) -> set[str]:
        return {r[0] for r in self.rows("SELECT object_key FROM unit_assets")}

    def multipart_uploads(self) -> list[dict]:
        return self.s3.list_multipart_uploads(Bucket=self.bucket).get("Uploads", [])

    def state(self) -> list[str]:
        ops = self.rows("SELECT id, status, attempts, lease_owner, lease_expires_at, error "
                        "FROM operations WHERE kind = 'publish_asset' ORDER BY created_at")
        uploads = self.rows("SELECT id, operation_id, state, object_key, expires_at "
                            "FROM unit_asset_uploads")
        assets = self.rows("SELECT id, object_key FROM unit_assets")
        jobs = self.rows("SELECT object_key, reason, attempts, next_attempt_at, last_error "
                         "FROM object_deletion_jobs")
        return [f"--- publish_asset operations: {[tuple(map(str, r)) for r in ops]}",
                f"--- uploads: {[tuple(map(str, r)) for r in uploads]}",
                f"--- assets: {[tuple(map(str, r)) for r in assets]}",
                f"--- deletion jobs: {[tuple(map(str, r)) for r in jobs]}",
                f"--- stored keys: {sorted(self.stored_keys())}"]

    def assert_bucket_matches_assets(self) -> set[str]:
        stored, named = self.stored_keys(), self.asset_keys()
        assert stored == named, (f"orphans: {sorted(stored - named)}, "
                                 f"missing: {sorted(named - stored)}\n{self.logs()}")
        return stored


def make_cluster(tmp_path, pg_databases, redis_ns, moto, **env):
    return cluster_for_test(Cluster, tmp_path, pg_databases, redis_ns, moto, **env)


# -- kill -9 of the API mid-upload ----------------------------------------------------------------
def run_sweeps(cluster: Cluster, *names: str) -> dict[str, dict[str, int]]:
    """Run the named sweeps in this process, on the test's database and bucket."""
    from storage.db import Database
    from wharf.infra.clock import utcnow
    from wharf.infra.settings import Settings
    from wharf.retention.sweeps import SWEEPS, SweepContext
    db = Database(cluster.product_url)
    try:
        ctx = SweepContext(db=db, settings=Settings.from_env(cluster.env), now=utcnow(),
                           blob_store=cluster.store)
        out = {}
        for name in names:
            ctx.now = utcnow()
            out[name] = SWEEPS[name](ctx)
        return out
    finally:
        db.dispose()


def test_kill_9_of_the_api_mid_upload_deletes_the_partial_and_the_stored_object(
        tmp_path, pg_databases, redis_ns, moto):
    with make_cluster(tmp_path, pg_databases, redis_ns, moto,
                      WHARF_ASSET_UPLOAD_TTL=str(UPLOAD_TTL)) as cluster:
        api_proc = cluster.start_api()
        worker = cluster.start_worker()
        api = cluster.wait_api(api_proc)
        cluster.wait_worker(worker)
        space = api.login()
        unit = api.create_unit(space)

        # C: published before the crash; it must survive everything below.
        c_bytes = data(1, 300 * KiB)
        c_op = api.wait_done(api.upload(unit, c_bytes, "c.bin")["id"], 90)
        assert c_op["status"] == "completed", c_op
        c_asset = c_op["result"]["asset_id"]

        # B: the whole body sent, the object in S3, the ``stored`` mark held back by the
        # test's lock on the upload row (the API blocks in that UPDATE) when the kill lands.
        b_size = 200 * KiB
        b_bytes = data(2, b_size)
        b_conn = api.open_upload(unit, b_size, "b.bin")
        b_conn.send(b_bytes[:100 * KiB])
        b_id, b_op, b_key = wait_until(lambda: next(iter(cluster.rows(
            "SELECT id, operation_id, object_key FROM unit_asset_uploads "
            "WHERE filename = 'b.bin'")), None), 10, "B's upload row", cluster)
        lock = cluster.engine.connect()
        lock_tx = lock.begin()
        # A: 9 of 12 MiB sent, so at least one multipart part is in S3 when the kill lands.
        a_size = 12 * MiB
        a_bytes = data(3, a_size)
        a_conn = None
        try:
            lock.execute(text("SELECT id FROM unit_asset_uploads WHERE id = :id FOR UPDATE"),
                         {"id": b_id})
            b_conn.send(b_bytes[100 * KiB:])
            wait_until(lambda: b_key in cluster.stored_keys(), 10,
                       "B's object in the bucket", cluster)
            wait_until(lambda: cluster.scalar(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock' AND query ILIKE '%unit_asset_uploads%'"),
                10, "the API to wait on the upload row's lock", cluster)

            a_conn = api.open_upload(unit, a_size, "a.bin")
            for i in range(9):
                a_conn.send(a_bytes[i * MiB:(i + 1) * MiB])
            a_op, a_key = wait_until(lambda: next(iter(cluster.rows(
                "SELECT operation_id, object_key FROM unit_asset_uploads "
                "WHERE filename = 'a.bin'")), None), 10, "A's upload row", cluster)

            def a_parts() -> int:
                ups = [u for u in cluster.multipart_uploads()
                       if u["Key"] == f"{PREFIX}/{a_key}"]
                return ups and len(cluster.s3.list_parts(
                    Bucket=cluster.bucket, Key=ups[0]["Key"],
                    UploadId=ups[0]["UploadId"]).get("Parts", []))

            wait_until(a_parts, 10, "a multipart part of A in S3", cluster)
            cluster.kill_group(api_proc)
            killed_at = time.monotonic()
        finally:
            lock_tx.rollback()
            lock.close()
            for conn in (b_conn, a_conn):
                if conn is not None:
                    conn.close()
        # Both uploads were still ``receiving`` (the deadline had not passed when killed).
        assert {r[0] for r in cluster.rows("SELECT state FROM unit_asset_uploads")} == \
            {"receiving"}
        assert b_key in cluster.stored_keys() and a_key not in cluster.stored_keys()
        assert cluster.asset_keys() == cluster.stored_keys() - {b_key}

        cluster.wait_api(cluster.start_api("api-restarted"))  # same port; ``api`` keeps its
        # cookie (the login session lives in the database)
        restarted_in = time.monotonic() - killed_at
        for op_id in (a_op, b_op):  # pending until their deadline: not yet abandoned
            op = api.op(op_id)
            assert op["status"] == "pending" and not op["done"], op

        # Once the deadline passed, the sweep abandons both and the deletion jobs run.
        wait_until(lambda: cluster.scalar(
            "SELECT bool_and(expires_at < now()) FROM unit_asset_uploads"), UPLOAD_TTL + 5,
            "the uploads' deadline", cluster)
        counts = run_sweeps(cluster, "sweep_asset_uploads")
        assert counts["sweep_asset_uploads"] == {"abandoned": 2, "republished": 0}, counts
        # Their objects go at the reservation's time, five minutes after the deadline (a
        # request finishing its last write would otherwise race the deletion): let it pass.
        assert cluster.scalar("SELECT count(*) FROM object_deletion_jobs "
                              "WHERE next_attempt_at > now()") == 2
        cluster.execute("UPDATE object_deletion_jobs SET next_attempt_at = now()")
        counts.update(run_sweeps(cluster, "retry_deletion_jobs"))
        assert counts["retry_deletion_jobs"].get("deleted", 0) >= 2, counts
        for op_id in (a_op, b_op):
            op = api.op(op_id)
            assert (op["status"], op["error"]["code"]) == ("failed", "upload_abandoned"), op
        assert cluster.scalar("SELECT count(*) FROM unit_asset_uploads") == 0
        assert cluster.scalar("SELECT count(*) FROM object_deletion_jobs") == 0
        assert api.listed_assets(unit) == {c_asset}
        c_key = cluster.scalar("SELECT object_key FROM unit_assets WHERE id = :id", id=c_asset)
        assert cluster.assert_bucket_matches_assets() == {c_key}
        assert b_key not in cluster.stored_keys()
        assert api.content(c_asset) == c_bytes
        # The killed multipart upload of A never became a key (the bucket's lifecycle rule
        # aborts it, docs/operations.md); no other one is left.
        assert {u["Key"] for u in cluster.multipart_uploads()} <= {f"{PREFIX}/{a_key}"}

        # The client retries with a new key: published; the bucket still == the assets.
        again = api.wait_done(api.upload(unit, a_bytes, "a.bin")["id"], 90)
        assert again["status"] == "completed", again
        assert api.content(again["result"]["asset_id"]) == a_bytes
        assert cluster.assert_bucket_matches_assets() == cluster.asset_keys()
        assert len(cluster.asset_keys()) == 2
        print(f"API restarted {restarted_in:.1f}s after SIGKILL; sweeps: {counts}")


# -- kill -9 of workers mid-publish ---------------------------------------------------------------
def test_kill_9_of_workers_mid_publish_publishes_each_asset_once_or_deletes_it(
        tmp_path, pg_databases, redis_ns, moto):
    """Phase 1 (``max_attempts`` 2, via a first API): workers paused before the publish
    commit are killed; operations held on both attempts fail ``lease_expired``, those held
    once are published by the next worker. Phase 2 (``max_attempts`` 5, via a second API):
    32 uploads while three workers are killed as they hold publish leases; all published."""
    with make_cluster(tmp_path, pg_databases, redis_ns, moto,
                      WHARF_ASSET_UPLOAD_TTL="120") as cluster:
        t0 = time.monotonic()
        # max_attempts is fixed when an operation is recorded: by the API that recorded it.
        api1_proc = cluster.start_api("api-1", WHARF_OPERATION_MAX_ATTEMPTS="2")
        api2_port = free_port()
        api2_proc = cluster.start_api("api-2", port=api2_port, WHARF_OPERATION_MAX_ATTEMPTS="5")
        cluster.start_scheduler()
        first = cluster.start_worker("worker-1")
        api = cluster.wait_api(api1_proc)
        api2 = cluster.wait_api(api2_proc, port=api2_port)
        cluster.wait_worker(first)
        space = api.login()
        api2.http.cookies.update(api.http.cookies)
        unit = api.create_unit(space)
        sent: dict[str, bytes] = {}  # operation id -> the bytes uploaded

        def upload(via: Api, i: int, size: int) -> str:
            body = data(100 + i, size)
            op_id = via.upload(unit, body, f"f{i}.bin")["id"]
            sent[op_id] = body
            return op_id

        def held_lapsed() -> set[str]:
            """publish_asset operations running with an expired lease (paused workers)."""
            return {r[0] for r in cluster.rows(
                "SELECT id FROM operations WHERE kind = 'publish_asset' "
                "AND status = 'running' AND lease_expires_at < now()")}

        def outcomes(op_id: str) -> list[str]:
            return [a["outcome"] for a in api.attempts(op_id)]

        # Phase 1: workers paused before the publish commit (verified, not committed) are
        # killed. worker-1 holds the first uploads; the later ones wait behind it.
        cluster.pause_file.touch()
        try:
            phase1 = [upload(api, i, random.Random(i).randint(1, 200) * KiB) for i in range(3)]
            held1 = wait_until(held_lapsed, 20, "worker-1 paused before a commit", cluster)
            phase1 += [upload(api, i, random.Random(i).randint(1, 200) * KiB)
                       for i in range(3, 8)]
            cluster.kill_group(first)
            second = cluster.start_worker("worker-2")
            held2 = wait_until(lambda: (h := held_lapsed()) >= set(phase1) and h, 30,
                               "worker-2 paused with every phase-1 operation", cluster)
            cluster.kill_group(second)
        finally:
            cluster.pause_file.unlink(missing_ok=True)
        workers = [cluster.start_worker("worker-3"), cluster.start_worker("worker-4")]
        phase1_done = {op_id: api.wait_done(op_id, 90) for op_id in phase1}
        for op_id, op in phase1_done.items():
            if op_id in held1:  # killed on both of its attempts: failed, never published
                assert (op["status"], op["error"]["code"]) == ("failed", "lease_expired"), op
                assert outcomes(op_id) == ["lost", "lost"]
            else:  # killed once (paused in worker-2), then published by the next worker
                assert op["status"] == "completed", op
                assert outcomes(op_id) == ["lost", "completed"]
        print(f"phase 1: {len(held1)} held by worker-1 and worker-2 (failed), "
              f"{len(held2) - len(held1)} by worker-2 only (published); "
              f"{time.monotonic() - t0:.1f}s")

        # Phase 2: uploads keep coming while workers are killed as they publish.
        for w in workers:
            cluster.wait_worker(w)
        chaos_hits: set[str] = set()  # operations running under a worker when it was killed
        kills = [0]
        stop = threading.Event()

        def owner_pid(owner: str) -> int:
            return int(owner.split(":")[1])  # default_worker_id: host:pid:thread

        def chaos():
            while kills[0] < 3 and not stop.is_set():
                # Workers hold before their completion commits while the pause file exists
                # (touched before the look, removed after the kill): an operation seen
                # running is still uncommitted when its worker dies, however fast it is.
                cluster.pause_file.touch()
                try:
                    running = cluster.rows(
                        "SELECT id, lease_owner FROM operations WHERE kind = "
                        "'publish_asset' AND status = 'running' AND lease_expires_at > now()")
                    victim = pid = None
                    for _op_id, owner in running:
                        victim, pid = cluster.group_of(owner_pid(owner)), owner_pid(owner)
                        if victim is not None:
                            break
                    if victim is not None:
                        cluster.kill_group(victim)
                finally:
                    cluster.pause_file.unlink(missing_ok=True)
                if victim is None:
                    time.sleep(0.01)
                    continue
                chaos_hits.update(i for i, o in running if owner_pid(o) == pid)
                kills[0] += 1
                cluster.start_worker(f"worker-{4 + kills[0]}")

        killer = threading.Thread(target=chaos, daemon=True)
        killer.start()
        with ThreadPoolExecutor(4) as pool:
            phase2 = list(pool.map(
                lambda i: upload(api2, i, random.Random(i).randint(64, 1024) * KiB),
                range(8, 40)))
        # Until three kills landed or nothing is left to publish.
        wait_until(lambda: kills[0] >= 3 or not cluster.scalar(
            "SELECT count(*) FROM operations WHERE kind = 'publish_asset' "
            "AND status IN ('pending', 'running')"), 60, "the kills or the publishing",
            cluster)
        stop.set()
        killer.join(15)
        assert not killer.is_alive()
        phase2_done = {op_id: api.wait_done(op_id, 60) for op_id in phase2}
        lost = {op_id for op_id in phase2 if "lost" in outcomes(op_id)}
        print(f"phase 2: {kills[0]} workers killed while holding {len(chaos_hits)} "
              f"publishing operation(s); {len(lost)} lost an attempt")
        assert kills[0] >= 1 and lost, "no kill landed while a worker was publishing"
        for op in phase2_done.values():  # killed up to three times, within max_attempts
            assert op["status"] == "completed", (op, cluster.logs())

        # Converged: once a retry_deletion_jobs sweep ran after the last change, every
        # asset is published once or its object deleted, and nothing else is in the bucket.
        ops = {**phase1_done, **phase2_done}
        mark = cluster.scalar("SELECT max(updated_at) FROM operations")
        wait_until(lambda: cluster.scalar(
            "SELECT count(*) FROM schedule_ticks WHERE schedule = 'retry_deletion_jobs' "
            "AND status = 'done' AND started_at > :mark", mark=mark), 20,
            "a retry_deletion_jobs sweep after the last change", cluster)
        payloads = {r[0]: r[1] for r in cluster.rows(
            "SELECT id, payload FROM operations WHERE kind = 'publish_asset'")}
        assets = {r[0]: r for r in cluster.rows(
            "SELECT id, object_key, sha256, size FROM unit_assets")}
        completed = {k: o for k, o in ops.items() if o["status"] == "completed"}
        failed = {k: o for k, o in ops.items() if o["status"] == "failed"}
        assert set(failed) == held1 and len(completed) == 40 - len(held1)
        # Published exactly once: one asset per completed operation, the result's, with the
        # uploaded bytes; one completed attempt each.
        assert set(assets) == {o["result"]["asset_id"] for o in completed.values()}
        assert len(assets) == len(completed)
        for op_id, op in completed.items():
            p = payloads[op_id]
            row = assets[op["result"]["asset_id"]]
            assert op["result"]["asset_id"] == p["asset_id"]
            assert (row.object_key, row.sha256, row.size) == \
                (p["object_key"], sha(sent[op_id]), len(sent[op_id]))
            history = outcomes(op_id)
            assert history.count("completed") == 1 and history[-1] == "completed", history
        for op_id in random.Random(0).sample(sorted(completed), 8) + sorted(lost)[:4]:
            assert api.content(completed[op_id]["result"]["asset_id"]) == sent[op_id]
        # Failed: no asset, no upload row, the object (verified before the kill) gone.
        stored = cluster.stored_keys()
        for op_id in failed:
            assert payloads[op_id]["asset_id"] not in assets
            assert payloads[op_id]["object_key"] not in stored
        assert cluster.scalar("SELECT count(*) FROM unit_asset_uploads") == 0
        assert cluster.scalar("SELECT count(*) FROM object_deletion_jobs") == 0
        assert api.listed_assets(unit) == set(assets)
        assert cluster.assert_bucket_matches_assets() == {r.object_key for r in assets.values()}
        print(f"{len(completed)} published once, {len(failed)} failed with their objects "
              f"deleted; {time.monotonic() - t0:.1f}s")


# -- a cancel while the bytes stream in ------------------------------------------------------------
def test_an_upload_cancelled_while_its_bytes_stream_in_leaves_no_object(
        tmp_path, pg_databases, redis_ns, moto):
    with make_cluster(tmp_path, pg_databases, redis_ns, moto,
                      WHARF_ASSET_UPLOAD_TTL="60") as cluster:
        api_proc = cluster.start_api()
        worker = cluster.start_worker()
        api = cluster.wait_api(api_proc)
        cluster.wait_worker(worker)
        unit = api.create_unit(api.login())
        size = 200 * KiB
        body = data(5, size)
        conn = api.open_upload(unit, size, "late.bin")
        try:
            conn.send(body[:100 * KiB])
            op_id, key = wait_until(lambda: next(iter(cluster.rows(
                "SELECT operation_id, object_key FROM unit_asset_uploads")), None), 10,
                "the upload row", cluster)
            # The submitter cancels the pending operation (GET /api/operations lists it).
            r = api.post(f"/api/operations/{op_id}/cancel")
            assert r.status_code == 200, r.text
            assert (r.json()["status"], r.json()["error"]["code"]) == ("failed", "cancelled")
            # The cancel keeps the reservation (due five minutes after the deadline)
            # instead of deleting now: a deletion now would run before the object exists.
            time.sleep(1.0)
            assert cluster.scalar(
                "SELECT count(*) FROM object_deletion_jobs WHERE object_key = :k "
                "AND next_attempt_at > now() + interval '60 seconds'", k=key) == 1
            conn.send(body[100 * KiB:])
            resp = conn.getresponse()
            answer = resp.read()
        finally:
            conn.close()
        assert resp.status == 409 and json_code(answer) == "upload_expired", answer
        # The request found its upload gone and queued the object it stored, due now: the
        # decision is in the deletion ledger, and the worker runs the job at once (its
        # message goes out on commit; CI once saw it done before the next line could look
        # for the job), so the object is soon gone, and the job with it.
        assert cluster.scalar(
            "SELECT count(*) FROM deletion_records WHERE kind = 'object' AND subject = :k "
            "AND reason = 'asset_upload_abandoned'", k=key) == 1
        wait_until(lambda: key not in cluster.stored_keys() and not cluster.scalar(
            "SELECT count(*) FROM object_deletion_jobs WHERE object_key = :k", k=key), 30,
            "the worker to delete the object the abandoned upload stored", cluster)
        run_sweeps(cluster, "sweep_asset_uploads", "retry_deletion_jobs")
        assert cluster.scalar("SELECT count(*) FROM unit_asset_uploads") == 0
        cluster.assert_bucket_matches_assets()


def json_code(raw: bytes) -> str | None:
    import json
    try:
        return json.loads(raw).get("code")
    except ValueError:
        return None
