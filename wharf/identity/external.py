"""Sign-in with an external provider (issue 40 item 4): OpenID Connect and GitHub.

``start`` records an authorization request (``external_authorizations``: the SHA-256 of a
random ``state``, a ``nonce``, a PKCE verifier, the SHA-256 of a random browser-binding
cookie, the logged-in user who is linking, if any, and where to go afterwards; ten
minutes) and answers the provider's authorization URL (Authlib builds it:
``wharf.identity.providers``). Any API process can finish it: the callback deletes the row
(single use: a replayed ``state`` finds nothing), checks that it is unexpired, for this
provider and from the browser that started it (the cookie: a callback URL sent to someone
else signs nobody in), then exchanges the code with the verifier and validates what the
provider says (ID token incl. ``nonce`` and allowed issuer) outside any transaction.

Then, in one write transaction: the identity ``(provider, subject)`` already linked signs
its user in (a ``disabled`` user: 403 ``account_disabled``); a request started by a
logged-in user links the identity to them (409 ``external_identity_taken`` when it is
another user's, ``provider_already_linked`` when they have another of that provider);
otherwise a new user is registered, without a password, with their personal space, and a
username from the provider made valid and unique (``alice``, ``alice-2``, ...; never an
operator's name or a deleted account's held one). A sign-in gets a login session like
``POST /api/login-sessions``. An identity is unlinked only while another way to log in
remains (a password or another identity; else 409 ``last_login_method``).

Every outcome is audited: ``user.register`` and ``session.login`` with ``details.provider``,
``external_identity.link`` / ``.unlink``, and ``external_login.fail`` (with the reason)
for a request whose ``state`` was found. Failures are 400 ``external_login_failed`` with
``details.reason``: ``state_invalid`` (unknown, used or another provider's),
``state_expired``, ``browser_mismatch``, ``provider_error`` (the provider answered
``error=``; ``details.error``), ``code_missing``, ``token_exchange_failed``,
``id_token_invalid``, ``issuer_not_allowed``, ``nonce_mismatch``, ``userinfo_invalid``,
``account_deleted``. A provider that does not answer is 503 ``service_unavailable``.
"""
from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from storage.db import Database
from storage.enums import SpaceType, UserStatus
from storage.models import (
    ExternalAuthorization,
    ExternalIdentity,
    LoginSession,
    PasswordCredential,
    Space,
    User,
)
from wharf.identity import providers as provider_clients
from wharf.identity import throttle
from wharf.identity.providers import LoginFailed, Profile, Provider
from wharf.identity.service import USERNAME_RE, Identity, account_disabled
from wharf.identity.throttle import Limit
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import Principal, RequestContext
from wharf.infra.errors import Conflict, Forbidden, NotFound, ValidationFailed, WharfError

REQUEST_TTL = timedelta(minutes=10)
#: Sign-ins started per client address (IPv4, IPv6 /64) per window: each writes a row.
STARTS_PER_ADDRESS, STARTS_WINDOW = 60, 600
NEXT_MAX = 2048
_NEXT_RE = re.compile(r"/(?![/\\])[\x21-\x7e]*")  # a same-origin path: not //host, not /\host
_HINT_CHARS = re.compile(r"[^A-Za-z0-9_.-]+")


class ExternalLoginFailed(WharfError):
    code = "external_login_failed"
    title = "External sign-in failed"


def _fail(reason: str, message: str, **details: str) -> ExternalLoginFailed:
    return ExternalLoginFailed(message, details={"reason": reason, **details})


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def safe_next(value: str | None) -> str:
    """``next`` when it is a path of this origin (``/…``, not ``//host`` or ``/\\host``,
    printable ASCII), else ``/``."""
    if value and len(value) <= NEXT_MAX and _NEXT_RE.fullmatch(value):
        return value
    return "/"


def username_candidates(hint: str) -> list[str]:
    """Valid usernames from a provider's name for the account, in order of preference."""
    base = _HINT_CHARS.sub("-", hint or "").strip("-_.")[:56]
    base = re.sub(r"^[^A-Za-z0-9]+", "", base)
    if len(base) < 3:
        base = (base + "-user") if base else "user"
    out = [base] + [f"{base}-{n}" for n in range(2, 10)]
    return [c for c in out if USERNAME_RE.fullmatch(c)]


