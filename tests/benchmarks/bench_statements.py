"""CPU per hot statement: SQLAlchemy's ``Connection.execute`` against
``storage.driver.DriverStatement`` against psycopg alone, in the same run.

A script, not a test. In a throw-away PostgreSQL database it runs N transactions of one
statement each (the space lookup every create runs, ``wharf.spaces.access._SPACE_FACTS_LOCKED``)
three ways on one pooled connection, three rounds each, and prints the client's CPU per
transaction (``time.process_time``) and each way's ratio to psycopg alone (the raw layer
beneath, measured in the same run: this machine's speed drifts by a third within an hour).

    .venv/bin/python tests/benchmarks/bench_statements.py [--n 3000]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sqlalchemy import create_engine, text  # noqa: E402
from sqlalchemy.engine import Connection  # noqa: E402

from migrations.prepare import prepare  # noqa: E402
from storage.driver import DriverStatement  # noqa: E402
from tests.support import services  # noqa: E402
from wharf.spaces.access import _SPACE_FACTS_LOCKED  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=3000, help="transactions per round")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    admin = create_engine(services.POSTGRES_URL, isolation_level="AUTOCOMMIT")
    name = f"wharf_bench_stmt_{uuid.uuid4().hex[:8]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    engine = create_engine(services.POSTGRES_URL.rsplit("/", 1)[0] + "/" + name)
    try:
        prepare(engine, report=lambda *_: None)
        return run(engine, args.n, args.rounds)
    finally:
        engine.dispose()
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def run(engine, n: int, rounds: int) -> int:
    params = {"sid": uuid.uuid4().hex, "uid": uuid.uuid4().hex}
    driver = DriverStatement(_SPACE_FACTS_LOCKED)
    sql = str(_SPACE_FACTS_LOCKED.compile(dialect=engine.dialect))

    def sqlalchemy(conn: Connection) -> None:
        conn.execute(_SPACE_FACTS_LOCKED, params).first()
        conn.commit()

    def on_driver(conn: Connection) -> None:
        driver.first(conn, params)
        conn.commit()

    def psycopg_alone(conn: Connection) -> None:
        raw = conn.connection.driver_connection
        assert raw is not None
        raw.execute(sql, params).fetchone()
        raw.commit()

    ways: dict[str, Callable[[Connection], None]] = {
        "Connection.execute": sqlalchemy, "DriverStatement": on_driver,
        "psycopg alone": psycopg_alone}
    results: dict[str, list[float]] = {w: [] for w in ways}
    for _ in range(rounds):
        for way, fn in ways.items():  # alternated, so drift weighs on each alike
            with engine.connect() as conn:
                for _ in range(100):  # warm: prepared statements, caches
                    fn(conn)
                t0 = time.process_time()
                for _ in range(n):
                    fn(conn)
                results[way].append((time.process_time() - t0) / n * 1e6)
    raw = statistics.median(results["psycopg alone"])
    print(f"one-statement transactions (the space lookup), {n} x {rounds} rounds, "
          "client CPU per transaction:")
    for way, values in results.items():
        med = statistics.median(values)
        print(f"  {way:20s} median {med:6.1f} us  (rounds: "
              f"{', '.join(f'{v:.1f}' for v in values)})  {med / raw:.2f} x psycopg alone")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
