"""What the completion's webhook check costs when nobody listens (issue 16).

Every batched completion asks, in its own transaction, which of the batch's actors have
enabled webhooks (``wharf.webhooks.service.announce``: one indexed query per batch). This
times 500 write transactions of a batch of 32 operations from 32 users with no webhook:
a bare transaction (``SELECT 1``) against the same transaction plus ``announce``, on a
throw-away PostgreSQL database and on SQLite, in the same run.

    .venv/bin/python tests/benchmarks/bench_webhook_check.py
"""
from __future__ import annotations

import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session

from storage.db import Database
from storage.models import Base, User
from wharf.infra.ids import new_id
from wharf.webhooks.service import Finished, announce

ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
ROUNDS = 500
BATCH = 32


def run(url: str, label: str) -> None:
    db = Database(url)
    Base.metadata.create_all(db.engine)
    users = [new_id() for _ in range(BATCH)]
    with db.write() as s:
        for u in users:
            s.add(User(id=u, username=u[:20], username_key=u[:20]))
    batch = [Finished(new_id(), u, "completed") for u in users]

    def bare(s: Session) -> None:
        s.connection().execute(text("SELECT 1"))

    def checked(s: Session) -> None:
        bare(s)
        announce(s, batch)

    results: dict[str, float] = {}
    steps: tuple[tuple[str, Callable[[Session], None]], ...] = (("bare", bare),
                                                                ("announce", checked))
    for name, fn in steps:
        start = time.perf_counter()
        for _ in range(ROUNDS):
            with db.write() as s:
                fn(s)
        results[name] = (time.perf_counter() - start) / ROUNDS * 1e6
    extra = results["announce"] - results["bare"]
    print(f"{label:10s} bare {results['bare']:7.0f} µs  with the check "
          f"{results['announce']:7.0f} µs  per batch of {BATCH}: +{extra:.0f} µs "
          f"(+{extra / BATCH:.1f} µs per operation)")
    db.dispose()


def main() -> None:
    name = "wharf_bench_hooks_" + uuid.uuid4().hex[:8]
    admin = create_engine(ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f"CREATE DATABASE {name}"))
    try:
        run(ADMIN_URL.rsplit("/", 1)[0] + "/" + name, "PostgreSQL")
    finally:
        with admin.connect() as c:
            c.execute(text(f"DROP DATABASE {name} WITH (FORCE)"))
        admin.dispose()
    with tempfile.TemporaryDirectory() as tmp:
        run(f"sqlite:///{Path(tmp) / 'bench.db'}", "SQLite")


if __name__ == "__main__":
    main()
