"""Users, password credentials, login sessions and API tokens.

Passwords are hashed with argon2id (``argon2.PasswordHasher``). Login sessions and API
tokens store only an id/prefix and the SHA-256 of a random secret; the raw secret goes
to the client once. Unknown user and wrong password fail the same way, in similar time
(an unknown user is verified against a dummy hash).

Password hashing runs outside any write transaction, and failed logins and registrations
are rate limited (``wharf.identity.throttle``). API tokens are minted only by a logged-in user,
never by another token.

Each API process keeps the principals of recently used tokens and session cookies
(:class:`wharf.identity.cache.AuthCache`, keyed by the SHA-256 of the credential) for at most
``WHARF_AUTH_CACHE_SECONDS``: revoking a token or logging out drops the entry in the
process that did it (at once, and again after commit), every other process reads the
database again within that bound. A cached credential past its ``expires_at`` is refused
at that instant; a successful read from the database refreshes ``last_used_at`` when due.
Any change to an API token, login session or user row made through the ORM in this process
(revocation, logout, an expiry moved, a user removed: whatever code does it) drops the
credentials concerned from every cache of the process, at flush and again after commit.
Only ``active`` users authenticate: a user being deleted (``deleting``, wharf.accounts.service)
is refused by the credential lookups and by login. A ``disabled`` user (``wharf user disable``,
wharf.accounts.disabling) holding a valid credential or the right password is answered 403
``account_disabled`` (never cached: their next request reads the database again).
"""
from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from datetime import datetime, timedelta
from functools import cached_property
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import bindparam, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from storage.db import Database, retry_lost
from storage.enums import SpaceType, TokenScope, UserStatus, values
from storage.models import (
    ApiToken,
    DeletionRecord,
    LoginSession,
    PasswordCredential,
    Space,
    User,
)
from wharf.identity import throttle
from wharf.identity.cache import _CACHES as _CACHES  # a test detaches a process's cache
from wharf.identity.cache import AuthCache
from wharf.identity.throttle import Limit
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import Principal, RequestContext
from wharf.infra.errors import Conflict, Forbidden, NotFound, Unauthenticated, ValidationFailed
from wharf.infra.ids import is_id, new_id
from wharf.infra.operators import OPERATOR_TOKEN_SCOPES, is_operator
from wharf.infra.setting_readers import USERNAME_PATTERN
from wharf.infra.settings import Settings
from wharf.infra.validation import clean_label, encodable
from wharf.operations.quotas import check_token_quota

USERNAME_RE = re.compile(USERNAME_PATTERN)  # used with fullmatch
PASSWORD_MIN, PASSWORD_MAX = 12, 1024
TOKEN_SCOPES = values(TokenScope)
TOKEN_PREFIX = "wharf_"
TOKEN_PREFIX_RE = re.compile(r"[0-9a-f]{12}")  # secrets.token_hex(6)
LAST_USED_RESOLUTION = timedelta(seconds=60)


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def username_digest(username_key: str) -> str:
    """What the deletion ledger keeps of a deleted account's (lower-cased) username."""
    return _digest("username:" + username_key)


#: ``users.status`` of a user who may authenticate (``deleting``: never again).
USER_ACTIVE = UserStatus.ACTIVE
#: Statuses the credential lookups find: a disabled user's valid credential is told so.
_FOUND = (UserStatus.ACTIVE, UserStatus.DISABLED)


def account_disabled() -> Forbidden:
    return Forbidden("This account is disabled; ask an operator.", code="account_disabled")

_T = ApiToken.__table__
_U = User.__table__
_L = LoginSession.__table__
_TOKEN_LOOKUP = (select(_T.c.id, _T.c.secret_hash, _T.c.scopes, _T.c.expires_at,
                        _T.c.revoked_at, _T.c.last_used_at, _U.c.id, _U.c.username,
                        _T.c.quota_pending_operations, _T.c.quota_submissions_per_minute,
                        _U.c.status)
                 .join(_U, _U.c.id == _T.c.user_id).where(_T.c.prefix == bindparam("prefix"),
                                                          _U.c.status.in_(_FOUND)))
_SESSION_LOOKUP = (select(_L.c.id, _L.c.secret_hash, _L.c.expires_at, _U.c.id, _U.c.username,
                          _L.c.last_used_at, _U.c.status)
                   .join(_U, _U.c.id == _L.c.user_id).where(_L.c.id == bindparam("sid"),
                                                            _U.c.status.in_(_FOUND)))
