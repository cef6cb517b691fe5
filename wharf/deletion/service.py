"""Object deletion jobs: the outbox for objects that nothing references any more.

A job is written in the same transaction as the change that orphans its object (unique
on the key), and a message is sent after commit. Workers delete idempotently (a missing
object counts as deleted) and back off ``min(1 h, 1 s * 2**attempts)`` on failure.

A job whose ``next_attempt_at`` lies in the future doubles as a *reservation* for an
object being uploaded right now: if the upload process dies, the job comes due and the
partial or orphaned object is deleted; once something references the object the
reservation is released.

A job queued by ``wharf fsck --repair`` (reason :data:`FSCK_REASON`) takes one more look
before it deletes: if anything names its key now (:func:`wharf.deletion.references.referenced`,
the check fsck confirms orphans with), the job drops itself and the object stays.

Every decided deletion (not a reservation, not an fsck repair) is appended to the deletion
ledger (:mod:`wharf.deletion.ledger`) in the same transaction, so that a restored backup deletes the
object again (``wharf restore-check``).
"""
from __future__ import annotations

import logging
from datetime import datetime, timedelta

from sqlalchemy import delete, select, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from storage.blobstore import BlobStore
from storage.db import Database, send_after_commit
from storage.models import ObjectDeletionJob, OutboxMessage
from wharf.deletion import ledger
from wharf.deletion.references import referenced
from wharf.infra.clock import utcnow
from wharf.infra.ids import new_id

log = logging.getLogger("wharf.deletion.service")

ACTOR = "delete_object"
QUEUE = "maintenance"
MAX_BACKOFF = 3600.0
FSCK_REASON = "fsck_orphaned"  # a job queued by ``wharf fsck --repair``


def _message(job_id: str, delay_ms: int = 0) -> OutboxMessage:
    return OutboxMessage(id=new_id(), actor_name=ACTOR, queue_name=QUEUE, subject_id=job_id,
                         delay_ms=delay_ms)


def schedule(session: Session, object_key: str, reason: str, *,
             not_before: datetime | None = None) -> ObjectDeletionJob:
    """Queue ``object_key`` for deletion (now, or as a reservation until ``not_before``).

    An existing job for the key is kept, but brought forward if this one is due sooner.
    """
    job = session.scalar(select(ObjectDeletionJob).where(
        ObjectDeletionJob.object_key == object_key))
    due = not_before or utcnow()
    if not_before is None and reason != FSCK_REASON and (
            job is None or due < job.next_attempt_at):
        # A decided deletion (not a reservation): the ledger keeps it (wharf.deletion.ledger).
        ledger.record_objects(session, [object_key], reason)
    if job is None:
        job = ObjectDeletionJob(id=new_id(), object_key=object_key, reason=reason,
                                next_attempt_at=due)
        session.add(job)
        session.flush()
    elif due < job.next_attempt_at:
        job.next_attempt_at = due
        job.reason = reason
    if not_before is None:
        send_after_commit(session, _message(job.id))
    return job


def reserve(session: Session, object_key: str, reason: str, not_before: datetime) -> None:
    """A reservation (a deletion not due before ``not_before``) of a key nothing has used
    yet -- one just made from a new id -- so no job can exist for it: inserted (at the
    session's next flush) without looking first."""
    session.add(ObjectDeletionJob(id=new_id(), object_key=object_key, reason=reason,
                                  next_attempt_at=not_before))


def schedule_many(session: Session, object_keys: list[str], reason: str, *,
                  record: bool = True) -> None:
    """Queue many objects at once (sweeps): one INSERT, keys already queued are kept. No
    message per job: the ``retry_deletion_jobs`` sweep runs due jobs on its next tick.
    ``record=False``: not appended to the deletion ledger (a replay of it)."""
    if not object_keys:
        return
    if record and reason != FSCK_REASON:
        ledger.record_objects(session, object_keys, reason)
    postgres = session.get_bind().dialect.name == "postgresql"
    insert = pg_insert(ObjectDeletionJob) if postgres else sqlite_insert(ObjectDeletionJob)
    now = utcnow()
    session.execute(insert.values([
        {"id": new_id(), "object_key": key, "reason": reason, "attempts": 0,
         "next_attempt_at": now, "created_at": now} for key in object_keys
    ]).on_conflict_do_nothing(index_elements=["object_key"]))


