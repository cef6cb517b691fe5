"""Account deletion: a pipeline, not a ``DELETE FROM users`` (issue 18, seed 004 §4).

1. ``DELETE /api/me`` (:func:`submit_deletion`) re-authenticates (the password, or a login
   session younger than ``WHARF_ACCOUNT_REAUTH_SECONDS``) and records a ``delete_account``
   operation; in the same transaction the user becomes ``deleting``, their password,
   recovery codes, login sessions and API tokens are deleted, and the deletion ledger gets
   the account's record (user id, username digest, time). Credential lookups only admit
   ``active`` users, and the user row's change drops their cached principals in this process
   at once (``wharf.identity.service``), in every other within ``WHARF_AUTH_CACHE_SECONDS``.
2. The worker (:class:`DeleteAccount`) removes everything in bounded batches, each its own
   transaction, every step idempotent (:data:`STEPS`), then, in the completion
   transaction, deletes the user row. A failure leaves the user ``deleting``: the
   operation retries with backoff; if it runs out of attempts, ``on_failed`` records a new
   one (the ``deletion_ledger`` sweep also re-drives a ``deleting`` user with no open
   deletion).
3. Rows of other people that name the user (nodes, resources, assets, trash batches and
   worktrees they created in team spaces) are handed to the *deleted-account placeholder*
   (:data:`PLACEHOLDER_ID`, username ``~deleted``: never registrable, never able to log
   in). Team spaces they owned pass to their longest-standing admin; with no admin they
   are owned by the placeholder and ``read_only`` (members read) until an operator acts
   (``wharf space-owner``).
4. :func:`restore_check` replays the deletion ledger against a restored database.
"""
from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from storage.blobstore import BlobStore
from storage.db import Database, send_after_commit
from storage.enums import OPEN_STATUSES, OperationStatus
from storage.models import (
    ApiToken,
    LoginSession,
    ObjectDeletionJob,
    Operation,
    Space,
    User,
)
from wharf.accounts.kinds import DELETE_ACCOUNT, DeleteAccountPayload, DeleteAccountResult
from wharf.accounts.purge import (
    DELETING,
    PLACEHOLDER_ID,
    REASON,
    Purge,
    PurgeHandler,
    ensure_placeholder,
    revoke_credentials,
)
from wharf.deletion import ledger
from wharf.deletion import service as deletion
from wharf.deletion.references import referenced
from wharf.identity import throttle
from wharf.identity.service import USER_ACTIVE, Identity, username_digest
from wharf.identity.throttle import Limit
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import Principal, RequestContext, system_principal
from wharf.infra.errors import Forbidden, NotFound, ProblemCode, TransientFailure, Unauthenticated
from wharf.infra.ids import new_id
from wharf.infra.settings import Settings
from wharf.operations.idempotency import fingerprint
from wharf.operations.kinds import payload, to_json
from wharf.operations.service import Operations, Submission, outbox_for
from wharf.spaces.service import set_owner

log = logging.getLogger("wharf.accounts.service")

KIND = DELETE_ACCOUNT
#: A deletion that ran out of attempts is recorded anew this much later at the earliest.
REDRIVE_DELAY = timedelta(seconds=60)



def _reauth_limits(settings: Settings, user_id: str) -> list[Limit]:
    return [Limit(f"reauth:user:{user_id}", settings.login_max_failures,
                  settings.login_window)]


def _reauthenticated(db: Database, identity: Identity, settings: Settings,
                     principal: Principal, password: str | None) -> None:
    """The password, or a login session at most ``WHARF_ACCOUNT_REAUTH_SECONDS`` old."""
    user_id = principal.user_id
    assert user_id is not None
    if password is None:
        if principal.session_id is not None and settings.account_reauth_seconds > 0:
            with db.read() as s:
                started = s.scalar(select(LoginSession.created_at).where(
                    LoginSession.id == principal.session_id))
            if started is not None and utcnow() - started <= timedelta(
                    seconds=settings.account_reauth_seconds):
                return
        raise Forbidden("Deleting the account needs the password (`password`), or a login "
                        f"session at most {settings.account_reauth_seconds} s old.",
                        code=ProblemCode.REAUTHENTICATION_REQUIRED)
    limits = _reauth_limits(settings, user_id)
    with db.read() as s:
        throttle.check(s, limits, "failed re-authentications")
    with db.write() as s:
        throttle.take(s, limits, "failed re-authentications")
    if not identity.verify_password(db, user_id, password):
        raise Forbidden("Wrong password.", code=ProblemCode.REAUTHENTICATION_REQUIRED)
    with db.write() as s:
        throttle.release(s, limits)



def mark_deleting(s: Session, user: User, reason: str) -> None:
    """In the caller's transaction: ``deleting``, credentials gone, the ledger's record.
    The ORM change of the row drops the user's cached principals (``wharf.identity.service``)."""
    user.status = DELETING
    s.flush()
    revoke_credentials(s, user.id)
    ledger.record_account(s, user.id, username_digest(user.username_key), reason)


