"""Benchmark: one sweep over many expired rows, in bounded batches.

Measures `expire_upload_sessions` over N expired upload sessions (default 100,000) on
PostgreSQL (and SQLite with --sqlite): total duration, rows/s, number of transactions and
the longest single batch transaction, against the raw layer beneath: the same UPDATEs as
bare SQL in the same batch size (no ORM, no deletion jobs).

    .venv/bin/python tests/benchmarks/bench_sweeps.py [--rows 100000] [--sqlite]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from datetime import timedelta

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from sqlalchemy import create_engine, text

from migrations.prepare import prepare
from storage.db import Database
from storage.models import BlobUploadSession, Space, User
from wharf.infra.clock import utcnow
from wharf.infra.settings import Settings
from wharf.retention.runner import run_sweep
from wharf.retention.sweeps import SweepContext

PG = os.environ.get("WHARF_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


def fill(db: Database, n: int) -> None:
    past = utcnow() - timedelta(hours=1)
    uid, sid = uuid.uuid4().hex, uuid.uuid4().hex
    with db.write() as s:
        s.add(User(id=uid, username="bench", username_key="bench"))
        s.flush()
        s.add(Space(id=sid, type="personal", name="bench", owner_id=uid))
    for start in range(0, n, 10_000):
        rows = [dict(id=uuid.uuid4().hex, actor_id=uid, idempotency_key=None,
                     request_fingerprint="x", space_id=sid, parent_id=None, filename="f",
                     declared_size=1, state="waiting_for_upload", node_id=uuid.uuid4().hex,
                     resource_id=uuid.uuid4().hex, object_key=f"objects/{uuid.uuid4().hex}",
                     created_at=past, updated_at=past, expires_at=past)
                for _ in range(min(10_000, n - start))]
        with db.write() as s:
            s.execute(BlobUploadSession.__table__.insert(), rows)


def run(url: str, n: int, batch: int) -> dict:
    engine = create_engine(url)
    prepare(engine, report=lambda *_: None)
    engine.dispose()
    db = Database(url)
    fill(db, n)
    settings = Settings.from_env({"WHARF_DATABASE_URL": url})
    longest = [0.0]
    last = [time.monotonic()]

    def on_batch(sweep, number, rows):
        now = time.monotonic()
        longest[0] = max(longest[0], now - last[0])
        last[0] = now

    ctx = SweepContext(db=db, settings=settings, now=utcnow(), batch_size=batch,
                       on_batch=on_batch)
    t0 = time.monotonic()
    last[0] = t0
    counts = run_sweep(ctx, "expire_upload_sessions")
    wharf_s = time.monotonic() - t0
    assert counts["expired"] == n, counts
    # Raw layer: the same state change as bare SQL, same batch size.
    with db.write() as s:
        s.execute(text("UPDATE blob_upload_sessions SET state='waiting_for_upload'"))
    t0 = time.monotonic()
    done = 0
    while True:
        with db.engine.begin() as conn:
            ids = [r[0] for r in conn.execute(text(
                "SELECT id FROM blob_upload_sessions WHERE state='waiting_for_upload' "
                "LIMIT :n"), {"n": batch})]
            if not ids:
                break
            conn.execute(text("UPDATE blob_upload_sessions SET state='expired' "
                              "WHERE id IN :ids").bindparams(
                __import__("sqlalchemy").bindparam("ids", expanding=True)), {"ids": ids})
        done += len(ids)
    raw_s = time.monotonic() - t0
    db.dispose()
    return {"rows": n, "batches": ctx.batches["expire_upload_sessions"],
            "wharf_s": wharf_s, "longest_batch_s": longest[0], "raw_s": raw_s}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--sqlite", action="store_true")
    args = ap.parse_args()
    if args.sqlite:
        tmp = tempfile.mkdtemp()
        url = f"sqlite:///{tmp}/bench.db"
        cleanup = None
    else:
        name = f"wharf_bench_{uuid.uuid4().hex[:8]}"
        admin = create_engine(PG, isolation_level="AUTOCOMMIT")
        with admin.connect() as c:
            c.execute(text(f'CREATE DATABASE "{name}"'))
        url = PG.rsplit("/", 1)[0] + "/" + name

        def cleanup():
            with admin.connect() as c:
                c.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
    try:
        r = run(url, args.rows, args.batch)
    finally:
        if cleanup:
            cleanup()
    backend = "sqlite" if args.sqlite else "postgresql"
    print("| backend | rows | batches | sweep s | rows/s | longest batch txn s | raw SQL s | ratio raw/sweep |")
    print(f"| {backend} | {r['rows']} | {r['batches']} | {r['wharf_s']:.2f} | "
          f"{r['rows'] / r['wharf_s']:.0f} | {r['longest_batch_s']:.3f} | {r['raw_s']:.2f} | "
          f"{r['raw_s'] / r['wharf_s']:.2f} |")


if __name__ == "__main__":
    main()
