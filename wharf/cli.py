"""The ``wharf`` command: serve, api, worker, scheduler, migrate.

This is the composition root: the one module that wires ``api`` and ``tasks`` to the core.
It imports them lazily, inside each command, so the core stays free of Falcon and Dramatiq.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
import time

from wharf.config import ConfigError, Settings


class StartupError(RuntimeError):
    """The process cannot start (e.g. the port is taken); the message says why."""


def _settings(args) -> Settings:
    overrides = {}
    if getattr(args, "host", None):
        overrides["host"] = args.host
    if getattr(args, "port", None) is not None:
        if not 0 <= args.port <= 65535:
            raise ConfigError(f"--port {args.port}: expected an integer between 0 and 65535")
        overrides["port"] = args.port
    return Settings.from_env(**overrides)


def _ensure_dir(path, variable: str) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{variable}={str(path)!r}: cannot create the directory "
                          f"({exc.strerror or exc})") from None


def _ensure_sqlite_dirs(settings: Settings) -> None:
    """Create the parent directory of each SQLite database, naming the variable on failure."""
    from pathlib import Path
    for name, url in (("WHARF_DATABASE_URL", settings.database_url),
                      ("WHARF_UNITSTORE_URL", settings.unitstore_url)):
        if url.startswith("sqlite") and "///" in url:
            path = url.split("///", 1)[1]
            if path and path != ":memory:":
                _ensure_dir(Path(path).parent, name)


def _migrate_all(settings: Settings):
    """Prepare the product database and the unit store; return the product DB's result."""
    from migrations.prepare import prepare
    from storage.db import make_engines
    _ensure_sqlite_dirs(settings)
    engine, reader = make_engines(settings.database_url, settings.sqlite_busy_timeout_ms)
    try:
        result = prepare(engine)
    finally:
        engine.dispose()
        if reader is not engine:
            reader.dispose()
    try:
        from storage.unitstore import prepare_unitstore
    except ImportError:
        return result
    prepare_unitstore(settings)
    return result


def cmd_migrate(args) -> int:
    settings = _settings(args)
    result = _migrate_all(settings)
    if not result.changed:
        print(f"wharf: database already at revision {result.after}; nothing to do", flush=True)
    return 0


def cmd_serve(args) -> int:
    """Embedded mode: API + in-process broker + worker threads + scheduler, one process."""
    settings = _settings(args)
    from wharf import serving
    settings = serving.resolve(settings)
    _ensure_dir(settings.data_dir, "WHARF_DATA_DIR")
    _migrate_all(settings)
    from tasks.runtime import EmbeddedRuntime
    runtime = EmbeddedRuntime(settings)
    try:
        server = serving.create_server(runtime.api_app, settings)
    except OSError as exc:
        try:
            runtime.stop()
        except Exception:  # noqa: BLE001 - never started; report the real problem below
            pass
        raise StartupError(f"cannot listen on {settings.host}:{settings.port} "
                           f"(WHARF_HOST/WHARF_PORT): {exc.strerror or exc}") from None
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        runtime.start()
        host, port = server.effective_host, server.effective_port
        print(f"wharf: serving on http://{host}:{port} (data in {settings.data_dir})",
              flush=True)
        _serve_until(server, stop)
    finally:
        runtime.stop()
        print("wharf: stopped", flush=True)
    return 0


def _serve_until(server, stop: threading.Event, grace: float = 10.0) -> None:
    """Run waitress's event loop until ``stop`` is set, then shut down gracefully.

    Shutdown: stop accepting, let requests already received finish and their responses
    flush (at most ``grace`` seconds), then close every connection (idle keep-alive ones
    included — ``server.close()`` alone leaves them open and the loop running) and the
    request threads.
    """
    from waitress import wasyncore
    loop, amap = server.asyncore.loop, server._map
    poll = server.adj.asyncore_use_poll
    while not stop.is_set():
        loop(timeout=0.2, map=amap, use_poll=poll, count=1)
    wasyncore.dispatcher.close(server)  # the listening socket; the trigger stays for now
    dispatcher = server.task_dispatcher

    def busy() -> bool:
        if dispatcher.active_count > 0 or dispatcher.queue:
            return True
        return any(getattr(ch, "requests", None) or getattr(ch, "total_outbufs_len", 0)
                   for ch in list(amap.values()))

    deadline = time.monotonic() + grace
    while busy() and time.monotonic() < deadline:
        loop(timeout=0.05, map=amap, use_poll=poll, count=1)
    for channel in list(amap.values()):
        try:
            channel.close()
        except OSError:
            pass
    dispatcher.shutdown(cancel_pending=True, timeout=2)