_TOUCH_SESSION = update(_L).where(_L.c.id == bindparam("sid")).values(
    last_used_at=bindparam("now", type_=_L.c.last_used_at.type))
_TOUCH = update(_T).where(_T.c.id == bindparam("tid")).values(
    last_used_at=bindparam("now", type_=_T.c.last_used_at.type))


def me(db: Database, principal: Principal) -> tuple[User, str]:
    """The principal's user and the id of their personal space (one read transaction)."""
    with db.read() as session:
        user = session.get(User, principal.user_id)
        assert user is not None
        personal = session.scalar(select(Space.id).where(Space.owner_id == user.id,
                                                         Space.type == SpaceType.PERSONAL))
        assert personal is not None  # every user has one
        return user, personal


def _address(ctx: RequestContext) -> str:
    """The client's throttle bucket (IPv6 by /64); audit rows keep the full address."""
    return throttle.address_key(ctx.client_ip)


def _as_user(ctx: RequestContext, user: User) -> RequestContext:
    """The request's context, acting as ``user`` (for the audit row of register/login)."""
    return RequestContext(principal=Principal(kind="user", user_id=user.id,
                                              username=user.username),
                          request_id=ctx.request_id, client_ip=ctx.client_ip,
                          user_agent=ctx.user_agent)


