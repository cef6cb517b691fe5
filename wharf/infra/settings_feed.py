"""The settings of the live change feed (``wharf.feed``, ``wharf feed``). Declared as
:mod:`wharf.infra.settings` declares the rest (a base of its ``Settings``)."""
from dataclasses import dataclass
from typing import Annotated

from wharf.infra.setting_declaration import setting


@dataclass(frozen=True, kw_only=True)
class FeedSettings:
    feed_port: Annotated[int, setting(
        "the port `wharf feed` listens on (`--port` overrides; the embedded `wharf serve` "
        "answers the feed on its own port, `WHARF_PORT`)", ge=0, le=65535)] = 8081
    feed_redis_url: Annotated[str, setting(
        "the Redis the feed's event stream lives in (`redis://…`); empty: the broker's "
        "Redis when `WHARF_BROKER_URL` is one, a RabbitMQ stream queue "
        "(`<namespace>.feed`) when it is RabbitMQ, else events stay in the process (the "
        "embedded `wharf serve`)",
        shown="empty: the broker's")] = ""
    feed_retention: Annotated[float, setting(
        "seconds a feed event is kept for clients that reconnect with their last cursor; "
        "older: they get `resync` (10–86400)", ge=10, le=86400, note="5 minutes")] = 300.0
    feed_max_connections_per_user: Annotated[int, setting(
        "feed connections one user may hold at once on one feed process; one more is "
        "refused (429)", ge=1)] = 20
    feed_buffer: Annotated[int, setting(
        "events waiting for one slow feed connection at most; past it the connection is "
        "closed (WebSocket code 4008; the client resumes by cursor) and counted", ge=10)] = 1000
    feed_ping_interval: Annotated[float, setting(
        "seconds between pings on an idle feed connection (WebSocket ping, SSE comment)",
        ge=1)] = 20.0
