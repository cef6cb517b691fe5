"""Fault injection for uploaded files with real processes: ``wharf api`` (gunicorn),
``wharf worker`` and ``wharf scheduler`` subprocesses on PostgreSQL + Redis + a real
S3-compatible server (moto's server mode, a dedicated subprocess for this module).

Wharf reaches moto through a small TCP proxy (tests/support/faultproxy.py) that can be
switched to refusing connections: an S3 outage without losing the bucket's contents, which
restarting moto would. The tests read the bucket directly from moto (bypassing the proxy).

- kill -9 of the API mid-upload: the session stays ``waiting_for_upload``, no partial
  object becomes visible, a fresh upload succeeds and publishes byte-exact content;
- kill -9 of the worker paused before the completion commit: the next worker finishes the
  operation; exactly one node/resource/blob row; byte-exact content;
- S3 unreachable during completion: the operation retries (``blob_store_unavailable``)
  and completes once S3 is back;
- orphans: after an abort (also one landing while the bytes still stream in), a replace
  that loses an If-Match race and a quarantine, once the scheduler's
  ``retry_deletion_jobs`` sweep has run, the bucket holds exactly the keys the database
  references.

Each test gets its own bucket, truncated PostgreSQL databases (created for this module) and
its own Redis namespace (``WHARF_BROKER_NAMESPACE``) in the DB of ``WHARF_TEST_REDIS_URL``,
whose keys are deleted afterwards (nothing else in Redis is touched); a file lock
serializes the tests of this module across pytest-xdist workers because they measure
recovery and outage times. Bodies are
generated from a seeded PRNG chunk by chunk and hashed on the fly, never held in memory.
"""
from __future__ import annotations

import hashlib
import http.client
import json
import random
import socket
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest
from sqlalchemy import text

from tests.support.faultproxy import FaultProxy
from tests.support.processes import (
    ProcessApi,
    ProcessCluster,
    cluster_for_test,
    databases_fixture,
    redis_fixture,
)
from tests.support.s3 import MotoServer, s3_client
from tests.support.waiting import free_port, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.redis]

MiB = 1024 * 1024
PASSWORD = "correct horse battery staple"
PREFIX = "wharf"
LIVE_SESSION_STATES = ("waiting_for_upload", "uploaded", "verifying")


# -- bodies: seeded, streamed, hashed on the fly ------------------------------------------------
def body(seed: int, size: int, chunk: int = MiB):
    rng = random.Random(seed)
    left = size
    while left:
        n = min(chunk, left)
        yield rng.randbytes(n)
        left -= n


def digest(seed: int, size: int) -> str:
    sha = hashlib.sha256()
    for part in body(seed, size):
        sha.update(part)
    return sha.hexdigest()


# -- fixtures -----------------------------------------------------------------------------------
pg_databases = databases_fixture("wharf_blobproc")
redis_ns = redis_fixture("blobs-processes")


class S3:
    """A dedicated moto server (port chosen free once) and the fault proxy in front of it."""

    def __init__(self):
        self.moto = MotoServer().start()
        self.proxy = FaultProxy("127.0.0.1", self.moto.port, port=free_port()).start()
        # direct to moto: never affected by the proxy
        self.client = s3_client(self.moto.endpoint)

    def close(self):
        self.proxy.close()
        self.moto.stop()


@pytest.fixture(scope="module")
def s3():
    server = S3()
    try:
        yield server
    finally:
        server.close()