class Identity:
    """Identity operations; holds the password hasher configured from settings."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.hasher = PasswordHasher(time_cost=settings.argon2_time_cost,
                                     memory_cost=settings.argon2_memory_cost,
                                     parallelism=settings.argon2_parallelism)
        self.auth_cache = AuthCache(settings.auth_cache_seconds)

    # -- users -------------------------------------------------------------------------
    # Registration and login take a Database, not a session: argon2 runs between short
    # transactions, never inside a write transaction (on SQLite that would hold the one
    # write lock for the whole hash and make every other writer wait).
    def register(self, db: Database, ctx: RequestContext, username: object,
                 password: object) -> tuple[User, Space]:
        if not isinstance(username, str) or not USERNAME_RE.fullmatch(username):
            raise ValidationFailed(
                "username must be 3-64 characters of letters, digits, '_', '.', '-', "
                "starting with a letter or digit", details={"field": "username"})
        if not isinstance(password, str) or not PASSWORD_MIN <= len(password) <= PASSWORD_MAX:
            raise ValidationFailed(f"password must be {PASSWORD_MIN}-{PASSWORD_MAX} characters",
                                   details={"field": "password"})
        if not encodable(password):
            raise ValidationFailed("password must be valid Unicode text",
                                   details={"field": "password"})
        key = username.lower()
        limits = [Limit(f"register:addr:{_address(ctx)}", self.settings.register_per_address,
                        self.settings.register_window)]
        taken = Conflict("That username is taken.", code="username_taken")
        with db.read() as session:
            throttle.check(session, limits, "registrations from this address")
        with db.write() as session:
            throttle.take(session, limits, "registrations from this address")
        if key in self.settings.operators:
            # An operator's name is claimed before its account exists only by a mistake of
            # order; whoever registered it first would operate (docs/operations.md,
            # "Operators": register the account, then list it). Answered as taken, so the
            # answer does not tell operators' names from others'.
            raise taken
        with db.read() as session:
            if session.scalar(select(User.id).where(User.username_key == key)):
                raise taken
            if self.username_held(session, key):
                raise taken
        password_hash = self.hasher.hash(password)
        with db.write() as session:
            user = User(id=new_id(), username=username, username_key=key)
            space = Space(id=new_id(), type=SpaceType.PERSONAL, name=username, owner_id=user.id,
                          public_read=False)
            session.add(user)
            try:
                session.flush()
            except IntegrityError:
                raise taken from None
            session.add(PasswordCredential(user_id=user.id, password_hash=password_hash))
            session.add(space)
            session.flush()
            audit.record(session, _as_user(ctx, user), "user.register", "user", user.id,
                         space_id=space.id)
        return user, space

    def username_held(self, session: Session, key: str) -> bool:
        """Whether a deleted account's username ``key`` (lower-cased) is still held
        (``WHARF_USERNAME_RETENTION`` after its deletion was requested)."""
        cutoff = utcnow() - timedelta(seconds=self.settings.username_retention)
        return session.scalar(select(DeletionRecord.id).where(
            DeletionRecord.username_digest == username_digest(key),
            DeletionRecord.recorded_at > cutoff).limit(1)) is not None

    def verify_password(self, db: Database, user_id: str, password: object) -> bool:
        """Whether ``password`` is ``user_id``'s (re-authentication; argon2 runs outside
        any transaction)."""
        if not isinstance(password, str) or len(password) > PASSWORD_MAX \
                or not encodable(password):
            return False
        _ = self._dummy_hash  # before any branch (see login)
        with db.read() as session:
            stored = session.scalar(select(PasswordCredential.password_hash).where(
                PasswordCredential.user_id == user_id))
        if stored is None:
            self._burn(password)
            return False
        try:
            return bool(self.hasher.verify(stored, password))
        except (VerificationError, InvalidHashError):
            return False

    # -- login sessions ----------------------------------------------------------------
    def login(self, db: Database, ctx: RequestContext, username: object,
              password: object) -> tuple[LoginSession, str, User]:
        failure = Unauthenticated("Wrong username or password.", code="invalid_credentials")
        _ = self._dummy_hash  # before any branch: a first unknown name costs no more
        plausible = (isinstance(username, str) and isinstance(password, str)
                     and USERNAME_RE.fullmatch(username) is not None
                     and len(password) <= PASSWORD_MAX and encodable(password))
        st = self.settings
        address = _address(ctx)
        limits = [Limit(f"login:addr:{address}", st.login_max_failures_per_address,
                        st.login_window)]
        reset: tuple[str, ...] = ()
        if plausible and isinstance(username, str):
            # The strict limit is per (username, address): guesses from elsewhere do not
            # lock the real user out of their own address; the per-username limit across
            # all addresses is much higher and stops distributed guessing.
            pair_key = f"login:pair:{username.lower()}:{address}"
            reset = (pair_key,)
            limits[:0] = [Limit(pair_key, st.login_max_failures, st.login_window),
                          Limit(f"login:user:{username.lower()}",
                                st.login_max_failures_per_user, st.login_window)]
        # Every attempt takes a slot (so concurrent guesses cannot overshoot the limit);
        # a successful login gives its slots back.
        with db.read() as session:
            throttle.check(session, limits, "failed logins")
        with db.write() as session:
            throttle.take(session, limits, "failed logins")
        if not plausible or not isinstance(username, str) or not isinstance(password, str):
            # No such user can exist: fail the same way, in the same time, without a query.
            self._burn(password if isinstance(password, str) and encodable(password) else "")
            raise failure
        with db.read() as session:
            row = session.execute(
                select(User.id, PasswordCredential.password_hash, User.status)
                .join(PasswordCredential, PasswordCredential.user_id == User.id)
                .where(User.username_key == username.lower(),
                       User.status.in_(_FOUND))).first()
        if row is None:
            self._burn(password)
            raise failure
        user_id, stored, status = row
        try:
            self.hasher.verify(stored, password)
        except (VerificationError, InvalidHashError):
            raise failure from None
        if status != USER_ACTIVE:
            raise account_disabled()  # the right password: no session
        rehashed = self.hasher.hash(password) if self.hasher.check_needs_rehash(stored) else None
        secret = secrets.token_urlsafe(32)
        with db.write() as session:
            user = session.get(User, user_id)
            if user is None or user.status != USER_ACTIVE:
                raise failure
            if rehashed is not None:
                cred = session.get(PasswordCredential, user.id)
                if cred is not None and cred.password_hash == stored:
                    cred.password_hash = rehashed
                    cred.updated_at = utcnow()
            now = utcnow()
            login = LoginSession(id=new_id(), user_id=user.id, secret_hash=_digest(secret),
                                 expires_at=now + timedelta(seconds=st.session_ttl),
                                 user_agent=(ctx.user_agent or "")[:200] or None,
                                 address=(ctx.client_ip or "")[:64] or None, last_used_at=now)
            session.add(login)
            session.flush()
            audit.record(session, _as_user(ctx, user), "session.login", "login_session",
                         login.id)
            throttle.release(session, limits, reset=reset)
        return login, f"{login.id}.{secret}", user

    @cached_property  # made at first use, not at each process start (0.14 CPU-s by default)
    def _dummy_hash(self) -> str:  # verified when there is no such user
        return self.hasher.hash(secrets.token_urlsafe(16))

    def _burn(self, password: str) -> None:
        try:
            self.hasher.verify(self._dummy_hash, password or "x")
        except (VerificationError, InvalidHashError):
            pass

    def logout(self, db: Database, ctx: RequestContext) -> None:
        """End the caller's login session (401 ``no_session`` for a token)."""
        sid = ctx.principal.session_id
        if sid is None:
            raise Unauthenticated("Not logged in with a session.", code="no_session")
        with db.write() as session:
            row = session.get(LoginSession, sid)
            if row is not None:
                session.delete(row)  # cached principals go at flush and after commit
                audit.record(session, ctx, "session.logout", "login_session", sid)

    def _cookie_lookup(self, session: Session,
                       raw: str | None) -> tuple[Principal, datetime, bool] | None:
        """The principal of a session cookie, the session's expiry and whether its
        ``last_used_at`` is due (one Core read)."""
        if not raw or "." not in raw or len(raw) > 200:
            return None
        sid, secret = raw.split(".", 1)
        if not is_id(sid):
            return None
        row = session.connection().execute(_SESSION_LOOKUP, {"sid": sid}).first()
        if row is None:
            return None
        login_id, secret_hash, expires_at, user_id, username, last_used_at, status = row
        if not hmac.compare_digest(secret_hash, _digest(secret)):
            return None
        now = utcnow()
        if expires_at <= now:
            return None
        if status != USER_ACTIVE:
            raise account_disabled()
        due = last_used_at is None or now - last_used_at > LAST_USED_RESOLUTION
        return Principal(kind="user", user_id=user_id, username=username,
                         session_id=login_id), expires_at, due

    def cookie_principal(self, db: Database, raw: str) -> Principal | None:
        """The principal of a session cookie: from this process's cache, else read."""
        key = "c:" + _digest(raw)
        cache = self.auth_cache
        hit = cache.get(key)
        if hit is not None:
            return hit
        begun = cache.begin()

        def read() -> tuple[Principal, datetime, bool] | None:
            with db.read() as session:
                return self._cookie_lookup(session, raw)

        found = retry_lost(read)
        if found is None:
            return None
        principal, expires_at, due = found
        sid = principal.session_id
        assert sid is not None
        if due:  # at most once a minute per session, and only on a cache miss
            def touch() -> None:
                with db.write() as session:
                    session.connection().execute(_TOUCH_SESSION, {"sid": sid, "now": utcnow()})

            retry_lost(touch)
        cache.put(key, principal, sid, expires_at, begun)
        return principal

    # -- API tokens --------------------------------------------------------------------
    def create_token(self, db: Database, ctx: RequestContext, name: object, scopes: object,
                     expires_in_days: object, *, quota_pending_operations: object = None,
                     quota_submissions_per_minute: object = None) -> tuple[ApiToken, str]:
        """The new token and its secret (shown once), in one write transaction."""
        with db.write() as session:
            return self._create_token(session, ctx, name, scopes, expires_in_days,
                                      quota_pending_operations=quota_pending_operations,
                                      quota_submissions_per_minute=quota_submissions_per_minute)

    def _create_token(self, session: Session, ctx: RequestContext, name: object,
                      scopes: object, expires_in_days: object, *,
                      quota_pending_operations: object,
                      quota_submissions_per_minute: object) -> tuple[ApiToken, str]:
        # Minting is credential management: it needs a login session (a person who knew
        # the password). A token that could mint would hand out credentials that outlive
        # its own expiry and survive its revocation.
        if ctx.principal.token_id is not None:
            raise Forbidden("An API token cannot create API tokens; log in to create one.",
                            code="token_cannot_mint")
        name = clean_label(name, "name", max_len=100)
        if (not isinstance(scopes, list) or not scopes
                or any(s not in TOKEN_SCOPES for s in scopes)):
            raise ValidationFailed("scopes must be a non-empty list of: read, write",
                                   details={"field": "scopes"})
        if expires_in_days is not None and (
                isinstance(expires_in_days, bool) or not isinstance(expires_in_days, int)
                or not 1 <= expires_in_days <= 3650):
            raise ValidationFailed("expires_in_days must be an integer from 1 to 3650",
                                   details={"field": "expires_in_days"})
        # Only a token that will itself act as its operator's (every scope: see
        # wharf.infra.operators) keeps a looser quota at request time, so only such a token
        # may be minted with one (a narrower one would be held to the server's silently).
        operator = (is_operator(self.settings, ctx.principal)
                    and set(scopes) >= OPERATOR_TOKEN_SCOPES)
        quota_pending = check_token_quota(self.settings, "quota_pending_operations",
                                          quota_pending_operations, operator=operator)
        quota_per_minute = check_token_quota(self.settings, "quota_submissions_per_minute",
                                             quota_submissions_per_minute, operator=operator)
        prefix = secrets.token_hex(6)
        secret = secrets.token_urlsafe(32)
        token = ApiToken(
            id=new_id(), user_id=ctx.principal.user_id, name=name, prefix=prefix,
            secret_hash=_digest(secret), scopes=" ".join(s for s in TOKEN_SCOPES if s in scopes),
            expires_at=(utcnow() + timedelta(days=expires_in_days)) if expires_in_days else None,
            quota_pending_operations=quota_pending,
            quota_submissions_per_minute=quota_per_minute)
        session.add(token)
        session.flush()
        details: dict[str, Any] = {"scopes": token.scopes}
        if quota_pending is not None:
            details["quota_pending_operations"] = quota_pending
        if quota_per_minute is not None:
            details["quota_submissions_per_minute"] = quota_per_minute
        audit.record(session, ctx, "api_token.create", "api_token", token.id, details=details)
        return token, f"{TOKEN_PREFIX}{prefix}_{secret}"

    def list_tokens(self, db: Database, ctx: RequestContext) -> list[ApiToken]:
        with db.read() as session:
            return list(session.scalars(
                select(ApiToken).where(ApiToken.user_id == ctx.principal.user_id,
                                       ApiToken.revoked_at.is_(None))
                .order_by(ApiToken.id)))

    def revoke_token(self, db: Database, ctx: RequestContext, token_id: str) -> None:
        with db.write() as session:
            token = session.get(ApiToken, token_id) if is_id(token_id) else None
            if token is None or token.user_id != ctx.principal.user_id or token.revoked_at:
                raise NotFound("No such API token.")
            token.revoked_at = utcnow()  # cached principals go at flush and after commit
            audit.record(session, ctx, "api_token.revoke", "api_token", token.id)

    def _token_lookup(self, session: Session,
                      raw: str | None) -> tuple[Principal, bool, datetime | None] | None:
        """The principal of an API token, whether ``last_used_at`` is due, and the token's
        expiry (one Core read)."""
        if not raw or not raw.startswith(TOKEN_PREFIX) or len(raw) > 200:
            return None
        body = raw[len(TOKEN_PREFIX):]
        if "_" not in body:
            return None
        prefix, secret = body.split("_", 1)
        if not TOKEN_PREFIX_RE.fullmatch(prefix) or not secret:
            return None
        row = session.connection().execute(_TOKEN_LOOKUP, {"prefix": prefix}).first()
        if row is None:
            return None
        token_id, secret_hash, scopes, expires_at, revoked_at, last_used_at, user_id, \
            username, quota_pending, quota_per_minute, status = row
        if not hmac.compare_digest(secret_hash, _digest(secret)):
            return None
        now = utcnow()
        if revoked_at is not None or (expires_at is not None and expires_at <= now):
            return None
        if status != USER_ACTIVE:
            raise account_disabled()
        due = last_used_at is None or now - last_used_at > LAST_USED_RESOLUTION
        return (Principal(kind="user", user_id=user_id, username=username,
                          scopes=frozenset(scopes.split()), token_id=token_id,
                          quota_pending=quota_pending, quota_per_minute=quota_per_minute),
                due, expires_at)

    def token_principal(self, db: Database, raw: str) -> Principal | None:
        """The principal of an API token: from this process's cache, else read (and
        ``last_used_at`` refreshed when due)."""
        key = "t:" + _digest(raw)
        cache = self.auth_cache
        hit = cache.get(key)
        if hit is not None:
            return hit
        begun = cache.begin()

        def read() -> tuple[Principal, bool, datetime | None] | None:
            with db.read() as session:
                return self._token_lookup(session, raw)

        found = retry_lost(read)
        if found is None:
            return None
        principal, due, expires_at = found
        token_id = principal.token_id
        assert token_id is not None
        if due:
            def touch() -> None:
                with db.write() as session:
                    self.touch_token(session, token_id)

            retry_lost(touch)
        cache.put(key, principal, token_id, expires_at, begun)
        return principal

    def touch_token(self, session: Session, token_id: str) -> None:
        session.connection().execute(_TOUCH, {"tid": token_id, "now": utcnow()})
