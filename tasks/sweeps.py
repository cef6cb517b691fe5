"""One thin actor per sweep: run the scheduled tick it was sent."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import dramatiq

from storage.blobstore import BlobStore
from storage.db import Database
from storage.unitstore import UnitStore
from tasks.dispatch import BrokerDispatcher
from wharf.infra.clock import utcnow
from wharf.infra.settings import Settings
from wharf.retention.runner import run_tick
from wharf.retention.schedule import QUEUE, Schedule, actor_for
from wharf.retention.sweeps import SWEEPS, SweepContext


class SweepComponents(Protocol):
    """What the sweep actors use of the runtime's components."""

    @property
    def db(self) -> Database: ...
    @property
    def settings(self) -> Settings: ...
    @property
    def dispatcher(self) -> BrokerDispatcher: ...
    @property
    def blob_store(self) -> BlobStore: ...
    @property
    def handlers(self) -> Mapping[str, Any]: ...
    @property
    def schedules(self) -> list[Schedule]: ...
    @property
    def unitstore(self) -> UnitStore: ...


def declare_sweep_actors(broker: dramatiq.Broker,
                         components: SweepComponents) -> dict[str, dramatiq.Actor[[str], None]]:
    plan = {s.name: s for s in components.schedules}
    actors: dict[str, dramatiq.Actor[[str], None]] = {}
    for name in SWEEPS:
        def run(tick_id: str) -> None:
            ctx = SweepContext(db=components.db, settings=components.settings, now=utcnow(),
                               send=components.dispatcher.send,
                               blob_store=components.blob_store,
                               handlers=components.handlers,
                               unitstore=components.unitstore)
            run_tick(ctx, tick_id, plan)
        run.__name__ = actor_for(name)
        actors[name] = dramatiq.Actor(run, broker=broker, actor_name=actor_for(name),
                                      queue_name=QUEUE, priority=20,
                                      options={"max_retries": 0,
                                               "time_limit": 30 * 60 * 1000})
    return actors
