"""kill -9 during a takeout (issue 38): real ``wharf api``, ``wharf worker`` and ``wharf
scheduler`` processes on PostgreSQL + Redis + a real S3-compatible server (moto's server
mode).

A space of 60 MiB of blobs is taken out in 5 MiB parts. The worker is killed (its whole
process group, SIGKILL) once the run has recorded its first parts; the next worker
resumes from the last recorded part. That one is killed too, paused after the archive is
stored but before the operation's completion commits; the third finds the archive stored
and completes. The operation ends completed once, its attempts lost, lost, completed; the
archive downloads whole (every blob byte for byte, every CRC and manifest SHA-256 right);
no multipart upload is left open; the bucket holds the blobs and the one archive; the
plan's rows are gone."""
from __future__ import annotations

import hashlib
import io
import json
import random
import time
import uuid
import zipfile

import pytest

from tests.processes.test_assets import Api, make_cluster
from tests.support.processes import databases_fixture, redis_fixture
from tests.support.s3 import moto_fixture
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.redis]

MiB = 1024 * 1024
BLOBS = 4  # of 15 MiB: 60 MiB, 12 parts of 5 MiB

pg_databases = databases_fixture("wharf_takeoutproc")
redis_ns = redis_fixture("takeout-processes")
moto = moto_fixture()


def upload_blob(api: Api, space: str, name: str, data: bytes) -> str:
    r = api.post("/api/blob-upload-sessions", json={
        "space_id": space, "filename": name, "size": len(data)},
        headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 201, r.text
    sid = r.json()["id"]
    r = api.http.put(f"{api.base}/api/blob-upload-sessions/{sid}/content", data=data,
                     headers={"Content-Type": "application/octet-stream"}, timeout=60)
    assert r.status_code == 200, r.text
    r = api.post(f"/api/blob-upload-sessions/{sid}/complete",
                 headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 202, r.text
    op = api.wait_done(r.json()["id"], 90)
    assert op["status"] == "completed", op
    return str(op["result"]["resource_id"])


def test_kill_9_mid_takeout_resumes_and_completes_exactly_once(
        tmp_path, pg_databases, redis_ns, moto):
    with make_cluster(tmp_path, pg_databases, redis_ns, moto,
                      WHARF_TAKEOUT_PART_SIZE=str(5 * MiB),
                      WHARF_OPERATION_LEASE_SECONDS="3",
                      WHARF_OPERATION_MAX_ATTEMPTS="5") as cluster:
        api_proc = cluster.start_api()
        cluster.start_scheduler()
        first = cluster.start_worker("worker-1")
        api = cluster.wait_api(api_proc)
        cluster.wait_worker(first)
        space = api.login()
        blobs = {f"b{i}.bin": random.Random(i).randbytes(15 * MiB) for i in range(BLOBS)}
        for name, data in blobs.items():
            upload_blob(api, space, name, data)

        def run() -> tuple[int, int, int] | None:
            rows = cluster.rows("SELECT parts, next_seq, items FROM takeout_runs")
            if not rows:
                return None
            parts = rows[0][0] if isinstance(rows[0][0], list) else json.loads(rows[0][0])
            return len(parts), rows[0][1], rows[0][2]

        r = api.post(f"/api/spaces/{space}/exports",
                     headers={"Idempotency-Key": uuid.uuid4().hex})
        assert r.status_code == 202, r.text
        op_id = r.json()["id"]
        # 1. killed mid-archive, once two parts are recorded (of 12)
        seen = wait_until(lambda: (got := run()) is not None and got[0] >= 2 and got, 60,
                          "two parts recorded", cluster)
        cluster.kill_group(first)
        killed_at = run()
        assert killed_at is not None and killed_at[1] < killed_at[2], (seen, killed_at)
        # 2. the next worker resumes; it is killed after storing the archive, paused
        #    before the completion commits
        cluster.pause_file.touch()
        try:
            second = cluster.start_worker("worker-2")
            wait_until(lambda: (got := run()) is not None and got[1] > got[2], 120,
                       "the archive's last part recorded", cluster)
            time.sleep(0.5)  # past the finish of the upload, into the pause
            cluster.kill_group(second)
        finally:
            cluster.pause_file.unlink(missing_ok=True)
        # 3. the third completes it
        cluster.start_worker("worker-3")
        op = api.wait_done(op_id, 120)
        assert op["status"] == "completed", (op, cluster.logs())
        assert [a["outcome"] for a in api.attempts(op_id)] == ["lost", "lost", "completed"]
        parts_after_resume = run()
        assert parts_after_resume is None  # the plan's rows went with the completion

        result = op["result"]
        got = api.get(result["content_url"], timeout=120)
        assert got.status_code == 200
        body = got.content
        assert len(body) == result["size"]
        assert hashlib.sha256(body).hexdigest() == result["sha256"]
        z = zipfile.ZipFile(io.BytesIO(body))
        assert z.testzip() is None
        for name, data in blobs.items():
            assert z.read(name) == data, name
        manifest = json.loads(z.read("manifest.json"))
        assert sorted(e["path"] for e in manifest["files"]) == sorted(blobs)
        for e in manifest["files"]:
            assert e["sha256"] == hashlib.sha256(blobs[e["path"]]).hexdigest()
        assert cluster.multipart_uploads() == []
        assert f"exports/{op_id}" in cluster.stored_keys()
        assert len([k for k in cluster.stored_keys() if k.startswith("exports/")]) == 1
        assert cluster.scalar("SELECT count(*) FROM exports") == 1
