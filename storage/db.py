"""Engine and session setup for SQLite and PostgreSQL, and the one transaction helper.

``Database.write()`` opens an explicit transaction (``BEGIN IMMEDIATE`` on SQLite so two
writers queue on the busy timeout instead of failing on lock upgrade); ``Database.read()``
opens a plain one. A lock that outlasts the busy timeout, or a PostgreSQL lock/serialization
failure, surfaces as :class:`storage.errors.DatabaseBusy` (which the core maps to a 503 with
``Retry-After``), never a 500.

The transactional outbox's fast path is a collaborator given to the constructor: rows added
with :func:`send_after_commit` (or inserted with Core and announced with
:func:`announce_after_commit`) go to ``on_outbox_committed`` once their transaction commits.
Likewise the notices a transaction adds with :func:`notify_after_commit` (an operation it
finished: wake whoever waits for it) go to ``on_notices_committed``.

PostgreSQL pools run without a pre-ping (a round trip per checkout). A pooled connection the
server closed (a restart, ``pg_terminate_backend``, an idle timeout) has its socket readable
while idle, so checkout polls the socket (no round trip) and replaces such a connection; one
that dies unseen fails its statement with :class:`ConnectionLost`, a :class:`DatabaseBusy`
(503, retryable), and SQLAlchemy then discards every connection pooled before the failure.
"""
from __future__ import annotations

import contextlib
import json
import logging
import select
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import msgspec
from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError, DisconnectionError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.orm import Session

from storage.driver import DriverStatement, set_autocommit
from storage.errors import DatabaseBusy

OutboxSink = Callable[[list[Any]], None]
"""Receives the outbox rows of a committed write transaction (e.g. sends them to the broker).
It must not raise for a broker that is down: unsent rows are the relay's to send."""

NoticeSink = Callable[[list[Any]], None]
"""Receives the notices of a committed write transaction (:func:`notify_after_commit`),
e.g. publishes the operations it finished to the long-polls waiting for them."""

#: Seconds after which a pooled PostgreSQL connection is replaced at checkout (so a server
#: or proxy idle limit never meets one; the poll below catches most closed ones earlier).
PG_POOL_RECYCLE = 1800
#: PostgreSQL connections one process keeps (``WHARF_DATABASE_POOL_SIZE``): opened as
#: needed and kept once opened, never more. A pool that kept fewer than the threads using
#: it at once opened and closed a connection per request above that (a backend fork each:
#: several CPU-ms on both sides, and tail latency under a burst of long-polls). 40: the 32
#: request threads of a ``wharf api`` worker plus its background threads (heartbeat, outbox
#: marker, relay), with room to spare.
PG_POOL_SIZE = 40
#: Seconds a thread waits for a pooled connection when all are in use, before its request
#: answers 503 ``database_busy`` (retryable).
PG_POOL_TIMEOUT = 10.0


log = logging.getLogger("wharf.storage")


class ConnectionLost(DatabaseBusy):
    """The transaction's connection was found dead (server restart, terminated backend)
    before its COMMIT was sent: nothing of it was committed, so a caller may run it again
    at once (the pool hands out a fresh connection). A connection lost during COMMIT is a
    plain :class:`DatabaseBusy`: whether it committed is unknown."""


T = TypeVar("T")


def retry_lost(work: Callable[[], T]) -> T:
    """Run ``work`` (one or more whole transactions that may safely run twice); if its
    connection is found dead (:class:`ConnectionLost`: nothing was committed), run it
    once more on a fresh connection."""
    try:
        return work()
    except ConnectionLost:
        return work()


_PG_TRANSIENT = {"40001", "40P01", "55P03", "57P01", "57P03", "08006", "08001", "08003"}


def is_transient_db_error(exc: BaseException) -> bool:
    if not isinstance(exc, DBAPIError):
        return False
    if getattr(exc, "connection_invalidated", False):
        return True
    orig = getattr(exc, "orig", None)
    sqlstate = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
    if sqlstate in _PG_TRANSIENT:
        return True
    if isinstance(exc, OperationalError):
        msg = str(orig or exc).lower()
        return "database is locked" in msg or "database table is locked" in msg or "busy" in msg \
            or "could not connect" in msg or "connection" in msg
    return False


LOST = "The database connection was lost; try again."