@dataclass(frozen=True)
class _Pending:
    """What the callback reads of its (deleted) ``external_authorizations`` row."""

    provider: str
    nonce: str
    code_verifier: str
    browser_digest: str
    user_id: str | None
    next_path: str
    expires_at: datetime


_AUDITED_FAILURES = frozenset(("external_login_failed", "account_disabled",
                               "external_identity_taken", "provider_already_linked"))


@dataclass(frozen=True)
class Started:
    url: str             # the provider's authorization URL (302 there)
    browser: str         # the browser-binding cookie's value


@dataclass(frozen=True)
class Finished:
    next_path: str
    user: User
    linked: bool                            # linked to the logged-in starter: no new session
    login: LoginSession | None = None
    cookie: str | None = None               # the new login session's cookie value


class ExternalLogin:
    """The configured providers and the flows over them."""

    def __init__(self, identity: Identity, clients: Mapping[str, Provider] | None = None):
        self.identity = identity
        self.settings = identity.settings
        self.providers: dict[str, Provider] = dict(
            provider_clients.configured(identity.settings) if clients is None else clients)

    def provider(self, name: str) -> Provider:
        found = self.providers.get(name)
        if found is None:
            raise NotFound("No such sign-in provider is configured.")
        return found

    # -- start ---------------------------------------------------------------------------
    def start(self, db: Database, ctx: RequestContext, name: str, redirect_uri: str,
              next_path: str | None) -> Started:
        provider = self.provider(name)
        if ctx.principal.token_id is not None:
            # Linking adds a way into the account: a person who logged in, never a token
            # (a read-only one would otherwise grant its holder the whole account).
            raise Forbidden("Link a provider from a login session, not with an API token.")
        limits = [Limit(f"external:addr:{throttle.address_key(ctx.client_ip)}",
                        STARTS_PER_ADDRESS, STARTS_WINDOW)]
        with db.read() as session:
            throttle.check(session, limits, "sign-ins started from this address")
        state, nonce = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        verifier, browser = secrets.token_urlsafe(48), secrets.token_urlsafe(32)
        url = provider.authorization_url(redirect_uri, state, nonce, verifier)  # discovery
        linking = ctx.principal.user_id if ctx.principal.is_user else None
        now = utcnow()
        with db.write() as session:
            throttle.take(session, limits, "sign-ins started from this address")
            session.execute(delete(ExternalAuthorization)
                            .where(ExternalAuthorization.expires_at <= now))
            row = ExternalAuthorization(
                state_digest=_digest(state), provider=name, nonce=nonce,
                code_verifier=verifier, browser_digest=_digest(browser), user_id=linking,
                next_path=safe_next(next_path), created_at=now, expires_at=now + REQUEST_TTL)
            session.add(row)
            session.flush()
            audit.record(session, ctx, "external_login.start", "external_authorization",
                         None, details={"provider": name, "linking": linking is not None})
        return Started(url=url, browser=browser)

    # -- callback ------------------------------------------------------------------------
    def callback(self, db: Database, ctx: RequestContext, name: str, redirect_uri: str,
                 params: Mapping[str, str], browser: str | None) -> Finished:
        provider = self.provider(name)
        state = params.get("state") or ""
        if not state or len(state) > 512:
            raise _fail("state_invalid", "The sign-in request is unknown or was used.")
        a = ExternalAuthorization
        with db.write() as session:
            # single use, whatever follows: of concurrent callbacks one deletes the row
            found = session.execute(
                delete(a).where(a.state_digest == _digest(state))
                .returning(a.provider, a.nonce, a.code_verifier, a.browser_digest, a.user_id,
                           a.next_path, a.expires_at)).first()
        row = None if found is None else _Pending(*found)
        if row is None or row.provider != name:
            raise _fail("state_invalid", "The sign-in request is unknown or was used.")
        try:
            return self._finish(db, ctx, provider, row, redirect_uri, params, browser)
        except WharfError as exc:
            if exc.code in _AUDITED_FAILURES:
                reason = (exc.details or {}).get("reason", exc.code)
                with db.write() as session:
                    audit.record(session, _actor(ctx, row.user_id), "external_login.fail",
                                 "external_authorization", None,
                                 details={"provider": name, "reason": str(reason)})
            raise

    def _finish(self, db: Database, ctx: RequestContext, provider: Provider,
                row: _Pending, redirect_uri: str, params: Mapping[str, str],
                browser: str | None) -> Finished:
        if row.expires_at <= utcnow():
            raise _fail("state_expired", "The sign-in request expired; start again.")
        if not browser or not hmac.compare_digest(row.browser_digest, _digest(browser)):
            raise _fail("browser_mismatch",
                        "The sign-in was started in another browser; start again.")
        if params.get("error"):
            error = re.sub(r"[^A-Za-z0-9_.-]", "", params["error"])[:64]
            raise _fail("provider_error", "The provider did not sign you in.", error=error)
        code = params.get("code") or ""
        if not code or len(code) > 2048:
            raise _fail("code_missing", "The provider sent no authorization code.")
        try:
            profile = provider.finish(redirect_uri, code, row.code_verifier, row.nonce)
        except LoginFailed as exc:
            raise _fail(exc.reason, exc.message, **exc.details) from None
        if row.user_id is not None:
            return self._link(db, ctx, provider.name, profile, row)
        return self._sign_in(db, ctx, provider.name, profile, row.next_path)

    def _link(self, db: Database, ctx: RequestContext, name: str, profile: Profile,
              row: _Pending) -> Finished:
        try:
            return self._link_once(db, ctx, name, profile, row)
        except IntegrityError:  # linked meanwhile (another callback): look again
            return self._link_once(db, ctx, name, profile, row)

    def _link_once(self, db: Database, ctx: RequestContext, name: str, profile: Profile,
                   row: _Pending) -> Finished:
        assert row.user_id is not None
        with db.write() as session:
            user = session.get(User, row.user_id)
            if user is None or user.status == UserStatus.DELETING:
                raise _fail("account_deleted", "The account that started this is gone.")
            if user.status != UserStatus.ACTIVE:
                raise account_disabled()
            existing = _identity(session, name, profile.subject)
            if existing is not None and existing.user_id != user.id:
                raise Conflict("That account at the provider is linked to another user.",
                               code="external_identity_taken")
            if existing is None:
                if session.scalar(select(ExternalIdentity.id).where(
                        ExternalIdentity.user_id == user.id,
                        ExternalIdentity.provider == name)) is not None:
                    raise Conflict("You have linked another account of this provider; "
                                   "unlink it first.", code="provider_already_linked")
                identity = ExternalIdentity(user_id=user.id, provider=name,
                                            subject=profile.subject,
                                            display_name=profile.display_name)
                session.add(identity)
                session.flush()
                audit.record(session, _actor(ctx, user.id, user.username),
                             "external_identity.link", "external_identity", identity.id,
                             details={"provider": name})
            session.expunge(user)
        return Finished(next_path=row.next_path, user=user, linked=True)

    def _sign_in(self, db: Database, ctx: RequestContext, name: str, profile: Profile,
                 next_path: str) -> Finished:
        candidates = username_candidates(profile.username_hint)
        for attempt in range(len(candidates) + 3):
            try:
                with db.write() as session:
                    existing = _identity(session, name, profile.subject)
                    if existing is not None:
                        user = session.get(User, existing.user_id)
                        assert user is not None
                        if user.status == UserStatus.DELETING:
                            raise _fail("account_deleted", "This account is being deleted.")
                        if user.status != UserStatus.ACTIVE:
                            raise account_disabled()
                    else:
                        user = self._register(session, ctx, name, profile, candidates, attempt)
                    login, cookie = self._new_session(session, ctx, user, name)
                    session.expunge(user)
                    session.expunge(login)
                return Finished(next_path=next_path, user=user, linked=False, login=login,
                                cookie=cookie)
            except IntegrityError:
                continue  # a name or the identity taken meanwhile: look again
        raise Conflict("Could not choose a username; try again.", code="username_taken")

    def _register(self, session: Session, ctx: RequestContext, name: str, profile: Profile,
                  candidates: list[str], attempt: int) -> User:
        username = None
        for candidate in candidates:
            key = candidate.lower()
            if key in self.settings.operators or self.identity.username_held(session, key):
                continue
            if session.scalar(select(User.id).where(User.username_key == key)) is None:
                username = candidate
                break
        if username is None or attempt >= len(candidates):
            username = f"{candidates[0][:50]}-{secrets.token_hex(4)}"
        user = User(username=username, username_key=username.lower())
        session.add(user)
        session.flush()
        space = Space(type=SpaceType.PERSONAL, name=username, owner_id=user.id,
                      public_read=False)
        identity = ExternalIdentity(user_id=user.id, provider=name, subject=profile.subject,
                                    display_name=profile.display_name)
        session.add_all([space, identity])
        session.flush()
        actor = _actor(ctx, user.id, user.username)
        audit.record(session, actor, "user.register", "user", user.id, space_id=space.id,
                     details={"provider": name})
        audit.record(session, actor, "external_identity.link", "external_identity",
                     identity.id, details={"provider": name})
        return user

    def _new_session(self, session: Session, ctx: RequestContext, user: User,
                     name: str) -> tuple[LoginSession, str]:
        """A login session as ``POST /api/login-sessions`` makes one."""
        secret = secrets.token_urlsafe(32)
        now = utcnow()
        login = LoginSession(user_id=user.id, secret_hash=_digest(secret),
                             expires_at=now + timedelta(seconds=self.settings.session_ttl),
                             user_agent=(ctx.user_agent or "")[:200] or None,
                             address=(ctx.client_ip or "")[:64] or None, last_used_at=now)
        session.add(login)
        session.flush()
        audit.record(session, _actor(ctx, user.id, user.username), "session.login",
                     "login_session", login.id, details={"provider": name})
        return login, f"{login.id}.{secret}"

    # -- the user's identities -----------------------------------------------------------
    def list_identities(self, db: Database, ctx: RequestContext) -> list[ExternalIdentity]:
        with db.read() as session:
            return list(session.scalars(
                select(ExternalIdentity).where(ExternalIdentity.user_id == ctx.principal.user_id)
                .order_by(ExternalIdentity.provider)))

    def unlink(self, db: Database, ctx: RequestContext, name: str) -> None:
        if len(name) > 32:
            raise ValidationFailed("No such provider.", details={"field": "provider"})
        user_id = ctx.principal.user_id
        with db.write() as session:
            identity = session.scalar(select(ExternalIdentity).where(
                ExternalIdentity.user_id == user_id, ExternalIdentity.provider == name))
            if identity is None:
                raise NotFound("No identity of that provider is linked.")
            others = session.scalar(select(func.count()).select_from(ExternalIdentity).where(
                ExternalIdentity.user_id == user_id, ExternalIdentity.id != identity.id)) or 0
            password = session.get(PasswordCredential, user_id) is not None
            if not password and not others:
                raise Conflict("This is your only way to log in; set a password or link "
                               "another provider first.", code="last_login_method")
            session.delete(identity)
            audit.record(session, ctx, "external_identity.unlink", "external_identity",
                         identity.id, details={"provider": name})


def _identity(session: Session, provider: str, subject: str) -> ExternalIdentity | None:
    return session.scalar(select(ExternalIdentity).where(
        ExternalIdentity.provider == provider, ExternalIdentity.subject == subject))


def _actor(ctx: RequestContext, user_id: str | None,
           username: str | None = None) -> RequestContext:
    """The request's context acting as ``user_id`` (anonymous: as it came)."""
    if user_id is None:
        return ctx
    return RequestContext(principal=Principal(kind="user", user_id=user_id, username=username),
                          request_id=ctx.request_id, client_ip=ctx.client_ip,
                          user_agent=ctx.user_agent)
