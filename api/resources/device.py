"""Device login for the CLI (RFC 8628; wharf.identity.device): the request, the token
endpoint, the approval page and its JSON routes.

The two OAuth endpoints take JSON or, as RFC 8628 clients send them, form-encoded
parameters, and answer ``Cache-Control: no-store``. Their errors are problem+json like
every other answer, with the RFC's error as both the stable ``code`` and an ``error``
member (what OAuth client libraries read), status 400 (RFC 6749 section 5.2) but for
throttling (429) and a disabled approver (403, ``error`` ``access_denied``).
"""
from __future__ import annotations

import re
from importlib import resources
from typing import Any, TypeVar
from urllib.parse import parse_qsl, quote

import falcon
import msgspec

from api import contract, device_page, serialize
from api.dashboard_page import CSP
from api.errors import write_problem
from api.schemas.device import (
    DEVICE_GRANT,
    DeviceAuthorization,
    DeviceAuthorizationRequest,
    DeviceAuthorizationStarted,
    DeviceTokenIssued,
    DeviceTokenRequest,
)
from storage.db import Database
from storage.models import DeviceAuthorization as Row
from wharf.identity import device
from wharf.infra.errors import MalformedRequest, PayloadTooLarge, ValidationFailed, WharfError
from wharf.infra.settings import Settings

T = TypeVar("T")
FORM = "application/x-www-form-urlencoded"
HTML = "text/html; charset=utf-8"
TOKEN_PATH = "/api/device-authorizations/token"
PAGE_PATH = "/device"
_HOST = re.compile(r"[A-Za-z0-9.\-]+(:\d{1,5})?|\[[0-9A-Fa-f:.]+\](:\d{1,5})?")
FORM_NOTE = (" Parameters as JSON or form-encoded (`application/x-www-form-urlencoded`, as "
             "RFC 8628 clients send them).")


def _params(req: falcon.Request, type_: type[T]) -> T:
    """The body as ``type_``: JSON (hardened, api.body) or form-encoded (each name once,
    RFC 6749 section 3.2)."""
    ctype = (req.content_type or "").split(";")[0].strip().lower()
    if ctype != FORM:
        return contract.read_body(req, type_)
    limit = getattr(req.context, "max_body_bytes", 64 * 1024)
    raw = req.bounded_stream.read(limit + 1)
    if len(raw) > limit:
        raise PayloadTooLarge(f"The body is larger than {limit} bytes.")
    try:
        pairs = parse_qsl(raw.decode("utf-8"), keep_blank_values=True, max_num_fields=20,
                          errors="strict")
    except (UnicodeDecodeError, ValueError) as exc:
        raise MalformedRequest(f"The form body cannot be read: {str(exc)[:100]}") from None
    data: dict[str, Any] = {}
    for name, value in pairs:
        if name in data:
            raise ValidationFailed(f"{name[:100]}: given more than once",
                                   details={"field": name[:100]})
        data[name] = value
    try:
        return msgspec.convert(data, type_)
    except msgspec.ValidationError as exc:
        raise contract.validation_failed(exc, type_) from None


def _base(req: falcon.Request, settings: Settings) -> str:
    """This server's origin as the client addressed it (the scheme a trusted proxy
    recorded in ``X-Forwarded-Proto``); "" (relative URIs) for a Host header that is no
    host."""
    scheme = req.scheme
    if settings.trusted_proxy_count:
        hops = [h.strip() for h in (req.get_header("X-Forwarded-Proto") or "").split(",")
                if h.strip()]
        if len(hops) >= settings.trusted_proxy_count:
            scheme = hops[-settings.trusted_proxy_count].lower()
    host = req.get_header("Host") or ""
    if scheme not in ("http", "https") or not _HOST.fullmatch(host):
        return ""
    return f"{scheme}://{host}"


