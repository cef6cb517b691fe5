"""Which external services the suite can use, and what happens when one is missing.

With ``WHARF_TEST_REQUIRE_SERVICES=1`` (CI) a missing PostgreSQL or Redis fails the test;
otherwise the test is skipped with a message saying what was not covered.

Redis: the suite uses one Redis DB, the one in ``WHARF_TEST_REDIS_URL``, and in it only
keys under its own Dramatiq namespaces (``wharf-test-...``), which it deletes afterwards;
it never runs FLUSHDB or FLUSHALL. :func:`guard_redis` enforces that for every Redis
connection the test processes open.

PostgreSQL: the suite connects to the database in ``WHARF_TEST_POSTGRES_URL`` only to
create and drop its own throw-away databases (``wharf_test_...``, ``wharf_proc_...``),
and writes only to databases it created. :func:`guard_postgres` enforces that.
"""
from __future__ import annotations

import functools
import os
import re
import threading
import time
import uuid
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest

POSTGRES_URL = os.environ.get("WHARF_TEST_POSTGRES_URL",
                              "postgresql+psycopg://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("WHARF_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
# A Redis URL where nothing listens (the "broker down" tests); the guard allows it.
UNREACHABLE_REDIS_URL = "redis://127.0.0.1:1/0"
REQUIRE = os.environ.get("WHARF_TEST_REQUIRE_SERVICES", "") not in ("", "0", "false")


@functools.cache
def postgres_error() -> str | None:
    try:
        import psycopg
        url = POSTGRES_URL.replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(url, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
        return None
    except Exception as exc:
        return f"PostgreSQL at {POSTGRES_URL} unreachable: {exc}"


@functools.cache
def redis_error() -> str | None:
    try:
        import redis
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=3).ping()
        return None
    except Exception as exc:
        return f"Redis at {REDIS_URL} unreachable: {exc}"


def need(error: str | None) -> None:
    if error is None:
        return
    if REQUIRE:
        pytest.fail(f"required service missing (WHARF_TEST_REQUIRE_SERVICES=1): {error}")
    pytest.skip(f"SKIPPED, service not available: {error}")


# -- Redis: one DB, per-test namespaces --------------------------------------------------------
def _target(url: str) -> tuple:
    """(host, port, path, db) that ``url`` addresses, as redis-py parses it."""
    from redis.connection import ConnectionPool
    kw = ConnectionPool.from_url(url).connection_kwargs
    return kw.get("host"), kw.get("port"), kw.get("path"), int(kw.get("db") or 0)


def redis_db() -> int:
    """The one Redis DB the suite may use: the DB number in ``WHARF_TEST_REDIS_URL``."""
    return _target(REDIS_URL)[3]


class RedisNamespace:
    """A fresh Dramatiq namespace (``WHARF_BROKER_NAMESPACE``) in the suite's Redis DB.

    ``url`` is ``WHARF_TEST_REDIS_URL`` with the namespace as the Redis client name, so the
    connections of the ``wharf`` processes started with it can be found (``clients``).
    """

    def __init__(self, label: str):
        import redis
        self.name = f"wharf-test-{label}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        parts = urlsplit(REDIS_URL)
        query = urlencode([*parse_qsl(parts.query), ("client_name", self.name)])
        self.url = parts._replace(query=query).geturl()
        self.client = redis.Redis.from_url(REDIS_URL)

    def keys(self) -> list[bytes]:
        return list(self.client.scan_iter(match=f"{self.name}:*", count=1000))

    def clear(self) -> int:
        """Delete every key of this namespace (and nothing else); returns how many."""
        keys = self.keys()
        return self.client.delete(*keys) if keys else 0

    def clients(self) -> list[dict]:
        """The Redis connections opened with ``url`` (CLIENT LIST, by client name)."""
        return [c for c in self.client.client_list() if c.get("name") == self.name]

    def clients_elsewhere(self) -> list[dict]:
        """Connections opened with ``url`` (by the ``wharf`` processes and in-process
        components of a test) that use another DB than the suite's: must be none.

        A connection is named (HELLO/CLIENT SETNAME) before it SELECTs its DB, so one caught
        mid-handshake shows DB 0 for a moment: only a connection still elsewhere a moment
        later counts (CI once caught one at ``age 0, cmd NULL``)."""
        def elsewhere() -> dict[str, dict]:
            return {c["id"]: c for c in self.clients() if int(c.get("db", -1)) != redis_db()}

        first = elsewhere()
        if not first:
            return []
        time.sleep(0.5)
        return [c for cid, c in elsewhere().items() if cid in first]

    def close(self) -> None:
        self.clear()
        self.client.close()


_FORBIDDEN = {"FLUSHDB", "FLUSHALL", "SWAPDB", "MOVE"}
_allowed_redis: set[tuple] = set()


def allow_redis(host: str, port: int, db: int = 0) -> None:
    """Let this process's Redis connections use a private server the suite started itself
    (``tests/support/sentinel.py``), beside the suite's DB."""
    with _guard_lock:
        _allowed_redis.add((host, port, None, db))
_violations: list[str] = []
_guard_lock = threading.Lock()
_guarded = False


def guard_redis() -> None:
    """Make every Redis connection of this process refuse a DB other than the suite's, and
    refuse FLUSHDB/FLUSHALL (and commands that reach into other DBs). Violations raise in
    the caller and are also recorded, for :func:`violations` (a library could swallow
    the exception)."""
    global _guarded
    with _guard_lock:
        if _guarded:
            return
        from redis.connection import AbstractConnection
        allowed = _allowed_redis
        allowed.update({_target(REDIS_URL), _target(UNREACHABLE_REDIS_URL)})
        original = AbstractConnection.send_command

        def send_command(self, *args, **kwargs):
            target = (getattr(self, "host", None), getattr(self, "port", None),
                      getattr(self, "path", None), int(getattr(self, "db", 0) or 0))
            command = str(args[0]).upper() if args else ""
            problem = None
            if target not in allowed:
                problem = (f"a Redis connection to {target} (host, port, path, db); the suite "
                           f"may use only WHARF_TEST_REDIS_URL={REDIS_URL}")
            elif command in _FORBIDDEN or (command == "SELECT" and len(args) > 1
                                           and int(args[1]) != target[3]):
                problem = f"Redis command {' '.join(map(str, args[:2]))} (never in the suite)"
            if problem:
                _violations.append(problem)
                raise RuntimeError(f"test isolation: {problem}")
            return original(self, *args, **kwargs)

        AbstractConnection.send_command = send_command
        _guarded = True


def violations() -> list[str]:
    """Violations recorded since the last call (and forget them)."""
    found = list(_violations)
    _violations.clear()
    return found


# -- PostgreSQL: only databases the suite created ----------------------------------------------
_created_databases: set[str] = set()
_DATABASE_DDL = re.compile(r'\s*(CREATE|DROP|ALTER)\s+DATABASE\s+(?:IF\s+EXISTS\s+)?"?([^"\s;]+)"?',
                           re.IGNORECASE)
_READ_ONLY = re.compile(r"\s*(SELECT|SHOW|SET|RESET|BEGIN|COMMIT|ROLLBACK|DISCARD)\b",
                        re.IGNORECASE)
_pg_guarded = False


def guard_postgres() -> None:
    """Every PostgreSQL statement of this process must run in a database the suite created
    (CREATE DATABASE, in this process), except reads and CREATE DATABASE on the server of
    ``WHARF_TEST_POSTGRES_URL``; ALTER and DROP DATABASE only of a database it created."""
    global _pg_guarded
    with _guard_lock:
        if _pg_guarded:
            return
        import psycopg

        def check(cursor, statement) -> None:
            if not isinstance(statement, str | bytes):  # psycopg.sql.Composed
                statement = statement.as_string(cursor.connection)
            if isinstance(statement, bytes):
                statement = statement.decode()
            ddl = _DATABASE_DDL.match(statement)
            if ddl and ddl.group(1).upper() == "CREATE":
                _created_databases.add(ddl.group(2))
                return
            if ddl:
                problem = None if ddl.group(2) in _created_databases else \
                    f"{ddl.group(1).upper()} DATABASE {ddl.group(2)!r}, which the suite " \
                    "did not create"
            else:
                database = cursor.connection.info.dbname
                problem = None if database in _created_databases or \
                    _READ_ONLY.match(statement) else \
                    f"{statement.split(None, 1)[0]} in database {database!r}, which the suite " \
                    "did not create"
            if problem:
                _violations.append(problem)
                raise RuntimeError(f"test isolation: {problem}")

        # On the driver's cursors, so that what SQLAlchemy executes and what runs on the
        # driver directly (storage.driver) are both checked.
        def guarded(method):
            def run(self, query, *args, **kwargs):
                check(self, query)
                return method(self, query, *args, **kwargs)
            return run

        for cls in (psycopg.Cursor, psycopg.ServerCursor):
            for name in ("execute", "executemany"):
                if name in vars(cls):
                    setattr(cls, name, guarded(vars(cls)[name]))
        _pg_guarded = True


# -- RabbitMQ: one vhost, per-test queue-name prefixes -------------------------------------------
RABBITMQ_URL = os.environ.get("WHARF_TEST_RABBITMQ_URL",
                              "amqp://guest:guest@127.0.0.1:5672/%2F")


@functools.cache
def rabbitmq_error() -> str | None:
    try:
        import pika
        params = pika.URLParameters(RABBITMQ_URL)
        params.socket_timeout = params.blocked_connection_timeout = 3
        params.connection_attempts = 1
        pika.BlockingConnection(params).close()
        return None
    except Exception as exc:
        return f"RabbitMQ at {RABBITMQ_URL} unreachable: {exc!r}"


def _rabbitmqctl(*args: str, timeout: float = 60) -> str:
    import subprocess
    out = subprocess.run(["rabbitmqctl", "-q", *args], capture_output=True, text=True,
                         timeout=timeout, check=True)
    return out.stdout


class RabbitNamespace:
    """A fresh ``WHARF_BROKER_NAMESPACE`` on the suite's RabbitMQ vhost: the queues of the
    processes started with it are ``<name>.<queue>`` (and their ``.DQ``/``.XQ``), deleted
    afterwards; no other queue is touched. Its connections carry the client property
    ``connection_name`` = ``wharf <name>`` (``tasks.broker``), so a test can close exactly
    its own (:meth:`close_connections`, the "broker restart")."""

    def __init__(self, label: str):
        self.name = f"wharf-test-{label}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.url = RABBITMQ_URL
        self.vhost = _vhost(RABBITMQ_URL)

    def queues(self) -> list[str]:
        import json
        rows = json.loads(_rabbitmqctl("list_queues", "-p", self.vhost, "name",
                                       "--formatter", "json") or "[]")
        return [r["name"] for r in rows if r["name"].startswith(self.name + ".")]

    def connections(self) -> list[str]:
        """The pids (RabbitMQ's) of this namespace's open connections."""
        import json
        rows = json.loads(_rabbitmqctl("list_connections", "pid", "client_properties",
                                       "--formatter", "json") or "[]")
        mine = f"wharf {self.name}"
        found = []
        for row in rows:
            props = row.get("client_properties") or []
            # [["connection_name", "longstr", "wharf ..."], ...]
            if any(isinstance(p, list) and p[:1] == ["connection_name"] and p[-1] == mine
                   for p in props):
                found.append(str(row["pid"]))
        return found

    def close_connections(self) -> int:
        """Close every connection of this namespace server-side, as a broker restart does
        for its clients; returns how many."""
        pids = self.connections()
        for pid in pids:
            try:
                _rabbitmqctl("close_connection", pid, "wharf test: broker restart")
            except Exception:
                pass  # closed meanwhile
        return len(pids)

    def clients_elsewhere(self) -> list[dict]:
        return []  # (ProcessCluster's Redis check) no Redis in use

    def close(self) -> list[str]:
        """Delete this namespace's queues (and no other); returns those still there after
        that (none, unless something re-declared one meanwhile)."""
        import pika
        names = [n for n in self.queues() if n.startswith(self.name + ".")]  # ours only
        if not names:
            return []
        left = []
        conn = pika.BlockingConnection(pika.URLParameters(self.url))
        try:
            channel = conn.channel()
            for name in names:
                channel.queue_delete(queue=name)
            for name in names:  # gone? (a passive declare of a missing queue: 404)
                try:
                    channel.queue_declare(queue=name, passive=True)
                    left.append(name)
                except pika.exceptions.ChannelClosedByBroker:
                    channel = conn.channel()
        finally:
            conn.close()
        return left


def _vhost(url: str) -> str:
    from urllib.parse import unquote
    path = urlsplit(url).path
    return unquote(path[1:]) if len(path) > 1 else "/"


def create_test_database(conn, name: str, template: str | None = None) -> None:
    """``CREATE DATABASE name`` (on an autocommit connection to the admin database; a copy
    of ``template`` when given), with ``synchronous_commit`` off: a test database is thrown
    away after the run, so its commits need not wait for the WAL flush (visibility between
    sessions is the same)."""
    from sqlalchemy import text
    conn.execute(text(f'CREATE DATABASE "{name}"'
                      + (f' TEMPLATE "{template}"' if template else '')))
    conn.execute(text(f'ALTER DATABASE "{name}" SET synchronous_commit = off'))


def empty_tables(engine, tables) -> None:
    """Delete every row of ``tables`` (given in dependency order, e.g.
    ``metadata.sorted_tables``), children first, in one transaction. A DELETE of a
    near-empty table costs well under a millisecond where a TRUNCATE of the same ~40 tables
    costs ~0.35 s (a new file per table), paid before every PostgreSQL test."""
    with engine.begin() as conn:
        for table in reversed(list(tables)):
            conn.execute(table.delete())


def unit_tables() -> list:
    """The unit store's tables a test empties (its schema record, unitstore_meta, stays)."""
    from storage.unitschema import UnitBase
    return [t for t in UnitBase.metadata.sorted_tables if t.name != "unitstore_meta"]
