"""Webhook event types, declared once (the API's enum and the executor's announcements
use these), and the constants of deliveries.

``operation.completed`` and ``operation.failed`` (a cancel is a failure with code
``cancelled``) are sent for operations the endpoint's owner submitted.
"""
from __future__ import annotations

from enum import StrEnum
from typing import Any

from storage.enums import OperationStatus
from wharf.infra.clock import iso


class WebhookEvent(StrEnum):
    OPERATION_COMPLETED = "operation.completed"
    OPERATION_FAILED = "operation.failed"


#: The event an operation's final status announces.
EVENT_FOR_STATUS: dict[str, WebhookEvent] = {
    OperationStatus.COMPLETED: WebhookEvent.OPERATION_COMPLETED,
    OperationStatus.FAILED: WebhookEvent.OPERATION_FAILED}

ACTOR = "deliver_webhook"
QUEUE = "webhooks"
MAX_URL_LENGTH = 2048
#: At most this much of a receiver's answer is read (it is only kept as an error hint).
MAX_RESPONSE_BYTES = 4096
#: Receivers should refuse timestamps older than this (documented replay window).
REPLAY_WINDOW_SECONDS = 300
#: Finished deliveries (delivered or failed) are kept this long for the listing.
DELIVERY_RETENTION_DAYS = 7


def operation_data(op: Any) -> dict[str, Any]:
    """The ``data`` of a delivery's body: the operation (a row or an ORM object) as it is
    now. ``announce`` stores it with the delivery when the operation finishes, so every
    attempt sends the operation as it was then (not after a retry, nor after a purge)."""
    return {"operation": None if op is None else {
        "id": op.id, "kind": op.kind, "status": op.status, "attempts": op.attempts,
        "created_at": iso(op.created_at), "completed_at": iso(op.completed_at),
        "result": op.result, "error": op.error}}
