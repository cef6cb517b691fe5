"""The feed's ASGI application: ``GET /api/feed`` as a WebSocket, or as Server-Sent Events
(``Accept: text/event-stream``), plus ``/healthz`` and ``/metrics`` (docs/feed.md).

:class:`FeedApp` is what the server runs: WebSocket connections to ``/api/feed`` are
answered here at the ASGI level (so that a refused one gets an HTTP answer before the
upgrade, a ``problem+json`` with 401, 404 or 429, where the server supports the ASGI
denial-response extension; else it is closed with 4401, 4404 or 4429); everything else
goes to the Falcon ASGI app (:func:`falcon_app`: SSE, health, metrics).

Admission, the same for both: the ticket is consumed (``wharf.feed.tickets``: 401), each
space and unit subscribed to must be one the user may subscribe to (404 otherwise, as for
one that does not exist), the user's connections on this process are bounded (429).
"""
from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

import falcon
import falcon.asgi

from storage.db import Database
from storage.ids import is_id
from wharf.feed import audience, tickets
from wharf.feed.bus import FeedBus
from wharf.infra.settings import Settings
from wharf.observability.metrics import render, token_ok

from . import metrics
from .direct import DirectWriter
from .hub import Connection, Hub, SlowConsumer, Subscription, key, parse_ids

log = logging.getLogger("wharf.feed")

PATH = "/api/feed"
PROBLEM = "application/problem+json"
#: Threads for the database and bus calls of one feed process.
THREADS = 32
#: The WebSocket close code of a slow consumer (its buffer overflowed).
CLOSE_SLOW = 4008
Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass
class Refusal(Exception):
    status: int
    code: str
    title: str
    detail: str
    headers: dict[str, str] = field(default_factory=dict)

    def body(self) -> bytes:
        return json.dumps({"type": "about:blank", "title": self.title,
                           "status": self.status, "code": self.code,
                           "detail": self.detail}).encode()


def _flag(params: Mapping[str, str], name: str, accepted: dict[str, bool]) -> bool:
    value = params.get(name, "")
    if value not in accepted:
        raise Refusal(400, code="bad_request", title="Bad request",
                      detail=f"{name} must be one of: {', '.join(v for v in accepted if v)}")
    return accepted[value]


