"""Prometheus metrics: in-process counters plus cluster-wide gauges read from the database.

Counters live in the process where things happen, and each long-running process serves
its own:

- API (``/metrics`` on the API port): submissions, plus the cluster-wide gauges (queue lag,
  open operations, deletion jobs, dependency status) read from the database at scrape time
  and cached for ``WHARF_METRICS_CACHE_SECONDS``. Under gunicorn, ``PROMETHEUS_MULTIPROC_DIR``
  lets one worker report the counters of all of them.
- ``wharf worker`` and ``wharf scheduler`` (``/metrics`` on ``WHARF_METRICS_PORT``, see
  :func:`serve`): finished operations, sweep runs, schedule ticks. The worker's parent
  gives its children a private multiprocess directory and reports their sum.

``WHARF_METRICS_TOKEN``, when set, is required as ``Authorization: Bearer`` on every
``/metrics``.
"""
from __future__ import annotations

import hmac
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta
from socketserver import ThreadingMixIn
from typing import TYPE_CHECKING, Any, Generic, TypeVar
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from sqlalchemy import func, select

from storage.enums import OPEN_STATUSES as OPEN_OPERATION_STATUSES
from storage.enums import DeliveryStatus, OperationStatus, TickStatus
from storage.models import (
    ObjectDeletionJob,
    Operation,
    OutboxMessage,
    ScheduleTick,
    WebhookDelivery,
)
from storage.models.operations import due as operation_due
from wharf.infra.clock import utcnow
from wharf.infra.settings import ConfigError

if TYPE_CHECKING:
    from wsgiref.types import StartResponse, WSGIEnvironment

    from sqlalchemy.orm import Session

    from storage.db import Database
    from wharf.infra.settings import Settings

V = TypeVar("V")

log = logging.getLogger("wharf.observability.metrics")
OPEN_STATUSES = tuple(s.value for s in OPEN_OPERATION_STATUSES)
DELETION_JOB_STATES = ("due", "waiting", "failing", "failing_over_a_day")

REGISTRY = CollectorRegistry(auto_describe=True)

SWEEP_RUNS = Counter("wharf_sweep_runs_total", "Sweep runs by outcome", ["sweep", "outcome"],
                     registry=REGISTRY)
SWEEP_ITEMS = Counter("wharf_sweep_items_total", "Items a sweep acted on", ["sweep", "item"],
                      registry=REGISTRY)
SWEEP_DURATION = Histogram("wharf_sweep_duration_seconds", "Sweep run duration", ["sweep"],
                           registry=REGISTRY,
                           buckets=(0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, float("inf")))
SWEEP_SKIPPED = Counter("wharf_sweep_skipped_total",
                        "Ticks skipped because the previous run was still going", ["sweep"],
                        registry=REGISTRY)
OPS_SUBMITTED = Counter("wharf_operations_submitted_total", "Operations recorded", ["kind"],
                        registry=REGISTRY)
OPS_FINISHED = Counter("wharf_operations_finished_total", "Operations finished",
                       ["kind", "status", "code"], registry=REGISTRY)
SCHEDULE_TICKS = Counter("wharf_schedule_ticks_total",
                         "Schedule ticks this scheduler decided, by decision",
                         ["schedule", "decision"], registry=REGISTRY)
ASSET_UPLOADS = Counter("wharf_asset_uploads_total",
                        "Unit-asset upload requests by result (stored, replayed, refused, "
                        "abandoned)", ["result"], registry=REGISTRY)
WEBHOOK_ATTEMPTS = Counter("wharf_webhook_attempts_total",
                           "Webhook delivery attempts by outcome (delivered, retry, failed)",
                           ["outcome"], registry=REGISTRY)
ASSET_UPLOAD_BYTES = Counter("wharf_asset_upload_bytes_total",
                             "Bytes of unit-asset uploads stored", registry=REGISTRY)
MERGE_UNITS = Counter("wharf_merge_units_total",
                      "Units of worktree merges by outcome (unchanged, fast_forward, merged, "
                      "created, conflict, activation_blocked)", ["outcome"], registry=REGISTRY)