@contextlib.contextmanager
def _autocommitting(conn: Connection) -> Iterator[None]:
    """The block's statements each commit on their own (the driver's autocommit), and the
    connection is back in transactions before the session's end hands it to the pool
    (after an error too, before the rollback). Whatever the block wrote has committed: a
    caller that runs it again after :class:`ConnectionLost` must be idempotent."""
    if not set_autocommit(conn, True):
        raise ConnectionLost(LOST)
    try:
        yield
    except BaseException:
        set_autocommit(conn, False)
        raise
    if not set_autocommit(conn, False):
        raise ConnectionLost(LOST)


def _enable_wal(cur: Any, busy_timeout_ms: int) -> None:
    """Put the database in WAL mode (it stays so, in the file). Connections opening a new
    file together race to convert it, and SQLite answers the loser "database is locked"
    at once, without its busy handler: retried here within the busy timeout."""
    deadline = time.monotonic() + busy_timeout_ms / 1000.0
    pause = 0.005
    while True:
        try:
            cur.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


def json_text(value: Any) -> str:
    """A JSON column's value as stored: compact JSON by msgspec (C speed: a unit's
    document is read and written whole by checkpoints and merges), or by the standard
    library for what msgspec refuses (a lone surrogate in a string)."""
    try:
        return msgspec.json.encode(value).decode("utf-8")
    except (TypeError, ValueError, OverflowError):
        return json.dumps(value, separators=(",", ":"))  # escaped: \ud800, not the char


def json_value(text: str | bytes) -> Any:
    """A stored JSON column's value (msgspec, or the standard library where msgspec
    refuses: an escaped lone surrogate)."""
    try:
        return msgspec.json.decode(text)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return json.loads(text)


#: The JSON (de)serializers every engine uses.
_JSON_CODEC = {"json_serializer": json_text, "json_deserializer": json_value}


def _sqlite_engine(url: str, busy_timeout_ms: int, immediate: bool) -> Engine:
    path = url.split("///", 1)[1] if "///" in url else ""
    if path and path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(
        url,
        connect_args={"check_same_thread": False, "timeout": busy_timeout_ms / 1000.0,
                      "isolation_level": None},
        pool_pre_ping=False, **_JSON_CODEC,
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        cur = dbapi_conn.cursor()
        _enable_wal(cur, busy_timeout_ms)
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA synchronous=FULL")
        cur.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


def _raise_if_busy(exc: DBAPIError | PoolTimeout) -> None:
    """A transient driver error (lock timeout, serialization failure, lost server), or
    every pooled connection of this process in use for ``PG_POOL_TIMEOUT``, is
    :class:`DatabaseBusy` (503, retryable); anything else is the caller's to raise."""
    if isinstance(exc, PoolTimeout):
        raise DatabaseBusy("Every database connection of this process is in use; try "
                           "again shortly.") from exc
    if is_transient_db_error(exc):
        raise DatabaseBusy("The database is busy; try again shortly.") from exc


def _closed_by_peer(dbapi_conn: Any) -> bool:
    """Whether an idle connection's socket has something to read: the server sent an error
    and closed it (``57P01`` on a terminated backend or a shutdown) or the peer is gone.
    A poll with no timeout: no round trip, unlike a pre-ping."""
    try:
        fd = dbapi_conn.fileno()
    except Exception:
        return True  # closed on our side
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLERR | select.POLLHUP)
    return bool(poller.poll(0))


def _pg_engine(url: str, pool_size: int, pool_timeout: float) -> Engine:
    engine = create_engine(url, pool_pre_ping=False, pool_size=pool_size, max_overflow=0,
                           pool_timeout=pool_timeout, pool_recycle=PG_POOL_RECYCLE,
                           **_JSON_CODEC)

    @event.listens_for(engine, "checkout")
    def _on_checkout(dbapi_conn: Any, _record: Any, _proxy: Any) -> None:
        if _closed_by_peer(dbapi_conn):
            # The pool discards this connection and checks out another (a new one if
            # need be): the documented "pessimistic" disconnect hook.
            raise DisconnectionError("the server closed this pooled connection")

    return engine