class Feed:
    """Admission and the sending loop, for both transports."""

    def __init__(self, settings: Settings, db: Database, bus: FeedBus):
        self.settings, self.db, self.bus = settings, db, bus
        self.hub = Hub(db, bus, buffer=settings.feed_buffer,
                       per_user=settings.feed_max_connections_per_user)
        self.ping_interval = settings.feed_ping_interval

    async def admit(self, params: Mapping[str, str], last_event_id: str | None,
                    transport: str) -> tuple[Connection, list[tuple[str, str]]]:
        self.hub.start()
        try:
            return await self._admit(params, last_event_id, transport)
        except Refusal as refusal:
            metrics.REFUSED.labels(str(refusal.status)).inc()
            raise
        except Exception:  # the database (or the bus) failing: try again shortly
            log.exception("feed: a connection could not be admitted")
            metrics.REFUSED.labels("503").inc()
            raise Refusal(503, code="service_unavailable", title="Service unavailable",
                          detail="The feed cannot admit connections right now; retry.",
                          headers={"Retry-After": "2"}) from None

    async def _admit(self, params: Mapping[str, str], last_event_id: str | None,
                     transport: str) -> tuple[Connection, list[tuple[str, str]]]:
        operations = _flag(params, "operations", {"": False, "mine": True})
        worktrees = _flag(params, "worktrees", {"": False, "0": False, "1": True,
                                                "false": False, "true": True})
        spaces = parse_ids(params.get("spaces"), is_id)
        units = parse_ids(params.get("units"), is_id)
        holder = await asyncio.to_thread(tickets.consume, self.db, params.get("ticket"))
        if holder is None:
            raise Refusal(401, code="invalid_ticket", title="Invalid feed ticket",
                          detail="The ticket is unknown, used or expired (POST "
                          "/api/feed-tickets gives one).")
        if spaces is None or units is None or not await asyncio.to_thread(
                self._may_subscribe, holder.user_id, spaces, units):
            raise Refusal(404, code="not_found", title="Not found",
                          detail="No such space or unit (or you may not follow it).")
        subscription = Subscription(frozenset(spaces), frozenset(units), operations, worktrees)
        conn = self.hub.open(holder.user_id, subscription, transport)
        if conn is None:
            raise Refusal(429, code="too_many_requests", title="Too many feed connections",
                          detail=f"At most {self.hub.per_user} feed connections per user.",
                          headers={"Retry-After": "5"})
        try:
            cursor = params.get("cursor") or last_event_id or None
            return conn, await self.hub.opening(conn, cursor)
        except BaseException:
            self.hub.close(conn)
            raise

    def _may_subscribe(self, user_id: str, spaces: Any, units: Any) -> bool:
        with self.db.read() as s:
            return (all(audience.may_subscribe_space(s, user_id, i) for i in spaces)
                    and all(audience.may_subscribe_unit(s, user_id, i) for i in units))

    async def messages(self, conn: Connection, opening: list[tuple[str, str]],
                       writer: DirectWriter | None = None,
                       ) -> AsyncIterator[tuple[str | None, str]]:
        """(cursor, JSON) to send, in order, each event once; (None, "") when it is time
        to ping. Ends with SlowConsumer when the connection fell behind. Once the
        opening is sent, ``writer`` (if any) lets the dispatcher write events straight
        to the connection while nothing is queued (``Connection.deliver``)."""
        for first, text in opening:
            yield first, text
            conn.last = max(conn.last, key(first))
        conn.writer = writer
        while True:
            item = await conn.next(self.ping_interval)
            if item is None:
                yield None, ""
                continue
            cursor, text = item
            if cursor is None:  # resync: unordered, always sent; the log may restart
                conn.last = (0, 0)
                yield None, text
                continue
            k = key(cursor)
            if k <= conn.last:
                continue  # sent already (in the opening replay)
            conn.last = k
            yield cursor, text

    # -- WebSocket (ASGI level) ------------------------------------------------------------
    async def websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        first = await receive()
        if first.get("type") != "websocket.connect":
            return
        params = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        try:
            conn, opening = await self.admit(params, None, "ws")
        except Refusal as refusal:
            await _deny(scope, send, refusal)
            return
        try:
            await send({"type": "websocket.accept"})
            gone = asyncio.ensure_future(_until_disconnect(receive))
            sender = asyncio.ensure_future(self._send_ws(conn, opening, send))
            done, _ = await asyncio.wait({gone, sender}, return_when=asyncio.FIRST_COMPLETED)
            for task in (gone, sender):
                if task not in done:
                    task.cancel()
        finally:
            self.hub.close(conn)

    async def _send_ws(self, conn: Connection, opening: list[tuple[str, str]],
                       send: Send) -> None:
        try:
            async for _cursor, text in self.messages(conn, opening, DirectWriter.of(send)):
                if text:  # pings: the server's WebSocket ping frames (uvicorn)
                    conn.sending = True
                    try:
                        await send({"type": "websocket.send", "text": text})
                    finally:
                        conn.sending = False
        except SlowConsumer:
            await send({"type": "websocket.close", "code": CLOSE_SLOW,
                        "reason": "slow consumer: resume with your last cursor"})
        except Exception:  # the client went away mid-send
            log.debug("feed: a WebSocket send failed", exc_info=True)

    # -- Server-Sent Events (Falcon) -------------------------------------------------------
    async def on_get(self, req: falcon.asgi.Request, resp: falcon.asgi.Response) -> None:
        if "text/event-stream" not in (req.accept or ""):
            _problem(resp, Refusal(406, code="not_acceptable", title="Not acceptable",
                                   detail="Open a WebSocket, or send Accept: text/event-stream."))
            return
        params = {k: v if isinstance(v, str) else ",".join(v) for k, v in req.params.items()}
        try:
            conn, opening = await self.admit(params, req.get_header("Last-Event-ID"), "sse")
        except Refusal as refusal:
            _problem(resp, refusal)
            return
        resp.content_type = "text/event-stream"
        resp.set_header("Cache-Control", "no-store")
        resp.set_header("X-Accel-Buffering", "no")  # nginx: no buffering of the stream
        resp.sse = self._sse(conn, opening)

    async def _sse(self, conn: Connection,
                   opening: list[tuple[str, str]]) -> AsyncIterator[falcon.asgi.SSEvent]:
        try:
            async for cursor, text in self.messages(conn, opening):
                if not text:
                    yield falcon.asgi.SSEvent(comment="ping")
                else:
                    yield falcon.asgi.SSEvent(text=text, event_id=cursor)
        except SlowConsumer:
            yield falcon.asgi.SSEvent(comment="closed: slow consumer; resume with "
                                              "Last-Event-ID")
        finally:
            self.hub.close(conn)