class Api(ProcessApi):
    """HTTP against the ``wharf api`` subprocess: requests for JSON, http.client for
    streamed uploads (a body of any size from a generator, with a known Content-Length)."""

    def put_stream(self, path: str, size: int, chunks, headers: dict | None = None,
                   progress=None) -> tuple[int, bytes]:
        """PUT ``size`` bytes from ``chunks``; returns (status, body)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            conn.putrequest("PUT", path)
            cookie = "; ".join(f"{c.name}={c.value}" for c in self.http.cookies)
            for name, value in {"Content-Type": "application/octet-stream",
                                "Content-Length": str(size), "Cookie": cookie,
                                **(headers or {})}.items():
                conn.putheader(name, value)
            conn.endheaders()
            for chunk in chunks:
                conn.send(chunk)
                if progress is not None:
                    progress(len(chunk))
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            conn.close()

    # -- upload helpers ----------------------------------------------------------------------
    def start_upload(self, space_id: str, size: int, filename: str = "data.bin") -> dict:
        r = self.post("/api/blob-upload-sessions",
                      json={"space_id": space_id, "filename": filename, "size": size},
                      headers={"Idempotency-Key": uuid.uuid4().hex})
        assert r.status_code == 201, r.text
        return r.json()

    def put_content(self, session_id: str, seed: int, size: int) -> dict:
        status, raw = self.put_stream(f"/api/blob-upload-sessions/{session_id}/content", size,
                                      body(seed, size))
        assert status == 200, (status, raw[:500])
        return json.loads(raw)

    def complete(self, session_id: str) -> dict:
        r = self.post(f"/api/blob-upload-sessions/{session_id}/complete",
                      headers={"Idempotency-Key": uuid.uuid4().hex})
        assert r.status_code == 202, r.text
        return r.json()

    def session(self, session_id: str) -> dict:
        r = self.get(f"/api/blob-upload-sessions/{session_id}")
        assert r.status_code == 200, r.text
        return r.json()

    def content_digest(self, resource_id: str) -> tuple[int, str]:
        """(size, sha256) of the blob's content, streamed."""
        r = self.get(f"/api/blob-resources/{resource_id}/content", stream=True)
        assert r.status_code == 200, r.text
        sha, size = hashlib.sha256(), 0
        for part in r.iter_content(MiB):
            sha.update(part)
            size += len(part)
        assert size == int(r.headers["content-length"])
        return size, sha.hexdigest()


class Cluster(ProcessCluster):
    """One test's bucket, databases, environment and processes."""

    def __init__(self, tmp_path: Path, product_url: str, units_url: str, redis_ns, s3: S3):
        self.s3 = s3
        self.bucket = f"wharf-proc-{uuid.uuid4().hex[:12]}"
        s3.client.create_bucket(Bucket=self.bucket)
        self.api_port = free_port()
        super().__init__(
            tmp_path, product_url, units_url, redis_ns,
            WHARF_BLOB_STORE_URL=f"s3://{self.bucket}/{PREFIX}",
            WHARF_S3_ENDPOINT_URL=s3.proxy.endpoint,
            AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test",
            AWS_DEFAULT_REGION="us-east-1", NO_PROXY="127.0.0.1,localhost",
            # The outage test needs room for retries while S3 is down.
            WHARF_OPERATION_MAX_ATTEMPTS="30",
            WHARF_SWEEP_INTERVAL="1",
        )
        from storage.blobstore import S3BlobStore
        self.store = S3BlobStore(self.bucket, PREFIX, client=s3.client)  # reads bypass proxy

    # -- processes ---------------------------------------------------------------------------
    def start_api(self, name: str = "api") -> subprocess.Popen:
        return self._start(name, ["api", "--port", str(self.api_port), "--workers", "1"])

    def wait_api(self, proc: subprocess.Popen, timeout: float = 30) -> Api:
        api = Api(self.api_port)
        self.wait_http(proc, api, timeout)
        return api

    def start_all(self) -> Api:
        """API, scheduler and worker started together (their imports overlap)."""
        api_proc = self.start_api()
        self.start_scheduler()
        worker = self.start_worker()
        api = self.wait_api(api_proc)
        self.wait_worker(worker)
        return api

    def state(self) -> list[str]:
        with self.engine.connect() as conn:
            ops = conn.execute(text(
                "SELECT id, kind, status, attempts, error FROM operations "
                "ORDER BY created_at")).all()
            jobs = conn.execute(text(
                "SELECT object_key, reason, attempts, next_attempt_at, last_error "
                "FROM object_deletion_jobs")).all()
            sessions = conn.execute(text(
                "SELECT id, state, error_code, object_key FROM blob_upload_sessions")).all()
        return [f"--- operations: {[tuple(map(str, r)) for r in ops]}",
                f"--- deletion jobs: {[tuple(map(str, r)) for r in jobs]}",
                f"--- upload sessions: {[tuple(map(str, r)) for r in sessions]}",
                f"--- stored keys: {sorted(self.stored_keys())}"]

    def close(self) -> None:
        self.s3.proxy.allow()
        super().close()

    # -- observations ------------------------------------------------------------------------
    def scalar(self, sql: str, **params):
        with self.engine.connect() as conn:
            return conn.execute(text(sql), params).scalar()

    def count(self, table: str) -> int:
        return self.scalar(f"SELECT count(*) FROM {table}")

    def object_key(self, session_id: str) -> str:
        return self.scalar("SELECT object_key FROM blob_upload_sessions WHERE id = :id",
                           id=session_id)

    def full_key(self, key: str) -> str:
        return f"{PREFIX}/{key}"

    def stored_keys(self) -> set[str]:
        """The objects (not the shipped deletion ledger, ``ledger/``)."""
        return {k for k in self.store.list_keys() if not k.startswith("ledger/")}

    def referenced_keys(self) -> set[str]:
        with self.engine.connect() as conn:
            blobs = set(conn.execute(text("SELECT object_key FROM blob_resources")).scalars())
            live = set(conn.execute(text(
                "SELECT object_key FROM blob_upload_sessions WHERE state = ANY(:states)"),
                {"states": list(LIVE_SESSION_STATES)}).scalars())
        return blobs | live

    def multipart_uploads(self, key: str | None = None) -> list[dict]:
        kwargs = {"Bucket": self.bucket}
        if key is not None:
            kwargs["Prefix"] = self.full_key(key)
        return self.s3.client.list_multipart_uploads(**kwargs).get("Uploads", [])