def make_engines(url: str, busy_timeout_ms: int = 5000, *, pool_size: int = PG_POOL_SIZE,
                 pool_timeout: float = PG_POOL_TIMEOUT) -> tuple[Engine, Engine]:
    """Return ``(write_engine, read_engine)``; the same engine on PostgreSQL, whose pool
    keeps up to ``pool_size`` connections (see :data:`PG_POOL_SIZE`)."""
    if url.startswith("sqlite"):
        return (_sqlite_engine(url, busy_timeout_ms, True),
                _sqlite_engine(url, busy_timeout_ms, False))
    engine = _pg_engine(url, pool_size, pool_timeout)
    return engine, engine


@event.listens_for(Session, "before_flush")
def _no_writes(session: Session, flush_context: Any, instances: Any) -> None:
    """A read transaction must not write: fail loudly instead of committing by accident."""
    if session.info.get("readonly") and (session.new or session.dirty or session.deleted):
        raise RuntimeError("a read transaction tried to write; use Database.write()")


@dataclass(frozen=True, slots=True)
class OutboxNotice:
    """What the outbox sink reads of a row inserted with Core (the attribute names of
    ``storage.models.OutboxMessage``)."""

    id: str
    queue_name: str
    actor_name: str
    subject_id: str | None
    delay_ms: int = 0
    trace_context: str | None = None  # the trace the message is sent in (W3C traceparent)


def send_after_commit(session: Session, row: Any) -> None:
    """Add an outbox row to the transaction; once it commits, it goes to the database's
    ``on_outbox_committed`` collaborator, if it has one.

    This is the fast path of the transactional outbox: rows are written with the change
    they announce and handed to the broker right after commit. If that hand-off fails or
    the process dies first, the relay sends them later.
    """
    session.add(row)
    announce_after_commit(session, row)


def announce_after_commit(session: Session, row: Any) -> None:
    """Hand ``row`` (an outbox row the caller inserted itself, e.g. with a Core INSERT in
    this transaction; anything with ``id``, ``queue_name``, ``actor_name``,
    ``subject_id`` and ``delay_ms``, such as :class:`OutboxNotice`) to
    ``on_outbox_committed`` once the transaction commits. Nothing is written here."""
    session.info.setdefault("outbox", []).append(row)


def notify_after_commit(session: Session, notices: list[Any]) -> None:
    """Hand ``notices`` to the database's ``on_notices_committed`` once the write
    transaction of ``session`` commits (not if it rolls back). Nothing is written here."""
    session.info.setdefault("notices", []).extend(notices)


def after_commit(session: Session, callback: Callable[[], None]) -> None:
    """Run ``callback`` once the write transaction of ``session`` has committed (not if it
    rolls back), e.g. to drop what a process cached about the rows it changed."""
    session.info.setdefault("after_commit", []).append(callback)


