"""Shared setup for the tests that run real ``wharf`` processes: throw-away PostgreSQL
databases (product + UnitStore) and a fresh Redis namespace in the suite's Redis DB."""
from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import uuid
from pathlib import Path
from typing import Iterator

from sqlalchemy import create_engine, text

from tests.support import services


def _db_url(name: str) -> str:
    return services.POSTGRES_URL.rsplit("/", 1)[0] + "/" + name


@contextlib.contextmanager
def throwaway_databases(prefix: str) -> Iterator[tuple[str, str] | None]:
    """Two PostgreSQL databases (product, UnitStore), migrated, dropped afterwards; None
    when PostgreSQL is unreachable (the tests then skip or fail via ``services.need``)."""
    if services.postgres_error() is not None:
        yield None
        return
    from migrations.prepare import prepare
    from storage.db import Database
    from storage.unitstore import prepare_unitstore_db

    base = f"{prefix}_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    names = (base, base + "_units")
    admin = create_engine(services.POSTGRES_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            for name in names:
                conn.execute(text(f'CREATE DATABASE "{name}"'))
        product_url, units_url = (_db_url(n) for n in names)
        engine = create_engine(product_url)
        try:
            prepare(engine, report=lambda *_: None)
        finally:
            engine.dispose()
        udb = Database(units_url)
        try:
            prepare_unitstore_db(udb, report=lambda *_: None)
        finally:
            udb.dispose()
        yield product_url, units_url
    finally:
        with admin.connect() as conn:
            for name in names:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@contextlib.contextmanager
def redis_namespace(label: str) -> Iterator[services.RedisNamespace | None]:
    """A fresh namespace in WHARF_TEST_REDIS_URL's DB (``WHARF_BROKER_NAMESPACE``), its keys
    deleted afterwards; nothing else in Redis is touched. The tests of one ``label`` run
    one at a time across pytest-xdist workers (a file lock): they measure recovery times
    and would only slow each other down."""
    if services.redis_error() is not None:
        yield None  # the tests skip or fail via ``services.need``
        return
    lock_path = Path(tempfile.gettempdir()) / f"wharf-test-{label}.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ns = services.RedisNamespace(label)
        try:
            yield ns
        finally:
            ns.close()
