"""What a ``wharf`` command checks before it starts: its settings (with the command line's
overrides), the data directory, each database answering (and, for the short commands,
existing and at this code's schema revision), the migrations run, and the blob store's bucket."""
from __future__ import annotations

import argparse
import contextlib
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wharf.infra.settings import ConfigError, Settings

if TYPE_CHECKING:
    from migrations.prepare import PrepareResult
    from storage.db import Database


class StartupError(RuntimeError):
    """The process cannot start (e.g. the port is taken); the message says why."""


def settings_from_args(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {}
    if getattr(args, "host", None):
        overrides["host"] = args.host
    if getattr(args, "quiet", False):
        overrides["access_log"] = False
    for flag, name in (("--port", "port"), ("--metrics-port", "metrics_port")):
        value = getattr(args, name, None)
        if value is not None:
            if not 0 <= value <= 65535:
                raise ConfigError(f"{flag} {value}: expected an integer between 0 and 65535")
            overrides[name] = value
    return Settings.from_env(**overrides)


def ensure_dir(path: Path, variable: str) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{variable}={str(path)!r}: cannot create the directory "
                          f"({exc.strerror or exc})") from None


def ensure_sqlite_dirs(settings: Settings) -> None:
    """Create the parent directory of each SQLite database, naming the variable on failure."""
    for name, url in (("WHARF_DATABASE_URL", settings.database_url),
                      ("WHARF_UNITSTORE_URL", settings.unitstore_url)):
        if url.startswith("sqlite") and "///" in url:
            path = url.split("///", 1)[1]
            if path and path != ":memory:":
                ensure_dir(Path(path).parent, name)


def check_database(url: str, variable: str) -> None:
    """Connect once: a database that does not exist or a server that does not answer is a
    configuration error (one line naming the variable and the database, no password)."""
    from sqlalchemy import create_engine, exc, make_url
    from sqlalchemy.pool import NullPool
    safe = make_url(url).render_as_string(hide_password=True)
    name = make_url(url).database or ""
    connect_args: dict[str, Any] = {} if url.startswith("sqlite") else {"connect_timeout": 10}
    engine = create_engine(url, poolclass=NullPool, connect_args=connect_args)
    try:
        with engine.connect():
            pass
    except exc.DBAPIError as err:
        reason = " ".join(str(err.orig).split())
        password = make_url(url).password
        if password:
            reason = reason.replace(str(password), "***")
        raise ConfigError(f"{variable}={safe!r}: cannot connect to database {name!r}: "
                          f"{reason}") from None
    finally:
        engine.dispose()


def migrate_all(settings: Settings) -> PrepareResult:
    """Prepare the product database and the unit store; return the product DB's result."""
    from migrations.prepare import prepare
    from storage.db import make_engines
    from storage.unitschema import prepare_unitstore
    ensure_sqlite_dirs(settings)
    check_database(settings.database_url, "WHARF_DATABASE_URL")
    check_database(settings.unitstore_url, "WHARF_UNITSTORE_URL")
    engine, reader = make_engines(settings.database_url, settings.sqlite_busy_timeout_ms)
    try:
        result = prepare(engine)
    finally:
        engine.dispose()
        if reader is not engine:
            reader.dispose()
    prepare_unitstore(settings, backup=lambda version: backup_unitstore(settings, version))
    return result


def backup_unitstore(settings: Settings, version: int) -> str | None:
    """A SQLite unit store is copied (the SQLite backup API, beside the file) before its
    schema is upgraded from ``version``; PostgreSQL upgrades in one transaction and is
    backed up by its operator's own means."""
    from sqlalchemy import make_url

    from migrations.prepare import backup_sqlite
    url = make_url(settings.unitstore_url)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return str(backup_sqlite(Path(str(url.database)), f"unitstore-v{version}"))


def check_blob_store(settings: Settings) -> None:
    """Refuse to start against a bucket that does not exist (the message names it); a
    store that is only unreachable now is logged and retried by the work that needs it."""
    from storage.blobstore import BucketNotFound, blob_store_from_url
    outcome: list[BaseException | None] = []

    def check() -> None:
        try:
            blob_store_from_url(settings.blob_store_url, endpoint_url=settings.s3_endpoint_url,
                                region=settings.s3_region).ping()
            outcome.append(None)
        except Exception as exc:
            outcome.append(exc)

    probe = threading.Thread(target=check, name="blob-store-check", daemon=True)
    probe.start()
    probe.join(10)  # a silent endpoint must not hold the start for boto3's whole retry budget
    exc = outcome[0] if outcome else TimeoutError("no answer within 10 s")
    if isinstance(exc, BucketNotFound):
        raise StartupError(f"blob store: {exc}")
    if exc is not None:  # unreachable for now: start; readiness and retries take over
        logging.getLogger("wharf.cli").warning("blob store not reachable at start: %s", exc)


@contextlib.contextmanager
def opened(url: str, variable: str, settings: Settings) -> Iterator[Database]:
    """The database ``variable`` names, checked first (one line and exit 2 when it does
    not answer), open for a short command and disposed after it."""
    from storage.db import Database
    require_sqlite_file(url, variable, settings)
    check_database(url, variable)
    db = Database(url, settings.sqlite_busy_timeout_ms)
    try:
        if variable == "WHARF_DATABASE_URL":
            require_head(db, url, variable)
        yield db
    finally:
        db.dispose()


def require_sqlite_file(url: str, variable: str, settings: Settings) -> None:
    """A command that reads a SQLite database refuses one that does not exist (one line,
    exit 2) instead of creating an empty file and reading nothing: the default data
    directory (``./var``) is relative, so run from another directory it is another one."""
    from sqlalchemy import make_url
    if not url.startswith("sqlite"):
        return
    name = make_url(url).database or ""
    if not name or name == ":memory:" or name.startswith("file:"):
        return
    path = Path(name).absolute()
    if path.is_file():
        return
    origin = "WHARF_DATA_DIR" if os.environ.get("WHARF_DATA_DIR") else \
        "the default ./var of the current directory"
    raise ConfigError(f"{variable}={url!r}: no database at {path} (the data dir is "
                      f"{settings.data_dir}, from {origin}): run this command where `wharf "
                      "serve` or `wharf migrate` ran, or set WHARF_DATA_DIR (or "
                      f"{variable}) to the data in use")


def require_head(db: Database, url: str, variable: str) -> None:
    """The product database is at this code's schema revision: a command that reads it
    on an older (or empty) schema stops with one line saying to run ``wharf migrate``,
    not a database error's traceback (exit 2)."""
    from sqlalchemy import make_url

    from migrations.prepare import MigrationRefused, current_revision, head_revision, known
    safe = make_url(url).render_as_string(hide_password=True)
    try:
        at, _ = current_revision(db.write_engine)
    except MigrationRefused as exc:
        raise ConfigError(f"{variable}={safe!r}: {exc}") from None
    head = head_revision()
    if at == head:
        return
    if at is not None and not known(at):
        raise ConfigError(f"{variable}={safe!r}: the database is at revision {at!r}, newer "
                          f"than this Wharf's ({head!r}): run this command from the newer "
                          "release")
    where = f"at revision {at!r}" if at else "not migrated (no Wharf revision)"
    raise ConfigError(f"{variable}={safe!r}: the database is {where}; this Wharf needs "
                      f"revision {head!r}: run `wharf migrate` first")
