"""Sending one webhook delivery, retrying it, and disabling endpoints that keep failing.

- A delivery is sent when due (``next_attempt_at``) and still ``pending``; the endpoint's
  URL is checked again and the request goes to the address checked (DNS rebinding).
- The request: ``POST`` JSON ``{id, type, created_at, data: {operation}}`` with the
  Standard Webhooks headers (``webhook-id`` is the delivery id: the same on every retry,
  so a receiver de-duplicates a delivery sent again after a worker died between sending
  and recording it). Only a 2xx answer counts; a redirect is a failure (never followed);
  ``WHARF_WEBHOOK_TIMEOUT`` bounds the whole send (a wall-clock deadline, not a per-read
  timeout: ``post``); at most ``MAX_RESPONSE_BYTES`` of the answer are read.
- On failure: the next attempt after ``WHARF_WEBHOOK_RETRY_SCHEDULE``'s next delay (with
  up to 20 % jitter) and a delayed outbox message; after the last delay the delivery
  gives up (``failed``) and the endpoint is disabled (reason shown in GET). So is an
  endpoint that has had no success for as long as the schedule lasts (``failing_since``;
  time, not a count: a short outage with many deliveries disables nothing). The other
  pending deliveries of a disabled endpoint are parked (pending, not due) until
  ``POST /api/webhooks/{id}/enable`` resumes them.
- Finished deliveries are kept ``DELIVERY_RETENTION_DAYS`` (``prune``, same sweep: bounded
  batches until none is left or ``PRUNE_BUDGET_SECONDS`` passed).
- A lost message: ``rering_due`` (sweep ``retry_webhook_deliveries``) rings again for
  deliveries overdue by ``WHARF_WEBHOOK_CLAIM_MARGIN_SECONDS`` (a minute). A send is
  claimed first for longer than its deadline (``claim_seconds``: the deadline, its slack
  and that margin; the claim's expiry is ``next_attempt_at``, so only deliveries whose
  claim expired are re-rung) with a token that ``record`` checks, so a delivery is never
  sent twice at once and an attempt is never counted twice.
"""
from __future__ import annotations

import http.client
import json
import logging
import random
import socket
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from sqlalchemy import delete, select, update

from storage.db import Database, send_after_commit
from storage.enums import DeliveryStatus
from storage.models import Operation, OutboxMessage, Webhook, WebhookDelivery
from storage.results import rowcount
from wharf.infra.clock import iso, utcnow
from wharf.infra.errors import WharfError
from wharf.infra.ids import new_id
from wharf.infra.settings import Settings
from wharf.observability import metrics
from wharf.webhooks import addresses, signing
from wharf.webhooks.events import (
    ACTOR,
    DELIVERY_RETENTION_DAYS,
    MAX_RESPONSE_BYTES,
    QUEUE,
    operation_data,
)

log = logging.getLogger("wharf.webhooks")


def schedule(settings: Settings) -> list[float]:
    """The delays between attempts (``WHARF_WEBHOOK_RETRY_SCHEDULE``, validated at start)."""
    return [float(part) for part in settings.webhook_retry_schedule.split(",")]


def payload(delivery: WebhookDelivery, op: Operation | None) -> bytes:
    """The body: ``data`` is the snapshot ``announce`` stored (the operation when it
    finished); ``op`` (read now) only for a delivery written without one."""
    data: dict[str, Any] = delivery.payload if delivery.payload is not None \
        else operation_data(op)
    body = {"id": delivery.id, "type": delivery.event_type,
            "created_at": iso(delivery.created_at), "data": data}
    return json.dumps(body, separators=(",", ":")).encode()


#: Slack over ``WHARF_WEBHOOK_TIMEOUT`` a send may take (closing the socket, recording).
DEADLINE_SLACK_SECONDS = 1.0
#: The default margin of a send's claim over its deadline (resolving the host, the
#: database writes): ``WHARF_WEBHOOK_CLAIM_MARGIN_SECONDS``, at least 1 s.
CLAIM_MARGIN_SECONDS = 60.0


def post(target: addresses.Target, body: bytes, headers: dict[str, str],
         timeout: float) -> tuple[int, str]:
    """One POST to the checked address; (status, first bytes of the answer).

    ``timeout`` is a wall-clock deadline for the whole send (connect, TLS, request, status,
    headers, body), not a per-read timeout: a receiver trickling one header line a second
    would otherwise keep a worker thread for as long as it likes. Each socket operation
    waits at most the time left, and a watchdog shuts the socket down at the deadline
    (a read blocked in the middle of a line returns at once); a send past its deadline
    fails with ``TimeoutError``."""
    deadline = time.monotonic() + timeout
    lock = threading.Lock()
    sockets: list[socket.socket] = []
    expired = threading.Event()

    def left() -> float:
        return max(0.001, deadline - time.monotonic())

    def shut(sock: socket.socket) -> None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def expire() -> None:
        with lock:
            expired.set()
            for sock in sockets:
                shut(sock)

    cls = http.client.HTTPSConnection if target.scheme == "https" else http.client.HTTPConnection
    conn = cls(target.host, target.port, timeout=timeout)

    def connect(address: tuple[str, int], timeout: float | None = None,
                source_address: tuple[str, int] | None = None) -> socket.socket:
        sock = connect_any(target, left, source_address)
        with lock:
            sockets.append(sock)
            if expired.is_set():
                shut(sock)
        return sock
    conn._create_connection = connect  # type: ignore[attr-defined]
    watchdog = threading.Timer(timeout, expire)
    watchdog.daemon = True
    watchdog.start()
    try:
        conn.request("POST", target.path, body=body, headers={
            **headers, "content-type": "application/json",
            "user-agent": "Wharf-Webhooks/1"})
        resp = conn.getresponse()
        text = resp.read(MAX_RESPONSE_BYTES).decode("utf-8", "replace")
        if expired.is_set():
            raise TimeoutError(f"no complete answer within {timeout:g} s")
        return resp.status, text
    except (OSError, http.client.HTTPException) as exc:
        if expired.is_set() and not isinstance(exc, TimeoutError):
            raise TimeoutError(f"no complete answer within {timeout:g} s") from exc
        raise
    finally:
        watchdog.cancel()
        conn.close()


