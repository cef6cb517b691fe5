"""Process heartbeats: which Wharf processes run, where, and since when.

Rules:

- Every long-running process writes one row of ``process_heartbeats``: each ``wharf
  worker`` child process, ``wharf scheduler``, ``wharf serve`` and each ``wharf api``
  gunicorn worker. Its id is ``host:pid:started-epoch`` (unique: a restarted process with
  a recycled pid is another row). The process's :class:`Heartbeat` upserts the row at
  start and then every ``WHARF_HEARTBEAT_SECONDS`` (``last_seen_at``, the details of the
  moment), and on a clean shutdown marks it stopped (``stopped_at``; the row stays, so
  the dashboard shows a clean stop apart from a silent death). :meth:`Heartbeat.start`
  is idempotent (one thread per writer).
- A failing database never stops the process, nor holds up its shutdown: a beat that
  fails is logged (once per streak of failures) and the next one runs as usual; the
  stopped mark waits at most :data:`STOP_WAIT` for the loop and is skipped when the last
  beat failed (the row goes silent, which is the truth).
- Rows not seen for :data:`RETENTION` (a day) are deleted by the writers themselves:
  each deletes at most :data:`PRUNE_BATCH` stale rows at its first beat and then once per
  :data:`PRUNE_EVERY`, in one ``DELETE`` that skips rows another writer is deleting
  (``FOR UPDATE SKIP LOCKED`` on PostgreSQL; SQLite has one writer), so writers never
  wait on each other. A failed prune is logged (once per streak) apart from the beat,
  which was written. No sweep is needed, and with no process running nothing grows.
- :func:`recent` reads the processes seen within a window, newest first, at most
  :data:`RECENT_LIMIT` of them (the ``last_seen_at`` index bounds the read).
  :meth:`ProcessBeat.state` says ``running``, ``stopped`` (a clean stop) or ``silent``
  (no beat for :data:`MISSED_BEATS` periods: the process died or lost the database). The
  period is the writer's: each beat stores its interval in ``details``
  (:data:`INTERVAL_KEY`); a row without it is judged with the reader's.
- ``details`` is a small JSON object of what is cheap to know (threads, queues, messages
  handled so far, in flight now); what a process puts there is its own.
"""
from __future__ import annotations

import logging
import math
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from importlib import metadata
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.dialects import postgresql, sqlite

from storage.db import Database
from storage.models import ProcessHeartbeat
from storage.results import rowcount
from wharf.infra.clock import iso, utcnow
from wharf.infra.settings import Settings

#: The roles a process writes its heartbeat as.
ROLES = ("api", "worker", "scheduler", "serve")
#: Rows not seen for this long are deleted.
RETENTION = timedelta(days=1)
#: How often one writer deletes stale rows (and at its first beat).
PRUNE_EVERY = 3600.0
#: The most stale rows one prune deletes.
PRUNE_BATCH = 500
#: A process not seen for this many heartbeat periods (and not stopped) is ``silent``.
MISSED_BEATS = 3
#: The key of ``details`` that holds the writer's heartbeat interval (seconds).
INTERVAL_KEY = "heartbeat_seconds"
#: The longest :meth:`Heartbeat.stop` waits for the loop's current beat to end.
STOP_WAIT = 1.0
#: The most rows :func:`recent` answers.
RECENT_LIMIT = 500
#: The widest window :func:`recent` looks back over (a wider one is this one).
MAX_WINDOW = timedelta(days=366)
HOSTNAME_MAX = 200  # the column's length

log = logging.getLogger("wharf.observability.heartbeats")
_T = ProcessHeartbeat.__table__
Details = Callable[[], dict[str, Any]]


