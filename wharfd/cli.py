"""The ``wharf`` command: serve, api, worker, scheduler, sweeps, deletion-jobs, processes,
migrate, fsck.

Part of the composition root (:mod:`wharfd`): it runs the migrations, and each command
builds its process from :mod:`wharfd.runtime`, ``tasks`` and ``api``. Those (SQLAlchemy,
Alembic, Falcon, Dramatiq, boto3: about a second of imports) are imported inside the
command that needs them, so ``wharf --help`` and a configuration error answer at once.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import threading
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wharf.infra.settings import ConfigError, Settings

if TYPE_CHECKING:
    from gunicorn.app.wsgiapp import WSGIApplication

    from migrations.prepare import PrepareResult
    from storage.db import Database
    from wharfd.runtime import Components


class StartupError(RuntimeError):
    """The process cannot start (e.g. the port is taken); the message says why."""


def _settings(args: argparse.Namespace) -> Settings:
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


def _ensure_dir(path: Path, variable: str) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{variable}={str(path)!r}: cannot create the directory "
                          f"({exc.strerror or exc})") from None


def _ensure_sqlite_dirs(settings: Settings) -> None:
    """Create the parent directory of each SQLite database, naming the variable on failure."""
    for name, url in (("WHARF_DATABASE_URL", settings.database_url),
                      ("WHARF_UNITSTORE_URL", settings.unitstore_url)):
        if url.startswith("sqlite") and "///" in url:
            path = url.split("///", 1)[1]
            if path and path != ":memory:":
                _ensure_dir(Path(path).parent, name)


def _check_database(url: str, variable: str) -> None:
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


def _migrate_all(settings: Settings) -> PrepareResult:
    """Prepare the product database and the unit store; return the product DB's result."""
    from migrations.prepare import prepare
    from storage.db import make_engines
    from storage.unitstore import prepare_unitstore
    _ensure_sqlite_dirs(settings)
    _check_database(settings.database_url, "WHARF_DATABASE_URL")
    _check_database(settings.unitstore_url, "WHARF_UNITSTORE_URL")
    engine, reader = make_engines(settings.database_url, settings.sqlite_busy_timeout_ms)
    try:
        result = prepare(engine)
    finally:
        engine.dispose()
        if reader is not engine:
            reader.dispose()
    prepare_unitstore(settings)
    return result


def _check_blob_store(settings: Settings) -> None:
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


def cmd_migrate(args: argparse.Namespace) -> int:
    settings = _settings(args)
    result = _migrate_all(settings)
    if not result.changed:
        print(f"wharf: database already at revision {result.after}; nothing to do", flush=True)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """Embedded mode: API + in-process broker + worker threads + scheduler, one process."""
    settings = _settings(args)
    from wharfd import serving
    settings = serving.resolve(settings)
    from wharfd.tracing import exporters_from
    exporters_from(os.environ)  # a bad OTEL_TRACES_EXPORTER fails before anything is done
    _ensure_dir(settings.data_dir, "WHARF_DATA_DIR")
    _migrate_all(settings)
    _check_blob_store(settings)
    from wharfd import tracing
    tracing.setup("serve")
    from wharfd.runtime import EmbeddedRuntime
    runtime = EmbeddedRuntime(settings)
    from wharfd import heap
    heap.settle()  # what start-up built stays out of the collector's full collections
    try:
        server = serving.create_server(runtime.api_app, settings)
    except OSError as exc:
        try:
            runtime.stop()
        except Exception:
            pass
        raise StartupError(f"cannot listen on {settings.host}:{settings.port} "
                           f"(WHARF_HOST/WHARF_PORT): {exc.strerror or exc}") from None
    from wharf.infra.stopping import StopSignal
    stop = StopSignal().install()
    try:
        runtime.start()
        urls = ", ".join(f"http://{host}:{port}"
                         for host, port in serving.listening(server))
        print(f"wharf: serving on {urls} (data in {settings.data_dir})", flush=True)
        serving.serve_until(server, stop)
    finally:
        runtime.stop()
        print("wharf: stopped", flush=True)
    return 0