def connect_any(target: addresses.Target, left: Callable[[], float],
                source_address: tuple[str, int] | None) -> socket.socket:
    """Connect to the checked addresses in turn (within the time left); the last
    error if none answers."""
    error: OSError | None = None
    for address in target.addresses:
        try:
            return socket.create_connection((address, target.port), left(), source_address)
        except OSError as exc:
            error = exc
    raise error or OSError("no address to connect to")


Hook = Callable[[str], None]


def run_delivery(db: Database, settings: Settings, delivery_id: str, *,
                 after_send: Hook | None = None) -> str:
    """Send one delivery if it is due; returns what happened. ``after_send`` (tests)
    runs between the request and its recording, like a worker killed there.

    The send is claimed first (one conditional UPDATE: ``next_attempt_at`` moved past
    the whole send's deadline, ``claim`` set to a fresh token), so two messages for one
    delivery never send it at once, and a worker that dies mid-send leaves it due again
    once the claim expires (the sweep re-rings it). Only the worker still holding the
    token records the attempt (``record``): a late one changes nothing."""
    now = utcnow()
    token = new_id()
    with db.write() as s:
        claimed = rowcount(s.execute(update(WebhookDelivery).where(
            WebhookDelivery.id == delivery_id,
            WebhookDelivery.status == str(DeliveryStatus.PENDING),
            WebhookDelivery.next_attempt_at <= now).values(
            next_attempt_at=now + timedelta(seconds=claim_seconds(settings)),
            claim=token)))
        if not claimed:
            return "not_due"
        d = s.get(WebhookDelivery, delivery_id)
        hook = s.get(Webhook, d.webhook_id) if d is not None else None
        if d is None or hook is None:
            return "gone"
        if not hook.enabled:
            # Parked (still pending, not due): re-enabling the endpoint resumes it.
            d.last_error = "the endpoint is disabled; re-enable it to resume"
            d.next_attempt_at = None
            d.claim = None
            return "disabled"
        body = payload(d, None if d.payload is not None else s.get(Operation, d.subject_id))
        url, secret = hook.url, hook.secret
    code: int | None = None
    error: str | None = None
    try:
        target = addresses.resolve(url, allow_private=settings.webhook_allow_private)
        stamp = int(utcnow().timestamp())
        code, text = post(target, body, signing.headers(secret, delivery_id, stamp, body),
                          settings.webhook_timeout)
        if not 200 <= code < 300:
            error = f"HTTP {code}: {text[:200]}" if code < 300 or code >= 400 else \
                f"HTTP {code}: redirects are not followed"
    except WharfError as exc:
        error = exc.message
    except (OSError, http.client.HTTPException) as exc:
        error = f"{type(exc).__name__}: {exc}"
    if after_send is not None:
        after_send(delivery_id)
    return record(db, settings, delivery_id, token, code, error)


def claim_seconds(settings: Settings) -> float:
    """How long a send's claim lasts: longer than the whole send may take (``post``'s
    deadline plus its slack) with a margin for the database round trips
    (``WHARF_WEBHOOK_CLAIM_MARGIN_SECONDS``, at least 1 s: the claim always outlives the
    send)."""
    return settings.webhook_timeout + DEADLINE_SLACK_SECONDS + \
        settings.webhook_claim_margin_seconds


