"""The embedded HTTP server (``wharf serve``): waitress, with the protections it lacks.

Waitress runs one event loop (accepts connections, reads requests, sends buffered output)
and a pool of request threads (runs the app). What could hold it, and what we do:

- **Slow readers.** A thread copying a response into a connection's output buffer blocks
  once more than ``outbuf_high_watermark`` (16 MiB) waits unsent, and waitress never times
  that out: a client that stops reading a large download pins the thread forever.
  Downloads of files are handed to waitress's ``wsgi.file_wrapper`` (see
  ``storage.blobstore.FileRange``), so the event loop sends them and no thread waits; and a
  connection whose pending output makes no progress for ``WHARF_HTTP_SEND_TIMEOUT`` seconds
  is closed, which also frees a thread blocked writing any other large response.
- **Slow requests.** The event loop reads the whole request (headers and body) before a
  thread runs the app, so trickled bodies hold no thread, but every connection counts
  against the connection limit (waitress's default: 100) and waitress's idle timeout is
  reset by every byte. A request that has not arrived completely within
  ``WHARF_HTTP_RECEIVE_TIMEOUT`` seconds plus one second per ``WHARF_HTTP_MIN_RECEIVE_RATE``
  bytes received is closed (so is a new connection that sends nothing for that long), and
  the limit is ``WHARF_HTTP_CONNECTION_LIMIT`` (poll(), not select(), so more than 1024
  descriptors work).
- **Long-polls** hold a thread each; at most ``WHARF_LONG_POLL_MAX_WAITERS`` wait at once
  (``wharf.operations.notify``), which must stay below ``WHARF_HTTP_THREADS`` so others,
  ``/healthz`` included, always find a free thread.
- **Large bodies.** Because the event loop spools the whole body (to a temporary file past
  a few hundred KiB) before the app sees it, waitress's own limit decides how much a client
  can make it store: a request announcing (or sending, chunked) more than the largest body
  the API accepts (``WHARF_MAX_UPLOAD_SIZE`` or ``WHARF_MAX_BODY_BYTES``, plus
  ``_BODY_SLACK``) is answered 413 before it is read.
- **Proxy headers.** With ``WHARF_TRUSTED_PROXY_COUNT=0`` waitress drops ``Forwarded`` and
  ``X-Forwarded-*``. With a count, ``X-Forwarded-For`` and ``X-Forwarded-Proto`` reach the
  app untouched (waitress does not rewrite ``REMOTE_ADDR`` or the scheme) and the app
  applies the count itself (``api.middleware.AuthMiddleware``), as under ``wharf api``; the
  other proxy headers are still dropped.
"""
from __future__ import annotations

import logging
import resource
import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from wharf.infra.settings import ConfigError, Settings

if TYPE_CHECKING:
    from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

    from waitress.channel import HTTPChannel
    from waitress.server import BaseWSGIServer, MultiSocketServer

    from wharf.infra.stopping import StopSignal
    from wharfd.feed_serving import Adopt

log = logging.getLogger("wharf.serve")
# Descriptors besides client connections: listening socket, trigger, databases, blob files.
_SPARE_FDS = 256
# Added to the largest accepted body for waitress's body limit (request framing, and so
# that the app, not waitress, answers a body just above a limit with its problem+json).
_BODY_SLACK = 1024 * 1024
# Proxy headers the app reads when WHARF_TRUSTED_PROXY_COUNT is set (WSGI environ keys).
_PROXY_HEADERS_USED = ("HTTP_X_FORWARDED_FOR", "HTTP_X_FORWARDED_PROTO")
_PROXY_HEADERS = ("HTTP_FORWARDED", "HTTP_X_FORWARDED_FOR", "HTTP_X_FORWARDED_PROTO",
                  "HTTP_X_FORWARDED_HOST", "HTTP_X_FORWARDED_PORT", "HTTP_X_FORWARDED_BY")


def long_poll_waiters(configured: int | None, threads: int, threads_name: str) -> int:
    """The long-poll limit for a server with ``threads`` request threads: three quarters of
    them when not configured (a waiter holds a thread but no CPU and no database
    connection; the quarter left serves everything else); a configured limit that would
    take every thread is a ConfigError (``threads_name`` says where the thread count comes
    from). The one rule for ``wharf serve`` and ``wharf api``."""
    if configured is None:
        return threads * 3 // 4
    if configured >= threads:
        raise ConfigError(f"WHARF_LONG_POLL_MAX_WAITERS={configured} must be below "
                          f"{threads_name}={threads}: long-polls would take every "
                          f"request thread")
    return configured


def resolve(settings: Settings) -> Settings:
    """Validate the serving settings; an unset long-poll limit becomes three quarters of
    the threads."""
    return settings.replace(long_poll_max_waiters=long_poll_waiters(
        settings.long_poll_max_waiters, settings.http_threads, "WHARF_HTTP_THREADS"))