MERGE_CONFLICTS = Counter("wharf_merge_conflicts_total",
                          "Conflicts found by worktree merges", registry=REGISTRY)
MERGE_DURATION = Histogram("wharf_merge_duration_seconds",
                           "Time to merge one unit of a worktree (UnitStore write included)",
                           registry=REGISTRY,
                           buckets=(0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, float("inf")))
LONG_POLLS_REFUSED = Counter("wharf_long_polls_refused_total",
                             "Long-polls answered at once: WHARF_LONG_POLL_MAX_WAITERS were "
                             "already waiting", registry=REGISTRY)
OPS_RETRIED = Counter("wharf_operation_retries_total",
                      "Failed attempts of operations that will be tried again", ["kind"],
                      registry=REGISTRY)
HTTP_RESPONSES = Counter("wharf_http_responses_total", "API responses by status class (2xx, "
                         "3xx, 4xx, 5xx)", ["status_class"], registry=REGISTRY)


class Cached(Generic[V]):
    """A value computed at most once per ``ttl`` seconds, by one thread at a time.

    While one thread refreshes it, the others get the previous value at once instead of
    queueing behind a slow computation (only the very first callers wait for it)."""

    def __init__(self, compute: Callable[[], V], ttl: float):
        self._compute = compute
        self.ttl = ttl
        self._lock = threading.Lock()
        self._value: V | None = None
        self._at = 0.0

    def _fresh(self) -> bool:
        return self._value is not None and time.monotonic() - self._at < self.ttl

    def get(self) -> V:
        previous = self._value
        if previous is not None and self._fresh():
            return previous
        if not self._lock.acquire(blocking=previous is None):
            if previous is not None:  # always: only a non-blocking acquire can fail
                return previous  # being refreshed by another thread: serve the previous one
            self._lock.acquire()
        try:
            value = self._value
            if value is None or not self._fresh():
                value = self._compute()
                self._value = value
                self._at = time.monotonic()
            return value
        finally:
            self._lock.release()


class Dependencies:
    """The dependency checks (``name -> callable`` raising when the dependency is down),
    run at most once per ``ttl`` seconds however many requests ask (``/healthz/details``
    and ``/metrics`` share one instance). A dependency going down or coming back is logged
    once, at the change, not at every check."""

    def __init__(self, checks: dict[str, Callable[[], None]], ttl: float = 5.0):
        self.checks = dict(checks)
        self._cache = Cached(self.run, ttl)
        self._down: dict[str, str] = {}
        self._down_lock = threading.Lock()

    def results(self) -> dict[str, Failure | None]:
        return self._cache.get()

    def run(self) -> dict[str, Failure | None]:
        results = check_all(self.checks)
        with self._down_lock:
            for name, failure in results.items():
                before = self._down.get(name)
                if failure is not None and before != failure.detail:
                    log.warning("dependency %s is down: %s", name, failure.detail)
                    self._down[name] = failure.detail
                elif failure is None and before is not None:
                    log.info("dependency %s is back up", name)
                    del self._down[name]
        return results