@pytest.fixture
def cluster(tmp_path, pg_databases, redis_ns, s3):
    with cluster_for_test(Cluster, tmp_path, pg_databases, redis_ns, s3) as c:
        yield c


def upload_and_complete(api: Api, space: str, seed: int, size: int) -> dict:
    sess = api.start_upload(space, size)
    api.put_content(sess["id"], seed, size)
    op = api.wait_done(api.complete(sess["id"])["id"], 90)
    assert op["status"] == "completed", op
    return op


# -- tests --------------------------------------------------------------------------------------
def test_kill_9_of_the_api_mid_upload_leaves_nothing_partial(cluster):
    size, seed = 64 * MiB, 1
    api = cluster.start_all()
    space = api.login()
    sess = api.start_upload(space, size, "big.bin")

    sent = [0]
    outcome: dict = {}

    def slow_put():
        def paced():
            for part in body(seed, size):
                time.sleep(0.1)  # ~10 MiB/s: the kill lands well before the end
                yield part
        try:
            outcome["response"] = api.put_stream(
                f"/api/blob-upload-sessions/{sess['id']}/content", size, paced(),
                progress=lambda n: sent.__setitem__(0, sent[0] + n))
        except OSError as exc:
            outcome["error"] = exc

    t0 = time.monotonic()
    thread = threading.Thread(target=slow_put, daemon=True)
    thread.start()

    # Midway: the API is streaming into an S3 multipart upload (each PUT writes a key of its
    # own) and has sent at least a part.
    def parts_uploaded():
        uploads = cluster.multipart_uploads()
        if not uploads:
            return 0
        return len(cluster.s3.client.list_parts(
            Bucket=cluster.bucket, Key=uploads[0]["Key"],
            UploadId=uploads[0]["UploadId"]).get("Parts", []))

    wait_until(parts_uploaded, 30, "a multipart part to reach S3", cluster)
    api_proc = next(p for p in cluster.processes if p.name == "api")  # type: ignore[attr-defined]
    cluster.kill_group(api_proc)
    killed_after, sent_at_kill = time.monotonic() - t0, sent[0]
    thread.join(30)
    assert not thread.is_alive()
    assert "response" not in outcome or outcome["response"][0] != 200, outcome
    assert sent_at_kill < size, "the whole body was sent before the kill"
    print(f"SIGKILL {killed_after:.1f}s into the upload, {sent_at_kill / MiB:.0f} of "
          f"{size // MiB} MiB sent; client saw {outcome.get('error')!r}")

    restarted = time.monotonic()
    cluster.wait_api(cluster.start_api("api-restarted"))  # same port
    print(f"API restarted in {time.monotonic() - restarted:.1f}s")
    # ``api`` keeps its cookie: the login session lives in the database.

    state = api.session(sess["id"])
    assert state["state"] == "waiting_for_upload", state
    assert state["received_size"] is None and state["sha256"] is None, state
    leftovers = cluster.multipart_uploads()
    partial_key = leftovers[0]["Key"]
    listed = cluster.s3.client.list_objects_v2(Bucket=cluster.bucket, Prefix=partial_key)
    assert listed.get("KeyCount", 0) == 0, listed.get("Contents")
    assert cluster.stored_keys() == set()
    # The killed PUT's key stays reserved: a deletion job due when the session expires.
    assert cluster.scalar("SELECT count(*) FROM object_deletion_jobs WHERE object_key = :k "
                          "AND reason = 'upload_reservation'",
                          k=partial_key[len(PREFIX) + 1:]) == 1
    print(f"incomplete multipart uploads left by the killed PUT: {len(leftovers)} "
          f"({[u['UploadId'][:12] for u in leftovers]})")

    t1 = time.monotonic()
    result = api.put_content(sess["id"], seed, size)
    assert result["size"] == size and result["sha256"] == digest(seed, size)
    op = api.wait_done(api.complete(sess["id"])["id"], 60)
    assert op["status"] == "completed", (op, cluster.logs())
    print(f"fresh 64 MiB PUT + complete in {time.monotonic() - t1:.1f}s")
    assert api.content_digest(op["result"]["resource_id"]) == (size, digest(seed, size))
    assert cluster.stored_keys() == cluster.referenced_keys() == {
        cluster.object_key(sess["id"])}