def record(db: Database, settings: Settings, delivery_id: str, token: str,
           code: int | None, error: str | None) -> str:
    """Record one attempt, if this worker still holds the delivery's claim (``token``):
    a send whose claim expired and was taken by another changes nothing ("lost_claim")."""
    delays = schedule(settings)
    with db.write() as s:
        d = s.get(WebhookDelivery, delivery_id, with_for_update=True)
        if d is None or d.status != DeliveryStatus.PENDING:
            return "gone"
        if d.claim != token:
            log.warning("webhook delivery %s: its claim expired during the send; the "
                        "attempt is not recorded", delivery_id)
            return "lost_claim"
        d.claim = None
        hook = s.get(Webhook, d.webhook_id, with_for_update=True)
        now = utcnow()
        d.attempts += 1
        d.last_attempt_at = now
        d.last_status_code = code
        d.last_error = error[:500] if error else None
        if error is None:
            d.status = str(DeliveryStatus.DELIVERED)
            d.next_attempt_at = None
            if hook is not None:
                hook.consecutive_failures = 0
                hook.failing_since = None
            outcome = "delivered"
            metrics.WEBHOOK_ATTEMPTS.labels(outcome).inc()
            return outcome
        if hook is not None:
            hook.consecutive_failures += 1
            hook.failing_since = hook.failing_since or now
        if d.attempts > len(delays):
            d.status = str(DeliveryStatus.FAILED)
            d.next_attempt_at = None
            if hook is not None:
                disable(hook, f"delivery {d.id} failed {d.attempts} times over "
                              f"{sum(delays):.0f} s; last error: {error}")
            outcome = "failed"
        else:
            delay = delays[d.attempts - 1] * random.uniform(1.0, 1.2)
            d.next_attempt_at = now + timedelta(seconds=delay)
            send_after_commit(s, _message(d.id, int(delay * 1000)))
            outcome = "retry"
        if hook is not None and hook.enabled and hook.failing_since is not None and \
                now - hook.failing_since >= timedelta(seconds=sum(delays)):
            disable(hook, f"no successful delivery for {sum(delays):.0f} s "
                          f"({hook.consecutive_failures} failed attempts); "
                          f"last error: {error}")
    metrics.WEBHOOK_ATTEMPTS.labels(outcome).inc()
    log.info("webhook delivery %s: %s (%s)", delivery_id, outcome, error)
    return outcome


def _message(delivery_id: str, delay_ms: int = 0) -> OutboxMessage:
    """The outbox row that rings the delivery actor for ``delivery_id``."""
    return OutboxMessage(id=new_id(), actor_name=ACTOR, queue_name=QUEUE,
                         subject_id=delivery_id, delay_ms=delay_ms)


def disable(hook: Webhook, reason: str) -> None:
    hook.enabled = False
    hook.disabled_reason = reason[:500]
    hook.disabled_at = utcnow()


def rering_due(db: Database, limit: int = 500,
               grace_seconds: float = CLAIM_MARGIN_SECONDS) -> int:
    """Ring again for up to ``limit`` deliveries overdue by ``grace_seconds`` (their
    message was lost, or their worker died mid-send and its claim expired: a claim's
    expiry is ``next_attempt_at``); returns how many. The sweep
    ``retry_webhook_deliveries`` calls it: only outbox rows, no HTTP in a sweep.

    A re-rung delivery's ``next_attempt_at`` moves to now (as ``recovery`` moves an
    operation's ``updated_at``): it is due for the new message, and rung again only if
    that one too is lost, not on every sweep while a backlog is older than the grace.
    The sweep's grace is ``WHARF_WEBHOOK_CLAIM_MARGIN_SECONDS``: a short one only rings
    more often (a second message for a due delivery finds it claimed: ``not_due``), never
    sends twice at once."""
    now = utcnow()
    cutoff = now - timedelta(seconds=grace_seconds)
    with db.write() as s:
        ids = list(s.scalars(select(WebhookDelivery.id).where(  # ix_webhook_deliveries_due
            WebhookDelivery.next_attempt_at <= cutoff)
            .order_by(WebhookDelivery.next_attempt_at).limit(limit)))
        if ids:
            s.execute(update(WebhookDelivery).where(
                WebhookDelivery.id.in_(ids),
                WebhookDelivery.next_attempt_at <= cutoff).values(next_attempt_at=now))
        for delivery_id in ids:
            send_after_commit(s, _message(delivery_id))
    return len(ids)


#: How long one ``prune`` call keeps deleting batches (the sweep runs every minute).
PRUNE_BUDGET_SECONDS = 10.0


def prune(db: Database, limit: int = 500, *, budget_seconds: float = PRUNE_BUDGET_SECONDS,
          max_batches: int = 1000) -> int:
    """Delete finished deliveries older than ``DELIVERY_RETENTION_DAYS``
    (``ix_webhook_deliveries_created``) in batches of ``limit``, each its own short
    transaction, until none is left, ``budget_seconds`` have passed or ``max_batches``
    ran (so pruning keeps up with a busy endpoint, and a sweep stays bounded); returns
    how many."""
    deadline = time.monotonic() + budget_seconds
    total = 0
    for _ in range(max_batches):
        n = _prune_batch(db, limit)
        total += n
        if n < limit or time.monotonic() >= deadline:
            break
    return total


def _prune_batch(db: Database, limit: int) -> int:
    cutoff = utcnow() - timedelta(days=DELIVERY_RETENTION_DAYS)
    with db.write() as s:
        ids = list(s.scalars(select(WebhookDelivery.id).where(
            WebhookDelivery.created_at < cutoff,
            WebhookDelivery.status != str(DeliveryStatus.PENDING))
            .order_by(WebhookDelivery.created_at).limit(limit)))
        if ids:
            s.execute(delete(WebhookDelivery).where(WebhookDelivery.id.in_(ids)))
    return len(ids)