async def _until_disconnect(receive: Receive) -> None:
    while (await receive()).get("type") != "websocket.disconnect":
        pass  # what a client sends is ignored


async def _deny(scope: Scope, send: Send, refusal: Refusal) -> None:
    if "websocket.http.response" in (scope.get("extensions") or {}):
        headers = [(b"content-type", PROBLEM.encode()),
                   *((k.lower().encode(), v.encode()) for k, v in refusal.headers.items())]
        await send({"type": "websocket.http.response.start", "status": refusal.status,
                    "headers": headers})
        await send({"type": "websocket.http.response.body", "body": refusal.body()})
    else:
        await send({"type": "websocket.close", "code": 4000 + refusal.status,
                    "reason": refusal.code})


def _problem(resp: falcon.asgi.Response, refusal: Refusal) -> None:
    resp.status = refusal.status
    resp.content_type = PROBLEM
    resp.data = refusal.body()
    for k, v in refusal.headers.items():
        resp.set_header(k, v)


class Health:
    async def on_get(self, req: falcon.asgi.Request, resp: falcon.asgi.Response) -> None:
        resp.media = {"status": "ok"}


class Metrics:
    def __init__(self, token: str | None):
        self.token = token

    async def on_get(self, req: falcon.asgi.Request, resp: falcon.asgi.Response) -> None:
        if not token_ok(self.token, req.get_header("Authorization")):
            _problem(resp, Refusal(401, code="invalid_metrics_token",
                                   title="Authentication required",
                                   detail="Send the metrics token as a bearer token."))
            return
        body, content_type = render()
        resp.content_type, resp.data = content_type, body


def falcon_app(feed: Feed) -> falcon.asgi.App[Any, Any]:
    app = falcon.asgi.App()
    app.req_options.auto_parse_qs_csv = False
    app.add_route(PATH, feed)
    app.add_route("/healthz", Health())
    app.add_route("/metrics", Metrics(feed.settings.metrics_token))
    return app


class FeedApp:
    """The ASGI application of a feed process (see the module's docstring)."""

    def __init__(self, settings: Settings, db: Database, bus: FeedBus):
        self.feed = Feed(settings, db, bus)
        self.falcon = falcon_app(self.feed)

    @property
    def hub(self) -> Hub:
        return self.feed.hub

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "websocket" and scope.get("path", "").rstrip("/") == PATH:
            await self.feed.websocket(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)
        else:
            await self.falcon(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                # the database and bus calls run in threads (asyncio.to_thread): more of
                # them than the default pool's (CPUs + 4), admissions wait for none
                asyncio.get_running_loop().set_default_executor(
                    ThreadPoolExecutor(THREADS, thread_name_prefix="feed"))
                self.hub.start()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.hub.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return
