"""``wharf feed``: the live change feed (issue 39) as its own process kind, uvicorn serving
``api.feed`` (``wharfd.feed_serving``), behind the reverse proxy's ``/api/feed``."""
from __future__ import annotations

import argparse

from wharf.infra.broker_urls import broker_kind
from wharf.infra.settings import ConfigError
from wharfd.commands.preflight import settings_from_args


def cmd_feed(args: argparse.Namespace) -> int:
    port = args.port
    args.port = None  # --port is the feed's (WHARF_FEED_PORT), not the API's
    settings = settings_from_args(args)
    if port is not None and not 0 <= port <= 65535:
        raise ConfigError(f"--port {port}: expected an integer between 0 and 65535")
    if not settings.feed_redis_url and \
            broker_kind(settings.broker_url) not in ("redis", "rabbitmq"):
        raise ConfigError("wharf feed reads the feed's events from Redis or RabbitMQ: set "
                          "WHARF_FEED_REDIS_URL (or use a Redis or RabbitMQ "
                          "WHARF_BROKER_URL); the embedded `wharf serve` answers the feed "
                          "itself")
    workers = args.workers if args.workers is not None else 1
    if workers < 1:
        raise ConfigError(f"--workers {workers}: expected at least 1")
    host = settings.host
    from wharfd.feed_serving import run
    print(f"wharf: feed on {host}:{port if port is not None else settings.feed_port}",
          flush=True)
    run(settings, host, port if port is not None else settings.feed_port, workers)
    return 0