def _oauth_error(req: falcon.Request, resp: falcon.Response, ex: WharfError) -> None:
    """A refusal of an OAuth endpoint: the problem, plus RFC 6749's ``error``."""
    if isinstance(ex, device.GrantError):
        error = ex.code
    elif ex.status == 403:
        error = "access_denied"
    elif ex.status == 429:
        error = "slow_down"
    else:
        error = "invalid_request"
    extra: dict[str, Any] = {"error": error}
    if ex.details:
        extra["details"] = ex.details
    write_problem(req, resp, ex.status, code=ex.code, title=ex.title, detail=ex.message,
                  extra=extra, headers={**ex.headers, "Cache-Control": "no-store"})


class DeviceAuthorizations:
    def __init__(self, db: Database, settings: Settings):
        self.db, self.settings = db, settings

    @contract.op(operation_id="startDeviceLogin", summary="Start a device login (RFC 8628)",
                 tags=["identity"],
                 description="For a client without a browser (`wharf-client login`): show "
                             "`user_code` and `verification_uri` to the person, then poll "
                             "`token_endpoint` every `interval` seconds. The request lives "
                             f"{device.TTL} s and is used once. 429 `rate_limited` past "
                             f"{device.REQUESTS_PER_WINDOW} requests in "
                             f"{device.REQUEST_WINDOW} s per client address." + FORM_NOTE,
                 body=DeviceAuthorizationRequest,
                 responses={200: DeviceAuthorizationStarted}, problems=(429,), auth="none")
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.cache_control = ["no-store"]
        try:
            body = _params(req, DeviceAuthorizationRequest)
            started = device.start(self.db, req.context.ctx, body.client_id)
        except WharfError as ex:
            _oauth_error(req, resp, ex)
            return
        base = _base(req, self.settings)
        page = base + PAGE_PATH
        resp.media = DeviceAuthorizationStarted(
            device_code=started.device_code, user_code=started.user_code,
            verification_uri=page,
            verification_uri_complete=f"{page}?user_code={quote(started.user_code)}",
            expires_in=started.expires_in, interval=started.interval,
            token_endpoint=base + TOKEN_PATH)


class DeviceToken:
    def __init__(self, db: Database, settings: Settings):
        self.db, self.settings = db, settings

    @contract.op(operation_id="pollDeviceLogin", summary="Poll a device login (RFC 8628)",
                 tags=["identity"],
                 description=f"`grant_type` `{DEVICE_GRANT}` and the `device_code`. Until "
                             "the person decides: 400 `authorization_pending`, or "
                             "`slow_down` when polled sooner than the interval (which grows "
                             "by 5 s, `details.interval`); then 400 `access_denied` or the "
                             "new login session, once (another poll: `invalid_grant`, as "
                             "for an unknown code); 400 `expired_token` after 10 minutes. "
                             "Errors also carry RFC 6749's `error` member (= `code`; "
                             "`invalid_request` for a malformed request)." + FORM_NOTE,
                 body=DeviceTokenRequest, responses={200: DeviceTokenIssued},
                 problems=(403,), auth="none")
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.cache_control = ["no-store"]
        try:
            body = _params(req, DeviceTokenRequest)
            if body.grant_type != DEVICE_GRANT:
                raise device.GrantError(f"grant_type must be {DEVICE_GRANT}.",
                                        code="unsupported_grant_type")
            login, secret, user = device.poll(self.db, req.context.ctx, body.device_code,
                                              session_ttl=self.settings.session_ttl)
        except WharfError as ex:
            _oauth_error(req, resp, ex)
            return
        resp.media = DeviceTokenIssued(
            access_token=secret, token_type="Bearer", expires_in=self.settings.session_ttl,
            scope="read write", session_id=login.id, user=serialize.user(user))


def _answer(resp: falcon.Response, row: Row, user_code: str) -> None:
    code = device.normalize_user_code(user_code)
    resp.media = DeviceAuthorization(
        user_code=device.format_user_code(code) if code else user_code,
        status=device.state(row),  # type: ignore[arg-type]
        created_at=serialize.timestamp(row.created_at),
        expires_at=serialize.timestamp(row.expires_at), client_name=row.client_name,
        user_agent=row.user_agent, address=row.address)
    resp.cache_control = ["no-store"]


