"""Webhook endpoints: register (secret shown once), list, read, enable, delete, deliveries."""
from __future__ import annotations

from datetime import datetime
from typing import Protocol

import falcon
import msgspec

from api import contract
from api.schemas.common import PageQuery
from api.schemas.webhooks import (
    CreateWebhookRequest,
    Webhook,
    WebhookCreated,
    WebhookDelivery,
    WebhookDeliveryList,
    WebhookList,
)
from api.serialize import timestamp
from storage.enums import DeliveryStatus
from wharf.infra.clock import iso
from wharf.webhooks.events import WebhookEvent
from wharf.webhooks.service import Webhooks

TAGS = ["webhooks"]


class WebhookRow(Protocol):
    """What the API reads of an endpoint (``wharf.webhooks``' row)."""

    id: str
    url: str
    events: list[str]
    enabled: bool
    disabled_reason: str | None
    disabled_at: datetime | None
    consecutive_failures: int
    created_at: datetime


class DeliveryRow(Protocol):
    """What the API reads of a delivery."""

    id: str
    event_type: str
    subject_id: str
    status: str
    attempts: int
    created_at: datetime
    last_attempt_at: datetime | None
    last_status_code: int | None
    last_error: str | None
    next_attempt_at: datetime | None


def webhook_body(h: WebhookRow) -> Webhook:
    return Webhook(id=h.id, url=h.url, events=[WebhookEvent(e) for e in h.events],
                   enabled=h.enabled, disabled_reason=h.disabled_reason,
                   disabled_at=iso(h.disabled_at),
                   consecutive_failures=h.consecutive_failures,
                   created_at=timestamp(h.created_at))


def delivery_body(d: DeliveryRow) -> WebhookDelivery:
    return WebhookDelivery(id=d.id, type=WebhookEvent(d.event_type), operation_id=d.subject_id,
                           status=DeliveryStatus(d.status), attempts=d.attempts,
                           created_at=timestamp(d.created_at),
                           last_attempt_at=iso(d.last_attempt_at),
                           last_status_code=d.last_status_code, last_error=d.last_error,
                           next_attempt_at=iso(d.next_attempt_at))


class WebhookCollection:
    def __init__(self, webhooks: Webhooks):
        self.webhooks = webhooks

    @contract.op(operation_id="createWebhook", summary="Register a webhook endpoint",
                 tags=TAGS,
                 description="The signing secret is in this answer only. Refused URLs: "
                             "400 `webhook_url_refused`; too many endpoints: 400 "
                             "`webhook_limit`.",
                 body=CreateWebhookRequest, responses={201: WebhookCreated})
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = contract.read_body(req, CreateWebhookRequest)
        hook, secret = self.webhooks.create(req.context.ctx, body.url, body.events)
        resp.media = WebhookCreated(**msgspec.structs.asdict(webhook_body(hook)), secret=secret)
        resp.status = falcon.HTTP_201

    @contract.op(operation_id="listWebhooks", summary="My webhook endpoints", tags=TAGS,
                 responses={200: WebhookList})
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = WebhookList(items=[webhook_body(h)
                                        for h in self.webhooks.mine(req.context.ctx)])


class WebhookItem:
    def __init__(self, webhooks: Webhooks):
        self.webhooks = webhooks

    @contract.op(operation_id="getWebhook", summary="A webhook endpoint (disabled: why)",
                 tags=TAGS, responses={200: Webhook})
    def on_get(self, req: falcon.Request, resp: falcon.Response, webhook_id: str) -> None:
        resp.media = webhook_body(self.webhooks.get(req.context.ctx, webhook_id))

    @contract.op(operation_id="deleteWebhook", summary="Delete a webhook endpoint",
                 tags=TAGS, responses={204: contract.Answer(None, "deleted")})
    def on_delete(self, req: falcon.Request, resp: falcon.Response, webhook_id: str) -> None:
        self.webhooks.delete(req.context.ctx, webhook_id)
        resp.status = falcon.HTTP_204


class WebhookEnable:
    def __init__(self, webhooks: Webhooks):
        self.webhooks = webhooks

    @contract.op(operation_id="enableWebhook", summary="Enable a disabled webhook endpoint",
                 tags=TAGS,
                 description="Resets its failure state (`consecutive_failures`, the "
                             "disabled reason) and resumes its pending deliveries within "
                             "about a minute; the secret and history are kept. Enabling "
                             "an enabled endpoint changes nothing but the failure count.",
                 responses={200: Webhook})
    def on_post(self, req: falcon.Request, resp: falcon.Response, webhook_id: str) -> None:
        resp.media = webhook_body(self.webhooks.enable(req.context.ctx, webhook_id))


class WebhookDeliveries:
    def __init__(self, webhooks: Webhooks):
        self.webhooks = webhooks

    @contract.op(operation_id="listWebhookDeliveries",
                 summary="Deliveries of a webhook endpoint, newest first", tags=TAGS,
                 query=PageQuery, responses={200: WebhookDeliveryList})
    def on_get(self, req: falcon.Request, resp: falcon.Response, webhook_id: str) -> None:
        q = contract.read_query(req, PageQuery)
        items, nxt = self.webhooks.deliveries(req.context.ctx, webhook_id, limit=q.limit,
                                              cursor=q.cursor)
        resp.media = WebhookDeliveryList(items=[delivery_body(d) for d in items],
                                         next_cursor=nxt)
