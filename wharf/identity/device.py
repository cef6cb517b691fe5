"""Device login for the CLI (RFC 8628, the device authorization grant).

1. The client asks for a request (``start``, anonymous, throttled per client address): it
   gets a ``device_code`` (its secret, 256 random bits) and a ``user_code`` (8 letters of
   :data:`ALPHABET`, shown ``XXXX-XXXX``) good for :data:`TTL` seconds.
2. A logged-in user types the user code on Wharf's ``/device`` page and approves or denies
   (``describe``, ``decide``): a login session is required, never an API token (a token
   must not mint credentials, as it cannot mint tokens: 403 ``token_cannot_mint``).
   Lookups by user code are throttled per user. Deciding an expired request answers 409
   ``device_authorization_expired``; deciding one already decided (or used) 409
   ``device_authorization_decided``.
3. The client polls (``poll``) every ``interval`` seconds with its device code: RFC 8628
   section 3.5's ``authorization_pending``, ``slow_down`` (polled sooner than the
   interval: the interval grows by 5 s), ``access_denied``, ``expired_token``; once
   approved, a NEW login session of the approving user, in the answer once (the request
   becomes ``issued``; another poll is ``invalid_grant``). An unknown device code is
   ``invalid_grant`` too.

Only SHA-256 digests of both codes are stored (``device_authorizations``), so any API
process answers any step and a copy of the table lets nobody poll or approve. The user
code is short (about 34.6 bits) and would not resist a search over its digest; it is
digested anyway (it costs nothing) but its real defence is its 10-minute life, the
per-user lookup limit, and that approving one only ever gives the approver's own account
to a device. Expired rows are deleted by the ``delete_expired_credentials`` sweep. Every
step is audited: ``device_authorization.request``, ``.approve``, ``.deny``, ``.issue``.
"""
from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Select, delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from storage.db import Database
from storage.enums import UserStatus
from storage.models import DeviceAuthorization, LoginSession, User
from wharf.identity import throttle
from wharf.identity.throttle import Limit
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import Principal, RequestContext
from wharf.infra.errors import Conflict, Forbidden, NotFound, WharfError
from wharf.infra.ids import new_id
from wharf.infra.validation import clean_label

#: Seconds a request lives (RFC 8628 ``expires_in``).
TTL = 600
#: Seconds a client waits between polls at first (``interval``); ``slow_down`` adds
#: :data:`SLOW_DOWN_STEP`, up to :data:`MAX_INTERVAL`.
INTERVAL = 5
SLOW_DOWN_STEP = 5
MAX_INTERVAL = 60
#: A poll this much sooner than the interval is still on time (clocks of API processes).
POLL_GRACE = timedelta(seconds=1)
#: RFC 8628 section 6.1's example: consonants only (no words, no 0/O or 1/I to confuse).
ALPHABET = "BCDFGHJKLMNPQRSTVWXZ"
USER_CODE_LENGTH = 8
#: New requests per client address per window, and user-code lookups (look, approve,
#: deny) per user per window.
REQUESTS_PER_WINDOW, REQUEST_WINDOW = 10, 60
LOOKUPS_PER_WINDOW, LOOKUP_WINDOW = 20, 60

PENDING, APPROVED, DENIED, ISSUED = "pending", "approved", "denied", "issued"
EXPIRED = "expired"  # what ``state`` says of a request past its time (not stored)


class GrantError(WharfError):
    """A token request RFC 8628 answers with an ``error`` (the problem's ``code``)."""

    code = "invalid_grant"
    title = "Device login"


def _digest(kind: str, code: str) -> str:
    return hashlib.sha256(f"{kind}:{code}".encode()).hexdigest()


def format_user_code(code: str) -> str:
    return f"{code[:4]}-{code[4:]}"


def normalize_user_code(raw: str) -> str | None:
    """The user code as stored (upper case, no dash or spaces), or None when it cannot be
    one."""
    if len(raw) > 32:
        return None
    code = raw.upper().replace("-", "").replace(" ", "")
    if len(code) != USER_CODE_LENGTH or any(c not in ALPHABET for c in code):
        return None
    return code