def cmd_api(args: argparse.Namespace) -> int:
    """Production API: gunicorn with the packaged settings (wharfd/gunicorn_conf.py) or the
    file named by WHARF_GUNICORN_CONF."""
    settings = _settings(args)
    from importlib.util import find_spec

    from wharfd.tracing import exporters_from
    exporters_from(os.environ)  # a bad OTEL_TRACES_EXPORTER fails here, not in each worker
    _check_blob_store(settings)
    host = f"[{settings.host}]" if ":" in settings.host and not settings.host.startswith("[") \
        else settings.host
    argv = ["gunicorn", WSGI_APP, "--bind", f"{host}:{settings.port}"]
    conf = os.environ.get("WHARF_GUNICORN_CONF")
    if conf:
        if not os.path.isfile(conf):
            raise ConfigError(f"WHARF_GUNICORN_CONF={conf!r}: no such file")
    else:
        spec = find_spec("wharfd.gunicorn_conf")
        assert spec is not None and spec.origin is not None  # packaged with Wharf
        conf = spec.origin
    argv += ["--config", conf]
    # Explicit options win over the config file.
    if args.workers is not None:
        argv += ["--workers", str(args.workers)]
    if args.threads is not None:
        argv += ["--threads", str(args.threads)]
    sys.argv = argv
    _api_application_class()("%(prog)s [OPTIONS] [APP_MODULE]").run()
    return 0


def _api_application_class() -> type[WSGIApplication]:
    from gunicorn.app.wsgiapp import WSGIApplication

    class ApiApplication(WSGIApplication):
        """gunicorn with Wharf's ``pre_request`` hook chained before any configured one:
        ``Expect: 100-continue`` is answered on the first body read (api.expect_continue),
        so a refused upload is refused before the client sends the body.

        Whatever the config file (the packaged one, an operator's own, ``preload_app``):
        long-polls may take three quarters of each worker's ``threads`` unless
        ``WHARF_LONG_POLL_MAX_WAITERS`` says otherwise, and a limit that would take every
        thread is a configuration error."""

        _derived_waiters = False  # WHARF_LONG_POLL_MAX_WAITERS is ours (re-derived on HUP)
        _config_error: ConfigError | None = None

        def do_load_config(self) -> None:
            # gunicorn turns any error here into "Error: ..." and exit 1; ours is exit 2.
            self._config_error = None
            super().do_load_config()
            if self._config_error is not None:
                raise self._config_error

        def load_config(self) -> None:
            super().load_config()
            from api.expect_continue import defer_100_continue
            configured = self.cfg.pre_request

            def pre_request(worker: Any, req: Any) -> None:
                defer_100_continue(worker, req)
                configured(worker, req)

            self.cfg.set("pre_request", pre_request)
            self._chain_heartbeat_hooks()
            from wharfd.gunicorn_logs import LOGGER_CLASS
            if self.cfg.settings["logger_class"].get() == "gunicorn.glogging.Logger" \
                    and self.cfg.settings["statsd_host"].get() is None:
                # an operator's own config file: gunicorn's lines in Wharf's format too
                self.cfg.set("logger_class", LOGGER_CLASS)
            try:
                self._limit_long_polls(self.cfg.threads)
            except ConfigError as exc:
                self._config_error = exc

        def _chain_heartbeat_hooks(self) -> None:
            """Each worker's heartbeat (``wharfd.wsgi``), before any configured hook."""
            configured_init = self.cfg.post_worker_init
            configured_exit = self.cfg.worker_exit

            def post_worker_init(worker: Any) -> None:
                from wharfd.wsgi import start_heartbeat
                start_heartbeat(worker)
                configured_init(worker)

            def worker_exit(server: Any, worker: Any) -> None:
                from wharfd.wsgi import stop_heartbeat
                stop_heartbeat(worker)
                configured_exit(server, worker)

            self.cfg.set("post_worker_init", post_worker_init)
            self.cfg.set("worker_exit", worker_exit)

        def _limit_long_polls(self, threads: int) -> None:
            from wharfd.serving import long_poll_waiters
            name = "WHARF_LONG_POLL_MAX_WAITERS"
            ours = self._derived_waiters or not (os.environ.get(name) or "").strip()
            configured = None if ours else Settings.from_env().long_poll_max_waiters
            waiters = long_poll_waiters(configured, threads, "gunicorn's threads")
            if configured is None:
                os.environ[name] = str(waiters)  # the workers inherit it
                self._derived_waiters = True

    return ApiApplication