class DatabaseCollector:
    """Cluster-wide gauges computed from the database (and dependency pings) at scrape
    time, cached for ``ttl`` seconds so frequent scrapes by several Prometheus servers do
    not each run the COUNTs; a scrape arriving while another computes gets the previous
    values rather than waiting."""

    def __init__(self, db: Database, dependencies: Dependencies, *, kinds: Iterable[str] = (),
                 ttl: float = 5.0):
        self.db = db
        self.kinds = tuple(kinds)
        self.dependencies = dependencies  # shared with /healthz/details
        self._cache = Cached(self._compute, ttl)

    def collect(self) -> list[GaugeMetricFamily]:
        return list(self._cache.get())

    def _compute(self) -> list[GaugeMetricFamily]:
        up = GaugeMetricFamily("wharf_dependency_up",
                               "1 when the dependency answered its check at the last scrape",
                               labels=["dependency"])
        results = self.dependencies.results()
        for name, error in results.items():
            up.add_metric([name], 0.0 if error else 1.0)
        out = [up]
        if results.get("database") is None:
            try:
                out += self._database_gauges()
            except Exception as exc:  # the database went away mid-scrape: report what we have
                log.warning("database gauges unavailable: %s", exc)
        return out

    def _database_gauges(self) -> list[GaugeMetricFamily]:
        now = utcnow()
        out: list[GaugeMetricFamily] = []
        with self.db.read() as s:
            counts = {(kind, status): 0 for kind in self.kinds for status in OPEN_STATUSES}
            for kind, status, n in s.execute(
                    select(Operation.kind, Operation.status, func.count())
                    .where(Operation.status.in_(OPEN_STATUSES))
                    .group_by(Operation.kind, Operation.status)):
                counts[(kind, status)] = n
            pending = GaugeMetricFamily("wharf_operations_open", "Operations not yet done",
                                        labels=["kind", "status"])
            for (kind, status), n in sorted(counts.items()):
                pending.add_metric([kind, status], n)
            out.append(pending)
            out.append(GaugeMetricFamily(
                "wharf_operations_due", "Operations a worker could claim now (pending and "
                "due, or running with an expired lease): the workers' backlog",
                value=s.scalar(select(func.count()).select_from(Operation).where(
                    operation_due(now))) or 0))
            oldest = s.scalar(select(func.min(Operation.created_at)).where(
                Operation.status == OperationStatus.PENDING, Operation.attempts == 0))
            out.append(GaugeMetricFamily("wharf_operation_queue_lag_seconds",
                                         "Age of the oldest operation not yet started",
                                         value=(now - oldest).total_seconds() if oldest else 0.0))
            jobs = GaugeMetricFamily("wharf_deletion_jobs", "Object deletion jobs",
                                     labels=["state"])
            # COUNT(*) always returns a row; ``or 0`` only tells the type checker so.
            due = s.scalar(select(func.count()).select_from(ObjectDeletionJob).where(
                ObjectDeletionJob.next_attempt_at <= now)) or 0
            total = s.scalar(select(func.count()).select_from(ObjectDeletionJob)) or 0
            failing = s.scalar(select(func.count()).select_from(ObjectDeletionJob).where(
                ObjectDeletionJob.attempts > 0)) or 0
            stuck = s.scalar(select(func.count()).select_from(ObjectDeletionJob).where(
                ObjectDeletionJob.attempts > 0,
                ObjectDeletionJob.created_at < now - timedelta(days=1))) or 0
            for state, n in zip(DELETION_JOB_STATES, (due, total - due, failing, stuck)):
                jobs.add_metric([state], n)
            out.append(jobs)
            out.append(GaugeMetricFamily("wharf_outbox_undispatched", "Outbox rows not yet sent",
                                         value=s.scalar(select(func.count()).select_from(
                                             OutboxMessage).where(
                                             OutboxMessage.dispatched_at.is_(None)))))
            out += fsck_gauges(s)
            out.append(webhook_pending_gauge(s))
        return out


@dataclass(frozen=True)
class Failure:
    """Why a dependency check failed: ``type`` (the error's class name, always safe to
    show) and ``detail`` (with the message of errors meant for operators, such as the
    name of a missing bucket)."""

    type: str
    detail: str

    def __str__(self) -> str:
        return self.detail


CHECK_BUDGET = 3.0  # seconds a dependency check may take before it counts as down
_running: dict[tuple[int, int], threading.Thread] = {}  # check -> its thread, if running
_running_lock = threading.Lock()


def _outcome(check: Callable[[], None]) -> Failure | None:
    try:
        check()
        return None
    except Exception as exc:  # any failure means "down"; say which
        kind = type(exc).__name__
        detail = f"{kind}: {exc}" if getattr(exc, "operator_message", False) else kind
        return Failure(kind, detail)