def test_kill_9_of_the_worker_before_the_completion_commit(cluster):
    size, seed = 9 * MiB + 123, 2  # multipart (8 MiB parts): two parts
    api = cluster.start_all()
    first = next(p for p in cluster.processes if p.name == "worker")  # type: ignore[attr-defined]
    space = api.login()
    sess = api.start_upload(space, size)
    api.put_content(sess["id"], seed, size)
    cluster.pause_file.touch()
    try:
        op = api.complete(sess["id"])
        wait_until(lambda: api.op(op["id"])["status"] == "running", 30,
                   "the worker to claim the completion", cluster)
        # Verification renews the lease; once it lapsed while still running, the worker is
        # past the verification and paused before the commit.
        wait_until(lambda: cluster.scalar(
            "SELECT status = 'running' AND lease_expires_at < now() FROM operations "
            "WHERE id = :id", id=op["id"]), 30, "the worker to pause before the commit",
            cluster)
        assert cluster.count("nodes") == cluster.count("blob_resources") == 0
        assert api.session(sess["id"])["state"] == "verifying"
        cluster.kill_group(first)
    finally:
        cluster.pause_file.unlink(missing_ok=True)
    killed_at = time.monotonic()

    cluster.start_worker("second")
    done = api.wait_done(op["id"], 60)
    recovered_in = time.monotonic() - killed_at
    assert done["status"] == "completed", (done, cluster.logs())
    print(f"completion finished {recovered_in:.1f}s after SIGKILL (worker start included)")
    assert recovered_in < 60, recovered_in  # a cold worker start under CI load: 10-20 s
    assert [a["outcome"] for a in api.attempts(op["id"])] == ["lost", "completed"]
    assert (cluster.count("nodes"), cluster.count("resources"),
            cluster.count("blob_resources")) == (1, 1, 1)
    assert api.session(sess["id"])["state"] == "completed"
    assert api.content_digest(done["result"]["resource_id"]) == (size, digest(seed, size))
    assert cluster.stored_keys() == cluster.referenced_keys() == {cluster.object_key(sess["id"])}


