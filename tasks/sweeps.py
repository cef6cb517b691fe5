"""One thin actor per sweep: run the scheduled tick it was sent."""
from __future__ import annotations

import dramatiq

from wharf.retention.runner import run_tick
from wharf.retention.schedule import QUEUE, actor_for
from wharf.retention.sweeps import SWEEPS, SweepContext
from wharf.clock import utcnow


def declare_sweep_actors(broker: dramatiq.Broker, components) -> dict[str, dramatiq.Actor]:
    plan = {s.name: s for s in components.schedules}
    actors = {}
    for name in SWEEPS:
        def run(tick_id: str) -> None:
            ctx = SweepContext(db=components.db, settings=components.settings, now=utcnow(),
                               send=components.dispatcher.send,
                               blob_store=components.blob_store,
                               handlers=components.handlers)
            run_tick(ctx, tick_id, plan)
        run.__name__ = actor_for(name)
        actors[name] = dramatiq.Actor(run, broker=broker, actor_name=actor_for(name),
                                      queue_name=QUEUE, priority=20,
                                      options={"max_retries": 0,
                                               "time_limit": 30 * 60 * 1000})
    return actors
