"""Dramatiq broker setup: RedisBroker in production, StubBroker in embedded mode.

Dramatiq's own retries are off for our actors: the operations engine retries from the
database with backoff, and the recovery sweep re-delivers anything the broker lost.
"""
from __future__ import annotations

from collections.abc import Callable

import dramatiq
import redis
from dramatiq.brokers.redis import RedisBroker
from dramatiq.brokers.stub import StubBroker
from dramatiq.middleware import (
    AgeLimit,
    Callbacks,
    Middleware,
    Pipelines,
    Retries,
    ShutdownNotifications,
    TimeLimit,
)

from wharf import deletion
from wharf.config import Settings
from wharf.operations.service import QUEUE

NAMESPACE = "wharf"  # the default of WHARF_BROKER_NAMESPACE


def middleware() -> list[Middleware]:
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


PING_TIMEOUT = 2  # seconds to connect, and to answer, for a health check of Redis


def pinger(broker: dramatiq.Broker, url: str) -> Callable[[], None]:
    """The broker's health check: PING on a client of its own (``url``: the broker's) with
    short timeouts and no retry -- the broker's socket timeout is sized for its blocking
    commands -- so a hung Redis ties up no request thread for long."""
    if getattr(broker, "client", None) is None:
        return lambda: None  # the in-process broker is always there
    from redis.backoff import NoBackoff
    from redis.retry import Retry
    own = redis.Redis.from_url(url, socket_timeout=PING_TIMEOUT,
                               socket_connect_timeout=PING_TIMEOUT,
                               retry=Retry(NoBackoff(), 0))

    def ping() -> None:
        own.ping()

    return ping