def cmd_api(args) -> int:
    """Production API: gunicorn with deploy/gunicorn.conf.py defaults."""
    settings = _settings(args)
    from gunicorn.app.wsgiapp import WSGIApplication
    host = f"[{settings.host}]" if ":" in settings.host and not settings.host.startswith("[") \
        else settings.host
    argv = ["gunicorn", "api.wsgi:application", "--bind", f"{host}:{settings.port}"]
    conf = os.environ.get("WHARF_GUNICORN_CONF")
    if conf:
        if not os.path.isfile(conf):
            raise ConfigError(f"WHARF_GUNICORN_CONF={conf!r}: no such file")
        argv += ["--config", conf]
    else:
        argv += ["--worker-class", "gthread"]
    # Explicit options win over the config file; without a file the defaults are 2 x 8.
    workers = args.workers if args.workers is not None else (None if conf else 2)
    threads = args.threads if args.threads is not None else (None if conf else 8)
    if workers is not None:
        argv += ["--workers", str(workers)]
    if threads is not None:
        argv += ["--threads", str(threads)]
        # Long-polls may take half the threads of each worker (unless set explicitly);
        # with a config file, its post_fork hook does the same from gunicorn's settings.
        os.environ.setdefault("WHARF_LONG_POLL_MAX_WAITERS", str(threads // 2))
    sys.argv = argv
    WSGIApplication("%(prog)s [OPTIONS] [APP_MODULE]").run()
    return 0


def cmd_worker(args) -> int:
    settings = _settings(args)
    from tasks.worker import run_workers
    return run_workers(settings, processes=args.processes, threads=args.threads)


def cmd_scheduler(args) -> int:
    settings = _settings(args)
    from tasks.scheduler import run_scheduler
    return run_scheduler(settings)


def cmd_sweeps(args) -> int:
    """Every schedule with its cron, last run (status, counts) and next run."""
    from storage.db import Database
    from wharf.clock import iso
    from wharf.retention.schedule import Scheduler
    settings = _settings(args)
    db = Database(settings.database_url, settings.sqlite_busy_timeout_ms)
    try:
        rows = Scheduler(db, settings, "cli").status()
    finally:
        db.dispose()
    print(f"{'schedule':28} {'cron':16} {'last tick':22} {'status':8} {'next tick':22} counts")
    for r in rows:
        print(f"{r['schedule']:28} {r['cron']:16} {iso(r['last_tick']) or '-':22} "
              f"{r['last_status'] or '-':8} {iso(r['next_tick']):22} "
              f"{json.dumps(r['last_counts']) if r['last_counts'] else '-'}")
    return 0


def cmd_deletion_jobs(args) -> int:
    """Object deletion jobs that have been failing for longer than --failing-for seconds."""
    from datetime import timedelta

    from storage.db import Database
    from wharf import deletion
    from wharf.clock import iso
    settings = _settings(args)
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


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL")


def main(argv: list[str] | None = None) -> int:
    level = (os.environ.get("WHARF_LOG_LEVEL") or "INFO").strip().upper()
    if level not in LOG_LEVELS:
        print(f"wharf: configuration error: WHARF_LOG_LEVEL={os.environ['WHARF_LOG_LEVEL']!r}: "
              f"expected one of {', '.join(LOG_LEVELS)}", file=sys.stderr)
        return 2
    logging.basicConfig(level=level,
                        format="%(asctime)s %(levelname)s %(name)s %(message)s")
    parser = argparse.ArgumentParser(prog="wharf", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("serve", help="embedded mode: API, workers and scheduler in one process")
    p.add_argument("--host")
    p.add_argument("--port", type=int)
    p.set_defaults(func=cmd_serve)
    p = sub.add_parser("api", help="production API under gunicorn")
    p.add_argument("--host")
    p.add_argument("--port", type=int)
    p.add_argument("--workers", type=int, help="gunicorn worker processes (default 2)")
    p.add_argument("--threads", type=int, help="threads per worker (default 8)")
    p.set_defaults(func=cmd_api)
    p = sub.add_parser("worker", help="Dramatiq worker processes (Redis broker)")
    p.add_argument("--processes", type=int)
    p.add_argument("--threads", type=int)
    p.set_defaults(func=cmd_worker)
    p = sub.add_parser("scheduler", help="retention sweeps on their schedule")
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
    found: list[type[BaseException]] = [MigrationRefused]
    try:
        from storage.unitstore import UnitStoreSchemaError
        found.append(UnitStoreSchemaError)
    except ImportError:
        pass
    return tuple(found)


if __name__ == "__main__":
    sys.exit(main())
