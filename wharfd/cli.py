"""The ``wharf`` command: serve, api, worker, scheduler, sweeps, deletion-jobs, migrate.

Part of the composition root (:mod:`wharfd`): it runs the migrations, and each command
builds its process from :mod:`wharfd.runtime`, ``tasks`` and ``api``. Those (SQLAlchemy,
Alembic, Falcon, Dramatiq, boto3: about a second of imports) are imported inside the
command that needs them, so ``wharf --help`` and a configuration error answer at once.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wharf.config import ConfigError, Settings

if TYPE_CHECKING:
    from gunicorn.app.wsgiapp import WSGIApplication

    from migrations.prepare import PrepareResult
    from wharfd.runtime import Components


class StartupError(RuntimeError):
    """The process cannot start (e.g. the port is taken); the message says why."""


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {}
    if getattr(args, "host", None):
        overrides["host"] = args.host
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
    from wharf import serving
    settings = serving.resolve(settings)
    _ensure_dir(settings.data_dir, "WHARF_DATA_DIR")
    _migrate_all(settings)
    _check_blob_store(settings)
    from wharfd.runtime import EmbeddedRuntime
    runtime = EmbeddedRuntime(settings)
    try:
        server = serving.create_server(runtime.api_app, settings)
    except OSError as exc:
        try:
            runtime.stop()
        except Exception:
            pass
        raise StartupError(f"cannot listen on {settings.host}:{settings.port} "
                           f"(WHARF_HOST/WHARF_PORT): {exc.strerror or exc}") from None
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
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
        long-polls may take half of each worker's ``threads`` unless
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
            try:
                self._limit_long_polls(self.cfg.threads)
            except ConfigError as exc:
                self._config_error = exc

        def _limit_long_polls(self, threads: int) -> None:
            from wharf.serving import long_poll_waiters
            name = "WHARF_LONG_POLL_MAX_WAITERS"
            ours = self._derived_waiters or not (os.environ.get(name) or "").strip()
            configured = None if ours else Settings.from_env().long_poll_max_waiters
            waiters = long_poll_waiters(configured, threads, "gunicorn's threads")
            if configured is None:
                os.environ[name] = str(waiters)  # the workers inherit it
                self._derived_waiters = True

    return ApiApplication


def _components(settings: Settings) -> Components:
    """The collaborators of a worker or scheduler process. Imported only when called:
    ``run_workers``/``run_scheduler`` settle the metrics environment first."""
    from wharfd.runtime import Components
    return Components(settings)


def worker_process(index: int, threads: int) -> None:
    """One ``wharf worker`` child process (spawned, so a module-level function)."""
    from tasks.worker import run_child
    run_child(index, threads, _components)


def cmd_worker(args: argparse.Namespace) -> int:
    settings = _settings(args)
    _check_blob_store(settings)
    from tasks.worker import run_workers
    return run_workers(settings, processes=args.processes, threads=args.threads,
                       child=worker_process)


def cmd_scheduler(args: argparse.Namespace) -> int:
    settings = _settings(args)
    from tasks.scheduler import run_scheduler
    return run_scheduler(settings, _components)


def cmd_sweeps(args: argparse.Namespace) -> int:
    """Every schedule with its period or cron, last run (status, counts) and next run."""
    from storage.db import Database
    from wharf.clock import iso
    from wharf.retention.schedule import Scheduler
    settings = _settings(args)
    _check_database(settings.database_url, "WHARF_DATABASE_URL")
    db = Database(settings.database_url, settings.sqlite_busy_timeout_ms)
    try:
        rows = Scheduler(db, settings, "cli").status()
    finally:
        db.dispose()
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

    from storage.db import Database
    from wharf import deletion
    from wharf.clock import iso
    settings = _settings(args)
    _check_database(settings.database_url, "WHARF_DATABASE_URL")
    db = Database(settings.database_url, settings.sqlite_busy_timeout_ms)
    try:
        jobs = deletion.failing_jobs(db, timedelta(seconds=args.failing_for))
    finally:
        db.dispose()
    for job in jobs:
        print(json.dumps({"object_key": job.object_key, "reason": job.reason,
                          "attempts": job.attempts, "created_at": iso(job.created_at),
                          "next_attempt_at": iso(job.next_attempt_at),
                          "last_error": job.last_error}))
    print(f"wharf: {len(jobs)} deletion job(s) failing for more than {args.failing_for}s",
          file=sys.stderr)
    return 1 if jobs else 0


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
    logging.basicConfig(level=level,
                        format="%(asctime)s %(levelname)s %(name)s %(message)s")
    parser = argparse.ArgumentParser(
        prog="wharf", description="Wharf, the document workspace backend: run the API, the "
        "workers and the scheduler, migrate the databases, inspect sweeps and deletion jobs. "
        "Configured by WHARF_* environment variables (see README).")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("serve", help="embedded mode: API, workers and scheduler in one process")
    p.add_argument("--host")
    p.add_argument("--port", type=int)
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
    p = sub.add_parser("migrate", help="upgrade the databases to the code's schema")
    p.set_defaults(func=cmd_migrate)
    logging.getLogger("alembic").setLevel(logging.WARNING)
    args = parser.parse_args(argv)
    try:
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
