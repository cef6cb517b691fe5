"""Registering webhook endpoints, and announcing finished operations to them.

Rules:
- an endpoint belongs to the user whose request created it (a token acts for its user);
  another user's endpoint is "not found"; at most ``WHARF_WEBHOOK_MAX_PER_USER`` each;
- the URL is checked (``check``: ``addresses.resolve``) at registration, before the
  transaction; the secret is returned once;
- create, enable and delete are audited;
- ``announce`` runs inside the transaction that marks operations finished: ONE indexed
  query (``ix_webhooks_user``) for the enabled endpoints of the batch's submitters, then
  (only if any listens) one query for the operations' snapshot (stored with each delivery:
  every attempt sends the operation as it was when it finished), one executemany of
  deliveries and one of outbox rows, each row handed to the outbox sink after commit.
  No endpoint: one cheap query, nothing written.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, insert, select, update
from sqlalchemy.orm import Session

from storage.db import Database, OutboxNotice, announce_after_commit
from storage.driver import DriverStatement, in_param
from storage.enums import DeliveryStatus
from storage.models import Operation, OutboxMessage, Webhook, WebhookDelivery
from wharf.infra import audit, limits
from wharf.infra.clock import utcnow
from wharf.infra.context import RequestContext
from wharf.infra.errors import NotFound, ValidationFailed
from wharf.infra.ids import is_id, new_id
from wharf.infra.pagination import decode_cursor, page
from wharf.infra.settings import Settings
from wharf.webhooks import addresses, signing
from wharf.webhooks.events import (
    ACTOR,
    EVENT_FOR_STATUS,
    QUEUE,
    WebhookEvent,
    operation_data,
)

OPERATIONS = Operation.__table__
WEBHOOKS = Webhook.__table__
DELIVERIES = WebhookDelivery.__table__
OUTBOX = OutboxMessage.__table__
INSERT_DELIVERY = insert(DELIVERIES)
INSERT_OUTBOX = insert(OUTBOX)
CURSOR_KIND = "webhook-deliveries"


def outbox_notice(delivery_id: str, delay_ms: int = 0) -> OutboxNotice:
    return OutboxNotice(id=new_id(), queue_name=QUEUE, actor_name=ACTOR,
                        subject_id=delivery_id, delay_ms=delay_ms)


def outbox_row(notice: OutboxNotice, now: datetime) -> dict[str, Any]:
    return {"id": notice.id, "actor_name": notice.actor_name,
            "queue_name": notice.queue_name, "subject_id": notice.subject_id,
            "delay_ms": notice.delay_ms, "created_at": now, "send_attempts": 0,
            "trace_context": None}


@dataclass(frozen=True)
class Finished:
    """An operation that just finished: who submitted it and how it ended."""

    operation_id: str
    actor_id: str
    status: str  # completed | failed


# The enabled endpoints of a batch's submitters (``users``), by backend: run by every
# completion, most often to find none (on PostgreSQL on the driver).
_LISTENING = {postgres: DriverStatement(select(
    WEBHOOKS.c.id, WEBHOOKS.c.user_id, WEBHOOKS.c.events).where(
    WEBHOOKS.c.enabled.is_(True), in_param(WEBHOOKS.c.user_id, "users", postgres=postgres)))
    for postgres in (False, True)}


def announce(s: Session, finished: Sequence[Finished]) -> int:
    """Write a delivery (and its outbox row) for every enabled endpoint of each finished
    operation's submitter that listens to its event; returns how many."""
    if not finished:
        return 0
    c = s.connection()
    users = sorted({f.actor_id for f in finished})
    hooks = _LISTENING[c.dialect.name == "postgresql"].all(c, {"users": users})
    if not hooks:
        return 0
    by_user: dict[str, list[tuple[str, list[str] | None]]] = {}
    for hook_id, user_id, events in hooks:
        by_user.setdefault(user_id, []).append((hook_id, events))
    # The payload snapshot: the operations as this transaction finished them (ORM changes
    # flushed first; only when an endpoint listens).
    s.flush()
    ops = {o.id: operation_data(o) for o in c.execute(select(
        OPERATIONS.c.id, OPERATIONS.c.kind, OPERATIONS.c.status, OPERATIONS.c.attempts,
        OPERATIONS.c.created_at, OPERATIONS.c.completed_at, OPERATIONS.c.result,
        OPERATIONS.c.error).where(OPERATIONS.c.id.in_(
            sorted({f.operation_id for f in finished}))))}
    now = utcnow()
    deliveries: list[dict[str, Any]] = []
    notices: list[OutboxNotice] = []
    for f in finished:
        event = EVENT_FOR_STATUS.get(f.status)
        if event is None:
            continue
        for hook_id, events in by_user.get(f.actor_id, ()):
            if str(event) not in (events or []):
                continue
            delivery_id = new_id()
            deliveries.append({"id": delivery_id, "webhook_id": hook_id,
                               "event_type": str(event), "subject_id": f.operation_id,
                               "status": str(DeliveryStatus.PENDING), "attempts": 0,
                               "next_attempt_at": now, "created_at": now,
                               "claim": None,
                               "payload": ops.get(f.operation_id, operation_data(None))})
            notices.append(outbox_notice(delivery_id))
    if not deliveries:
        return 0
    c.execute(INSERT_DELIVERY, deliveries)
    c.execute(INSERT_OUTBOX, [outbox_row(n, now) for n in notices])
    for n in notices:
        announce_after_commit(s, n)
    return len(deliveries)


