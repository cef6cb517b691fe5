"""``wharf scheduler``: decides ticks and enqueues sweeps. Run any number for availability:
the database decides which scheduler enqueues each tick."""
from __future__ import annotations

import os
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from tasks.loops import Periodic
from wharf.infra.clock import utcnow
from wharf.infra.settings import Settings
from wharf.infra.stopping import StopSignal

if TYPE_CHECKING:  # imports prometheus_client, which must wait for run_scheduler's pop
    from wharf.observability.heartbeats import Details, Heartbeat
    from wharf.retention.schedule import Scheduler


class SchedulerComponents(Protocol):
    """What ``wharf scheduler`` runs with (built by the composition root)."""

    def scheduler(self, scheduler_id: str) -> Scheduler: ...

    def heartbeat(self, role: str, details: Details | None = None) -> Heartbeat: ...

    def close(self) -> None: ...


def tick_period(settings: Settings) -> float:
    return max(0.2, min(1.0, settings.sweep_interval / 4, settings.recovery_interval / 4))


def scheduler_loop(scheduler: Scheduler, settings: Settings) -> Periodic:
    """Ticks ``scheduler`` a few times per shortest period (it decides each tick once)."""
    return Periodic("scheduler", tick_period(settings), lambda: scheduler.tick(utcnow()))


def run_scheduler(settings: Settings,
                  build: Callable[[Settings], SchedulerComponents]) -> int:
    """Tick the schedules of the components ``build`` makes until SIGTERM/SIGINT.

    With a metrics port, serves ``/metrics`` (this process's counters: schedule ticks,
    skipped sweeps) and ``/healthz`` (200 while the tick loop runs). ``build`` runs after
    the metrics environment is settled (prometheus_client reads it when first imported)."""
    if settings.metrics_port is not None:
        # One process: its own counters, never those of a directory shared with others.
        os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
    from wharf.observability import metrics
    components = build(settings)
    scheduler = components.scheduler(f"{socket.gethostname()}:{os.getpid()}")
    loop = scheduler_loop(scheduler, settings)
    stop = StopSignal().install()
    try:
        server = metrics.serve(settings, settings.metrics_port, name="scheduler",
                               alive=loop.alive, registry=lambda: metrics.REGISTRY)
    except Exception:
        components.close()
        raise
    loop.start()
    heartbeat = components.heartbeat("scheduler", lambda: {
        "scheduler_id": scheduler.scheduler_id, "schedules": len(scheduler.plan),
        "ticking": loop.alive()}).start()
    print(f"wharf: scheduler started ({len(scheduler.plan)} schedules)", flush=True)
    stop.wait()
    loop.stop()
    heartbeat.stop()
    if server is not None:
        server.stop()
    components.close()
    print("wharf: scheduler stopped", flush=True)
    return 0