def _bounded(check: Callable[[], None], budget: float) -> Failure | None:
    """Run ``check`` for at most ``budget`` seconds. A check that does not return in time
    (a database or endpoint that accepts and never answers: no client timeout covers every
    case) counts as down, and while it still hangs it is not started again, so hung checks
    never pile up threads."""
    timed_out = Failure("CheckTimedOut", f"CheckTimedOut: no answer within {budget:g}s")
    # A bound method is a new object at each attribute access: key on object + function.
    key = (id(getattr(check, "__self__", None)), id(getattr(check, "__func__", check)))
    with _running_lock:
        previous = _running.get(key)
        if previous is not None and previous.is_alive():
            return timed_out
        box: list[Failure | None] = []
        thread = threading.Thread(target=lambda: box.append(_outcome(check)), daemon=True,
                                  name="wharf-dependency-check")
        _running[key] = thread
        thread.start()
    thread.join(budget)
    return box[0] if box else timed_out


def check_all(checks: dict[str, Callable[[], None]],
              budget: float | None = None) -> dict[str, Failure | None]:
    """Run each check, each within ``budget`` seconds (default :data:`CHECK_BUDGET`);
    ``None`` for a dependency that answered, else a :class:`Failure`."""
    budget = CHECK_BUDGET if budget is None else budget
    return {name: _bounded(check, budget) for name, check in checks.items()}


def token_ok(expected: str | None, authorization: str | None) -> bool:
    """Whether an ``Authorization`` header value carries ``expected`` (or none is needed)."""
    if not expected:
        return True
    scheme, _, value = (authorization or "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(
        value.strip().encode(), expected.encode())


