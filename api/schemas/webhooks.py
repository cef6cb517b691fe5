"""Webhook endpoints and their deliveries (``wharf.webhooks``)."""
from __future__ import annotations

from typing import Annotated, ClassVar

import msgspec

from api.schemas.common import Id, InvalidField, Request, Response, Timestamp
from storage.enums import DeliveryStatus
from wharf.webhooks.events import MAX_URL_LENGTH, WebhookEvent


class CreateWebhookRequest(Request):
    __example__: ClassVar[dict[str, object]] = {
        "url": "https://ci.example.com/wharf-hook", "events": ["operation.completed"]}
    url: Annotated[str, msgspec.Meta(
        min_length=1, max_length=MAX_URL_LENGTH,
        description="An http(s) URL; private and loopback addresses are refused "
                    "(`webhook_url_refused`) unless the server allows them.")]
    events: Annotated[list[WebhookEvent], msgspec.Meta(
        min_length=1, extra_json_schema={"uniqueItems": True})]

    def __post_init__(self) -> None:
        if len(set(self.events)) != len(self.events):
            raise InvalidField("events", "array items must be unique")


class Webhook(Response):
    id: Id
    url: str
    events: list[WebhookEvent]
    enabled: bool
    disabled_reason: str | None
    disabled_at: Timestamp | None
    consecutive_failures: int
    created_at: Timestamp


class WebhookCreated(Webhook):
    secret: Annotated[str, msgspec.Meta(
        description="The signing secret (`whsec_…`); shown only in this answer.")]


class WebhookList(Response):
    items: list[Webhook]


class WebhookDelivery(Response):
    id: Annotated[str, msgspec.Meta(description="Also the `webhook-id` header.")]
    type: WebhookEvent
    operation_id: Id
    status: DeliveryStatus
    attempts: int
    created_at: Timestamp
    last_attempt_at: Timestamp | None
    last_status_code: int | None
    last_error: str | None
    next_attempt_at: Timestamp | None


class WebhookDeliveryList(Response):
    items: list[WebhookDelivery]
    next_cursor: str | None