def state(row: DeviceAuthorization, now: datetime | None = None) -> str:
    """``pending``, ``approved``, ``denied``, ``issued`` or ``expired``."""
    if row.status != ISSUED and row.expires_at <= (now or utcnow()):
        return EXPIRED
    return row.status


@dataclass(frozen=True)
class Started:
    id: str
    device_code: str
    user_code: str  # as shown: XXXX-XXXX
    expires_in: int
    interval: int


def start(db: Database, ctx: RequestContext, client_name: object = None) -> Started:
    """A new request (anonymous; 429 ``rate_limited`` past the per-address limit)."""
    name = None if client_name is None else clean_label(client_name, "client_id",
                                                        max_len=100)
    limits = [Limit(f"device:addr:{throttle.address_key(ctx.client_ip)}",
                    REQUESTS_PER_WINDOW, REQUEST_WINDOW)]
    with db.read() as session:
        throttle.check(session, limits, "device login requests from this address")
    with db.write() as session:
        throttle.take(session, limits, "device login requests from this address")
    device_code = secrets.token_urlsafe(32)
    for attempt in range(5):  # a user code still in use is drawn again
        user_code = "".join(secrets.choice(ALPHABET) for _ in range(USER_CODE_LENGTH))
        now = utcnow()
        try:
            with db.write() as session:
                row = DeviceAuthorization(
                    id=new_id(), device_code_hash=_digest("device-code", device_code),
                    user_code_hash=_digest("user-code", user_code), status=PENDING,
                    created_at=now, expires_at=now + timedelta(seconds=TTL),
                    interval=INTERVAL, client_name=name,
                    user_agent=(ctx.user_agent or "")[:200] or None,
                    address=(ctx.client_ip or "")[:64] or None)
                session.add(row)
                session.flush()
                audit.record(session, ctx, "device_authorization.request",
                             "device_authorization", row.id,
                             details={"client_name": name} if name else None)
        except IntegrityError:
            if attempt == 4:
                raise
            continue
        return Started(row.id, device_code, format_user_code(user_code), TTL, INTERVAL)
    raise AssertionError("unreachable")


def pick_expired(now: datetime) -> Callable[[Session], Select[str]]:
    """The sweep's pick (wharf.retention.sweeps.delete_expired_credentials): requests past
    their time, whatever their state."""
    return lambda s: select(DeviceAuthorization.id).where(DeviceAuthorization.expires_at <= now)


def delete_ids(s: Session, ids: list[str]) -> None:
    s.execute(delete(DeviceAuthorization).where(DeviceAuthorization.id.in_(ids)))


# -- the client's polls ------------------------------------------------------------------
def _locked(db: Database, session: Session, column: object, digest: str
            ) -> DeviceAuthorization | None:
    q = select(DeviceAuthorization).where(column == digest)  # type: ignore[arg-type]
    # PostgreSQL: two polls of one approved request queue here; the second sees ``issued``.
    return session.scalar(q.with_for_update() if db.is_postgres else q)


def _as_user(ctx: RequestContext, user: User) -> RequestContext:
    return RequestContext(principal=Principal(kind="user", user_id=user.id,
                                              username=user.username),
                          request_id=ctx.request_id, client_ip=ctx.client_ip,
                          user_agent=ctx.user_agent)


