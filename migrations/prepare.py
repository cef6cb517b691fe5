"""Bring a database to the code's schema head, safely.

- A new or empty database is created at head.
- A database at a revision this code does not know (a newer Wharf wrote it) is refused.
- A database with Wharf tables but no revision stamp (a partial or foreign schema) is refused.
- A SQLite file is copied with the SQLite backup API (a consistent copy beside it) before
  any upgrade that changes it; the backup path is reported.
- The check and the upgrade run in one transaction that holds the database's write lock
  (``BEGIN IMMEDIATE`` on SQLite, a transaction-scoped advisory lock on PostgreSQL), so
  two processes preparing the same database at once queue: the second finds it at head.
- On SQLite the upgrade runs with ``foreign_keys=OFF`` (table rebuilds in batch mode would
  otherwise cascade-delete or refuse on ``DROP TABLE``) and ``PRAGMA foreign_key_check``
  must come back clean before the transaction commits.
"""
from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect
from sqlalchemy.engine import Connection, Engine

from storage.clock import utcnow

HERE = Path(__file__).resolve().parent

# Key of the PostgreSQL advisory lock that serialises concurrent `wharf migrate` runs.
PG_LOCK_KEY = 0x57484152  # "WHAR"


class MigrationRefused(RuntimeError):
    """The database is in a state this code must not touch; the message says why."""


@dataclass
class PrepareResult:
    before: str | None
    after: str
    backup_path: Path | None
    changed: bool


def alembic_config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(HERE))
    return cfg


def head_revision() -> str:
    return _head(ScriptDirectory.from_config(alembic_config()))


def known(revision: str) -> bool:
    """Whether this code's migrations include ``revision`` (a newer release's is not)."""
    return _known(ScriptDirectory.from_config(alembic_config()), revision)


def _known(script: ScriptDirectory, revision: str) -> bool:
    try:
        return script.get_revision(revision) is not None
    except Exception:
        return False


def _head(script: ScriptDirectory) -> str:
    head = script.get_current_head()
    if head is None:  # the package ships its migrations; without one there is no schema
        raise MigrationRefused(f"no migrations found in {script.dir}")
    return head


def _sqlite_path(engine: Engine) -> Path | None:
    if engine.dialect.name != "sqlite":
        return None
    db = engine.url.database
    if not db or db == ":memory:":
        return None
    return Path(db)


def backup_sqlite(path: Path, revision: str | None) -> Path:
    """Copy the SQLite database at ``path`` with the online backup API; return the copy's path.

    The copy is ``<name>.backup-<revision>-<UTC timestamp>`` beside the original (a numeric
    suffix is added if that name is taken). It is a consistent snapshot, including anything
    committed to the WAL but not yet checkpointed.
    """
    stamp = utcnow().strftime("%Y%m%dT%H%M%SZ")
    base = f"{path.name}.backup-{revision or 'none'}-{stamp}"
    target = path.with_name(base)
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{base}.{n}")
    src = sqlite3.connect(str(path))
    try:
        dst = sqlite3.connect(str(target))
        try:
            src.backup(dst)
        finally:
            dst.close()
    finally:
        src.close()
    return target


def _state(conn: Connection) -> tuple[str | None, set[str]]:
    ctx = MigrationContext.configure(conn)
    heads = ctx.get_current_heads()
    tables = set(inspect(conn).get_table_names())
    if len(heads) > 1:
        raise MigrationRefused(f"database has several revision heads {heads}; refusing")
    return (heads[0] if heads else None), tables


def current_revision(engine: Engine) -> tuple[str | None, set[str]]:
    with engine.connect() as conn:
        return _state(conn)


def _check(script: ScriptDirectory, head: str, before: str | None, tables: set[str]) -> None:
    wharf_tables = tables - {"alembic_version"}
    if before is None and wharf_tables:
        raise MigrationRefused(
            "the database has tables but no Wharf revision stamp "
            f"({', '.join(sorted(wharf_tables)[:5])}...): it is partially migrated or not a "
            "Wharf database; restore a backup or point WHARF_DATABASE_URL elsewhere")
    if before is not None and not _known(script, before):
        raise MigrationRefused(
            f"the database is at revision {before!r}, which this version of Wharf does not "
            f"know (its head is {head!r}); it was written by a newer Wharf — upgrade Wharf, "
            "or restore a backup")


def _set_sqlite_foreign_keys(conn: Connection, on: bool) -> None:
    # PRAGMA foreign_keys is a no-op inside a transaction, so it is set on the DBAPI
    # connection (autocommit) before SQLAlchemy begins one.
    dbapi = conn.connection.dbapi_connection
    if dbapi is None:  # only an invalidated connection has none
        raise MigrationRefused("the database connection was lost")
    dbapi.execute(f"PRAGMA foreign_keys={'ON' if on else 'OFF'}")


def prepare(engine: Engine, *, report: Callable[[str], None] = print) -> PrepareResult:
    """Upgrade ``engine``'s database to head, refusing unknown or partial states."""
    script = ScriptDirectory.from_config(alembic_config())
    head = _head(script)
    sqlite = engine.dialect.name == "sqlite"
    path = _sqlite_path(engine)
    with engine.connect() as conn:
        if sqlite:
            _set_sqlite_foreign_keys(conn, False)
        try:
            with conn.begin():  # BEGIN IMMEDIATE on Wharf's SQLite write engine
                if engine.dialect.name == "postgresql":
                    conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({PG_LOCK_KEY})")
                before, tables = _state(conn)
                _check(script, head, before, tables)
                if before == head:
                    return PrepareResult(before, head, None, False)
                backup = None
                if path is not None and before is not None and path.exists() \
                        and path.stat().st_size:
                    # A reader beside our write lock: sees the committed state we upgrade.
                    backup = backup_sqlite(path, before)
                    report(f"wharf: backed up {path} to {backup} before migrating "
                           f"{before} -> {head}")
                cfg = alembic_config()
                cfg.attributes["connection"] = conn
                command.upgrade(cfg, "head")
                after, _ = _state(conn)
                if after != head:
                    raise MigrationRefused(f"migration ended at {after!r}, expected {head!r}")
                if sqlite:
                    bad = conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                    if bad:
                        raise MigrationRefused(
                            f"the migration to {head!r} left {len(bad)} rows violating foreign "
                            f"keys (first: {tuple(bad[0])}); rolled back, nothing changed")
        finally:
            if sqlite:
                try:
                    _set_sqlite_foreign_keys(conn, True)
                except Exception:  # pragma: no cover - a broken connection is not reused
                    conn.invalidate()
    report(f"wharf: database migrated {before or 'empty'} -> {head}")
    return PrepareResult(before, head, backup, True)
