"""Request id, authentication and body-size limits, applied to every request."""
from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import falcon

from api.contract import Auth
from storage.db import Database
from wharf.identity.service import TOKEN_PREFIX, Identity
from wharf.infra.context import ANONYMOUS, RequestContext
from wharf.infra.errors import Forbidden, PayloadTooLarge, Unauthenticated
from wharf.infra.setting_readers import origin
from wharf.observability import logctx, metrics

log = logging.getLogger("wharf.api")

REQUEST_ID_RE = re.compile(r"[A-Za-z0-9._:-]{1,128}")  # used with fullmatch
SESSION_COOKIE = "wharf_session"
#: ``wharf_http_responses_total`` by status class (1xx..5xx), bound once, not per request.
_RESPONSES = tuple(metrics.HTTP_RESPONSES.labels(f"{c}xx") for c in range(1, 6))
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def _parse_origin(value: str) -> str | None:
    """An ``Origin`` header, serialised (scheme://host[:port]); None for "null" and junk."""
    if value == "null":
        return None
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:  # e.g. "http://[" (a malformed IPv6 literal) or a bad port
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return origin(parts.scheme, parts.hostname, port)


def _trusted_hop(value: str | None, proxies: int) -> str | None:
    """The entry the outermost of ``proxies`` trusted proxies appended to a comma-separated
    forwarding header (``X-Forwarded-For``, ``X-Forwarded-Proto``), counted from the right;
    None when the header has fewer entries than there are proxies."""
    hops = [hop.strip() for hop in (value or "").split(",") if hop.strip()]
    return hops[-proxies] if len(hops) >= proxies else None


class RequestIdMiddleware:
    """The request's id (the client's ``X-Request-Id`` when well-formed, else a new one),
    echoed in the response and bound to the log context of the request's thread from its
    start to its end (``wharf.observability.logctx``: every line the request writes carries it)."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        from wharf.infra.ids import new_id
        rid = req.get_header("X-Request-Id")
        if not rid or not REQUEST_ID_RE.fullmatch(rid):
            rid = new_id()
        req.context.request_id = rid
        resp.set_header("X-Request-Id", rid)
        logctx.bind_request(rid)

    def process_response(self, req: falcon.Request, resp: falcon.Response, resource: object,
                         req_succeeded: bool) -> None:
        # First in the list, so its process_response runs last: the error handlers' lines
        # and the other middleware's are written before this.
        _RESPONSES[resp.status_code // 100 - 1].inc()
        logctx.clear_request()


class BodyLimitMiddleware:
    """Refuse bodies above ``max_bytes`` up front (streamed uploads set their own limit per
    route, ``max_body_bytes``)."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes

    def process_resource(self, req: falcon.Request, resp: falcon.Response, resource: object,
                         params: dict[str, Any]) -> None:
        limit = getattr(resource, "max_body_bytes", self.max_bytes)
        length = req.content_length
        if length is not None and length > limit:
            raise PayloadTooLarge(f"The body is larger than {limit} bytes.")
        req.context.max_body_bytes = limit


def _anonymous_allowed(modes: Mapping[str, Auth | None], method: str) -> bool:
    """``modes``: the route's declared auth by HTTP method (None: undeclared)."""
    declared = modes.get(method)
    if declared is not None:
        return declared != "required"
    # A method the resource does not implement (405): visitors learn that only where
    # every method is open to them.
    return bool(modes) and all(m is not None and m != "required" for m in modes.values())


def _credential_free(auth_modes: Mapping[str, Mapping[str, Auth | None]]) -> frozenset[str]:
    """Paths whose every responder reads no credentials (``none`` or ``metrics``): literal
    templates only, as they are matched against the path before routing."""
    return frozenset(
        template for template, modes in auth_modes.items()
        if "{" not in template and modes
        and all(m in ("none", "metrics") for m in modes.values()))


