"""Serving the live change feed (``api.feed``) under uvicorn.

- ``wharf feed``: its own process kind, uvicorn on ``WHARF_FEED_PORT`` (:func:`run`),
  any number of them behind the reverse proxy's ``/api/feed``, fed by the Redis stream.
- ``wharf serve``: the feed answers on the API's own port. Waitress keeps serving the API;
  a connection whose next request starts ``GET /api/feed`` is handed over, socket and the
  bytes read so far, to a uvicorn server that runs in a thread of the same process with
  no listening socket of its own (:class:`EmbeddedFeed`; the hand-over:
  :class:`FeedSniffer`, called by the guarded waitress channel of ``wharfd.serving``).
  Only a connection at a request boundary with nothing in flight is handed over; any other
  is left to waitress (whose API answers ``/api/feed`` with 404).
"""
from __future__ import annotations

import asyncio
import logging
import socket
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from wharf.infra.settings import Settings

if TYPE_CHECKING:
    import uvicorn

log = logging.getLogger("wharf.feed")

#: Where a connection goes: (its socket, the bytes already read from it).
Adopt = Callable[[socket.socket, bytes], None]
#: The starts of a request line to the feed.
FEED_LINES = (b"GET /api/feed?", b"GET /api/feed ", b"GET /api/feed/")
LONGEST = max(len(p) for p in FEED_LINES)


#: Seconds a stopping feed (SIGTERM; ``wharf serve`` stopping) gives its connections
#: before uvicorn cancels them. A feed connection never ends by itself (an SSE stream
#: pings on while its client stays), so uvicorn's default, waiting for every connection,
#: waited for SIGKILL; WebSockets are closed at once (1012), and every client resumes by
#: cursor on another process.
SHUTDOWN_GRACE = 1.0


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    return {"lifespan": "on", "log_config": None, "access_log": False,
            "timeout_graceful_shutdown": SHUTDOWN_GRACE,
            "ws_ping_interval": settings.feed_ping_interval,
            "ws_ping_timeout": settings.feed_ping_interval,
            # behind the reverse proxy: its X-Forwarded-* only when WHARF_TRUSTED_PROXY_COUNT
            "proxy_headers": bool(settings.trusted_proxy_count)}


def uvicorn_config(app: Any, settings: Settings, **kwargs: Any) -> uvicorn.Config:
    import uvicorn
    return uvicorn.Config(app, **uvicorn_options(settings), **kwargs)


def feed_application() -> Any:
    """The ASGI application of one ``wharf feed`` worker (uvicorn's factory): its own
    database pool and bus reader. What start-up built is settled (``wharfd.heap``) before
    it serves: the collector's full collections then scan the connections only (they
    stop every connection of the process while they run)."""
    from api.feed.app import FeedApp
    from storage.db import Database
    from tasks.feed_bus import feed_bus_for
    from wharfd import heap, logs
    logs.configure_from_env("feed")
    settings = Settings.from_env()
    db = Database(settings.database_url, settings.sqlite_busy_timeout_ms,
                  pool_size=settings.database_pool_size)
    app = FeedApp(settings, db, feed_bus_for(settings))
    heap.settle()
    return app


def run(settings: Settings, host: str, port: int, workers: int) -> None:
    """``wharf feed``: uvicorn in the foreground until SIGTERM/SIGINT; ``workers``
    processes (uvicorn's supervisor) when more than one."""
    import uvicorn
    uvicorn.run("wharfd.feed_serving:feed_application", factory=True, host=host, port=port,
                workers=workers, **uvicorn_options(settings))


class FeedSniffer:
    """Decides, for waitress's channel, whether the request arriving is the feed's."""

    def __init__(self, adopt: Adopt):
        self.adopt = adopt

    def sniff(self, channel: Any, data: bytes) -> bytes:
        """What the channel should parse itself (``b""``: nothing, the connection was
        handed over or too little has arrived to tell)."""
        pending: bytes = getattr(channel, "feed_pending", b"") + data
        channel.feed_pending = b""
        if not _at_boundary(channel):
            return pending
        if pending.startswith(FEED_LINES):
            try:
                sock = channel.socket.dup()
            except OSError:
                return pending
            channel.handle_close()  # waitress lets go; the connection lives on in ``sock``
            try:
                self.adopt(sock, pending)
            except Exception:
                log.exception("feed: a connection could not be handed over")
                sock.close()
            return b""
        if len(pending) < LONGEST and any(p.startswith(pending) for p in FEED_LINES):
            channel.feed_pending = pending  # maybe the feed's: wait for more
            return b""
        return pending


def _at_boundary(channel: Any) -> bool:
    """Nothing of the connection is in flight: no request partly read, being served, or
    an answer still being sent."""
    return (channel.request is None and not channel.requests
            and not channel.total_outbufs_len and not channel.will_close
            and not channel.close_when_flushed)


class EmbeddedFeed:
    """A uvicorn server without a listening socket, in its own thread and event loop,
    serving the connections it is handed (:meth:`adopt`)."""

    def __init__(self, app: Any, settings: Settings):
        import uvicorn
        self.config = uvicorn_config(app, settings)
        self.config.load()  # its protocol classes imported now, before the heap settles
        self.server = uvicorn.Server(self.config)
        self.server.lifespan = self.config.lifespan_class(self.config)
        self.loop: asyncio.AbstractEventLoop | None = None
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, name="feed", daemon=True)

    def start(self, timeout: float = 10.0) -> None:
        self._thread.start()
        if not self._started.wait(timeout):
            raise RuntimeError("the embedded feed did not start")

    def _run(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        self.loop = asyncio.get_running_loop()
        await self.server.startup(sockets=[])
        self._started.set()
        await self.server.main_loop()
        await self.server.shutdown(sockets=[])

    def adopt(self, sock: socket.socket, first: bytes) -> None:
        """Serve ``sock`` (from any thread), ``first`` being what was read from it."""
        loop = self.loop
        if loop is None or self.server.should_exit:
            sock.close()
            return
        asyncio.run_coroutine_threadsafe(self._adopt(sock, first), loop)

    async def _adopt(self, sock: socket.socket, first: bytes) -> None:
        assert self.loop is not None
        config = self.config
        protocol = config.http_protocol_class(  # type: ignore[call-arg]
            config=config, server_state=self.server.server_state,
            app_state=self.server.lifespan.state)
        sock.setblocking(False)
        try:
            await self.loop.connect_accepted_socket(lambda: protocol, sock)
        except OSError:
            sock.close()
            return
        protocol.data_received(first)

    def stop(self, timeout: float = 10.0) -> None:
        self.server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout)
