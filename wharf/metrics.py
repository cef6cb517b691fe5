"""Prometheus metrics: in-process counters plus cluster-wide gauges read from the database.

Counters live in the process where things happen (API: submissions; workers: finished
operations and sweeps). With ``PROMETHEUS_MULTIPROC_DIR`` set, prometheus_client keeps them
in shared files and ``/metrics`` aggregates every process on the host. The gauges (queue
lag, pending work, deletion jobs) are read from the database at scrape time, so any API
process reports the same cluster-wide values.
"""
from __future__ import annotations

import os
from datetime import timedelta

from prometheus_client import (CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram,
                               generate_latest)
from prometheus_client.core import GaugeMetricFamily
from sqlalchemy import func, select

from wharf.clock import utcnow

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
LONG_POLLS_REFUSED = Counter("wharf_long_polls_refused_total",
                             "Long-polls answered at once: WHARF_LONG_POLL_MAX_WAITERS were "
                             "already waiting", registry=REGISTRY)


class DatabaseCollector:
    """Cluster-wide gauges computed from the database at scrape time."""

    def __init__(self, db):
        self.db = db

    def collect(self):
        from storage.models import ObjectDeletionJob, Operation, OutboxMessage
        now = utcnow()
        with self.db.read() as s:
            pending = GaugeMetricFamily("wharf_operations_open", "Operations not yet done",
                                        labels=["kind", "status"])
            for kind, status, n in s.execute(
                    select(Operation.kind, Operation.status, func.count())
                    .where(Operation.status.in_(("pending", "running")))
                    .group_by(Operation.kind, Operation.status)):
                pending.add_metric([kind, status], n)
            yield pending
            oldest = s.scalar(select(func.min(Operation.created_at)).where(
                Operation.status == "pending", Operation.attempts == 0))
            yield GaugeMetricFamily("wharf_operation_queue_lag_seconds",
                                    "Age of the oldest operation not yet started",
                                    value=(now - oldest).total_seconds() if oldest else 0.0)
            jobs = GaugeMetricFamily("wharf_deletion_jobs", "Object deletion jobs",
                                     labels=["state"])
            due = s.scalar(select(func.count()).select_from(ObjectDeletionJob).where(
                ObjectDeletionJob.next_attempt_at <= now))
            total = s.scalar(select(func.count()).select_from(ObjectDeletionJob))
            failing = s.scalar(select(func.count()).select_from(ObjectDeletionJob).where(
                ObjectDeletionJob.attempts > 0))
            stuck = s.scalar(select(func.count()).select_from(ObjectDeletionJob).where(
                ObjectDeletionJob.attempts > 0,
                ObjectDeletionJob.created_at < now - timedelta(days=1)))
            jobs.add_metric(["due"], due)
            jobs.add_metric(["waiting"], total - due)
            jobs.add_metric(["failing"], failing)
            jobs.add_metric(["failing_over_a_day"], stuck)
            yield jobs
            yield GaugeMetricFamily("wharf_outbox_undispatched", "Outbox rows not yet sent",
                                    value=s.scalar(select(func.count()).select_from(
                                        OutboxMessage).where(
                                        OutboxMessage.dispatched_at.is_(None))))


def render(db=None) -> tuple[bytes, str]:
    registry = REGISTRY
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    output = generate_latest(registry)
    if db is not None:
        extra = CollectorRegistry()
        extra.register(DatabaseCollector(db))
        output += generate_latest(extra)
    return output, CONTENT_TYPE_LATEST
