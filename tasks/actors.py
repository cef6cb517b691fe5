"""One thin actor per operation kind: a doorbell. Answering it drains that kind's due
operations in batches (``Executor.run_batch``), the operation the bell names first.

A bell drains its own kind only, so kinds with long side effects (blob verification) never
hold up fast ones: their bells are other messages, answered by other threads. Long kinds
are claimed one at a time (``long_kinds()``): a batch of them would be run in series by one
thread while others idle; one at a time, each full claim rings another bell and the work
spreads over the workers.

The drain loop (see ``tasks.doorbell`` for why no operation is missed):
- claim a batch; a full one rings once more (another worker joins) and claims again,
  twice as many up to ``WHARF_WORKER_BATCH_MAX`` (``BatchRun.full``: a bell naming an
  operation no longer due is not a short claim); a short one sets the size back;
- a short one ends the drain, unless a sender counted on this drain meanwhile;
- after ``DRAIN_SECONDS`` the drain hands over (a bell of its own when one is owed) so a
  thread is not held forever;
- a claim the database refused as busy is tried again (handing over at the budget);
- once its worker begins to shut down, a drain finishes the batch in hand and claims
  nothing more (a stopping worker starts no new work) and rings a bell of its own, so
  the next worker takes over (only a quiet leave owes nothing, and that one returned);
- an unexpected error leaves and rings before it is raised.
Long kinds are not coalesced at all (``tasks.dispatch``): one bell per operation, so an
idle thread takes the next one while a drain still verifies the first.

Webhook sends (``deliver_webhook``) use the same threads: at most ``webhook_slots`` (half
the worker threads, at least one) send at once per process; a send finding no free slot
re-queues itself ``WEBHOOK_BUSY_DELAY_MS`` later instead of blocking a thread.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import Protocol

import dramatiq
from dramatiq.middleware import Middleware

from storage.blobstore import BlobStore
from storage.db import Database
from storage.errors import DatabaseBusy
from storage.unitstore import UnitStore
from tasks.doorbell import Doorbell, long_kinds
from wharf.deletion import service as deletion
from wharf.infra.clock import utcnow
from wharf.operations.executor import Executor
from wharf.operations.service import QUEUE, actor_name
from wharf.search import indexing
from wharf.webhooks import delivery as webhook_delivery
from wharf.webhooks import events as webhook_events

#: How long one bell drains before it hands over to the next one.
DRAIN_SECONDS = 2.0
#: Pause before claiming again after the database answered busy.
BUSY_PAUSE = 0.1
#: How long a webhook send that found every sending slot taken waits before it is tried again.
WEBHOOK_BUSY_DELAY_MS = 500
#: The shortest wait before the indexer rings itself again for units not yet due.
INDEX_MIN_DELAY_MS = 100
log = logging.getLogger("wharf.operations")


def webhook_slots(worker_threads: int) -> int:
    """How many worker threads of one process may send webhooks at once: half, at least 1."""
    return max(1, worker_threads // 2)


class Ringer(Protocol):
    @property
    def doorbell(self) -> Doorbell: ...

    def ring_more(self, actor: str) -> None: ...


class Stopping(Middleware):
    """Tells drains that their worker began to shut down (Dramatiq's own hooks)."""

    def __init__(self) -> None:
        self.event = threading.Event()

    def before_worker_boot(self, broker: dramatiq.Broker, worker: dramatiq.Worker) -> None:
        self.event.clear()

    def before_worker_shutdown(self, broker: dramatiq.Broker,
                               worker: dramatiq.Worker) -> None:
        self.event.set()


def drain(executor: Executor, ringer: Ringer, kind: str, limit: int,
          operation_id: str | None = None, budget: float = DRAIN_SECONDS,
          stopping: threading.Event | None = None, most: int | None = None) -> int:
    """Answer one bell of ``kind``; returns how many operations it claimed. Each claim
    takes up to ``limit``; after a full one the next takes twice as many, up to
    ``most`` (a backlog is drained in larger batches: each costs its claim, permission
    checks, UnitStore and completion transactions once), and after a short one
    ``limit`` again."""
    actor = actor_name(kind)
    size = limit
    most = max(limit, most or limit)
    deadline = time.monotonic() + budget
    include = operation_id or None
    total = 0
    with ringer.doorbell.answer(actor) as answer:
        mark = answer.mark()  # read before each claim
        while True:
            if stopping is not None and stopping.is_set():
                # Every way here owes a hand-over: the bell itself (named operation or
                # not), a full claim, or a claim a sender counted on (leave_if_quiet
                # failed). Only a successful leave_if_quiet returned without one.
                answer.leave(mark)
                ringer.ring_more(actor)  # hand over to the next worker
                return total
            try:
                run = executor.run_batch_report((kind,), limit=size, include=include)
            except DatabaseBusy:  # SQLite's write lock, a PostgreSQL deadlock: try again
                log.warning("drain of %s: the database is busy; claiming again", kind)
                if time.monotonic() >= deadline:
                    answer.leave(mark)
                    ringer.ring_more(actor)  # hand over (never strand what is due)
                    return total
                time.sleep(BUSY_PAUSE)
                continue
            except Exception:
                # Never strand what is due behind an unexpected error: hand over (after a
                # pause, so an error that repeats does not spin bells through the broker).
                answer.leave(mark)
                time.sleep(BUSY_PAUSE)
                ringer.ring_more(actor)
                raise
            include = None
            total += run.claimed
            size = min(most, size * 2) if run.full and run.claimed else limit
            if run.full:  # more may be due (a named operation no longer due is no sign)
                if run.claimed:
                    ringer.ring_more(actor)
            elif answer.leave_if_quiet(mark):
                return total
            if time.monotonic() >= deadline:
                if answer.leave(mark) or (run.full and not run.claimed):
                    ringer.ring_more(actor)
                return total
            mark = answer.mark()


def batch_limit(kind: str, default: int) -> int:
    return 1 if kind in long_kinds() else max(1, default)


def declare_actors(broker: dramatiq.Broker, executor: Executor, db: Database,
                   blob_store: BlobStore, ringer: Ringer, *,
                   batch: int = 32, unitstore: UnitStore | None = None,
                   batch_max: int | None = None
                   ) -> dict[str, dramatiq.Actor[..., None]]:
    actors: dict[str, dramatiq.Actor[..., None]] = {}
    if unitstore is not None:
        actors[indexing.ACTOR] = _indexer(broker, db, unitstore,
                                          executor.settings.search_index_delay)

    def delete_object(job_id: str) -> None:
        deletion.run_job(db, blob_store, job_id)

    actors[deletion.ACTOR] = dramatiq.Actor(delete_object, broker=broker,
                                            actor_name=deletion.ACTOR,
                                            queue_name=deletion.QUEUE, priority=10,
                                            options={"max_retries": 0})

    sending = threading.BoundedSemaphore(webhook_slots(executor.settings.worker_threads))

    def deliver_webhook(delivery_id: str) -> None:
        # Webhook sends share the worker threads with the operation bells: at most
        # ``webhook_slots`` send at once, so slow receivers never take every thread. A
        # send that finds no slot comes back shortly (a new message; the thread is freed).
        if not sending.acquire(blocking=False):
            actors[webhook_events.ACTOR].send_with_options(args=(delivery_id,),
                                                           delay=WEBHOOK_BUSY_DELAY_MS)
            return
        try:
            webhook_delivery.run_delivery(db, executor.settings, delivery_id)
        finally:
            sending.release()

    actors[webhook_events.ACTOR] = dramatiq.Actor(deliver_webhook, broker=broker,
                                                  actor_name=webhook_events.ACTOR,
                                                  queue_name=webhook_events.QUEUE,
                                                  priority=5, options={"max_retries": 0})
    stopping = Stopping()
    broker.add_middleware(stopping)
    for kind in executor.handlers:
        actors[kind] = dramatiq.Actor(_bell(executor, ringer, kind, batch_limit(kind, batch),
                                            stopping.event,
                                            batch_limit(kind, batch_max or batch)),
                                      broker=broker, actor_name=actor_name(kind),
                                      queue_name=QUEUE, priority=0,
                                      options={"max_retries": 0})
    return actors


def _bell(executor: Executor, ringer: Ringer, kind: str, limit: int,
          stopping: threading.Event, most: int) -> Callable[..., None]:
    def run(operation_id: str | None = None) -> None:
        drain(executor, ringer, kind, limit, operation_id, stopping=stopping, most=most)
    run.__name__ = actor_name(kind)
    return run


def _indexer(broker: dramatiq.Broker, db: Database, unitstore: UnitStore,
             delay: float) -> dramatiq.Actor[..., None]:
    """Content indexing (``wharf.search.indexing``): index the due units; while marked
    units wait for their delay, ring again when the first falls due. One process keeps at
    most one such ring on its way (``rering``), so the rings of a busy system do not
    multiply: a ring already due sooner covers a later one (its drain rings again)."""
    actor: dramatiq.Actor[..., None]
    lock = threading.Lock()
    rering: list[datetime | None] = [None]  # when this process's ring on its way is due

    def index_content(_subject: str | None = None) -> None:
        drained = indexing.index_due(db, unitstore, delay)
        due = drained.next_due
        with lock:
            now = utcnow()
            if rering[0] is not None and rering[0] <= now:
                rering[0] = None  # that ring is answered (by this drain or another)
            if due is None or (rering[0] is not None and rering[0] <= due):
                return
            rering[0] = due
        wait = (due - now).total_seconds()
        actor.send_with_options(delay=max(INDEX_MIN_DELAY_MS, int(wait * 1000) + 1))

    actor = dramatiq.Actor(index_content, broker=broker, actor_name=indexing.ACTOR,
                           queue_name=indexing.QUEUE, priority=15,
                           options={"max_retries": 0})
    return actor