@dataclass(frozen=True)
class ProcessBeat:
    """One process as its last heartbeat left it."""

    process_id: str
    role: str
    hostname: str
    pid: int
    started_at: datetime
    last_seen_at: datetime
    stopped_at: datetime | None
    version: str
    details: dict[str, Any]

    def state(self, interval: float, now: datetime | None = None) -> str:
        """``stopped`` (a clean stop), ``running`` (seen within :data:`MISSED_BEATS`
        periods of ``interval`` seconds) or ``silent`` (not seen since: it died or lost the
        database)."""
        if self.stopped_at is not None:
            return "stopped"
        age = ((now or utcnow()) - self.last_seen_at).total_seconds()
        return "running" if age <= MISSED_BEATS * self.interval(interval) else "silent"

    def interval(self, default: float) -> float:
        """The writer's heartbeat interval (stored in ``details``), else ``default``."""
        value = self.details.get(INTERVAL_KEY)
        if (isinstance(value, (int, float)) and not isinstance(value, bool)
                and math.isfinite(value) and value > 0):
            return float(value)
        return default

    def as_json(self) -> dict[str, Any]:
        """The beat as JSON-ready values (timestamps in ISO 8601)."""
        return {"process_id": self.process_id, "role": self.role,
                "hostname": self.hostname, "pid": self.pid,
                "started_at": iso(self.started_at), "last_seen_at": iso(self.last_seen_at),
                "stopped_at": iso(self.stopped_at), "version": self.version,
                "details": self.details}


def wharf_version() -> str:
    try:
        return metadata.version("wharf")[:64]
    except metadata.PackageNotFoundError:
        return "unknown"


def recent(db: Database, within: timedelta, *, limit: int = RECENT_LIMIT) -> list[ProcessBeat]:
    """The processes seen within ``within`` of now, the most recently seen first (stopped
    ones included, with their ``stopped_at``); at most ``min(limit, RECENT_LIMIT)``."""
    cutoff = utcnow() - min(within, MAX_WINDOW)
    limit = max(0, min(limit, RECENT_LIMIT))
    with db.read() as s:
        rows = s.execute(select(*_T.c).where(_T.c.last_seen_at >= cutoff)
                         .order_by(_T.c.last_seen_at.desc(), _T.c.process_id)
                         .limit(limit)).mappings().all()
    return [ProcessBeat(**{**row, "details": row["details"] or {}}) for row in rows]


def prune(db: Database, older_than: timedelta = RETENTION) -> int:
    """Delete up to :data:`PRUNE_BATCH` rows not seen for ``older_than``, in one statement
    that never waits for another writer's prune (on PostgreSQL the rows another
    transaction has locked are skipped); how many."""
    cutoff = utcnow() - older_than
    stale = (select(_T.c.process_id).where(_T.c.last_seen_at < cutoff)
             .order_by(_T.c.last_seen_at).limit(PRUNE_BATCH))
    if db.is_postgres:
        stale = stale.with_for_update(skip_locked=True)
    with db.write() as s:
        result = s.execute(delete(_T).where(_T.c.process_id.in_(stale.scalar_subquery())))
    return rowcount(result)