def test_s3_unreachable_during_complete_retries_then_completes(cluster):
    size, seed = 2 * MiB + 7, 3
    api = cluster.start_all()
    space = api.login()
    sess = api.start_upload(space, size)
    api.put_content(sess["id"], seed, size)

    cluster.s3.proxy.refuse()
    down_at = time.monotonic()
    try:
        op = api.complete(sess["id"])  # the API does not touch S3 to accept it
        # Two attempts failed and the operation waits for its next one (pending), its
        # error saying why; it is neither failed nor done.
        retrying = wait_until(
            lambda: (o := api.op(op["id"]))["status"] == "pending" and o["attempts"] >= 2
            and (o.get("error") or {}).get("code") == "blob_store_unavailable" and o,
            45, "two attempts failing with blob_store_unavailable", cluster)
        assert not retrying["done"] and retrying["error"]["retryable"] is True
        # The next attempt may already have started (backoff ~0.2-1 s): the attempts seen
        # then are the snapshot's retries, followed only by a running or retried one.
        seen = [a["outcome"] for a in api.attempts(op["id"])]
        n = retrying["attempts"]
        assert seen[:n] == ["retry"] * n and all(o in (None, "retry") for o in seen[n:]), seen
        time.sleep(1.0)  # still down: it keeps retrying, it does not give up
        later = api.op(op["id"])
        assert later["status"] in ("pending", "running") and not later["done"], later
        assert api.session(sess["id"])["state"] == "verifying"
        assert cluster.count("blob_resources") == 0
        print(f"{retrying['attempts']} attempts in {time.monotonic() - down_at:.1f}s "
              f"while S3 refused connections")
    finally:
        cluster.s3.proxy.allow()
    up_at = time.monotonic()
    done = api.wait_done(op["id"], 60)
    assert done["status"] == "completed", (done, cluster.logs())
    print(f"completed {time.monotonic() - up_at:.1f}s after S3 came back, "
          f"after {done['attempts']} attempts")
    history = api.attempts(op["id"])
    assert history[-1]["outcome"] == "completed"
    assert {a["error"]["code"] for a in history[:-1]} == {"blob_store_unavailable"}, history
    assert len(history) == done["attempts"] >= 3
    assert api.content_digest(done["result"]["resource_id"]) == (size, digest(seed, size))
    assert cluster.stored_keys() == cluster.referenced_keys()