SESSION_ONLY = (" A login session only: an API token gets 403 `token_cannot_mint`. "
                f"Throttled per user ({device.LOOKUPS_PER_WINDOW} lookups, approvals and "
                f"denials in {device.LOOKUP_WINDOW} s; 429 `rate_limited`). 404 for an "
                "unknown code.")


class DeviceAuthorizationItem:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="getDeviceLogin", summary="What a device login asks",
                 tags=["identity"],
                 description="The request a user code names: when it was made, by which "
                             "client, from where, and its status." + SESSION_ONLY,
                 responses={200: DeviceAuthorization}, problems=(429,))
    def on_get(self, req: falcon.Request, resp: falcon.Response, user_code: str) -> None:
        _answer(resp, device.describe(self.db, req.context.ctx, user_code), user_code)


class DeviceAuthorizationDecision:
    def __init__(self, db: Database, approve: bool):
        self.db, self.approve = db, approve

    def on_post(self, req: falcon.Request, resp: falcon.Response, user_code: str) -> None:
        row = device.decide(self.db, req.context.ctx, user_code, self.approve)
        _answer(resp, row, user_code)


class DeviceApprove(DeviceAuthorizationDecision):
    @contract.op(operation_id="approveDeviceLogin", summary="Approve a device login",
                 tags=["identity"],
                 description="The device's next poll receives a new login session of the "
                             "caller's. 409 `device_authorization_expired` after 10 "
                             "minutes, `device_authorization_decided` when already approved "
                             "or denied." + SESSION_ONLY,
                 responses={200: DeviceAuthorization}, problems=(409, 429))
    def on_post(self, req: falcon.Request, resp: falcon.Response, user_code: str) -> None:
        super().on_post(req, resp, user_code)


class DeviceDeny(DeviceAuthorizationDecision):
    @contract.op(operation_id="denyDeviceLogin", summary="Deny a device login",
                 tags=["identity"],
                 description="The device's next poll gets `access_denied`. 409 as for "
                             "approving." + SESSION_ONLY,
                 responses={200: DeviceAuthorization}, problems=(409, 429))
    def on_post(self, req: falcon.Request, resp: falcon.Response, user_code: str) -> None:
        super().on_post(req, resp, user_code)


class DevicePage:
    @contract.op(operation_id="deviceLoginPage", summary="The device login page (HTML)",
                 tags=["identity"],
                 description="Where a person enters a device's user code and approves or "
                             "denies it (a login form for anonymous visitors). "
                             "`?user_code=` fills the code in.",
                 responses={200: contract.Answer(schema={"type": "string"},
                                                 content_type="text/html",
                                                 description="the page")},
                 auth="optional")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.set_header("Content-Security-Policy", CSP)
        resp.set_header("X-Content-Type-Options", "nosniff")
        resp.set_header("Referrer-Policy", "no-referrer")
        resp.cache_control = ["no-store"]
        resp.content_type = HTML
        p = req.context.principal
        resp.text = device_page.page(p.username if p.is_user else None,
                                     req.get_param("user_code") or "")


class DeviceScript:
    def __init__(self) -> None:
        self.body = resources.files("api").joinpath("static", "device.js").read_bytes()

    @contract.op(operation_id="deviceLoginScript", summary="The device login page's script",
                 tags=["identity"],
                 responses={200: contract.Answer(schema={"type": "string"},
                                                 content_type="text/javascript",
                                                 description="the script")},
                 auth="none")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.data = self.body
        resp.content_type = "text/javascript"
        resp.set_header("X-Content-Type-Options", "nosniff")
        resp.cache_control = ["no-cache"]


def mount(app: contract.App, db: Database, settings: Settings) -> None:
    app.add_route("/api/device-authorizations", DeviceAuthorizations(db, settings))
    app.add_route(TOKEN_PATH, DeviceToken(db, settings))
    app.add_route("/api/device-authorizations/{user_code}", DeviceAuthorizationItem(db))
    app.add_route("/api/device-authorizations/{user_code}/approve", DeviceApprove(db, True))
    app.add_route("/api/device-authorizations/{user_code}/deny", DeviceDeny(db, False))
    app.add_route(PAGE_PATH, DevicePage())
    app.add_route("/device.js", DeviceScript())

