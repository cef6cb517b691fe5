"""The ``wharf`` command: serve, api, worker, scheduler, migrate.

This is the composition root: the one module that wires ``api`` and ``tasks`` to the core.
It imports them lazily, inside each command, so the core stays free of Falcon and Dramatiq.
"""
from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading

from wharf.config import ConfigError, Settings


def _settings(args) -> Settings:
    overrides = {}
    if getattr(args, "host", None):
        overrides["host"] = args.host
    if getattr(args, "port", None) is not None:
        overrides["port"] = args.port
    return Settings.from_env(**overrides)


def _migrate_all(settings: Settings) -> None:
    from migrations.prepare import prepare
    from storage.db import make_engines
    engine, reader = make_engines(settings.database_url, settings.sqlite_busy_timeout_ms)
    try:
        prepare(engine)
    finally:
        engine.dispose()
        if reader is not engine:
            reader.dispose()
    try:
        from storage.unitstore import prepare_unitstore
    except ImportError:
        return
    prepare_unitstore(settings)


def cmd_migrate(args) -> int:
    settings = _settings(args)
    _migrate_all(settings)
    return 0


def cmd_serve(args) -> int:
    """Embedded mode: API + in-process broker + worker threads + scheduler, one process."""
    settings = _settings(args)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    _migrate_all(settings)
    from tasks.runtime import EmbeddedRuntime
    runtime = EmbeddedRuntime(settings)
    runtime.start()
    from waitress import create_server
    server = create_server(runtime.api_app, host=settings.host, port=settings.port,
                           threads=max(8, settings.worker_threads * 2), ident="wharf",
                           clear_untrusted_proxy_headers=True)
    stop = threading.Event()

    def _stop(signum, frame):
        if not stop.is_set():
            stop.set()
            threading.Thread(target=server.close, daemon=True).start()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    host, port = server.effective_host, server.effective_port
    print(f"wharf: serving on http://{host}:{port} (data in {settings.data_dir})", flush=True)
    try:
        server.run()
    except (OSError, ValueError):
        if not stop.is_set():
            raise
    finally:
        runtime.stop()
        print("wharf: stopped", flush=True)
    return 0


def cmd_api(args) -> int:
    """Production API: gunicorn with deploy/gunicorn.conf.py defaults."""
    settings = _settings(args)
    from gunicorn.app.wsgiapp import WSGIApplication
    argv = ["gunicorn", "api.wsgi:application", "--bind", f"{settings.host}:{settings.port}"]
    conf = os.environ.get("WHARF_GUNICORN_CONF")
    if conf:
        argv += ["--config", conf]
    else:
        argv += ["--workers", str(args.workers), "--threads", str(args.threads),
                 "--worker-class", "gthread"]
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


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=os.environ.get("WHARF_LOG_LEVEL", "INFO").upper(),
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
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--threads", type=int, default=8)
    p.set_defaults(func=cmd_api)
    p = sub.add_parser("worker", help="Dramatiq worker processes (Redis broker)")
    p.add_argument("--processes", type=int)
    p.add_argument("--threads", type=int)
    p.set_defaults(func=cmd_worker)
    p = sub.add_parser("scheduler", help="retention sweeps on their schedule")
    p.set_defaults(func=cmd_scheduler)
    p = sub.add_parser("migrate", help="upgrade the databases to the code's schema")
    p.set_defaults(func=cmd_migrate)
    logging.getLogger("alembic").setLevel(logging.WARNING)
    args = parser.parse_args(argv)
    try:
        return args.func(args) or 0
    except ConfigError as exc:
        print(f"wharf: configuration error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        from migrations.prepare import MigrationRefused
        if isinstance(exc, MigrationRefused):
            print(f"wharf: refusing to migrate: {exc}", file=sys.stderr)
            return 3
        raise


if __name__ == "__main__":
    sys.exit(main())