def submit_deletion(db: Database, ops: Operations, identity: Identity, settings: Settings,
                    ctx: RequestContext, key: str | None, password: str | None) -> Submission:
    """``DELETE /api/me``: re-authenticate, then record ``delete_account``."""
    principal = ctx.principal
    user_id = principal.user_id
    if user_id is None:
        raise Unauthenticated("Only a signed-in user can delete their account.")
    _reauthenticated(db, identity, settings, principal, password)

    def prepare(s: Session, op_id: str) -> tuple[str | None, DeleteAccountPayload]:
        user = s.get(User, user_id, with_for_update=True)
        if user is None or user.status != USER_ACTIVE:
            raise Unauthenticated("The account is being deleted.")
        mark_deleting(s, user, REASON)
        audit.record(s, ctx, "user.delete", "user", user_id, details={"operation_id": op_id})
        return None, DeleteAccountPayload(user_id=user_id)

    return ops.submit(ctx, KIND, key, {}, prepare)


def _record_deletion(s: Session, settings: Settings, user_id: str, *,
                     due_at: datetime | None = None) -> Operation:
    """A ``delete_account`` operation recorded by the system (no idempotency key): a
    re-drive, or a replay after a restore (out of attempts, ``on_failed`` records
    another)."""
    now = utcnow()
    op = Operation(id=new_id(), kind=KIND, status=OperationStatus.PENDING, actor_id=user_id,
                   scope_id=None, idempotency_key=None, request_fingerprint=fingerprint(KIND, {}),
                   payload=to_json(DeleteAccountPayload(user_id=user_id)), attempts=0,
                   max_attempts=settings.operation_max_attempts, created_at=now,
                   updated_at=now, next_attempt_at=due_at)
    s.add(op)
    s.flush()
    send_after_commit(s, outbox_for(op))
    return op


def open_deletion(s: Session, user_id: str) -> str | None:
    return s.scalar(select(Operation.id).where(
        Operation.actor_id == user_id, Operation.kind == KIND,
        Operation.status.in_([str(x) for x in OPEN_STATUSES])).limit(1))


# -- 2. the worker -----------------------------------------------------------------------


class DeleteAccount(PurgeHandler):
    """``delete_account``: :class:`Purge` as the side effects (many short transactions),
    then the user row in the completion transaction."""

    kind = KIND

    def authorize(self, s: Session, op: Operation, actor: Principal) -> None:
        pass  # the account asked for it; nothing it could lose stops its deletion

    def perform(self, op: Operation) -> None:
        user_id = payload(op, DeleteAccountPayload).user_id
        counts = Purge(self._db, self.unitstore, self.settings, self.handlers, user_id,
                       op.id).run()
        log.info("account %s: deletion batches done %s", user_id, counts)

    def commit(self, s: Session, op: Operation, ctx: RequestContext) -> DeleteAccountResult:
        user_id = payload(op, DeleteAccountPayload).user_id
        user = s.get(User, user_id, with_for_update=True)
        if user is not None:
            left = s.scalar(select(Space.id).where(Space.owner_id == user_id).limit(1))
            if left is not None:  # written since the batches ran: once more
                raise TransientFailure("The account still owns a space; retrying.")
            ensure_placeholder(s)
            # The operation outlives its submitter: the placeholder holds it (the key goes:
            # two deleted accounts may have used the same one).
            s.execute(update(Operation).where(Operation.id == op.id).values(
                actor_id=PLACEHOLDER_ID, idempotency_key=None),
                execution_options={"synchronize_session": False})
            op.actor_id, op.idempotency_key = PLACEHOLDER_ID, None  # the caller's copy too
            s.flush()
            s.execute(delete(User).where(User.id == user_id))
            audit.record(s, ctx, "user.deleted", "user", user_id)
        return DeleteAccountResult(user_id=user_id)

    def compensate(self, op: Operation) -> None:
        pass

    def on_failed(self, s: Session, op: Operation, error: dict[str, Any]) -> None:
        """Out of attempts (or refused): the user stays ``deleting`` and a new deletion is
        recorded, due a little later."""
        user_id = payload(op, DeleteAccountPayload).user_id
        if s.get(User, user_id) is not None:
            _record_deletion(s, self.settings, user_id, due_at=utcnow() + REDRIVE_DELAY)


# -- the sweep ---------------------------------------------------------------------------

def redrive(db: Database, settings: Settings, limit: int = 100) -> int:
    """``deleting`` users with no open deletion get one (a lost or failed operation)."""
    n = 0
    with db.write() as s:
        for uid in s.scalars(select(User.id).where(User.status == DELETING,
                                                   User.id != PLACEHOLDER_ID)
                             .order_by(User.id).limit(limit)):
            if open_deletion(s, uid) is None:
                _record_deletion(s, settings, uid)
                n += 1
    return n


def sweep(db: Database, store: BlobStore, settings: Settings,
          batch: int = ledger.SHIP_BATCH) -> dict[str, int]:
    """The ``deletion_ledger`` sweep: ship the ledger, prune what is shipped and old,
    re-drive stuck account deletions."""
    counts = ledger.ship(db, store, batch=batch)
    counts["pruned"] = ledger.prune(db, settings.deletion_ledger_retention, batch=batch)
    counts["redriven"] = redrive(db, settings)
    return counts


