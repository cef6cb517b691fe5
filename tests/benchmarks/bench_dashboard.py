"""The operator dashboard at a million operations (PostgreSQL): per-panel and total times.

A throw-away database (``wharf_dash_bench_<random>``, dropped at the end) is migrated and
filled with ``--prefill`` finished operations by ``bench_operations.prefill`` (29 days of
``create_resource`` traffic with their attempts, nodes, resources and audit rows, VACUUM
ANALYZE), then with a busy last hour on top: ``--recent`` operations finished over the last
60 minutes (``--failed-share`` of them failed after three attempts, the others completed,
some slowly) and an open backlog of ``--backlog`` pending operations (half due, half
retrying later) plus ``--running`` running ones, so the hour's panels read more rows than
their scan cap and the open counts are not trivially empty. Then ``--rounds`` rounds of:
``wharf.dashboard.service.snapshot`` with each panel timed, ``GET /api/ops/dashboard`` and
``GET /ops`` through the app in-process (WSGI, no socket: the server's own work: queries,
encoding, HTML), as an operator.

    .venv/bin/python tests/benchmarks/bench_dashboard.py                # 1 M rows: ~3-5 min
    .venv/bin/python tests/benchmarks/bench_dashboard.py --prefill 100000 --rounds 3
    .venv/bin/python tests/benchmarks/bench_dashboard.py --prefill 100000 --backlog 1000000

The GETs are served from the app's per-process snapshot cache (``CACHE_SECONDS``) when the
rounds come faster than it: ``snapshot (total)`` is the uncached cost of a refresh.
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.benchmarks.bench_operations import plain_pg, prefill  # noqa: E402
from tests.benchmarks.harness import log  # noqa: E402

ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/test"
PASSWORD = "benchmark password 1234"
TARGET_SECONDS = 1.0

# The busy hour, then the backlog, on top of the prefill (plain SQL, generate_series).
EXTRA_ROWS = """
INSERT INTO operations (id, kind, status, actor_id, scope_id, idempotency_key,
  request_fingerprint, payload, result, error, attempts, max_attempts, lease_owner,
  lease_expires_at, next_attempt_at, created_at, updated_at, completed_at, key_expires_at)
SELECT md5('recent' || %(seed)s || i), kind, status, %(actor)s::text, %(space)s::text, NULL,
  md5(i::text), '{}'::json, NULL,
  CASE WHEN status = 'failed' THEN json_build_object('code', 'storage_unavailable',
    'message', 'the object store did not answer (attempt ' || attempts || ')',
    'retryable', true) END,
  attempts, 5, NULL, NULL, NULL, created_at, completed_at, completed_at, NULL
FROM (
  SELECT i, (ARRAY['create_resource', 'publish_asset', 'merge_worktree'])[1 + i %% 3] AS kind,
         CASE WHEN random() < %(failed_share)s THEN 'failed' ELSE 'completed' END AS status,
         CASE WHEN i %% 50 = 0 THEN 3 ELSE 1 END AS attempts,
         now() - interval '60 minutes' * random() AS completed_at,
         random() AS r
  FROM generate_series(1, %(recent)s) AS i
) g, LATERAL (SELECT completed_at - (0.02 + CASE WHEN r > 0.99 THEN 120 ELSE r END)
                     * interval '1 s' AS created_at) c"""

OPEN_ROWS = """
INSERT INTO operations (id, kind, status, actor_id, scope_id, idempotency_key,
  request_fingerprint, payload, result, error, attempts, max_attempts, lease_owner,
  lease_expires_at, next_attempt_at, created_at, updated_at, completed_at, key_expires_at)
SELECT md5('open' || %(seed)s || i), 'create_resource',
  CASE WHEN i <= %(running)s THEN 'running' ELSE 'pending' END,
  %(actor)s::text, %(space)s::text, NULL, md5(i::text), '{}'::json, NULL, NULL,
  CASE WHEN i %% 2 = 0 THEN 1 ELSE 0 END, 5,
  CASE WHEN i <= %(running)s THEN 'bench-worker' END,
  CASE WHEN i <= %(running)s THEN now() + interval '1 minute' END,
  CASE WHEN i %% 2 = 0 THEN now() + interval '10 minutes' END,
  now() - interval '1 s' * i, now(), NULL, NULL
FROM generate_series(1, %(backlog)s + %(running)s) AS i"""

EXTRA_ATTEMPTS = """
INSERT INTO operation_attempts (id, operation_id, number, worker_id, started_at, finished_at,
  outcome, error)
SELECT md5(o.id || n), o.id, n, 'bench-host:' || n, o.created_at, o.completed_at,
  CASE WHEN n < o.attempts THEN 'retry' ELSE o.status END, o.error