def _components(settings: Settings) -> Components:
    """The collaborators of a worker or scheduler process, its start-up heap then settled
    (``wharfd.heap``). Imported only when called: ``run_workers``/``run_scheduler`` settle
    the metrics environment first."""
    from wharfd import heap
    from wharfd.runtime import Components
    components = Components(settings)
    heap.settle()
    return components


def worker_process(index: int, threads: int) -> None:
    """One ``wharf worker`` child process (spawned, so a module-level function)."""
    from wharfd import tracing
    tracing.setup("worker")
    from tasks.worker import run_child
    from wharfd import logs
    logs.configure_from_env("worker")
    run_child(index, threads, _components)


def cmd_worker(args: argparse.Namespace) -> int:
    settings = _settings(args)
    from wharfd.tracing import exporters_from
    exporters_from(os.environ)  # a bad OTEL_TRACES_EXPORTER fails here, not in each child
    _check_blob_store(settings)
    from tasks.worker import run_workers
    return run_workers(settings, processes=args.processes, threads=args.threads,
                       child=worker_process)


def cmd_scheduler(args: argparse.Namespace) -> int:
    settings = _settings(args)
    from wharfd import tracing
    tracing.setup("scheduler")
    from tasks.scheduler import run_scheduler
    return run_scheduler(settings, _components)


@contextlib.contextmanager
def _opened(url: str, variable: str, settings: Settings) -> Iterator[Database]:
    """The database ``variable`` names, checked first (one line and exit 2 when it does
    not answer), open for a short command and disposed after it."""
    from storage.db import Database
    _require_sqlite_file(url, variable, settings)
    _check_database(url, variable)
    db = Database(url, settings.sqlite_busy_timeout_ms)
    try:
        if variable == "WHARF_DATABASE_URL":
            _require_head(db, url, variable)
        yield db
    finally:
        db.dispose()


def _require_sqlite_file(url: str, variable: str, settings: Settings) -> None:
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


def _require_head(db: Database, url: str, variable: str) -> None:
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


def cmd_sweeps(args: argparse.Namespace) -> int:
    """Every schedule with its period or cron, last run (status, counts) and next run."""
    from wharf.infra.clock import iso
    from wharf.retention.schedule import Scheduler
    settings = _settings(args)
    with _opened(settings.database_url, "WHARF_DATABASE_URL", settings) as db:
        rows = Scheduler(db, settings, "cli").status()
    print(f"{'schedule':28} {'every / cron':16} {'last tick':22} {'status':8} "
          f"{'next tick':22} counts")
    for r in rows:
        print(f"{r['schedule']:28} {r['spec']:16} {iso(r['last_tick']) or '-':22} "
              f"{r['last_status'] or '-':8} {iso(r['next_tick']):22} "
              f"{json.dumps(r['last_counts']) if r['last_counts'] else '-'}")
    return 0


def cmd_deletion_jobs(args: argparse.Namespace) -> int:
    """Object deletion jobs that have been failing for longer than --failing-for seconds."""
    from datetime import timedelta

    from wharf.deletion import service as deletion
    from wharf.infra.clock import iso
    settings = _settings(args)
    with _opened(settings.database_url, "WHARF_DATABASE_URL", settings) as db:
        jobs = deletion.failing_jobs(db, timedelta(seconds=args.failing_for))
    for job in jobs:
        print(json.dumps({"object_key": job.object_key, "reason": job.reason,
                          "attempts": job.attempts, "created_at": iso(job.created_at),
                          "next_attempt_at": iso(job.next_attempt_at),
                          "last_error": job.last_error}))
    print(f"wharf: {len(jobs)} deletion job(s) failing for more than {args.failing_for}s",
          file=sys.stderr)
    return 1 if jobs else 0