def poll(db: Database, ctx: RequestContext, device_code: object, *,
         session_ttl: int) -> tuple[LoginSession, str, User]:
    """The login session an approved request yields (its id, its cookie value ``id.secret``
    and its user), once; else :class:`GrantError` with RFC 8628's error as its code."""
    if not isinstance(device_code, str) or not device_code or len(device_code) > 200:
        raise GrantError("device_code is required.", code="invalid_request")
    now = utcnow()
    refusal: WharfError | None = None
    issued: tuple[LoginSession, str, User] | None = None
    with db.write() as session:
        row = _locked(db, session, DeviceAuthorization.device_code_hash,
                      _digest("device-code", device_code))
        if row is None or row.status == ISSUED:
            refusal = GrantError("Unknown or already used device code.",
                                 code="invalid_grant")
        elif row.expires_at <= now:
            refusal = GrantError("The device login request expired; start again.",
                                 code="expired_token")
        elif row.status == DENIED:
            refusal = GrantError("The device login was denied.", code="access_denied")
        elif row.status == PENDING:
            early = (row.last_polled_at is not None and now - row.last_polled_at
                     < timedelta(seconds=row.interval) - POLL_GRACE)
            row.last_polled_at = now  # kept: the refusal is raised after the commit
            if early:
                row.interval = min(row.interval + SLOW_DOWN_STEP, MAX_INTERVAL)
                refusal = GrantError(f"Polled too soon; wait {row.interval} s between polls.",
                                     code="slow_down", details={"interval": row.interval})
            else:
                refusal = GrantError("Not approved yet; poll again.",
                                     code="authorization_pending")
        else:  # approved
            user = session.get(User, row.user_id)
            row.last_polled_at = now
            if user is None or user.status != UserStatus.ACTIVE:
                refusal = GrantError("The approving account cannot log in.",
                                     code="access_denied")
                row.status = DENIED
            else:
                row.status = ISSUED
                secret = secrets.token_urlsafe(32)
                login = LoginSession(
                    id=new_id(), user_id=user.id,
                    secret_hash=hashlib.sha256(secret.encode()).hexdigest(),
                    created_at=now, expires_at=now + timedelta(seconds=session_ttl),
                    user_agent=(ctx.user_agent or "")[:200] or None,
                    address=(ctx.client_ip or "")[:64] or None, last_used_at=now)
                session.add(login)
                session.flush()
                audit.record(session, _as_user(ctx, user), "device_authorization.issue",
                             "device_authorization", row.id,
                             details={"session_id": login.id})
                issued = login, f"{login.id}.{secret}", user
    if refusal is not None:
        raise refusal
    assert issued is not None
    return issued


# -- the approving user ------------------------------------------------------------------
def _require_session(ctx: RequestContext) -> None:
    p = ctx.principal
    if p.token_id is not None or p.session_id is None:
        raise Forbidden("An API token cannot approve device logins; log in.",
                        code="token_cannot_mint")


def _take_lookup(db: Database, ctx: RequestContext) -> None:
    limits = [Limit(f"device:user:{ctx.principal.user_id}", LOOKUPS_PER_WINDOW,
                    LOOKUP_WINDOW)]
    with db.read() as session:
        throttle.check(session, limits, "device code lookups")
    with db.write() as session:
        throttle.take(session, limits, "device code lookups")


def _not_found() -> NotFound:
    return NotFound("No such device login request (check the code).")


def describe(db: Database, ctx: RequestContext, user_code: str) -> DeviceAuthorization:
    """The request a user code names, for its approval page (a login session only)."""
    _require_session(ctx)
    _take_lookup(db, ctx)
    code = normalize_user_code(user_code)
    if code is None:
        raise _not_found()
    with db.read() as session:
        row = session.scalar(select(DeviceAuthorization).where(
            DeviceAuthorization.user_code_hash == _digest("user-code", code)))
        if row is None:
            raise _not_found()
        return row


def decide(db: Database, ctx: RequestContext, user_code: str,
           approve: bool) -> DeviceAuthorization:
    """Approve or deny the request (a login session only; once)."""
    _require_session(ctx)
    _take_lookup(db, ctx)
    code = normalize_user_code(user_code)
    if code is None:
        raise _not_found()
    now = utcnow()
    with db.write() as session:
        row = _locked(db, session, DeviceAuthorization.user_code_hash,
                      _digest("user-code", code))
        if row is None:
            raise _not_found()
        if state(row, now) == EXPIRED:
            raise Conflict("This device login request expired; start again on the device.",
                           code="device_authorization_expired")
        if row.status != PENDING:
            raise Conflict("This device login request was already decided.",
                           code="device_authorization_decided")
        row.status = APPROVED if approve else DENIED
        row.user_id = ctx.principal.user_id
        row.decided_at = now
        audit.record(session, ctx, "device_authorization.approve" if approve
                     else "device_authorization.deny", "device_authorization", row.id)
        return row
