"""``Expect: 100-continue`` answered when the application first reads the body, not before.

A client that sends ``Expect: 100-continue`` (curl and most HTTP libraries do for large
uploads) holds the body back until the server says ``100 Continue``. gunicorn says it as
soon as it has parsed the headers, before the application runs, so an upload that was
going to be refused (412/428 on ``If-Match``, 404, 409, 413, an expired session, ...) was
refused only after the whole body had crossed the network.

Under ``wharf api`` (gunicorn) two pieces move that moment to the first read:

- :func:`defer_100_continue`, gunicorn's ``pre_request`` hook (installed by ``wharf api``
  and by wharfd/gunicorn_conf.py), takes the request's "send 100 Continue" flag away from
  gunicorn;
- :class:`ExpectContinue`, the WSGI wrapper in ``wharfd.wsgi``, sends ``100 Continue`` on
  the first read of ``wsgi.input``. If the application answers without reading the body, no
  ``100 Continue`` is sent and the connection is closed after the response (RFC 9110
  §10.1.1: the client may still be holding the body; it cannot be left in the stream).

The resources do every check that does not need the body before the first read.
``wharf serve`` (waitress) reads the whole body before the application runs; there the
refusal still comes after the upload.
"""
from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

    from _typeshed import OptExcInfo

CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
_deferred = threading.local()  # pre_request and the application share the request thread


def defer_100_continue(worker: object, req: Any) -> None:
    # ``req``: gunicorn's request; its private ``_expected_100_continue`` is not in the stubs.
    """gunicorn ``pre_request`` hook: do not answer ``Expect: 100-continue`` yet."""
    if getattr(req, "_expected_100_continue", False):
        req._expected_100_continue = False
        _deferred.req = req
    elif getattr(_deferred, "req", None) is not req:  # installed twice: keep the first's
        _deferred.req = None


class _ContinueOnRead:
    """``wsgi.input`` that sends ``100 Continue`` before its first read."""

    def __init__(self, stream: IO[bytes], sock: socket.socket) -> None:
        self._stream, self._sock = stream, sock
        self.continued = False

    def _continue(self) -> None:
        if not self.continued:
            self.continued = True
            self._sock.sendall(CONTINUE)

    def read(self, *args: Any) -> bytes:
        self._continue()
        return self._stream.read(*args)

    def readline(self, *args: Any) -> bytes:
        self._continue()
        return self._stream.readline(*args)

    def readlines(self, *args: Any) -> list[bytes]:
        self._continue()
        return self._stream.readlines(*args)

    def __iter__(self) -> Iterator[bytes]:
        self._continue()
        return iter(self._stream)


class ExpectContinue:
    """WSGI wrapper: the deferred ``100 Continue`` goes out on the first body read."""

    def __init__(self, app: WSGIApplication) -> None:
        self.app = app

    def __call__(self, environ: WSGIEnvironment,
                 start_response: StartResponse) -> Iterable[bytes]:
        req = getattr(_deferred, "req", None)
        _deferred.req = None
        sock = environ.get("gunicorn.socket")
        if req is None or sock is None:
            return self.app(environ, start_response)
        reader = _ContinueOnRead(environ["wsgi.input"], sock)
        environ["wsgi.input"] = reader

        def start(status: str, headers: list[tuple[str, str]],
                  exc_info: OptExcInfo | None = None) -> Callable[[bytes], object]:
            if not reader.continued:
                req.must_close = True  # the body was never asked for: do not reuse the stream
            return start_response(status, headers, exc_info)

        return self.app(environ, start)