FROM operations o, generate_series(1, 3) AS n
WHERE o.completed_at > now() - interval '61 minutes' AND o.idempotency_key IS NULL
  AND n <= o.attempts"""


def create_database() -> tuple[str, str]:
    import psycopg
    name = f"wharf_dash_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return name, f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"


def drop_database(name: str) -> None:
    import psycopg
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class Timer:
    def __init__(self) -> None:
        self.times: dict[str, list[float]] = defaultdict(list)

    @contextlib.contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.times[name].append(time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prefill", type=int, default=1_000_000)
    parser.add_argument("--recent", type=int, default=30_000,
                        help="operations finished in the last hour, on top")
    parser.add_argument("--failed-share", type=float, default=0.05)
    parser.add_argument("--backlog", type=int, default=5_000, help="pending operations")
    parser.add_argument("--running", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="do not drop the database")
    args = parser.parse_args()

    import falcon.testing
    import psycopg

    from api.app import create_app
    from migrations.prepare import prepare
    from storage.db import Database
    from wharf.dashboard import service as dashboard
    from wharf.infra.settings import Settings

    name, url = create_database()
    log(f"database {name}")
    try:
        db = Database(url)
        prepare(db.engine, report=lambda *_: None)
        settings = Settings.from_env({"WHARF_DATABASE_URL": url, "WHARF_OPERATORS": "ops",
                                      "WHARF_ARGON2_TIME_COST": "1",
                                      "WHARF_ARGON2_MEMORY_COST": "8",
                                      "WHARF_ARGON2_PARALLELISM": "1"})
        client = falcon.testing.TestClient(create_app(settings, db))
        user = client.simulate_post("/api/users",
                                    json={"username": "ops", "password": PASSWORD}).json
        cookie = client.simulate_post("/api/login-sessions", json={
            "username": "ops", "password": PASSWORD}).cookies["wharf_session"].value
        headers = {"Cookie": f"wharf_session={cookie}"}

        t = time.perf_counter()
        prefill(url, args.prefill, user["id"], user["personal_space_id"])
        log(f"prefill: {args.prefill} operations in {time.perf_counter() - t:.0f}s")
        t = time.perf_counter()
        params = {"seed": uuid.uuid4().hex[:8], "actor": user["id"],
                  "space": user["personal_space_id"], "recent": args.recent,
                  "failed_share": args.failed_share, "backlog": args.backlog,
                  "running": args.running}
        with psycopg.connect(plain_pg(url)) as conn:
            n = conn.execute(EXTRA_ROWS, params).rowcount
            n += conn.execute(OPEN_ROWS, params).rowcount
            m = conn.execute(EXTRA_ATTEMPTS).rowcount
            conn.commit()
        with psycopg.connect(plain_pg(url), autocommit=True) as conn:
            conn.execute("VACUUM (ANALYZE) operations")
            conn.execute("VACUUM (ANALYZE) operation_attempts")
            total = conn.execute("SELECT count(*) FROM operations").fetchone()[0]
        log(f"busy hour and backlog: {n} operations, {m} attempts in "
            f"{time.perf_counter() - t:.0f}s; operations in the table: {total}")

        timer = Timer()
        http: dict[str, list[float]] = defaultdict(list)
        for i in range(args.rounds + 1):  # round 0 warms the caches, not counted
            round_timer = Timer() if i == 0 else timer
            with round_timer("snapshot (total)"):
                d = dashboard.snapshot(db, settings, timer=round_timer)
            for path in ("/api/ops/dashboard", "/ops"):
                start = time.perf_counter()
                r = client.simulate_get(path, headers=headers)
                assert r.status_code == 200, r.text[:300]
                if i:
                    http[f"GET {path}"].append(time.perf_counter() - start)
        log(f"{args.rounds} rounds; last snapshot: finished 24 h "
            f"{sum(c.count for c in d.statuses.finished)} (capped: "
            f"{d.statuses.finished_capped}), open {sum(c.count for c in d.statuses.open)}, "
            f"last hour {d.throughput.completed} completed / {d.throughput.failed} failed "
            f"(capped: {d.throughput.capped}), due {d.queue.due}")
        print(f"\n{'step':28} {'median ms':>10} {'max ms':>10}")
        worst = 0.0
        for label, values in [*timer.times.items(), *http.items()]:
            print(f"{label:28} {1000 * statistics.median(values):10.1f} "
                  f"{1000 * max(values):10.1f}")
            if label.startswith("GET"):
                worst = max(worst, max(values))
        ok = worst < TARGET_SECONDS
        print(f"\nslowest page/JSON answer {1000 * worst:.0f} ms: "
              f"{'OK' if ok else 'ABOVE'} the {TARGET_SECONDS:.0f} s target")
        db.dispose()
        return 0 if ok else 1
    finally:
        if not args.keep:
            drop_database(name)
            log(f"dropped {name}")


if __name__ == "__main__":
    sys.exit(main())