def cmd_processes(args: argparse.Namespace) -> int:
    """Wharf processes whose heartbeat was seen within --within seconds, newest first (stopped
    ones too, with their ``stopped_at``): a table, or one JSON object a line (``--json``)."""
    from datetime import timedelta

    from wharf.observability import heartbeats
    settings = _settings(args)
    widest = int(heartbeats.MAX_WINDOW.total_seconds())
    if not 1 <= args.within <= widest:
        raise ConfigError(f"--within {args.within}: expected a number of seconds between 1 "
                          f"and {widest}")
    with _opened(settings.database_url, "WHARF_DATABASE_URL", settings) as db:
        beats = heartbeats.recent(db, timedelta(seconds=args.within))
    rows = [{**beat.as_json(), "state": beat.state(settings.heartbeat_seconds)}
            for beat in beats]
    if args.json:
        for row in rows:
            print(json.dumps(row))
    elif rows:
        print(f"{'role':10} {'state':8} {'host':24} {'pid':>7} {'last seen':22} "
              f"{'started':22} {'stopped':22} version")
        for row in rows:
            print(f"{row['role']:10} {row['state']:8} {row['hostname'][:24]:24} "
                  f"{row['pid']:>7} {row['last_seen_at']:22} {row['started_at']:22} "
                  f"{row['stopped_at'] or '-':22} {row['version']}")
    states = [row["state"] for row in rows]
    print(f"wharf: {len(rows)} process(es) seen in the last {args.within}s, "
          f"{states.count('running')} running", file=sys.stderr)
    return 0


FSCK_COULD_NOT_CHECK = 3  # wharf fsck's exit status when a run fails midway
FSCK_REASON_CHARS = 500   # of the error, on its one line


def cmd_fsck(args: argparse.Namespace) -> int:
    """Compare the blob store and the unit store with the product database: one line per
    finding, then a summary; exit 0 if nothing was found, 1 if something was (or the run
    stopped at --max-seconds), 2 on a usage or configuration error, 3 if the check could
    not be done (a database or store error during the run: one line on stderr)."""
    from sqlalchemy.exc import SQLAlchemyError

    from storage.blobstore import blob_store_from_url
    from storage.errors import StorageError
    from storage.unitstore import UnitStore
    from wharf.fsck import Finding, OutOfOrder, check_grace, run_fsck
    for flag, value, least in (("--max-findings", args.max_findings, 0),
                               ("--page-size", args.page_size, 1)):
        if value < least:
            raise ConfigError(f"{flag} {value}: expected at least {least}")
    if args.max_seconds is not None and not args.max_seconds > 0:
        raise ConfigError(f"--max-seconds {args.max_seconds}: expected a number of seconds "
                          "greater than 0")
    settings = _settings(args)
    check_grace(settings)

    def emit(finding: Finding) -> None:
        print(json.dumps(finding.as_json()) if args.json else finding.as_text(), flush=True)

    with (_opened(settings.database_url, "WHARF_DATABASE_URL", settings) as db,
          _opened(settings.unitstore_url, "WHARF_UNITSTORE_URL", settings) as units_db):
        try:
            store = blob_store_from_url(settings.blob_store_url,
                                        endpoint_url=settings.s3_endpoint_url,
                                        region=settings.s3_region)
            report = run_fsck(db, store, UnitStore(units_db), settings, repair=args.repair,
                              max_findings=args.max_findings, max_seconds=args.max_seconds,
                              page_size=args.page_size, emit=emit)
        except (StorageError, OutOfOrder, SQLAlchemyError, OSError) as exc:
            reason = " ".join(str(exc).split())[:FSCK_REASON_CHARS]
            print(f"wharf fsck: could not check: {type(exc).__name__}: {reason}",
                  file=sys.stderr)
            return FSCK_COULD_NOT_CHECK
    summary = report.summary()
    if args.json:
        print(json.dumps({"summary": summary}))
    else:
        print("fsck: " + ", ".join(f"{n} {kind.replace('_', ' ')}(s)"
                                    for kind, n in report.counts.items())
              + f"; {report.repairs_queued} deletion(s) queued"
              + ("" if not report.truncated else
                 f"; only the first {report.listed} listed (--max-findings)")
              + ("" if report.complete else "; STOPPED at --max-seconds: incomplete"))
    return 1 if report.total or not report.complete else 0


RESTORE_CHECK_FAILED = 3  # wharf restore-check's exit status when the replay could not run


