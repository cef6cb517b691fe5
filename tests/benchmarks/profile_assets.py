"""CPU, SQL statements and S3 requests per small asset (``POST /api/units/{id}/assets`` to
the 202, then ``publish_asset`` executed), in process.

A script, not a test (pytest collects ``test_*.py`` only). Like ``profile_submit.py``
it builds the API app as ``wharfd.runtime.Components`` does (in-process StubBroker), in a
throw-away PostgreSQL database, with the S3 store on a moto server subprocess. It sends N
uploads of 64 KiB through ``falcon.testing.TestClient`` and then runs the executor
(``Executor.run_batch``, ``LIMIT`` per claim) until nothing is due. Prints this process's
CPU per asset (all threads), SQL statements per asset and the S3 requests per asset by
name, for each side. ``PROF=api|worker`` adds a cProfile of that side (``SORT``, ``TOP``).

    N=200 LIMIT=32 .venv/bin/python tests/benchmarks/profile_assets.py
    N=200 LIMIT=1 .venv/bin/python tests/benchmarks/profile_assets.py   # one operation per claim
"""
from __future__ import annotations

import collections
import cProfile
import os
import pstats
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # first: tests/ (the script's folder) has an api/ of its own

from falcon import testing  # noqa: E402
from sqlalchemy import event  # noqa: E402

from tests.benchmarks.harness import migrated_postgres  # noqa: E402
from tests.support.s3 import MotoServer  # noqa: E402
from wharf.infra.settings import Settings  # noqa: E402

N = int(os.environ.get("N", "200"))
LIMIT = int(os.environ.get("LIMIT", "32"))
PROF = os.environ.get("PROF", "")
PASSWORD = "correct horse battery staple"
BUCKET = "wharf-prof"


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def main() -> int:
    os.environ.update({"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
                       "AWS_DEFAULT_REGION": "us-east-1"})
    moto = MotoServer().start()
    tmp = Path(tempfile.mkdtemp(prefix="wharf-prof-"))
    try:
        with migrated_postgres("wharf_test_assetprof") as url:
            import boto3
            boto3.client("s3", endpoint_url=moto.endpoint,
                         region_name="us-east-1").create_bucket(Bucket=BUCKET)
            run(url, tmp, moto)
            return 0
    finally:
        moto.stop()


def run(url: str, tmp: Path, moto: MotoServer) -> None:
    from storage.unitschema import prepare_unitstore_db
    from wharfd.runtime import Components
    settings = Settings.from_env({
        "WHARF_DATA_DIR": str(tmp / "data"), "WHARF_DATABASE_URL": url,
        "WHARF_UNITSTORE_URL": f"{url}_units", "WHARF_BLOB_STORE_URL": f"s3://{BUCKET}/w",
        "WHARF_S3_ENDPOINT_URL": moto.endpoint, "WHARF_ARGON2_TIME_COST": "1",
        "WHARF_ARGON2_MEMORY_COST": "8", "WHARF_ARGON2_PARALLELISM": "1"})
    comps = Components(settings)
    assert comps.unit_db is not None
    prepare_unitstore_db(comps.unit_db, report=lambda *_: None)
    client = testing.TestClient(comps.api_app())
    r = client.simulate_post("/api/users", json={"username": "prof", "password": PASSWORD})
    space_id = r.json["personal_space_id"]
    r = client.simulate_post("/api/login-sessions",
                             json={"username": "prof", "password": PASSWORD})
    cookie = r.headers["set-cookie"].split(";", 1)[0]
    r = client.simulate_post("/api/api-tokens", json={"name": "p", "scopes": ["read", "write"]},
                             headers={"Cookie": cookie, "Origin": "http://falconframework.org"})
    headers = {"Authorization": f"Bearer {r.json['token']}"}
    r = client.simulate_post("/api/resources", json={"space_id": space_id, "parent_id": None,
                                                     "name": "u", "unit_type": "doc"},
                             headers={**headers, "Idempotency-Key": uuid.uuid4().hex})
    comps.dispatcher.flush()
    while comps.executor.run_batch(limit=100, worker_id="prof"):
        pass
    unit_id = client.simulate_get(f"/api/operations/{r.json['id']}",
                                  headers=headers).json["result"]["unit_id"]
    bodies = [os.urandom(64 * 1024) for _ in range(N)]
    s3: collections.Counter[str] = collections.Counter()
    comps.blob_store.client.meta.events.register(  # type: ignore[attr-defined]
        "before-call.s3", lambda model, **_: s3.update([model.name]))
    statements = 0

    def count(*_a: object) -> None:
        nonlocal statements
        statements += 1

    def post(i: int) -> None:
        r = client.simulate_post(
            f"/api/units/{unit_id}/assets", params={"filename": f"s{i}.bin"}, body=bodies[i],
            headers={**headers, "Idempotency-Key": uuid.uuid4().hex,
                     "Content-Type": "application/octet-stream"})
        assert r.status_code == 202, r.text

    for i in range(10):  # warm-up: imports, libmagic, pools
        post(i)
    comps.dispatcher.flush()
    while comps.executor.run_batch(limit=LIMIT, worker_id="prof"):
        pass
    s3.clear()
    event.listen(comps.db.engine, "before_cursor_execute", count)
    prof = cProfile.Profile(time.process_time) if PROF else None
    c0 = _cpu()
    if prof is not None and PROF == "api":
        prof.enable()
    for i in range(N):
        post(i)
    comps.dispatcher.flush()
    if prof is not None and PROF == "api":
        prof.disable()
    c1 = _cpu()
    api_statements, api_s3 = statements, dict(s3)
    statements = 0
    s3.clear()
    if prof is not None and PROF == "worker":
        prof.enable()
    done = 0
    while n := comps.executor.run_batch(limit=LIMIT, worker_id="prof"):
        done += n
    if prof is not None and PROF == "worker":
        prof.disable()
    c2 = _cpu()
    print(f"API    : {1000 * (c1 - c0) / N:.2f} CPU-ms per asset, {api_statements / N:.1f} "
          f"statements, S3 {({k: v / N for k, v in api_s3.items()})}")
    print(f"worker : {done} operations, {LIMIT} per claim: {1000 * (c2 - c1) / N:.2f} CPU-ms "
          f"per asset, {statements / N:.1f} statements, S3 "
          f"{({k: v / N for k, v in s3.items()})}")
    if prof is not None:
        pstats.Stats(prof).sort_stats(os.environ.get("SORT", "cumulative")).print_stats(
            int(os.environ.get("TOP", "45")))
    comps.close()


if __name__ == "__main__":
    raise SystemExit(main())
