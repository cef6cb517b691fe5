"""The long-running processes: ``wharf serve`` (everything in one process), ``wharf worker``,
``wharf scheduler``, and ``wharf migrate`` which prepares their databases."""
from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from wharf.infra.settings import Settings
from wharfd.commands.preflight import (
    StartupError,
    check_blob_store,
    ensure_dir,
    migrate_all,
    settings_from_args,
)

if TYPE_CHECKING:
    from wharfd.runtime import Components


def cmd_migrate(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    result = migrate_all(settings)
    if not result.changed:
        print(f"wharf: database already at revision {result.after}; nothing to do", flush=True)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """Embedded mode: API + in-process broker + worker threads + scheduler, one process."""
    settings = settings_from_args(args)
    from wharfd import serving
    settings = serving.resolve(settings)
    from wharfd.tracing import exporters_from
    exporters_from(os.environ)  # a bad OTEL_TRACES_EXPORTER fails before anything is done
    ensure_dir(settings.data_dir, "WHARF_DATA_DIR")
    migrate_all(settings)
    check_blob_store(settings)
    from wharfd import tracing
    tracing.setup("serve")
    from wharfd.runtime import EmbeddedRuntime
    runtime = EmbeddedRuntime(settings)
    from wharfd.feed_serving import EmbeddedFeed
    feed = EmbeddedFeed(runtime.components.feed_app(), settings)  # /api/feed, same port
    from wharfd import heap
    heap.settle()  # what start-up built stays out of the collector's full collections
    try:
        server = serving.create_server(runtime.api_app, settings, feed=feed.adopt)
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
        feed.start()
        urls = ", ".join(f"http://{host}:{port}"
                         for host, port in serving.listening(server))
        print(f"wharf: serving on {urls} (data in {settings.data_dir})", flush=True)
        serving.serve_until(server, stop)
    finally:
        feed.stop()
        runtime.stop()
        print("wharf: stopped", flush=True)
    return 0


def build_components(settings: Settings) -> Components:
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
    run_child(index, threads, build_components)


def cmd_worker(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    from wharfd.tracing import exporters_from
    exporters_from(os.environ)  # a bad OTEL_TRACES_EXPORTER fails here, not in each child
    check_blob_store(settings)
    from tasks.worker import run_workers
    return run_workers(settings, processes=args.processes, threads=args.threads,
                       child=worker_process)


def cmd_scheduler(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    from wharfd import tracing
    tracing.setup("scheduler")
    from tasks.scheduler import run_scheduler
    return run_scheduler(settings, build_components)
