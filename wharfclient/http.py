"""The HTTP session: authentication, retries with backoff, problem+json errors.

Rules:
- A request is retried on a connection error and on 429, 500, 502, 503 and 504, at most
  ``retries`` more times, sleeping ``Retry-After`` when the server sends one (capped at
  MAX_SLEEP), else an exponential backoff with jitter.
- A write's Idempotency-Key is chosen by the caller ONCE (``new_key``) and passed to every
  attempt of that write: the server answers a replay with the first attempt's operation.
- A body that streams (``content`` as a factory) is rebuilt for each attempt, so a retry
  sends the whole body again from its start.
- A write that the server may not safely receive twice (no Idempotency-Key: trash, restore,
  retry, cancel) is sent with ``resend=False``: a connection error after the request may
  have left (anything but a failed connect) and 500/502/504 raise ``AnswerLost`` instead
  of re-sending; the caller re-reads the state to learn whether the write happened
  (``wharfclient.state_changes``).
- Any other 4xx/5xx raises ``ApiError`` built from the problem+json body (title, detail,
  code); a server that cannot be reached after the retries raises ``Unreachable``. An
  error body is read up to ``MAX_ERROR_BODY`` bytes, never whole (a hostile or broken
  server could stream one forever).
"""
from __future__ import annotations

import json
import os
import random
import ssl
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import httpx

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
DEFAULT_RETRIES = 5
BASE_SLEEP = 0.5
MAX_SLEEP = 30.0
#: Seconds without a byte before a read gives up (a long-poll waits less than this).
READ_TIMEOUT = 60.0
CONNECT_TIMEOUT = 10.0
USER_AGENT = "wharf-client/0.1"
#: Bytes of an error answer's body read at most (a problem+json document is far smaller).
MAX_ERROR_BODY = 64 * 1024


def new_key() -> str:
    """A fresh Idempotency-Key (the server accepts ``[A-Za-z0-9_-]{16,200}``)."""
    return uuid.uuid4().hex


class ApiError(Exception):
    """The server answered with an error (problem+json when it could)."""

    def __init__(self, status: int, title: str, detail: str | None, code: str | None):
        self.status, self.title, self.detail, self.code = status, title, detail, code
        super().__init__(self.line())

    def line(self) -> str:
        text = self.title
        if self.detail and self.detail != self.title:
            text += f": {self.detail}"
        return f"{text} ({self.code or self.status})"

    @classmethod
    def from_response(cls, resp: httpx.Response, content: bytes | None = None) -> ApiError:
        """From the answer (its body: ``content`` when given, else ``resp.content``)."""
        try:
            body = json.loads(resp.content if content is None else content)
        except ValueError:
            body = None
        if isinstance(body, dict):
            return cls(resp.status_code, str(body.get("title") or resp.reason_phrase),
                       body.get("detail"), body.get("code"))
        return cls(resp.status_code, resp.reason_phrase or f"HTTP {resp.status_code}",
                   None, None)


def read_capped(resp: httpx.Response, limit: int = MAX_ERROR_BODY) -> bytes:
    """At most ``limit`` bytes of a streamed answer's body; the rest is not read (the
    answer is closed)."""
    body = bytearray()
    try:
        for chunk in resp.iter_bytes():
            body += chunk
            if len(body) >= limit:
                break
    finally:
        resp.close()
    return bytes(body[:limit])


class Unreachable(Exception):
    """No answer from the server after every retry."""


class AnswerLost(Unreachable):
    """A ``resend=False`` write may or may not have happened: its answer never came."""


#: Errors that prove the request never reached the server (safe to send again).
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout)
#: Answers that may come after the server acted (a proxy's 502/504, a crash's 500).
MAYBE_ACTED = frozenset({500, 502, 504})


def proxy_for(url: str) -> str | None:
    """The proxy the environment names for ``url`` (``HTTPS_PROXY``/``HTTP_PROXY``/
    ``ALL_PROXY``, minus ``NO_PROXY``), or None. Read here because the client is built
    with ``trust_env=False`` (which would also read ``~/.netrc``: a token must never be
    replaced by, or sent next to, credentials found there)."""
    parsed = httpx.URL(url)
    if urllib.request.proxy_bypass(parsed.host):
        return None
    proxies = urllib.request.getproxies_environment()
    return proxies.get(parsed.scheme) or proxies.get("all") or None


