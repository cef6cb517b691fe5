"""The suite keeps to the Redis DB and the PostgreSQL server its settings name: a shared
Redis or PostgreSQL loses nothing to `make test`.

Redis: only the DB of WHARF_TEST_REDIS_URL, and in it only the suite's own namespaces.
PostgreSQL: writes only in the throw-away databases the suite creates on the server of
WHARF_TEST_POSTGRES_URL. The guards (tests/support/services.py, installed for every test
by conftest) refuse anything else in the test processes; the process tests check with
CLIENT LIST that the ``wharf`` processes they start are connected to that Redis DB only.
"""
from __future__ import annotations

import pytest
import redis

from tests.support import services


@pytest.fixture
def ns():
    services.need(services.redis_error())
    namespace = services.RedisNamespace("isolation")
    yield namespace
    namespace.close()


def test_a_redis_db_the_settings_do_not_name_is_refused(ns):
    host, port, path, db = services._target(services.REDIS_URL)
    other = redis.Redis(host=host, port=port, unix_socket_path=path, db=(db + 1) % 16)
    try:
        with pytest.raises(RuntimeError, match="test isolation"):
            other.dbsize()
    finally:
        other.close()
    found = services.violations()  # consumed here, so this test itself passes
    assert found and "WHARF_TEST_REDIS_URL" in found[0]


def test_flushdb_is_refused_and_deletes_nothing(ns):
    key = f"{ns.name}:canary"
    ns.client.set(key, "1")
    for flush in (ns.client.flushdb, ns.client.flushall):
        with pytest.raises(RuntimeError, match="test isolation"):
            flush()
    assert ns.client.get(key) == b"1"
    assert len(services.violations()) == 2


def test_a_namespace_deletes_only_its_own_keys(ns):
    neighbour = services.RedisNamespace("neighbour")
    try:
        neighbour.client.set(f"{neighbour.name}:theirs", "keep")
        ns.client.set(f"{ns.name}:a", "1")
        ns.client.hset(f"{ns.name}:b.msgs", "m", "x")
        assert sorted(ns.keys()) == [f"{ns.name}:a".encode(), f"{ns.name}:b.msgs".encode()]
        assert ns.clear() == 2
        assert ns.keys() == []
        assert neighbour.client.get(f"{neighbour.name}:theirs") == b"keep"
    finally:
        neighbour.close()
    assert services.violations() == []


def test_postgres_writes_outside_the_suites_databases_are_refused():
    services.need(services.postgres_error())
    from sqlalchemy import create_engine, text
    admin = create_engine(services.POSTGRES_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            assert conn.execute(text("SELECT 1")).scalar() == 1  # reads are fine
            with pytest.raises(RuntimeError, match="test isolation"):
                conn.execute(text("CREATE TABLE wharf_isolation_probe (x int)"))
            with pytest.raises(RuntimeError, match="test isolation"):
                conn.execute(text('DROP DATABASE IF EXISTS "somebody_elses"'))
            # On the driver directly (storage.driver runs hot statements so) too.
            with pytest.raises(RuntimeError, match="test isolation"):
                conn.connection.driver_connection.execute(
                    "CREATE TABLE wharf_isolation_probe (x int)")
            assert conn.execute(text(
                "SELECT to_regclass('wharf_isolation_probe') IS NULL")).scalar()
    finally:
        admin.dispose()
    assert len(services.violations()) == 3


def test_the_suites_own_database_is_writable(db, backend):
    from sqlalchemy import text
    with db.write() as s:  # a database the suite created (or a SQLite file)
        s.execute(text("DELETE FROM users"))
    assert services.violations() == []