class AuthMiddleware:
    """Resolve the principal from ``Authorization: Bearer`` (an API token or a login
    session's credential) or the session cookie.

    Each responder's contract (``api.contract.op(auth=...)``) says who may call it;
    ``auth_modes`` (``api.contract.auth_modes`` of the mounted app) has them by URI
    template and method. ``required`` needs a user, ``optional`` serves visitors too,
    ``none`` and ``metrics`` read no credentials at all: on a path whose every responder
    is one of those (the probes, the document, registration and login) the
    ``Authorization`` header and the cookie are not looked at; on the monitoring endpoints
    the bearer token is ``WHARF_METRICS_TOKEN``, checked by the resource.
    Token scopes are enforced here: safe methods need ``read``, the rest ``write``.
    Principals come through the identity's per-process cache (``WHARF_AUTH_CACHE_SECONDS``,
    ``wharf.identity.service.AuthCache``).
    """

    def __init__(self, db: Database, identity: Identity, trusted_proxy_count: int = 0,
                 allowed_origins: tuple[str, ...] = (), *,
                 auth_modes: Mapping[str, Mapping[str, Auth | None]]):
        self.db = db
        self.identity = identity
        self.trusted_proxy_count = trusted_proxy_count
        self.allowed_origins = frozenset(allowed_origins)
        self.auth_modes = {template: dict(modes) for template, modes in auth_modes.items()}
        self.credential_free_paths = _credential_free(self.auth_modes)

    def _own_origin(self, req: falcon.Request) -> str | None:
        """The origin this request was addressed to: scheme, host and port.

        The scheme is the WSGI one, or with trusted proxies the ``X-Forwarded-Proto`` hop
        the outermost trusted proxy recorded (a proxy that terminates TLS), counted from
        the right like ``X-Forwarded-For``: entries further left were sent by the client.
        (Falcon's ``forwarded_scheme`` takes a client's ``Forwarded`` header first and
        the whole ``X-Forwarded-Proto`` list as one value.) Host and port come from ``Host``.
        """
        scheme = req.scheme
        if self.trusted_proxy_count:
            hop = _trusted_hop(req.get_header("X-Forwarded-Proto"), self.trusted_proxy_count)
            if hop is not None:
                scheme = hop.lower()
        host_header = req.get_header("Host")
        try:
            if host_header:
                parts = urlsplit("//" + host_header)
                host, port = parts.hostname, parts.port
            else:
                host, port = req.host, req.port
        except ValueError:
            return None
        if not host or scheme not in ("http", "https"):
            return None
        return origin(scheme, host, port)

    def _same_origin(self, req: falcon.Request, header: str) -> bool:
        sent = _parse_origin(header)
        return sent is not None and (sent in self.allowed_origins
                                     or sent == self._own_origin(req))

    def client_ip(self, req: falcon.Request) -> str | None:
        """The client address, trusting only the last ``trusted_proxy_count`` hops.

        Built from ``X-Forwarded-For`` plus the peer address, counted from the right:
        each trusted proxy appends the address it saw. Entries further left were sent by
        the client and prove nothing. (Falcon's ``access_route`` would prefer a
        ``Forwarded`` header the client may have set itself, and drops the peer address
        when it repeats the last entry, which shifts the count.)
        """
        peer = req.remote_addr
        if not self.trusted_proxy_count:
            return peer
        hop = _trusted_hop(req.get_header("X-Forwarded-For"), self.trusted_proxy_count)
        # fewer hops than proxies: the request did not come through them
        return peer if hop is None else hop[:64]

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.context.principal = ANONYMOUS
        req.context.auth_via = None
        auth = req.get_header("Authorization")
        if req.path in self.credential_free_paths:
            pass
        elif auth:
            scheme, _, value = auth.partition(" ")
            if scheme.lower() != "bearer" or not value.strip():
                raise Unauthenticated("Use 'Authorization: Bearer <token>'.", code="invalid_token")
            value = value.strip()
            # An API token (``wharf_…``), or a login session's credential (the cookie's
            # value: what a device login hands the CLI, wharf.identity.device). Never
            # sent by a browser on its own, so no cross-origin check applies to either.
            principal = (self.identity.token_principal(self.db, value)
                         if value.startswith(TOKEN_PREFIX)
                         else self.identity.cookie_principal(self.db, value))
            if principal is None:
                raise Unauthenticated("The token is unknown, expired or revoked.",
                                      code="invalid_token")
            req.context.principal = principal
            req.context.auth_via = "token"
        else:
            cookies = req.get_cookie_values(SESSION_COOKIE)
            if cookies and cookies[0]:
                by_cookie = self.identity.cookie_principal(self.db, cookies[0])
                if by_cookie is not None:
                    req.context.principal = by_cookie
                    req.context.auth_via = "cookie"
        if req.context.principal.user_id is not None:
            logctx.bind_user(req.context.principal.user_id)
        req.context.ctx = RequestContext(
            principal=req.context.principal, request_id=req.context.request_id,
            client_ip=self.client_ip(req), user_agent=req.user_agent)

    def process_resource(self, req: falcon.Request, resp: falcon.Response, resource: object,
                         params: dict[str, Any]) -> None:
        if resource is None:
            return
        principal = req.context.principal
        if not principal.is_user:
            modes = self.auth_modes.get(req.uri_template or "", {})
            if _anonymous_allowed(modes, req.method):
                return
            raise Unauthenticated("Log in or send an API token.")
        if principal.token_id is not None:
            needed = "read" if req.method in SAFE_METHODS else "write"
            if not principal.has_scope(needed):
                raise Forbidden(f"This token lacks the '{needed}' scope.",
                                code="insufficient_scope")
        elif req.context.auth_via == "cookie" and req.method not in SAFE_METHODS:
            origin = req.get_header("Origin")
            # Cookie-authenticated writes must come from our own origin (CSRF defence on
            # top of SameSite=Lax and the JSON content type).
            # "null" is what sandboxed frames and opaque origins send: not our own page.
            # Scheme, host and port must all match (or the origin is in
            # WHARF_ALLOWED_ORIGINS): http://host:9999 is another site than http://host:8080.
            if origin and not self._same_origin(req, origin):
                raise Forbidden("Cross-origin request refused.", code="cross_origin")