class Database:
    """The product database (or the UnitStore database): engines plus transaction helpers.

    ``on_outbox_committed`` (given by the composition root) receives the outbox rows of
    each committed write transaction (see :func:`send_after_commit`); without it they wait
    for the relay. :meth:`with_outbox_sink` gives the same database (same engines and
    pools) with another one. ``on_notices_committed`` likewise receives the notices of each
    committed write transaction (:func:`notify_after_commit`); without it they are dropped.
    """

    def __init__(self, url: str, busy_timeout_ms: int = 5000, *,
                 on_outbox_committed: OutboxSink | None = None,
                 on_notices_committed: NoticeSink | None = None,
                 engines: tuple[Engine, Engine] | None = None,
                 pool_size: int = PG_POOL_SIZE,
                 pool_timeout: float = PG_POOL_TIMEOUT) -> None:
        self.url = url
        self.write_engine, self.read_engine = engines or make_engines(
            url, busy_timeout_ms, pool_size=pool_size, pool_timeout=pool_timeout)
        self._on_outbox_committed = on_outbox_committed
        self._on_notices_committed = on_notices_committed

    def with_outbox_sink(self, on_outbox_committed: OutboxSink, *,
                         on_notices_committed: NoticeSink | None = None) -> Database:
        """This database (sharing its engines: disposing either disposes both) whose
        committed outbox rows go to ``on_outbox_committed`` (and notices to
        ``on_notices_committed``, if given; this one's otherwise)."""
        return Database(self.url, on_outbox_committed=on_outbox_committed,
                        on_notices_committed=on_notices_committed
                        or self._on_notices_committed,
                        engines=(self.write_engine, self.read_engine))

    @property
    def on_outbox_committed(self) -> OutboxSink | None:
        return self._on_outbox_committed

    @property
    def engine(self) -> Engine:
        return self.write_engine

    @property
    def is_sqlite(self) -> bool:
        return self.url.startswith("sqlite")

    @property
    def is_postgres(self) -> bool:
        return self.url.startswith("postgresql")

    @contextlib.contextmanager
    def _transaction(self, engine: Engine, *, readonly: bool = False,
                     unbundled: bool = False) -> Iterator[Session]:
        session = Session(engine, expire_on_commit=False, autoflush=not readonly)
        session.info["readonly"] = readonly
        session.info["unbundled"] = unbundled
        committing = False
        try:
            with session.begin():
                with _autocommitting(session.connection()) if unbundled \
                        else contextlib.nullcontext():
                    yield session
                committing = True
            if not readonly:
                for callback in session.info.pop("after_commit", ()):
                    try:
                        callback()
                    except Exception:
                        # Committed is committed: a callback's failure must not turn it
                        # into an error for the caller, nor keep the outbox from the
                        # dispatcher (the others still run).
                        log.exception("after-commit callback %r failed", callback)
            outbox = session.info.pop("outbox", None)
            if outbox and self._on_outbox_committed is not None and not readonly:
                try:
                    self._on_outbox_committed(outbox)
                except Exception:  # the rows stay undispatched: the relay sends them
                    log.exception("could not hand %d outbox row(s) over", len(outbox))
            notices = session.info.pop("notices", None)
            if notices and self._on_notices_committed is not None and not readonly:
                try:
                    self._on_notices_committed(notices)
                except Exception:  # a waiter answers at its timeout instead
                    log.exception("could not hand %d notice(s) over", len(notices))
        except DBAPIError as exc:
            if getattr(exc, "connection_invalidated", False) and not committing:
                # (Lost during COMMIT, the outcome is unknown: plain DatabaseBusy below.)
                raise ConnectionLost(LOST) from exc
            _raise_if_busy(exc)
            raise
        except PoolTimeout as exc:
            _raise_if_busy(exc)
            raise
        finally:
            session.close()

    def write(self) -> contextlib.AbstractContextManager[Session]:
        """A read-write transaction, committed when the block ends without error."""
        return self._transaction(self.write_engine)

    def unbundled(self) -> contextlib.AbstractContextManager[Session]:
        """A write session whose statements each commit on their own (PostgreSQL: the
        driver's autocommit, so no ``BEGIN`` and ``COMMIT`` round trips), for a caller
        whose reads need hold nothing and whose writes are one statement: a submission's
        checks, then its one recording statement. No lock outlives its statement
        (``session.info["unbundled"]``; row locks are not taken). Callbacks after commit
        run when the block ends, as with :meth:`write`. A lost connection is
        :class:`ConnectionLost` as in a transaction, though a write statement it cut may
        have committed: the caller's rerun must be idempotent (a submission's is: its
        Idempotency-Key). On SQLite, a write transaction."""
        return self._transaction(self.write_engine, unbundled=self.is_postgres)

    def read(self) -> contextlib.AbstractContextManager[Session]:
        """A read-only transaction: changing a row inside it is an error (see _no_writes)."""
        return self._transaction(self.read_engine, readonly=True)

    def read_one(self, statement: DriverStatement,
                 params: dict[str, Any]) -> dict[str, Any] | None:
        """One row of one statement on a pooled connection, without a Session, on the
        driver where it can, and there in autocommit: one round trip (hot read paths: a
        long-poll's reads). Transient trouble is :class:`DatabaseBusy`."""
        try:
            with self.read_engine.connect() as conn:
                return statement.first_mapping(conn, params, alone=True)
        except (DBAPIError, PoolTimeout) as exc:
            _raise_if_busy(exc)
            raise

    def ping(self) -> None:
        try:
            with self.read_engine.connect() as conn:
                conn.execute(text("SELECT 1"))
        except PoolTimeout as exc:
            _raise_if_busy(exc)
            raise

    def dispose(self) -> None:
        self.write_engine.dispose()
        if self.read_engine is not self.write_engine:
            self.read_engine.dispose()