def _verify() -> ssl.SSLContext | bool:
    """``SSL_CERT_FILE``/``SSL_CERT_DIR`` when set (a private CA), else httpx's default."""
    cafile, capath = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
    if not (cafile or capath):
        return True
    return ssl.create_default_context(cafile=cafile or None, capath=capath or None)


def _retry_after(resp: httpx.Response | None) -> float | None:
    if resp is None:
        return None
    raw = resp.headers.get("Retry-After")
    if raw is None:
        return None
    try:
        return min(max(float(raw), 0.0), MAX_SLEEP)
    except ValueError:
        return None  # an HTTP-date: fall back to the backoff


class WharfClient:
    """One server, one token; ``request`` retries as the module docstring says."""

    def __init__(self, url: str, token: str | None = None, *,
                 retries: int = DEFAULT_RETRIES,
                 on_retry: Callable[[str], None] | None = None):
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        # trust_env=False: no ~/.netrc credentials; the *_PROXY and SSL_CERT_* variables
        # are still honoured, read here (see docs/client.md, "Proxies and ~/.netrc").
        self.http = httpx.Client(base_url=url, headers=headers, follow_redirects=False,
                                 trust_env=False, proxy=proxy_for(url), verify=_verify(),
                                 timeout=httpx.Timeout(READ_TIMEOUT, connect=CONNECT_TIMEOUT))
        self.retries = retries
        self.on_retry = on_retry

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> WharfClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _sleep(self, attempt: int, resp: httpx.Response | None, why: str) -> None:
        delay = _retry_after(resp)
        if delay is None:
            delay = min(MAX_SLEEP, BASE_SLEEP * 2 ** attempt) * (0.5 + random.random() / 2)
        if self.on_retry is not None:
            self.on_retry(f"{why}; retrying in {delay:.1f} s")
        time.sleep(delay)

    def request(self, method: str, path: str, *, json: Any = None,
                params: Mapping[str, Any] | None = None,
                headers: Mapping[str, str] | None = None,
                key: str | None = None,
                content: Callable[[], Iterable[bytes]] | None = None,
                ok: Iterable[int] = (),
                stream: bool = False, resend: bool = True) -> httpx.Response:
        """Send with retries; raise ApiError for an error answer not listed in ``ok``.

        ``key``: the write's Idempotency-Key (the same on every attempt). ``content``: a
        factory of the body's chunks, called once per attempt. ``stream``: the answer's
        body is left unread (the caller closes it). ``resend=False``: raise ``AnswerLost``
        rather than re-send a request the server may have acted on."""
        all_headers = dict(headers or {})
        if key is not None:
            all_headers["Idempotency-Key"] = key
        accepted = set(ok)
        attempt = 0
        while True:
            resp: httpx.Response | None = None
            error_body = b""
            try:
                req = self.http.build_request(
                    method, path, json=json, params=params, headers=all_headers,
                    content=content() if content is not None else None)
                # Always streamed: an error body is read only up to MAX_ERROR_BODY.
                resp = self.http.send(req, stream=True)
                if resp.status_code < 400 or resp.status_code in accepted:
                    if not stream:
                        try:
                            resp.read()
                        finally:
                            resp.close()
                    return resp
                error_body = read_capped(resp)
            except httpx.TransportError as exc:
                if not resend and not isinstance(exc, NOT_SENT):
                    raise AnswerLost(f"{method} {path}: no answer "
                                     f"({str(exc) or type(exc).__name__})") from None
                if attempt >= self.retries:
                    raise Unreachable(f"{self.http.base_url}: {str(exc) or type(exc).__name__}") \
                        from None
                self._sleep(attempt, None, f"{type(exc).__name__}: {exc}")
                attempt += 1
                continue
            if not resend and resp.status_code in MAYBE_ACTED:
                raise AnswerLost(f"{method} {path}: HTTP {resp.status_code}")
            if resp.status_code in RETRY_STATUSES and attempt < self.retries:
                self._sleep(attempt, resp, f"HTTP {resp.status_code}")
                attempt += 1
                continue
            raise ApiError.from_response(resp, error_body)

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        return self.request(method, path, **kwargs).json()
