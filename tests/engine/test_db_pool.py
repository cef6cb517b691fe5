"""The PostgreSQL pool of one process (``WHARF_DATABASE_POOL_SIZE``): it keeps every
connection it opens up to its size, so a burst of concurrent requests costs no new server
connections the next time; and a process whose connections are all in use answers
``database_busy`` (503, retryable), never an unmapped error."""
from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import text

from storage.db import Database
from storage.driver import DriverStatement
from storage.errors import DatabaseBusy
from tests.support import services


@pytest.fixture
def pg_url(request) -> str:
    services.need(services.postgres_error())
    return request.getfixturevalue("postgres_database")


def _burst(db: Database, n: int) -> set[int]:
    """``n`` threads each hold a transaction at the same moment; the server pids they had."""
    barrier = threading.Barrier(n, timeout=30)
    pids: list[int] = []
    errors: list[BaseException] = []

    def hold() -> None:
        try:
            with db.read() as s:
                pids.append(s.execute(text("SELECT pg_backend_pid()")).scalar_one())
                barrier.wait()  # all n connections are checked out at once
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=hold) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert len(set(pids)) == n
    return set(pids)


def test_a_burst_of_concurrent_requests_reuses_the_pools_connections(pg_url):
    # 24 at once: above the 10 connections the pool used to keep (it opened and closed
    # one per request above that: a backend fork each, under every burst).
    db = Database(pg_url, pool_size=24)
    try:
        first = _burst(db, 24)
        second = _burst(db, 24)
        third = _burst(db, 24)
        assert second == first and third == first  # no connection was opened again
    finally:
        db.dispose()


def test_a_process_out_of_connections_answers_database_busy(pg_url):
    db = Database(pg_url, pool_size=1, pool_timeout=0.3)
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with db.read() as s:
            s.execute(text("SELECT 1"))  # checks the one connection out
            holding.set()
            release.wait(30)

    t = threading.Thread(target=hold)
    t.start()
    try:
        assert holding.wait(30)
        t0 = time.monotonic()
        with pytest.raises(DatabaseBusy), db.write() as s:
            s.execute(text("SELECT 1"))
        with pytest.raises(DatabaseBusy):
            db.read_one(DriverStatement(text("SELECT 1 AS one")), {})
        assert time.monotonic() - t0 < 5  # waited its timeout, not forever
    finally:
        release.set()
        t.join(30)
    # The connection is back: the next request is served.
    assert db.read_one(DriverStatement(text("SELECT 1 AS one")), {}) == {"one": 1}
    db.dispose()


def test_the_setting_declares_the_pools_own_defaults():
    # wharf.infra.settings imports no storage module (wharf --help stays light), so the setting
    # states the engine's defaults again; this keeps the two the same.
    from storage.db import PG_POOL_SIZE, PG_POOL_TIMEOUT
    from wharf.infra.settings import DECLARED, Settings
    assert Settings.from_env({}).database_pool_size == PG_POOL_SIZE
    meaning = next(d for d in DECLARED if d.field == "database_pool_size")
    assert f"waits up to {PG_POOL_TIMEOUT:g} s" in str(vars(meaning))


def test_connections_opening_a_new_sqlite_file_together_all_get_in(tmp_path):
    """Fresh connections race to put a new file in WAL mode, and SQLite answers the loser
    "database is locked" at once, without waiting (what failed two processes migrating a
    new database together in CI). Every one must get in."""
    from storage.db import make_engines

    errors: list[BaseException] = []
    for i in range(40):
        writers = [make_engines(f"sqlite:///{tmp_path}/race{i}.db", 30000)[0]
                   for _ in range(6)]
        barrier = threading.Barrier(len(writers))

        def run(engine) -> None:
            try:
                barrier.wait(timeout=10)
                with engine.begin() as conn:
                    conn.exec_driver_sql("CREATE TABLE IF NOT EXISTS t (x INTEGER)")
                    conn.exec_driver_sql("INSERT INTO t VALUES (1)")
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(w,)) for w in writers]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        with writers[0].connect() as conn:
            mode = conn.exec_driver_sql("PRAGMA journal_mode").scalar()
            rows = conn.exec_driver_sql("SELECT count(*) FROM t").scalar()
        for w in writers:
            w.dispose()
        assert errors == [], errors[:3]
        assert (mode, rows) == ("wal", len(writers))