def test_abort_lost_replace_and_quarantine_leave_no_orphans(cluster):
    api = cluster.start_all()
    space = api.login()
    t0 = time.monotonic()

    # A published blob whose content two clients will try to replace.
    base = upload_and_complete(api, space, 10, 1 * MiB)
    rid = base["result"]["resource_id"]
    base_key = cluster.scalar("SELECT object_key FROM blob_resources WHERE resource_id = :r",
                              r=rid)
    etag = api.get(f"/api/blob-resources/{rid}").json()["etag"]

    # 1. Abort after the content arrived.
    aborted = api.start_upload(space, 1 * MiB + 1)
    api.put_content(aborted["id"], 11, 1 * MiB + 1)
    aborted_key = cluster.object_key(aborted["id"])
    assert aborted_key in cluster.stored_keys()
    r = api.delete(f"/api/blob-upload-sessions/{aborted['id']}")
    assert r.status_code == 204, r.text

    # 1b. Abort while the content is still streaming in (a multipart upload in progress):
    #     the PUT finishes after the abort and must not leave its object behind.
    racing_size = 16 * MiB  # 1.6 s at the pace below; the abort lands after ~0.9 s
    racing = api.start_upload(space, racing_size)
    racing_reply: dict = {}
    abort_answered = threading.Event()

    def slow_put():
        def paced():
            for i, part in enumerate(body(13, racing_size)):
                time.sleep(0.1)
                if i == racing_size // MiB - 1:
                    # The last MiB waits for the abort's answer (on a loaded machine the
                    # pace alone could finish the PUT first): the PUT surely ends after it.
                    abort_answered.wait(30)
                yield part
        racing_reply["reply"] = api.put_stream(
            f"/api/blob-upload-sessions/{racing['id']}/content", racing_size, paced())

    racer = threading.Thread(target=slow_put, daemon=True)
    racer.start()
    # Each PUT streams into a key of its own: wait for any multipart upload to begin.
    wait_until(lambda: cluster.multipart_uploads(), 30,
               "the racing upload to reach S3", cluster)
    r = api.delete(f"/api/blob-upload-sessions/{racing['id']}")
    abort_answered.set()
    assert r.status_code == 204, r.text
    racer.join(60)
    assert racing_reply["reply"][0] == 409, racing_reply
    assert api.session(racing["id"])["state"] == "aborted"

    # 2. Quarantine: the stored object is swapped (same size) between upload and complete.
    tampered = api.start_upload(space, 512 * 1024 + 3)
    api.put_content(tampered["id"], 12, 512 * 1024 + 3)
    tampered_key = cluster.object_key(tampered["id"])
    cluster.s3.client.put_object(Bucket=cluster.bucket, Key=cluster.full_key(tampered_key),
                                 Body=b"".join(body(99, 512 * 1024 + 3)))
    quarantine_op = api.complete(tampered["id"])

    quarantined = api.wait_done(quarantine_op["id"], 90)
    assert quarantined["status"] == "failed", quarantined
    assert quarantined["error"]["code"] == "verification_failed"
    # 3. Two replaces with the same If-Match: both accepted while the worker holds the first
    #    one before its commit; the second then loses at its own commit.
    cluster.pause_file.touch()
    replies: dict[int, tuple[int, bytes]] = {}
    sizes = {20: 9 * MiB + 5, 21: 1 * MiB + 9}  # one multipart, one single PUT

    def replace(seed: int):
        replies[seed] = api.put_stream(
            f"/api/blob-resources/{rid}/content", sizes[seed], body(seed, sizes[seed]),
            headers={"If-Match": etag, "Idempotency-Key": uuid.uuid4().hex})

    try:
        threads = [threading.Thread(target=replace, args=(s,)) for s in sizes]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert {s: st for s, (st, _) in replies.items()} == {20: 202, 21: 202}, replies
    finally:
        cluster.pause_file.unlink(missing_ok=True)
    ops = {seed: json.loads(raw)["id"] for seed, (_, raw) in replies.items()}
    finished = {seed: api.wait_done(op_id, 90) for seed, op_id in ops.items()}
    statuses = sorted(o["status"] for o in finished.values())
    assert statuses == ["completed", "failed"], finished
    winner = next(s for s, o in finished.items() if o["status"] == "completed")
    loser = next(s for s, o in finished.items() if o["status"] == "failed")
    assert finished[loser]["error"]["code"] == "precondition_failed", finished[loser]
    assert api.content_digest(rid) == (sizes[winner], digest(winner, sizes[winner]))

    assert api.session(aborted["id"])["state"] == "aborted"
    quarantined_session = api.session(tampered["id"])
    assert (quarantined_session["state"], quarantined_session["error_code"]) == \
        ("failed", "verification_failed")

    # Once a retry_deletion_jobs sweep started after the last change, nothing is orphaned.
    mark = cluster.scalar("SELECT max(updated_at) FROM operations")
    wait_until(lambda: cluster.scalar(
        "SELECT count(*) FROM schedule_ticks WHERE schedule = 'retry_deletion_jobs' "
        "AND status = 'done' AND started_at > :mark", mark=mark), 20,
        "a retry_deletion_jobs sweep after the last change", cluster)
    stored, referenced = cluster.stored_keys(), cluster.referenced_keys()
    assert stored == referenced, (f"orphans: {sorted(stored - referenced)}, "
                                  f"missing: {sorted(referenced - stored)}\n{cluster.logs()}")
    current_key = cluster.scalar("SELECT object_key FROM blob_resources WHERE resource_id = :r",
                                 r=rid)
    assert stored == {current_key}
    assert not {aborted_key, tampered_key, base_key} & stored
    assert not cluster.multipart_uploads()  # the racing PUT completed, then was queued
    assert cluster.count("object_deletion_jobs") == 0, cluster.logs()
    assert cluster.multipart_uploads() == []
    print(f"orphan scenario settled in {time.monotonic() - t0:.1f}s; bucket == references "
          f"({len(stored)} key)")