def create_server(app: WSGIApplication, settings: Settings,
                  feed: Adopt | None = None) -> MultiSocketServer | BaseWSGIServer:
    """A waitress server for ``app`` on ``settings.host:port`` with the guards above
    (``settings`` as :func:`resolve` returned them). ``feed``: where a connection whose
    request is ``GET /api/feed`` goes instead (``wharfd.feed_serving.EmbeddedFeed``: the
    live feed on the same port)."""
    from waitress.server import BaseWSGIServer
    from waitress.server import create_server as waitress_server

    _raise_fd_limit(settings.http_connection_limit + _SPARE_FDS)
    if settings.trusted_proxy_count:
        app = _only_proxy_headers(app, _PROXY_HEADERS_USED)
    if settings.access_log:
        app = access_logged(app)
    server = waitress_server(
        app, host=settings.host, port=settings.port, threads=settings.http_threads,
        ident="wharf", clear_untrusted_proxy_headers=not settings.trusted_proxy_count,
        max_request_body_size=max_request_body_size(settings),
        connection_limit=settings.http_connection_limit,
        asyncore_use_poll=True,
        # Seconds between guard passes (waitress's maintenance); an int for waitress.
        cleanup_interval=1)
    if isinstance(server, BaseWSGIServer):
        _guard(server, settings, feed)
    else:
        # The map holds the dispatchers, one server per address (the stubs say sockets).
        dispatchers: Iterable[object] = (server.map or {}).values()
        for srv in dispatchers:
            if isinstance(srv, BaseWSGIServer):
                _guard(srv, settings, feed)
    return server


def _servers(server: MultiSocketServer | BaseWSGIServer) -> list[BaseWSGIServer]:
    """The listening servers: one, or one per address when the host name has several."""
    from waitress.server import BaseWSGIServer
    if isinstance(server, BaseWSGIServer):
        return [server]
    dispatchers: Iterable[object] = (server.map or {}).values()
    return [srv for srv in dispatchers if isinstance(srv, BaseWSGIServer)]


def listening(server: MultiSocketServer | BaseWSGIServer) -> list[tuple[str, int]]:
    """Every ``(host, port)`` the server listens on, IPv6 hosts in brackets."""
    out = []
    for srv in _servers(server):
        if srv.socket is None:  # closed
            continue
        host, port = srv.socket.getsockname()[:2]
        out.append((f"[{host}]" if ":" in host else str(host), int(port)))
    return out


def serve_until(server: MultiSocketServer | BaseWSGIServer, stop: threading.Event | StopSignal,
                grace: float = 10.0) -> None:
    """Run waitress's event loop until ``stop`` is set, then shut down gracefully.

    Shutdown: stop accepting, let requests already received finish and their responses
    flush (at most ``grace`` seconds), then close every connection (idle keep-alive ones
    included — ``server.close()`` alone leaves them open and the loop running) and the
    request threads. Works for one listening socket and for one per address.
    """
    from waitress import wasyncore
    from waitress.server import BaseWSGIServer
    # The channel map waitress adds connections to (the stubs omit the single server's).
    amap: Any = server._map if isinstance(server, BaseWSGIServer) else server.map  # type: ignore[attr-defined]
    poll = server.adj.asyncore_use_poll
    while not stop.is_set():
        wasyncore.loop(timeout=0.2, map=amap, use_poll=poll, count=1)
    listeners = _servers(server)
    for srv in listeners:  # the listening sockets; the trigger stays for now
        wasyncore.dispatcher.close(srv)
    dispatcher = server.task_dispatcher

    def busy() -> bool:
        if dispatcher.active_count > 0 or dispatcher.queue:
            return True
        return any(getattr(ch, "requests", None) or getattr(ch, "total_outbufs_len", 0)
                   for ch in list(amap.values()))

    deadline = time.monotonic() + grace
    while busy() and time.monotonic() < deadline:
        wasyncore.loop(timeout=0.05, map=amap, use_poll=poll, count=1)
    for channel in list(amap.values()):
        try:
            channel.close()
        except OSError:
            pass
    dispatcher.shutdown(cancel_pending=True, timeout=2)


def max_request_body_size(settings: Settings) -> int:
    """The largest body waitress accepts (and spools) before handing a request to the app."""
    return max(settings.max_upload_size, settings.max_asset_size,
               settings.max_body_bytes) + _BODY_SLACK


def _only_proxy_headers(app: WSGIApplication, kept: tuple[str, ...]) -> WSGIApplication:
    """``app`` seeing, of the proxy headers, only ``kept`` (those the app interprets)."""
    dropped = tuple(h for h in _PROXY_HEADERS if h not in kept)

    def without_other_proxy_headers(environ: WSGIEnvironment,
                                    start_response: StartResponse) -> Iterable[bytes]:
        for key in dropped:
            environ.pop(key, None)
        return app(environ, start_response)

    return without_other_proxy_headers


access_log = logging.getLogger("wharf.access")
_MAX_LOGGED_PATH = 1024


