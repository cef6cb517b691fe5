"""One thin actor per operation kind: load the operation id, hand it to the executor."""
from __future__ import annotations

import dramatiq

from storage.blobstore import BlobStore
from storage.db import Database
from wharf import deletion
from wharf.operations.executor import Executor
from wharf.operations.service import QUEUE, actor_name


def declare_actors(broker: dramatiq.Broker, executor: Executor, db: Database,
                   blob_store: BlobStore) -> dict[str, dramatiq.Actor[[str], None]]:
    actors: dict[str, dramatiq.Actor[[str], None]] = {}

    def delete_object(job_id: str) -> None:
        deletion.run_job(db, blob_store, job_id)

    actors[deletion.ACTOR] = dramatiq.Actor(delete_object, broker=broker,
                                            actor_name=deletion.ACTOR,
                                            queue_name=deletion.QUEUE, priority=10,
                                            options={"max_retries": 0})
    for kind in executor.handlers:
        def run(operation_id: str) -> None:
            executor.execute(operation_id)
        run.__name__ = actor_name(kind)
        actors[kind] = dramatiq.Actor(run, broker=broker, actor_name=actor_name(kind),
                                      queue_name=QUEUE, priority=0,
                                      options={"max_retries": 0})
    return actors