def _since(raw: str) -> datetime:
    """``--since``: an ISO 8601 time (UTC when it names no offset)."""
    from datetime import UTC
    try:
        value = datetime.fromisoformat(raw)
    except ValueError:
        raise ConfigError(f"--since {raw!r}: expected an ISO 8601 time such as "
                          "2026-12-01T00:00:00Z") from None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def cmd_restore_check(args: argparse.Namespace) -> int:
    """After restoring a backup: replay the deletion ledger recorded since --since (the
    backup's time, or earlier) — accounts deleted again, objects queued for deletion
    again, every login session and API token revoked; one JSON report on stdout. Exit 0
    when done, 2 on a usage or configuration error, 3 if it could not run (the ledger or
    the database did not answer: one line on stderr; run it again)."""
    from sqlalchemy.exc import SQLAlchemyError

    from storage.blobstore import blob_store_from_url
    from storage.errors import StorageError
    from wharf.accounts import service as accounts
    since = _since(args.since)
    settings = _settings(args)
    with _opened(settings.database_url, "WHARF_DATABASE_URL", settings) as db:
        try:
            store = blob_store_from_url(settings.blob_store_url,
                                        endpoint_url=settings.s3_endpoint_url,
                                        region=settings.s3_region)
            report = accounts.restore_check(db, store, settings, since, dry_run=args.dry_run)
        except (StorageError, SQLAlchemyError, OSError, ValueError) as exc:
            reason = " ".join(str(exc).split())[:FSCK_REASON_CHARS]
            print(f"wharf restore-check: could not replay: {type(exc).__name__}: {reason}",
                  file=sys.stderr)
            return RESTORE_CHECK_FAILED
    print(json.dumps(report.as_json()))
    print(f"wharf restore-check: {report.accounts_redeleted} account(s) deleted again, "
          f"{report.objects_requeued} object deletion(s) queued again, "
          f"{report.sessions_revoked} session(s) and {report.tokens_revoked} token(s) revoked"
          + (" (dry run: nothing changed)" if args.dry_run else ""), file=sys.stderr)
    return 0


def cmd_space_owner(args: argparse.Namespace) -> int:
    """Give a team space an owner (one left read-only by its owner's account deletion)."""
    from wharf.accounts import service as accounts
    from wharf.infra.errors import NotFound
    settings = _settings(args)
    with _opened(settings.database_url, "WHARF_DATABASE_URL", settings) as db:
        try:
            accounts.give_owner(db, args.space_id, args.username)
        except NotFound as exc:
            print(f"wharf space-owner: {exc}", file=sys.stderr)
            return 1
    print(f"wharf: space {args.space_id} is owned by {args.username} and writable",
          file=sys.stderr)
    return 0


WSGI_APP = "wharfd.wsgi:application"  # gunicorn's app (also in wharfd/gunicorn_conf.py)
METRICS_PORT_HELP = ("serve /metrics and /healthz on this port (overrides WHARF_METRICS_PORT; "
                     "0 picks a free port)")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL")


