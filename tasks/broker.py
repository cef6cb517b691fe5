"""Dramatiq broker setup: RedisBroker in production, StubBroker in embedded mode.

Dramatiq's own retries are off for our actors: the operations engine retries from the
database with backoff, and the recovery sweep re-delivers anything the broker lost.
"""
from __future__ import annotations

import dramatiq
from dramatiq.brokers.redis import RedisBroker
from dramatiq.brokers.stub import StubBroker
from dramatiq.middleware import (AgeLimit, Callbacks, Pipelines, Retries,
                                 ShutdownNotifications, TimeLimit)

from wharf import deletion
from wharf.config import Settings
from wharf.operations.service import QUEUE

NAMESPACE = "wharf"  # the default of WHARF_BROKER_NAMESPACE


def middleware() -> list:
    return [AgeLimit(), TimeLimit(time_limit=15 * 60 * 1000), ShutdownNotifications(),
            Callbacks(), Pipelines(), Retries(max_retries=0)]


def make_broker(settings: Settings) -> dramatiq.Broker:
    if settings.embedded_broker:
        broker: dramatiq.Broker = StubBroker(middleware=middleware())
        broker.emit_after("process_boot")
    else:
        # Bounded socket timeouts: an unreachable Redis fails fast (the outbox keeps the
        # work) instead of blocking an API request.
        broker = RedisBroker(url=settings.broker_url, middleware=middleware(),
                             namespace=settings.broker_namespace, heartbeat_timeout=30000,
                             socket_connect_timeout=2, socket_timeout=10,
                             health_check_interval=30)
    broker.declare_queue(QUEUE)
    broker.declare_queue(deletion.QUEUE)
    return broker


def ping(broker: dramatiq.Broker) -> None:
    client = getattr(broker, "client", None)
    if client is not None:
        client.ping()