def release(session: Session, object_key: str) -> None:
    """Drop the reservation of an object that is now referenced."""
    session.execute(delete(ObjectDeletionJob).where(
        ObjectDeletionJob.object_key == object_key))


def release_many(session: Session, object_keys: list[str]) -> None:
    """``release`` for several objects, in one statement."""
    if object_keys:
        session.execute(delete(ObjectDeletionJob).where(
            ObjectDeletionJob.object_key.in_(object_keys)))


def backoff(attempts: int) -> float:
    return min(MAX_BACKOFF, float(2 ** min(attempts, 20)))


def run_job(db: Database, store: BlobStore, job_id: str) -> str:
    """Delete one job's object if the job is due; returns what happened."""
    with db.read() as s:
        job = s.get(ObjectDeletionJob, job_id)
        if job is None:
            return "gone"
        if job.next_attempt_at > utcnow():
            return "not_due"
        key, reason = job.object_key, job.reason
    if reason == FSCK_REASON:
        with db.write() as s:
            if referenced(s, [key], deletion_jobs=False):
                s.execute(delete(ObjectDeletionJob).where(ObjectDeletionJob.id == job_id))
                log.warning("object %s is referenced again: its fsck deletion is dropped", key)
                return "referenced"
    try:
        store.delete(key)
    except Exception as exc:
        with db.write() as s:
            job = s.get(ObjectDeletionJob, job_id)
            if job is None:
                return "gone"
            job.attempts += 1
            job.last_error = f"{type(exc).__name__}: {exc}"[:2000]
            job.last_attempt_at = utcnow()
            delay = backoff(job.attempts)
            job.next_attempt_at = utcnow() + timedelta(seconds=delay)
            send_after_commit(s, _message(job.id, int(delay * 1000)))
        log.warning("deleting object %s failed (%s); retry in %.0fs", key, exc, delay)
        return "retry"
    with db.write() as s:
        s.execute(delete(ObjectDeletionJob).where(ObjectDeletionJob.id == job_id))
    return "deleted"


def due_job_ids(db: Database, limit: int = 1000) -> list[str]:
    with db.read() as s:
        return list(s.scalars(select(ObjectDeletionJob.id).where(
            ObjectDeletionJob.next_attempt_at <= utcnow())
            .order_by(ObjectDeletionJob.next_attempt_at).limit(limit)))


def run_due(db: Database, store: BlobStore, limit: int = 1000) -> dict[str, int]:
    """Run up to ``limit`` due jobs inline; counts by outcome (the sweep's batch)."""
    counts: dict[str, int] = {}
    for job_id in due_job_ids(db, limit):
        outcome = run_job(db, store, job_id)
        counts[outcome] = counts.get(outcome, 0) + 1
    return counts


#: Jobs attempted at least once: the predicate of ``ix_deletion_jobs_failing``, as literal
#: SQL so that the planner can match it (a bound ``0`` would not prove the partial index).
FAILING = text("object_deletion_jobs.attempts > 0")


def failing_jobs(db: Database, older_than: timedelta = timedelta(days=1), *,
                 limit: int | None = None) -> list[ObjectDeletionJob]:
    """Jobs that have been failing for longer than ``older_than`` (operators look here),
    oldest first; at most ``limit`` of them (None: all, for ``wharf deletion-jobs``)."""
    cutoff = utcnow() - older_than
    with db.read() as s:
        return list(s.scalars(select(ObjectDeletionJob).where(  # ix_deletion_jobs_failing
            FAILING, ObjectDeletionJob.created_at < cutoff)
            .order_by(ObjectDeletionJob.created_at).limit(limit)))
