"""``wharf worker``: N Dramatiq worker processes against Redis or RabbitMQ, with a
graceful shutdown.

The parent starts ``processes`` children (spawned, not forked, so no connection is shared),
restarts a child that dies, and on SIGTERM/SIGINT asks every child to stop: each stops
taking messages, lets in-flight ones finish (up to ``STOP_TIMEOUT``), and exits. Each child
also runs the outbox relay. Recovery of lost or orphaned operations is a scheduled sweep:
run at least one ``wharf scheduler`` beside the workers.

With a metrics port (``WHARF_METRICS_PORT`` or ``--metrics-port``) the parent serves
``/metrics`` (the children's counters, summed through a private prometheus_client
multiprocess directory) and ``/healthz`` (liveness of the supervising loop).
"""
from __future__ import annotations

import logging
import multiprocessing as mp
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from multiprocessing.context import SpawnProcess
from typing import TYPE_CHECKING, Protocol

from wharf.infra.settings import Settings
from wharf.infra.stopping import StopSignal

if TYPE_CHECKING:
    import dramatiq

    from tasks.loops import Periodic
    from wharf.observability.heartbeats import Details, Heartbeat

log = logging.getLogger("wharf.worker")
STOP_TIMEOUT_MS = 30_000


class WorkerComponents(Protocol):
    """What one worker process consumes with (built by the composition root)."""

    @property
    def broker(self) -> dramatiq.Broker: ...

    def relay_loop(self) -> Periodic: ...

    def heartbeat(self, role: str, details: Details | None = None) -> Heartbeat: ...

    def close(self) -> None: ...


def make_worker(broker: dramatiq.Broker, threads: int) -> dramatiq.Worker:
    """A Dramatiq worker for doorbells: each message may drain for a while (up to
    ``tasks.actors.DRAIN_SECONDS``), so a process prefetches no more messages than it has
    threads (Dramatiq's default is twice as many). A bell prefetched by a busy process
    would keep its flag set -- senders behind it would not ring -- while it waits for a
    thread, even if another process sits idle."""
    import dramatiq
    worker = dramatiq.Worker(broker, worker_threads=threads, worker_timeout=100)
    worker.queue_prefetch = threads
    return worker


def run_child(index: int, threads: int, build: Callable[[Settings], WorkerComponents]) -> None:
    """The body of one worker process: consume with the components ``build`` makes from the
    environment's settings until SIGTERM/SIGINT, then stop gracefully. The composition
    root's spawn target calls it (a spawned child starts from a module-level function)."""
    logging.basicConfig(level=os.environ.get("WHARF_LOG_LEVEL", "INFO").upper(),
                        format="%(asctime)s %(levelname)s %(name)s %(message)s")
    settings = Settings.from_env()
    stop = StopSignal().install()
    components = build(settings)
    from tasks.heartbeat import HeartbeatMiddleware  # the heartbeat runs with the worker
    components.broker.add_middleware(HeartbeatMiddleware(
        lambda details: components.heartbeat("worker", details), extra={"index": index}))
    worker = make_worker(components.broker, threads)
    worker.start()
    relay = components.relay_loop()
    relay.start()
    log.info("worker process %d (pid %d) consuming with %d threads", index, os.getpid(), threads)
    stop.wait()
    log.info("worker process %d stopping", index)
    relay.stop()
    worker.stop(timeout=STOP_TIMEOUT_MS)
    components.close()


def run_workers(settings: Settings, processes: int | None = None,
                threads: int | None = None, *, child: Callable[[int, int], None]) -> int:
    """Supervise ``processes`` spawned children, each running ``child(index, threads)``
    (a module-level function that calls :func:`run_child`)."""
    if settings.embedded_broker:
        print("wharf: `wharf worker` needs WHARF_BROKER_URL=redis://..., "
              "redis+sentinel://... or amqp://...; the embedded broker lives inside "
              "`wharf serve`", flush=True)
        return 2
    processes = processes or settings.worker_processes
    threads = threads or settings.worker_threads
    ctx = mp.get_context("spawn")
    stopping = StopSignal().install()
    metrics_dir = server = None
    heartbeat = [time.monotonic()]
    if settings.metrics_port is not None:
        # Children (spawned: they inherit the environment) write their counters here; this
        # directory is ours alone, so an inherited PROMETHEUS_MULTIPROC_DIR shared with other
        # processes cannot mix their counters into ours.
        metrics_dir = tempfile.mkdtemp(prefix="wharf-worker-metrics-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
        from wharf.observability import metrics
        try:
            server = metrics.serve(settings, settings.metrics_port, name="worker",
                                   alive=lambda: time.monotonic() - heartbeat[0] < 30)
        except Exception:
            shutil.rmtree(metrics_dir, ignore_errors=True)
            raise

    def spawn(i: int) -> SpawnProcess:
        p = ctx.Process(target=child, args=(i, threads), name=f"wharf-worker-{i}")
        p.start()
        return p

    children = [spawn(i) for i in range(processes)]
    print(f"wharf: worker started: {processes} process(es) x {threads} thread(s)", flush=True)
    while not stopping.wait(0.5):
        heartbeat[0] = time.monotonic()
        for i, p in enumerate(children):
            if not p.is_alive() and not stopping.is_set():
                log.warning("worker process %d exited with %s; restarting", i, p.exitcode)
                time.sleep(1)
                children[i] = spawn(i)
    for p in children:
        if p.is_alive():
            p.terminate()  # SIGTERM
    deadline = time.monotonic() + STOP_TIMEOUT_MS / 1000 + 5
    for p in children:
        p.join(max(0.1, deadline - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join(1)
    if server is not None:
        server.stop()
    if metrics_dir is not None:
        shutil.rmtree(metrics_dir, ignore_errors=True)
    print("wharf: worker stopped", flush=True)
    return 0
