"""Wiring: build the collaborators of each process shape from settings.

- ``Components``: database, UnitStore, broker, dispatcher, notifier, operations, executor.
- ``EmbeddedRuntime`` (``wharf serve``): API + StubBroker + worker threads + relay + scheduler.
- ``Components.api_app``: also the production API process's app (``wharfd/wsgi.py``).

This is the one module that puts ``api``, ``tasks``, the core and ``storage`` together
(docs/architecture.md, "Layers").
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import dramatiq
from sqlalchemy.orm import configure_mappers

from storage.blobstore import BlobStore, blob_store_from_url
from storage.db import Database
from storage.unitstore import UnitStore
from tasks import broker as broker_mod
from tasks.actors import declare_actors
from tasks.dispatch import BrokerDispatcher
from tasks.doorbell import doorbell_for
from tasks.feed_bus import feed_bus_for
from tasks.heartbeat import HeartbeatMiddleware
from tasks.hooks import from_env as hooks_from_env
from tasks.loops import Periodic
from tasks.notify import notifier_for
from tasks.scheduler import scheduler_loop
from tasks.sweeps import declare_sweep_actors
from tasks.tracing import install as install_tracing_middleware
from tasks.worker import make_worker
from wharf.feed.sink import FeedSink
from wharf.infra.settings import Settings
from wharf.observability.heartbeats import Details, Heartbeat
from wharf.operations import recovery
from wharf.operations.executor import Executor, Handler, Hooks
from wharf.operations.registry import KINDS, Collaborators
from wharf.operations.service import Operations
from wharf.retention.schedule import Scheduler, schedules
from wharf.units.service import unit_limits
from wharfd import (
    capabilities,  # noqa: F401  (every capability's kinds and hook registrations)
    tracing,
)

if TYPE_CHECKING:  # imported where an app is built: `wharf worker` and `wharf scheduler`
    # serve no HTTP, and the API's modules are a good part of a process's start
    from api.contract import App
    from api.feed.app import FeedApp


class Components:
    """The collaborators of one process, built from settings (each may be given instead,
    for tests). ``db`` is the product database as given or built, with the outbox's fast
    path to the broker (``dispatcher.dispatch``) as its ``on_outbox_committed``."""

    def __init__(self, settings: Settings, *, broker: dramatiq.Broker | None = None,
                 notifier: Any = None, hooks: Hooks | None = None,
                 unitstore: UnitStore | None = None, db: Database | None = None,
                 blob_store: BlobStore | None = None) -> None:
        self.settings = settings
        base_db = db or Database(settings.database_url, settings.sqlite_busy_timeout_ms,
                                 pool_size=settings.database_pool_size)
        self.unit_db: Database | None = None
        if unitstore is None:
            self.unit_db = Database(settings.unitstore_url, settings.sqlite_busy_timeout_ms,
                                   pool_size=settings.database_pool_size)
            unitstore = UnitStore(self.unit_db, unit_limits(settings),
                                  cache_bytes=settings.unit_cache_bytes)
        self.unitstore = unitstore
        # Tracing (wharfd.tracing.setup, called by each process before this): the
        # engines' statements, and the trace context through the broker's messages.
        tracing.instrument_database(base_db)
        if self.unit_db is not None:
            tracing.instrument_database(self.unit_db)
        self.blob_store = blob_store or blob_store_from_url(
            settings.blob_store_url, endpoint_url=settings.s3_endpoint_url,
            region=settings.s3_region)
        self.broker = broker or broker_mod.make_broker(settings)
        install_tracing_middleware(self.broker)
        self.notifier = notifier if notifier is not None else notifier_for(settings)
        # The dispatcher marks rows dispatched through the plain database; everything else
        # writes through the one whose committed outbox rows go straight to the broker.
        self.dispatcher = BrokerDispatcher(
            self.broker, base_db, doorbell=doorbell_for(self.broker, settings.broker_namespace,
                                                        settings.doorbell_ttl))
        # ... and whose committed completion notices (wharf.operations.finish) wake the
        # long-polls waiting for them, whichever finisher wrote them.
        # ... and the feed's events (wharf.feed) go to its bus, after the same commit.
        self.feed_bus = feed_bus_for(settings)
        self.db = base_db.with_outbox_sink(
            self.dispatcher.dispatch,
            on_notices_committed=FeedSink(self.notifier.publish_quietly, self.feed_bus))
        # Every registered kind's handler (refuses with none registered).
        self.handlers: dict[str, Handler] = KINDS.handlers(Collaborators(
            db=self.db, unitstore=self.unitstore, blob_store=self.blob_store,
            settings=settings))
        self.operations = Operations(self.db, settings, handlers=self.handlers)
        self.executor = Executor(self.db, settings, self.handlers,
                                 hooks=hooks or hooks_from_env(settings))
        self.actors = declare_actors(self.broker, self.executor, self.db, self.blob_store,
                                     self.dispatcher, batch=settings.worker_batch,
                                     batch_max=settings.worker_batch_max,
                                     unitstore=self.unitstore)
        self.schedules = schedules(settings)
        self.sweep_actors = declare_sweep_actors(self.broker, self)
        # SQLAlchemy configures its mappers on their first use: here, while the process is
        # built, so no first request pays for it and ``wharfd.heap`` freezes the result.
        configure_mappers()

    def dependency_checks(self) -> dict[str, Callable[[], None]]:
        """Everything but the product database (readiness): ``/healthz/details``, metrics.
        Each check has a short budget of its own (see ``pinger`` and ``BlobStore.ping``)."""
        checks = {"broker": broker_mod.pinger(self.broker, self.settings.broker_url),
                  "blob_store": self.blob_store.ping}
        if self.unit_db is not None:
            checks["unitstore"] = self.unit_db.ping
        return checks

    def api_app(self) -> App:
        from api.app import create_app  # not imported by the processes without an API
        app = create_app(self.settings, self.db, operations=self.operations,
                         metrics=True,
                         unitstore=self.unitstore, notifier=self.notifier,
                         blob_store=self.blob_store,
                         dependency_checks=self.dependency_checks(),
                         operation_kinds=tuple(sorted(self.handlers)))
        tracing.instrument_app(app)
        return app

    def feed_app(self) -> FeedApp:
        """The live feed's ASGI app over this process's database and feed bus (``wharf
        serve`` answers it on its own port: ``wharfd.feed_serving``)."""
        from api.feed.app import FeedApp  # not imported by the processes without an API
        return FeedApp(self.settings, self.db, self.feed_bus)

    def scheduler(self, scheduler_id: str) -> Scheduler:
        return Scheduler(self.db, self.settings, scheduler_id, self.schedules)

    def relay_loop(self) -> Periodic:
        """The outbox relay: sends rows the fast path did not mark dispatched."""
        return Periodic("relay", self.settings.relay_interval,
                        lambda: recovery.relay(self.db, self.dispatcher.send))

    def heartbeat(self, role: str, details: Details | None = None) -> Heartbeat:
        """This process's heartbeat writer (``wharf.observability.heartbeats``), not started."""
        return Heartbeat(self.db, self.settings, role, details)

    def close(self) -> None:
        self.dispatcher.flush()
        self.notifier.close()
        self.feed_bus.close()
        try:
            self.broker.close()
        except Exception:
            pass
        self.db.dispose()
        if self.unit_db is not None:
            self.unit_db.dispose()
        tracing.shutdown()  # export what is buffered (nothing to do while tracing is off)


class EmbeddedRuntime:
    """Everything in one process: API, in-process broker, worker threads, relay, scheduler."""

    def __init__(self, settings: Settings, **kwargs: Any) -> None:
        self.settings = settings
        self.components = Components(settings, **kwargs)
        self.db = self.components.db
        self.api_app = self.components.api_app()
        self.worker: dramatiq.Worker | None = None
        self.relay = self.components.relay_loop()
        self.scheduler = scheduler_loop(self.components.scheduler("embedded"), settings)
        # The process's heartbeat (role serve) runs while its worker threads do.
        self.components.broker.add_middleware(HeartbeatMiddleware(
            lambda details: self.components.heartbeat("serve", details)))

    def start(self) -> None:
        self.worker = make_worker(self.components.broker, self.settings.worker_threads)
        self.worker.start()
        self.relay.start()
        self.scheduler.start()

    def stop(self) -> None:
        self.scheduler.stop()
        self.relay.stop()
        if self.worker is not None:
            self.worker.stop(timeout=10_000)
        self.components.close()