def access_logged(app: WSGIApplication) -> WSGIApplication:
    """``app`` writing one line per request to ``wharf.access`` (``WHARF_ACCESS_LOG``):
    ``GET /api/me 200`` with ``method``, ``path``, ``status``, ``duration_ms`` and
    ``request_id`` as fields (JSON keys, or ``key=value`` in text). The path is
    ``PATH_INFO`` only: the query string is never logged (it may carry a secret). The
    duration is the app's, until it answered: a download's bytes are sent afterwards by
    waitress's event loop (the response iterable is passed through untouched, so
    ``wsgi.file_wrapper`` still hands files to it). A request the app failed on is logged
    500, as waitress answers it."""

    def logged(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        started = time.perf_counter()
        answer: list[Any] = []

        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            answer[:] = (status, headers)
            return start_response(status, headers, exc_info)

        try:
            return app(environ, start)
        finally:
            if access_log.isEnabledFor(logging.INFO):
                _log_access(environ, answer, time.perf_counter() - started)

    return logged


def _log_access(environ: WSGIEnvironment, answer: list[Any], seconds: float) -> None:
    status, headers = answer if answer else ("500", ())
    request_id = next((value for name, value in headers if name.lower() == "x-request-id"),
                      None)
    method = environ.get("REQUEST_METHOD", "")
    path = environ.get("PATH_INFO", "")[:_MAX_LOGGED_PATH]
    code = int(status[:3]) if status[:3].isdigit() else 0
    access_log.info("%s %s %s", method, path, code, extra={
        "method": method, "path": path, "status": code,
        "duration_ms": round(seconds * 1000, 2), "request_id": request_id})


def _guard(srv: BaseWSGIServer, settings: Settings, feed: Adopt | None = None) -> None:
    """Install the guarded channel class and maintenance pass on one waitress server."""
    from waitress.channel import HTTPChannel

    from wharfd.feed_serving import FeedSniffer
    sniffer = FeedSniffer(feed) if feed is not None else None

    class Channel(HTTPChannel):
        """Remembers when the request being received started and how much has arrived.

        A new connection counts as receiving from the start (a client that connects and
        sends nothing is closed like a slow one); between keep-alive requests waitress's
        idle timeout applies."""

        received_bytes = 0

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.receiving_since: float | None = time.monotonic()

        def received(self, data: bytes) -> bool:
            if sniffer is not None:
                data = sniffer.sniff(self, data)
                if not data:
                    return True  # handed to the feed, or too little yet to tell
            before = self.request
            result = super().received(data)
            if self.request is None:  # nothing partial left
                self.receiving_since = None
            elif self.request is not before and (before is not None
                                                 or self.receiving_since is None):
                # The next request began (a new connection keeps its connect time).
                self.receiving_since, self.received_bytes = time.monotonic(), 0
            if self.request is not None:
                self.received_bytes += len(data)
            return result

        # The guard runs inside the server's readable(), while the event loop is building
        # the poll set. Closing a channel there would leave its descriptor registered (or in
        # the ready list) after being freed; the next accept reuses the number at once, and
        # the closed channel's POLLNVAL/readiness would then be dispatched to the new
        # connection, which waitress closes unanswered (the client sees a reset). So the
        # guard only marks the channel, and the channel closes itself when the loop next
        # asks whether it is readable, before its descriptor is registered.
        close_reason: str | None = None

        def readable(self) -> bool:
            if self.close_reason is not None:
                _close(self, self.close_reason)
                return False
            return super().readable()

        def writable(self) -> bool:
            if self.close_reason is not None:
                return False
            return super().writable()

    waitress_maintenance = srv.maintenance

    def maintenance(now: float) -> None:
        waitress_maintenance(now)  # type: ignore[arg-type]  # time.time(); stubs say int
        mono = time.monotonic()
        stalled_since = now - settings.http_send_timeout
        # The stubs declare active_channels as one channel; it is a dict of them.
        channels: dict[int, Channel] = srv.active_channels  # type: ignore[assignment]
        for channel in list(channels.values()):
            if channel.total_outbufs_len and channel.last_activity < stalled_since:
                channel.close_reason = f"sent nothing for {settings.http_send_timeout}s"
                continue
            started = getattr(channel, "receiving_since", None)
            if started is not None and not channel.requests:  # none being served
                allowed: float = settings.http_receive_timeout
                if settings.http_min_receive_rate:
                    allowed += channel.received_bytes / settings.http_min_receive_rate
                if mono - started > allowed:
                    channel.close_reason = "request not received in time"

    srv.channel_class = Channel
    srv.maintenance = maintenance  # type: ignore[method-assign]  # this server's pass only


def _close(channel: HTTPChannel, why: str) -> None:
    """Close from the event loop (from the channel's own ``readable()``, see ``Channel``);
    a request thread blocked writing to it is released (waitress notifies it and its next
    write raises ``ClientDisconnected``)."""
    log.info("closing connection from %s: %s", getattr(channel, "addr", "?"), why)
    try:
        with channel.requests_lock:  # type: ignore[attr-defined]  # missing from the stubs
            if channel.request is not None:
                channel.request.close()
                channel.request = None
        channel.handle_close()
    except OSError:
        pass


def _raise_fd_limit(wanted: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        new = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
        except (ValueError, OSError):
            new = soft
        if new < wanted:
            log.warning("open files limit is %s; WHARF_HTTP_CONNECTION_LIMIT=%s may not be "
                        "reachable", new, wanted - _SPARE_FDS)