class Webhooks:
    """A user's webhook endpoints. Each method runs in one transaction of its own."""

    def __init__(self, settings: Settings, db: Database):
        self.settings, self.db = settings, db

    def check(self, url: str) -> None:
        """The address rules, DNS included (before any transaction: a slow resolver must
        not hold a write transaction open)."""
        addresses.resolve(url, allow_private=self.settings.webhook_allow_private)

    def create(self, ctx: RequestContext, url: str,
               events: Sequence[WebhookEvent]) -> tuple[Webhook, str]:
        """The new endpoint and its signing secret (shown once)."""
        self.check(url)  # DNS, outside the transaction
        with self.db.write() as s:
            return self._create(s, ctx, url, events)

    def _create(self, s: Session, ctx: RequestContext, url: str,
                events: Sequence[WebhookEvent]) -> tuple[Webhook, str]:
        user_id = ctx.principal.user_id
        assert user_id is not None
        if not events:
            raise ValidationFailed("events must name at least one event",
                                   details={"field": "events"})
        addresses.parse(url)  # resolved by ``check``, before the transaction
        limit = self.settings.webhook_max_per_user
        limits.require_room(
            s, user_id, select(func.count()).select_from(Webhook)
            .where(Webhook.user_id == user_id), limit,
            lambda: ValidationFailed(f"at most {limit} webhooks per user",
                                     code="webhook_limit", details={"limit": limit}))
        secret = signing.new_secret()
        hook = Webhook(id=new_id(), user_id=user_id, url=url,
                       events=sorted({str(e) for e in events}), secret=secret,
                       enabled=True, consecutive_failures=0, created_at=utcnow())
        s.add(hook)
        s.flush()
        audit.record(s, ctx, "webhook.create", "webhook", hook.id,
                     details={"url": addresses.origin(url), "events": hook.events})
        return hook, secret

    def mine(self, ctx: RequestContext) -> list[Webhook]:
        with self.db.read() as s:
            return list(s.scalars(
                select(Webhook).where(Webhook.user_id == ctx.principal.user_id)
                .order_by(Webhook.id).limit(self.settings.webhook_max_per_user * 2)))

    def get(self, ctx: RequestContext, webhook_id: str) -> Webhook:
        with self.db.read() as s:
            return self._get(s, ctx, webhook_id)

    def _get(self, s: Session, ctx: RequestContext, webhook_id: str) -> Webhook:
        hook = s.get(Webhook, webhook_id) if is_id(webhook_id) else None
        if hook is None or hook.user_id != ctx.principal.user_id:
            raise NotFound("No such webhook.")
        return hook

    def enable(self, ctx: RequestContext, webhook_id: str) -> Webhook:
        """Enable a (disabled) endpoint again: its failure state is reset and its parked
        pending deliveries become due (one UPDATE; the ``retry_webhook_deliveries`` sweep
        rings them within about a minute, at most its batch at a time). Audited."""
        with self.db.write() as s:
            hook = self._get(s, ctx, webhook_id)
            was = {"enabled": hook.enabled, "disabled_reason": hook.disabled_reason}
            hook.enabled = True
            hook.disabled_reason = None
            hook.disabled_at = None
            hook.consecutive_failures = 0
            hook.failing_since = None
            s.execute(update(WebhookDelivery).where(
                WebhookDelivery.webhook_id == hook.id,
                WebhookDelivery.status == str(DeliveryStatus.PENDING),
                WebhookDelivery.next_attempt_at.is_(None)).values(next_attempt_at=utcnow()))
            audit.record(s, ctx, "webhook.enable", "webhook", hook.id, details=was)
            return hook

    def delete(self, ctx: RequestContext, webhook_id: str) -> None:
        with self.db.write() as s:
            hook = self._get(s, ctx, webhook_id)
            s.delete(hook)
            audit.record(s, ctx, "webhook.delete", "webhook", webhook_id)

    def deliveries(self, ctx: RequestContext, webhook_id: str, *, limit: int,
                   cursor: str | None) -> tuple[list[WebhookDelivery], str | None]:
        """Newest first, keyset on the (time-ordered) id."""
        with self.db.read() as s:
            self._get(s, ctx, webhook_id)
            after = decode_cursor(CURSOR_KIND, cursor, 1)
            q = select(WebhookDelivery).where(WebhookDelivery.webhook_id == webhook_id)
            if after is not None:
                q = q.where(WebhookDelivery.id < after[0])
            rows = list(s.scalars(q.order_by(WebhookDelivery.id.desc()).limit(limit + 1)))
            return page(rows, limit, CURSOR_KIND, lambda d: [d.id])