def main(argv: list[str] | None = None) -> int:
    level = (os.environ.get("WHARF_LOG_LEVEL") or "INFO").strip().upper()
    if level not in LOG_LEVELS:
        print(f"wharf: configuration error: WHARF_LOG_LEVEL={os.environ['WHARF_LOG_LEVEL']!r}: "
              f"expected one of {', '.join(LOG_LEVELS)}", file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(
        prog="wharf", description="Wharf, the document workspace backend: run the API, the "
        "workers and the scheduler, migrate the databases, inspect sweeps and deletion jobs. "
        "Configured by WHARF_* environment variables (see README). Submitters use the "
        "client, wharf-client (docs/client.md).")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("serve", help="embedded mode: API, workers and scheduler in one process")
    p.add_argument("--host")
    p.add_argument("--port", type=int)
    p.add_argument("--quiet", action="store_true",
                   help="no line per request (as WHARF_ACCESS_LOG=false)")
    p.set_defaults(func=cmd_serve)
    p = sub.add_parser("api", help="production API under gunicorn")
    p.add_argument("--host")
    p.add_argument("--port", type=int)
    p.add_argument("--workers", type=int, help="gunicorn worker processes (default 2)")
    p.add_argument("--threads", type=int, help="threads per worker (default 32)")
    p.set_defaults(func=cmd_api)
    p = sub.add_parser("worker", help="Dramatiq worker processes (Redis broker)")
    p.add_argument("--processes", type=int)
    p.add_argument("--threads", type=int)
    p.add_argument("--metrics-port", type=int, help=METRICS_PORT_HELP)
    p.set_defaults(func=cmd_worker)
    p = sub.add_parser("scheduler", help="retention sweeps on their schedule")
    p.add_argument("--metrics-port", type=int, help=METRICS_PORT_HELP)
    p.set_defaults(func=cmd_scheduler)
    p = sub.add_parser("sweeps", help="list the schedules with their last and next run")
    p.set_defaults(func=cmd_sweeps)
    p = sub.add_parser("deletion-jobs",
                       help="list object deletion jobs failing for long (exit 1 if any)")
    p.add_argument("--failing-for", type=int, default=86400, metavar="SECONDS",
                   help="only jobs failing for longer than this (default: one day)")
    p.set_defaults(func=cmd_deletion_jobs)
    p = sub.add_parser("processes",
                       help="list the Wharf processes seen recently (their heartbeats)")
    p.add_argument("--within", type=int, default=300, metavar="SECONDS",
                   help="only processes seen within this many seconds (default: 300)")
    p.add_argument("--json", action="store_true",
                   help="one JSON object a line (with details) instead of the table")
    p.set_defaults(func=cmd_processes)
    p = sub.add_parser("migrate", help="upgrade the databases to the code's schema")
    p.set_defaults(func=cmd_migrate)
    p = sub.add_parser("fsck", help="compare the blob and unit stores with the database "
                       "(exit 0 clean, 1 findings, 2 usage/configuration error, 3 could "
                       "not check: a database or store error during the run)")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--repair", action="store_true",
                   help="queue the deletion of orphaned objects older than "
                   "WHARF_FSCK_GRACE_SECONDS (nothing else is ever repaired)")
    p.add_argument("--max-findings", type=int, default=10_000, metavar="N",
                   help="list (and repair) at most N findings; the counts go on "
                   "(default 10000)")
    p.add_argument("--max-seconds", type=float, default=None, metavar="SECONDS",
                   help="stop after this long, more than 0 (the summary says incomplete; "
                   "exit 1)")
    p.add_argument("--page-size", type=int, default=1000, metavar="N",
                   help="rows and keys read per request (default 1000)")
    p.set_defaults(func=cmd_fsck)
    p = sub.add_parser("restore-check",
                       help="after restoring a backup: replay the deletion ledger (exit 0 "
                       "done, 2 usage/configuration error, 3 could not run)")
    p.add_argument("--since", required=True, metavar="TIME",
                   help="the backup's time (ISO 8601, UTC unless it names an offset); "
                   "deletions recorded since then are replayed")
    p.add_argument("--dry-run", action="store_true", help="report only; change nothing")
    p.set_defaults(func=cmd_restore_check)
    p = sub.add_parser("space-owner",
                       help="give a team space an owner (one left read-only when its "
                       "owner's account was deleted)")
    p.add_argument("space_id")
    p.add_argument("username")
    p.set_defaults(func=cmd_space_owner)
    logging.getLogger("alembic").setLevel(logging.WARNING)
    args = parser.parse_args(argv)
    try:
        from wharfd import logs  # JSON lines or text (WHARF_LOG_FORMAT), after --help
        logs.configure("WARNING" if level == "WARN" else level, logs.resolve(args.command))
        return args.func(args) or 0
    except ConfigError as exc:
        print(f"wharf: configuration error: {exc}", file=sys.stderr)
        return 2
    except StartupError as exc:
        print(f"wharf: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        if isinstance(exc, _refusals()):
            print(f"wharf: refusing to migrate: {exc}", file=sys.stderr)
            return 3
        raise


def _refusals() -> tuple[type[BaseException], ...]:
    """Exceptions that mean "this database must not be touched" (exit 3, no trace)."""
    from migrations.prepare import MigrationRefused
    from storage.unitstore import UnitStoreSchemaError
    return (MigrationRefused, UnitStoreSchemaError)


if __name__ == "__main__":
    sys.exit(main())
