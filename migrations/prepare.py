"""Bring a database to the code's schema head, safely.

- A new or empty database is created at head.
- A database at a revision this code does not know (a newer Wharf wrote it) is refused.
- A database with Wharf tables but no revision stamp (a partial or foreign schema) is refused.
- A SQLite file is copied with the SQLite backup API (a consistent copy beside it) before
  any upgrade that changes it; the backup path is reported.
"""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic import command
from sqlalchemy import inspect
from sqlalchemy.engine import Engine

from wharf.clock import utcnow

HERE = Path(__file__).resolve().parent


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
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def _sqlite_path(engine: Engine) -> Path | None:
    if engine.dialect.name != "sqlite":
        return None
    db = engine.url.database
    if not db or db == ":memory:":
        return None
    return Path(db)


def backup_sqlite(path: Path, revision: str | None) -> Path:
    stamp = utcnow().strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.backup-{revision or 'none'}-{stamp}")
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


def current_revision(engine: Engine) -> tuple[str | None, set[str]]:
    with engine.connect() as conn:
        ctx = MigrationContext.configure(conn)
        heads = ctx.get_current_heads()
        tables = set(inspect(conn).get_table_names())
    if len(heads) > 1:
        raise MigrationRefused(f"database has several revision heads {heads}; refusing")
    return (heads[0] if heads else None), tables


def prepare(engine: Engine, *, report=print) -> PrepareResult:
    """Upgrade ``engine``'s database to head, refusing unknown or partial states."""
    script = ScriptDirectory.from_config(alembic_config())
    head = script.get_current_head()
    before, tables = current_revision(engine)
    wharf_tables = tables - {"alembic_version"}
    if before is None and wharf_tables:
        raise MigrationRefused(
            "the database has tables but no Wharf revision stamp "
            f"({', '.join(sorted(wharf_tables)[:5])}...): it is partially migrated or not a "
            "Wharf database; restore a backup or point WHARF_DATABASE_URL elsewhere")
    if before is not None:
        try:
            script.get_revision(before)
        except Exception:
            raise MigrationRefused(
                f"the database is at revision {before!r}, which this version of Wharf does not "
                f"know (its head is {head!r}); it was written by a newer Wharf — upgrade Wharf, "
                "or restore a backup") from None
    if before == head:
        return PrepareResult(before, head, None, False)
    backup = None
    path = _sqlite_path(engine)
    if path is not None and before is not None and path.exists() and path.stat().st_size:
        backup = backup_sqlite(path, before)
        report(f"wharf: backed up {path} to {backup} before migrating {before} -> {head}")
    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
    after, _ = current_revision(engine)
    if after != head:
        raise MigrationRefused(f"migration ended at {after!r}, expected {head!r}")
    report(f"wharf: database migrated {before or 'empty'} -> {head}")
    return PrepareResult(before, head, backup, True)
