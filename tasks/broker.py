"""Dramatiq broker setup: a RedisBroker (plain or behind Sentinel; ``tasks.redis_wake``:
idle consumers block until a message arrives) or RabbitmqBroker in production, StubBroker
in embedded mode.

Dramatiq's own retries are off for our actors: the operations engine retries from the
database with backoff, and the recovery sweep re-delivers anything the broker lost.

``WHARF_BROKER_URL`` chooses (docs/operations.md, "Choosing a broker"):

- ``redis://``, ``rediss://``, ``unix://``: Dramatiq's RedisBroker on that Redis (as
  ``WakingRedisBroker``).
- ``redis+sentinel://[[user]:password@]host1:port1[,host2:port2...]/<master>[/<db>]``:
  the same RedisBroker, its client a redis-py ``Sentinel.master_for`` connection that asks
  the sentinels where the master is (again after a failover). Everything else Wharf does
  with Redis (doorbells, long-poll notices, the health check) uses :func:`redis_client`,
  so it follows the master too.
- ``amqp://``, ``amqps://``: Dramatiq's RabbitmqBroker with publisher confirms (an outbox
  row is marked dispatched only once RabbitMQ has its message), every queue named
  ``<namespace>.<queue>`` (``_rabbitmq_broker``), so several deployments or
  test runs can share one vhost. There is no Redis: doorbells are not coalesced (one
  message per operation, ``tasks.doorbell.PlainDoorbell``) and long-polls re-read the
  database (``wharf.operations.notify.PollingNotifier``).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dramatiq
import redis
from dramatiq.brokers.stub import StubBroker
from dramatiq.middleware import (
    AgeLimit,
    Callbacks,
    Middleware,
    Pipelines,
    Retries,
    ShutdownNotifications,
)

from tasks.redis_wake import WakingRedisBroker
from tasks.time_limit import TimeLimit
from wharf.deletion import service as deletion
from wharf.infra.broker_urls import SENTINEL_SCHEME, broker_kind, parse_sentinel_url
from wharf.infra.settings import Settings
from wharf.operations.service import QUEUE

NAMESPACE = "wharf"  # the default of WHARF_BROKER_NAMESPACE


def middleware() -> list[Middleware]:
    """Every broker's middleware (the time limit: ``tasks.time_limit``, armed while a worker
    of the broker runs)."""
    return [AgeLimit(), TimeLimit(time_limit=15 * 60 * 1000), ShutdownNotifications(),
            Callbacks(), Pipelines(), Retries(max_retries=0)]


def redis_client(url: str, **kwargs: Any) -> redis.Redis:
    """A Redis client for a ``redis://``/``rediss://``/``unix://`` URL, or the master's
    client behind Sentinel for a ``redis+sentinel://`` one (``kwargs``: redis-py connection
    options, e.g. timeouts, for the master's connections and the sentinels' alike)."""
    if not url.startswith(SENTINEL_SCHEME + "://"):
        return redis.Redis.from_url(url, **kwargs)
    from redis.sentinel import Sentinel
    parsed = parse_sentinel_url(url)
    sentinel_kwargs: dict[str, Any] = {
        k: v for k, v in kwargs.items()
        if k in ("socket_timeout", "socket_connect_timeout", "retry")}
    if parsed.sentinel_password:
        sentinel_kwargs["password"] = parsed.sentinel_password
    if parsed.client_name:
        kwargs = {**kwargs, "client_name": parsed.client_name}
    sentinel = Sentinel(list(parsed.sentinels), sentinel_kwargs=sentinel_kwargs)
    client: redis.Redis = sentinel.master_for(
        parsed.master, db=parsed.db, username=parsed.username, password=parsed.password,
        **kwargs)
    return client


def _rabbitmq_broker(settings: Settings) -> dramatiq.Broker:
    from dramatiq.brokers.rabbitmq import RabbitmqBroker

    prefix = settings.broker_namespace + "."

    class Namespaced(RabbitmqBroker):
        """Every queue is ``<namespace>.<name>`` on RabbitMQ: the actors and outbox rows
        keep their plain queue names; declaring and enqueueing add the prefix (a delayed
        message's ``.DQ`` name, and its return to the queue, keep it)."""

        namespace_prefix = prefix

        def declare_queue(self, queue_name: str, *, ensure: bool = False) -> None:
            if not queue_name.startswith(prefix):
                queue_name = prefix + queue_name
            super().declare_queue(queue_name, ensure=ensure)

        def enqueue(self, message: dramatiq.Message[Any], *,
                    delay: int | None = None) -> dramatiq.Message[Any]:
            if not message.queue_name.startswith(prefix):
                message = message.copy(queue_name=prefix + message.queue_name)
            return super().enqueue(message, delay=delay)

    broker: dramatiq.Broker = Namespaced(url=settings.broker_url, middleware=middleware(),
                                         confirm_delivery=True)
    parameters = broker.parameters  # type: ignore[attr-defined]
    for p in parameters if isinstance(parameters, list) else [parameters]:
        # Bounded: an unreachable RabbitMQ fails fast (the outbox keeps the work).
        if p.socket_timeout is None or p.socket_timeout > 10:
            p.socket_timeout = 10
        p.blocked_connection_timeout = p.blocked_connection_timeout or 30
        p.client_properties = {**(p.client_properties or {}),
                               "connection_name": f"wharf {settings.broker_namespace}"}
    return broker


def make_broker(settings: Settings) -> dramatiq.Broker:
    kind = broker_kind(settings.broker_url)
    if settings.embedded_broker:
        broker: dramatiq.Broker = StubBroker(middleware=middleware())
    elif kind == "rabbitmq":
        broker = _rabbitmq_broker(settings)
    else:
        # Bounded socket timeouts: an unreachable Redis fails fast (the outbox keeps the
        # work) instead of blocking an API request. The client is built here, for plain
        # Redis too: Dramatiq's ``url=`` makes a pool from the URL alone and drops them.
        broker = WakingRedisBroker(
            client=redis_client(settings.broker_url, **REDIS_OPTIONS),
            middleware=middleware(), namespace=settings.broker_namespace,
            heartbeat_timeout=30000)
    broker.declare_queue(QUEUE)
    broker.declare_queue(deletion.QUEUE)
    return broker


#: The connection options of the broker's Redis client (and the notifier's).
REDIS_OPTIONS: dict[str, Any] = {"socket_connect_timeout": 2, "socket_timeout": 10,
                                 "health_check_interval": 30}

PING_TIMEOUT = 2  # seconds to connect, and to answer, for a health check of the broker


def pinger(broker: dramatiq.Broker, url: str) -> Callable[[], None]:
    """The broker's health check: PING on a client of its own (``url``: the broker's) with
    short timeouts and no retry -- the broker's socket timeout is sized for its blocking
    commands -- so a hung Redis ties up no request thread for long. On RabbitMQ: open (and
    close) a connection of its own with the same short timeouts."""
    if broker_kind(url) == "rabbitmq":
        return _rabbitmq_pinger(url)
    if getattr(broker, "client", None) is None:
        return lambda: None  # the in-process broker is always there
    from redis.backoff import NoBackoff
    from redis.retry import Retry
    own = redis_client(url, socket_timeout=PING_TIMEOUT,
                       socket_connect_timeout=PING_TIMEOUT, retry=Retry(NoBackoff(), 0))

    def ping() -> None:
        own.ping()

    return ping


def _rabbitmq_pinger(url: str) -> Callable[[], None]:
    import pika  # type: ignore[import-untyped]  # pika ships no type hints

    def ping() -> None:
        params = pika.URLParameters(url)
        params.socket_timeout = params.blocked_connection_timeout = PING_TIMEOUT
        params.stack_timeout = 2 * PING_TIMEOUT
        params.connection_attempts, params.retry_delay = 1, 0
        pika.BlockingConnection(params).close()

    return ping