def _expect_continue(api: Api, method: str, path: str, size: int,
                     headers: dict[str, str]) -> tuple[str, socket.socket]:
    """Send only the headers (``Expect: 100-continue``) and return the first status line the
    server answers with, before any body byte is sent."""
    import socket
    sock = socket.create_connection(("127.0.0.1", api.port), timeout=10)
    cookie = "; ".join(f"{c.name}={c.value}" for c in api.http.cookies)
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{api.port}",
             "Content-Type: application/octet-stream", f"Content-Length: {size}",
             "Expect: 100-continue", f"Cookie: {cookie}",
             *(f"{k}: {v}" for k, v in headers.items())]
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        data = sock.recv(65536)
        assert data, f"connection closed before any answer (got {head!r})"
        head += data
    return head.split(b"\r\n", 1)[0].decode(), sock


def _read_rest(sock) -> bytes:
    """Everything until the server closes the connection (it must, the body was unread)."""
    rest = b""
    while True:
        data = sock.recv(65536)
        if not data:
            return rest
        rest += data


@pytest.mark.parametrize("conf", ["packaged", "operator's own"])
def test_refused_uploads_are_refused_before_the_body_is_sent(cluster, conf, tmp_path):
    """``Expect: 100-continue``: a PUT that will be refused (428 without If-Match, 412 on a
    stale one, 400 on a size that is not the session's, 409 on an aborted session) gets its
    final answer without ``100 Continue`` and before the client sent any body byte; the
    connection is then closed. An acceptable PUT gets ``100 Continue`` and succeeds. With
    with the packaged gunicorn configuration and with an operator's own file (``wharf api``
    chains the hook before whatever the file configures)."""
    if conf != "packaged":
        own = tmp_path / "gunicorn.conf.py"
        own.write_text("worker_class = 'gthread'\nworkers = 1\nthreads = 4\n")
        cluster.env["WHARF_GUNICORN_CONF"] = str(own)
    api = cluster.start_all()
    space = api.login()
    op = upload_and_complete(api, space, seed=7, size=1000)
    rid = op["result"]["resource_id"]
    etag = api.get(f"/api/blob-resources/{rid}").json()["etag"]
    content = f"/api/blob-resources/{rid}/content"
    big = 64 * MiB  # never sent
    refused = [
        (content, {"Idempotency-Key": uuid.uuid4().hex}, "428"),
        (content, {"Idempotency-Key": uuid.uuid4().hex, "If-Match": '"stale"'}, "412"),
    ]
    sess = api.start_upload(space, 10)
    refused.append((f"/api/blob-upload-sessions/{sess['id']}/content", {}, "400"))
    aborted = api.start_upload(space, big)
    assert api.delete(f"/api/blob-upload-sessions/{aborted['id']}").status_code == 204
    refused.append((f"/api/blob-upload-sessions/{aborted['id']}/content", {}, "409"))
    for path, headers, status in refused:
        line, sock = _expect_continue(api, "PUT", path, big, headers)
        try:
            assert line.split(" ")[1] == status, (path, line)
            assert b"100 Continue" not in _read_rest(sock)
        finally:
            sock.close()
    # Accepted: 100 Continue first, then the body, then the operation.
    data = b"new content"
    line, sock = _expect_continue(api, "PUT", content, len(data),
                                  {"Idempotency-Key": uuid.uuid4().hex, "If-Match": etag})
    try:
        assert line == "HTTP/1.1 100 Continue", line
        sock.sendall(data)
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += sock.recv(65536)
        assert answer.split(b"\r\n", 1)[0].split(b" ")[1] == b"202", answer[:300]
    finally:
        sock.close()