class Heartbeat:
    """The heartbeat writer of this process (see the module's rules).

    :meth:`beat` writes once; :meth:`start` beats at once and then every ``interval``
    seconds in a daemon thread; :meth:`stop` ends the thread and marks the row stopped."""

    def __init__(self, db: Database, settings: Settings, role: str,
                 details: Details | None = None, *, interval: float | None = None) -> None:
        if role not in ROLES:
            raise ValueError(f"unknown process role {role!r}")
        self.db, self.role, self.details = db, role, details
        chosen = settings.heartbeat_seconds if interval is None else interval
        # Event.wait() refuses a timeout over TIMEOUT_MAX (OverflowError): never ask it to.
        self.interval = min(float(chosen), threading.TIMEOUT_MAX)
        self.hostname = socket.gethostname()[:HOSTNAME_MAX] or "localhost"
        self.pid = os.getpid()
        self.started_at = utcnow()
        self.process_id = f"{self.hostname}:{self.pid}:{int(self.started_at.timestamp())}"
        self.version = wharf_version()
        self._upsert = (postgresql.insert(_T) if db.is_postgres else sqlite.insert(_T))
        self._stop = threading.Event()  # a new one per start(): a late old loop stays stopped
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()  # start()/stop()
        self._next_prune = 0.0  # monotonic; 0: at the first beat
        self._failing = False
        self._prune_failing = False

    def _details(self) -> dict[str, Any]:
        own: dict[str, Any] = {}
        if self.details is not None:
            try:
                own = dict(self.details())
            except Exception:
                log.warning("heartbeat details of %s failed", self.process_id, exc_info=True)
        return {**own, INTERVAL_KEY: self.interval}

    def beat(self) -> None:
        """Upsert this process's row now (and delete stale rows when due). Raises what the
        database raises; :meth:`start`'s loop logs it and goes on."""
        now = utcnow()
        details = self._details()
        stmt = self._upsert.values(
            process_id=self.process_id, role=self.role, hostname=self.hostname,
            pid=self.pid, started_at=self.started_at, last_seen_at=now, stopped_at=None,
            version=self.version, details=details)
        stmt = stmt.on_conflict_do_update(
            index_elements=[_T.c.process_id],
            set_={"last_seen_at": now, "stopped_at": None, "details": details})
        with self.db.write() as s:
            s.execute(stmt)
        if time.monotonic() >= self._next_prune:
            self._next_prune = time.monotonic() + PRUNE_EVERY
            self._safe_prune()

    def _safe_prune(self) -> None:
        """Prune stale rows; a failure is logged (once per streak), never raised: the beat
        itself was written."""
        try:
            removed = prune(self.db)
        except Exception:
            if not self._prune_failing:
                log.warning("stale heartbeat rows not deleted (heartbeat of %s written); "
                            "will try again in %gs", self.process_id, PRUNE_EVERY,
                            exc_info=True)
            self._prune_failing = True
            return
        self._prune_failing = False
        if removed:
            log.info("deleted %d heartbeat row(s) not seen for %s", removed, RETENTION)

    def _safe_beat(self) -> None:
        try:
            self.beat()
        except Exception:
            if not self._failing:  # once per streak: a database outage is not a log flood
                log.warning("heartbeat of %s not written; will try again every %gs",
                            self.process_id, self.interval, exc_info=True)
            self._failing = True
        else:
            if self._failing:
                log.info("heartbeat of %s written again", self.process_id)
            self._failing = False

    def _run(self, stop: threading.Event) -> None:
        self._safe_beat()
        while not stop.wait(self.interval):
            self._safe_beat()

    def start(self) -> Heartbeat:
        """Beat now and then every ``interval`` in a daemon thread; a second call while
        the loop runs does nothing."""
        with self._lock:
            if self.alive():
                return self
            self._stop = threading.Event()
            self._thread = threading.Thread(target=self._run, args=(self._stop,),
                                            name=f"heartbeat-{self.role}", daemon=True)
            self._thread.start()
        return self

    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        """End the loop and mark the row stopped (a failure is logged, never raised).

        Bounded for a process shutting down: waits at most :data:`STOP_WAIT` for a beat
        in progress, and writes no mark when the last beat failed or is still stuck (the
        database is unreachable: the row goes silent instead)."""
        with self._lock:
            self._stop.set()
            thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(STOP_WAIT)
            if thread.is_alive():
                log.warning("heartbeat of %s still writing after %gs; not marked stopped",
                            self.process_id, STOP_WAIT)
                return
        if self._failing:
            log.info("heartbeat of %s not marked stopped: its last beat failed",
                     self.process_id)
            return
        try:
            now = utcnow()
            with self.db.write() as s:
                s.execute(_T.update().where(_T.c.process_id == self.process_id)
                          .values(stopped_at=now, last_seen_at=now,
                                  details=self._details()))
        except Exception:
            log.warning("heartbeat of %s not marked stopped", self.process_id, exc_info=True)