def process_registry() -> CollectorRegistry:
    """This process's counters, or with ``PROMETHEUS_MULTIPROC_DIR`` those of every process
    writing to that directory."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess  # only in multiprocess mode
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return registry
    return REGISTRY


def render(collector: DatabaseCollector | None = None) -> tuple[bytes, str]:
    output = generate_latest(process_registry())
    if collector is not None:
        extra = CollectorRegistry(auto_describe=False)
        extra.register(collector)
        output += generate_latest(extra)
    return output, CONTENT_TYPE_LATEST


# --- the metrics port of `wharf worker` and `wharf scheduler` ------------------------------

# Seconds a connection of the metrics port may stay silent (request not sent, or the
# response not read) before it is closed: each connection holds a thread.
HANDLER_TIMEOUT = 10.0


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (TimeoutError, ConnectionError)):
            return  # a silent or vanished client: closed, nothing to report
        super().handle_error(request, client_address)


class _QuietHandler(WSGIRequestHandler):
    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(HANDLER_TIMEOUT)  # for every read and write

    # Scrapes come every few seconds: no log line for each.
    def log_message(self, format: str, *args: Any) -> None:
        pass


class MetricsServer:
    """``GET /metrics`` (the process's counters; bearer token when one is configured) and
    ``GET /healthz`` (liveness: 200 while ``alive()`` is true, else 503) on a port of its
    own, served from a daemon thread."""

    def __init__(self, host: str, port: int, *, token: str | None = None,
                 alive: Callable[[], bool] = lambda: True,
                 registry: Callable[[], CollectorRegistry] = process_registry):
        self.token = token
        self.alive = alive
        self.registry = registry
        self.httpd = make_server(host, port, self._app, _Server, handler_class=_QuietHandler)
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="metrics-http",
                                        daemon=True)

    def _app(self, environ: WSGIEnvironment, start_response: StartResponse) -> list[bytes]:
        path = environ.get("PATH_INFO") or "/"
        if environ.get("REQUEST_METHOD") not in ("GET", "HEAD"):
            return _reply(start_response, "405 Method Not Allowed", b"GET only\n")
        if path == "/healthz":
            if self.alive():
                return _reply(start_response, "200 OK", b'{"status": "ok"}',
                              "application/json")
            return _reply(start_response, "503 Service Unavailable",
                          b'{"status": "unavailable"}', "application/json")
        if path == "/metrics":
            if not token_ok(self.token, environ.get("HTTP_AUTHORIZATION")):
                return _reply(start_response, "401 Unauthorized",
                              b"metrics need 'Authorization: Bearer <WHARF_METRICS_TOKEN>'\n",
                              extra=[("WWW-Authenticate", 'Bearer realm="metrics"')])
            return _reply(start_response, "200 OK", generate_latest(self.registry()),
                          CONTENT_TYPE_LATEST)
        return _reply(start_response, "404 Not Found", b"not found\n")

    def start(self) -> MetricsServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(5)


def _reply(start_response: StartResponse, status: str, body: bytes,
           ctype: str = "text/plain; charset=utf-8",
           extra: list[tuple[str, str]] | None = None) -> list[bytes]:
    start_response(status, [("Content-Type", ctype), ("Content-Length", str(len(body))),
                            *(extra or [])])
    return [body]


def serve(settings: Settings, port: int | None, *, alive: Callable[[], bool] = lambda: True,
          registry: Callable[[], CollectorRegistry] = process_registry,
          name: str = "wharf") -> MetricsServer | None:
    """Start the metrics port when one is configured (``None``: no port, nothing served)."""
    if port is None:
        return None
    try:
        server = MetricsServer(settings.host, port, token=settings.metrics_token, alive=alive,
                               registry=registry)
    except OSError as exc:
        raise ConfigError(f"WHARF_METRICS_PORT={port}: cannot listen on {settings.host}:{port} "
                          f"({exc.strerror or exc})") from None
    print(f"wharf: {name} metrics on http://{settings.host}:{server.port}/metrics", flush=True)
    return server.start()


#: The gauges of the last finished ``fsck`` sweep: gauge name -> its count in the tick.
FSCK_GAUGES = {"wharf_fsck_orphaned_objects": "orphaned_object",
               "wharf_fsck_missing_objects": "missing_object",
               "wharf_fsck_orphaned_units": "orphaned_unit",
               "wharf_fsck_missing_units": "missing_unit",
               "wharf_fsck_foreign_objects": "foreign_object"}


def fsck_gauges(s: Session) -> list[GaugeMetricFamily]:
    """What the last finished ``fsck`` sweep found, read from its schedule tick (so every
    API process reports it, and a restart loses nothing): the counts by kind and the time it
    finished (no gauges before the first run)."""
    last = s.execute(select(ScheduleTick.counts, ScheduleTick.finished_at).where(
        ScheduleTick.schedule == "fsck", ScheduleTick.status == TickStatus.DONE)
        .order_by(ScheduleTick.tick_at.desc()).limit(1)).first()
    if last is None or last.finished_at is None:
        return []
    counts = last.counts or {}
    out = [GaugeMetricFamily(name, f"{item.replace('_', ' ')}s found by the last fsck sweep",
                             value=float(counts.get(item, 0)))
           for name, item in FSCK_GAUGES.items()]
    out.append(GaugeMetricFamily("wharf_fsck_last_run_timestamp_seconds",
                                 "When the last fsck sweep finished (Unix time)",
                                 value=last.finished_at.timestamp()))
    out.append(GaugeMetricFamily("wharf_fsck_last_run_complete",
                                 "1 if the last fsck sweep compared everything, 0 if it "
                                 "stopped at its time budget",
                                 value=float(counts.get("complete", 0))))
    return out


def webhook_pending_gauge(s: Session) -> GaugeMetricFamily:
    """``wharf_webhook_deliveries_pending``: webhook deliveries neither delivered nor given
    up, parked ones (endpoint disabled) included; a growing value means receivers are down
    or the workers do not keep up."""
    return GaugeMetricFamily(
        "wharf_webhook_deliveries_pending",
        "Webhook deliveries not yet delivered nor given up (parked ones included)",
        value=s.scalar(select(func.count()).select_from(WebhookDelivery).where(
            WebhookDelivery.status == str(DeliveryStatus.PENDING))) or 0)