# -- 4. after a restore --------------------------------------------------------------------

@dataclass
class RestoreReport:
    """What ``wharf restore-check`` did (or, with ``dry_run``, would do)."""

    since: datetime
    ledger_entries: int = 0
    ledger_rows_restored: int = 0
    accounts_redeleted: int = 0
    accounts_already_gone: int = 0
    objects_requeued: int = 0
    objects_already_queued: int = 0
    stale_references: int = 0
    sessions_revoked: int = 0
    tokens_revoked: int = 0
    dry_run: bool = False

    def as_json(self) -> dict[str, Any]:
        return {k: (v.isoformat() if isinstance(v, datetime) else v)
                for k, v in self.__dict__.items()}


def _entries(db: Database, store: BlobStore, since: datetime) -> list[ledger.Entry]:
    seen: dict[str, ledger.Entry] = {}
    for source in (ledger.read_shipped(store, since), ledger.read_database(db, since)):
        for e in source:
            seen.setdefault(e.id, e)
    return sorted(seen.values(), key=lambda e: (e.recorded_at, e.id))


def _chunks(items: list[ledger.Entry], size: int) -> Iterable[list[ledger.Entry]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def restore_check(db: Database, store: BlobStore, settings: Settings, since: datetime, *,
                  dry_run: bool = False, batch: int = 500) -> RestoreReport:
    """Replay the deletion ledger (the blob store's copy and the database's rows) recorded
    since ``since`` (at or before the backup's time) against a restored database:
    accounts deleted again, objects queued for deletion again, every login session and
    API token revoked. Idempotent; a second run finds nothing left to do."""
    report = RestoreReport(since=since, dry_run=dry_run)
    entries = _entries(db, store, since)
    report.ledger_entries = len(entries)
    for chunk in _chunks(entries, batch):
        with (db.read() if dry_run else db.write()) as s:
            if not dry_run:
                report.ledger_rows_restored += ledger.restore_rows(s, chunk)
            objects = [e.subject for e in chunk if e.kind == ledger.OBJECT]
            queued = set(s.scalars(select(ObjectDeletionJob.object_key).where(
                ObjectDeletionJob.object_key.in_(objects)))) if objects else set()
            fresh = [k for k in dict.fromkeys(objects) if k not in queued]
            report.objects_already_queued += len(set(objects)) - len(fresh)
            report.objects_requeued += len(fresh)
            report.stale_references += len(referenced(s, fresh, deletion_jobs=False))
            if not dry_run:
                deletion.schedule_many(s, fresh, "restore_replay", record=False)
            for e in (e for e in chunk if e.kind == ledger.ACCOUNT):
                user = s.get(User, e.subject)
                if user is None:
                    report.accounts_already_gone += 1
                    continue
                if user.status == USER_ACTIVE or open_deletion(s, user.id) is None:
                    report.accounts_redeleted += 1
                    if not dry_run:
                        user.status = DELETING
                        s.flush()
                        revoke_credentials(s, user.id)
                        _record_deletion(s, settings, user.id)
                        audit.record(s, RequestContext(
                            principal=system_principal("restore-check")),
                            "user.delete_replayed", "user", user.id)
    # Whatever sessions and tokens the backup held may have been ended since: all go.
    if dry_run:
        with db.read() as s:
            report.sessions_revoked = s.scalar(select(func.count()).select_from(
                LoginSession)) or 0
            report.tokens_revoked = s.scalar(select(func.count()).select_from(
                ApiToken).where(ApiToken.revoked_at.is_(None))) or 0
        return report
    while True:
        with db.write() as s:
            ids = list(s.scalars(select(LoginSession.id).limit(batch)))
            s.execute(delete(LoginSession).where(LoginSession.id.in_(ids)))
        report.sessions_revoked += len(ids)
        if len(ids) < batch:
            break
    while True:
        with db.write() as s:
            ids = list(s.scalars(select(ApiToken.id).where(ApiToken.revoked_at.is_(None))
                                 .limit(batch)))
            s.execute(update(ApiToken).where(ApiToken.id.in_(ids)).values(revoked_at=utcnow()))
        report.tokens_revoked += len(ids)
        if len(ids) < batch:
            break
    return report


# -- operators: a read-only team space gets an owner ------------------------------------------

def give_owner(db: Database, space_id: str, username: str) -> None:
    """``wharf space-owner``: the team space (read-only after its owner's deletion, or
    any) is owned by ``username`` and writable again."""
    with db.write() as s:
        space = s.get(Space, space_id, with_for_update=True)
        if space is None or space.type != "team":
            raise NotFound(f"No team space {space_id}.")
        user = s.scalar(select(User).where(User.username_key == username.lower(),
                                           User.status == USER_ACTIVE))
        if user is None:
            raise NotFound(f"No active user {username}.")
        previous = space.owner_id
        set_owner(s, space, user.id)
        audit.record(s, RequestContext(principal=system_principal("space-owner")),
                     "space.owner_set", "space", space.id, space_id=space.id,
                     details={"owner_id": user.id, "previous_owner_id": previous})

