"""Changing a password, recovery codes, resetting a forgotten password (issue 40 item 1).

- :func:`change_password` (``PUT /api/me/password``): the current password, then the new one.
  The caller's *other* login sessions end (the one making the request stays: a token caller
  has none, so all of them end); API tokens stay unless ``revoke_tokens``. A wrong current
  password is 401 ``invalid_credentials``, as at login, and counts against
  ``password:user:<user id>`` (``WHARF_LOGIN_MAX_FAILURES``) and ``password:addr:<address>``
  (``WHARF_LOGIN_MAX_FAILURES_PER_ADDRESS``) in ``WHARF_LOGIN_WINDOW``.
- :func:`create_recovery_codes` (``POST /api/me/recovery-codes``): ten new codes, shown once,
  replacing any earlier set. Only a login session may make them (an API token holder could
  otherwise turn a stolen token into the account's password), after re-authentication:
  ``current_password``, or a session at most ``WHARF_ACCOUNT_REAUTH_SECONDS`` old.
- :func:`reset_password` (``POST /api/password-resets``, no authentication): username, one
  unused code and the new password. Each code works once (a conditional ``UPDATE ... WHERE
  used_at IS NULL``: of two concurrent resets with one code exactly one succeeds). Every
  login session of the user ends. A wrong username, a wrong code and a spent one all answer
  401 ``invalid_recovery_code``. Attempts are throttled like logins, under ``reset:`` keys:
  per (username, address), per username, per address.
- :func:`operator_reset` (``wharf user reset-password NAME``): the operator sets a new
  password; every login session ends.

Codes are 16 characters of base32 (80 random bits, shown as ``xxxx-xxxx-xxxx-xxxx``). With
that much entropy a stolen table of SHA-256 digests cannot be searched (2**80 guesses per
code), so a fast digest is enough, unlike passwords, which people choose and which need
argon2. argon2 (checking the current password, hashing the new one) runs outside any write
transaction, as at login. Ending sessions deletes their rows through the ORM, which drops
them from this process's auth cache at once; every other API process reads the database
again within ``WHARF_AUTH_CACHE_SECONDS`` (wharf.identity.cache). Every flow is audited.
"""
from __future__ import annotations

import base64
import hashlib
import re
import secrets
from datetime import timedelta

from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from storage.db import Database
from storage.enums import UserStatus
from storage.models import ApiToken, LoginSession, PasswordCredential, RecoveryCode, User
from storage.results import rowcount
from wharf.identity import throttle
from wharf.identity.service import (
    PASSWORD_MAX,
    PASSWORD_MIN,
    USERNAME_RE,
    Identity,
    account_disabled,
)
from wharf.identity.throttle import Limit
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import Principal, RequestContext, system_principal
from wharf.infra.errors import (
    Conflict,
    Forbidden,
    NotFound,
    ProblemCode,
    Unauthenticated,
    ValidationFailed,
)
from wharf.infra.validation import encodable

#: How many codes one set has.
RECOVERY_CODES = 10
_CODE_BYTES = 10  # 80 bits: 16 base32 characters
_CODE_RE = re.compile(r"[a-z2-7]{16}")


def check_new_password(value: object, field: str) -> str:
    """``value`` as a new password, or 400 ``validation_failed`` naming ``field``."""
    if not isinstance(value, str) or not PASSWORD_MIN <= len(value) <= PASSWORD_MAX:
        raise ValidationFailed(f"{field} must be {PASSWORD_MIN}-{PASSWORD_MAX} characters",
                               details={"field": field})
    if not encodable(value):
        raise ValidationFailed(f"{field} must be valid Unicode text", details={"field": field})
    return value


def new_code() -> str:
    raw = base64.b32encode(secrets.token_bytes(_CODE_BYTES)).decode().lower()
    return "-".join(raw[i:i + 4] for i in range(0, len(raw), 4))


def code_digest(code: object) -> str | None:
    """The stored digest of a code as typed (any case; hyphens and spaces ignored), or None
    when it cannot be a code."""
    if not isinstance(code, str) or len(code) > 64:
        return None
    norm = re.sub(r"[\s-]", "", code).lower()
    if not _CODE_RE.fullmatch(norm):
        return None
    return hashlib.sha256(("recovery:" + norm).encode()).hexdigest()


def _as_user(ctx: RequestContext, user_id: str, username: str) -> RequestContext:
    return RequestContext(principal=Principal(kind="user", user_id=user_id, username=username),
                          request_id=ctx.request_id, client_ip=ctx.client_ip,
                          user_agent=ctx.user_agent)


def end_sessions(session: Session, user_id: str, keep: str | None = None) -> int:
    """Delete ``user_id``'s login sessions but ``keep`` through the ORM (their cached
    principals go at flush and after commit); how many."""
    rows = session.scalars(select(LoginSession).where(LoginSession.user_id == user_id))
    ended = 0
    for row in rows:
        if row.id != keep:
            session.delete(row)
            ended += 1
    session.flush()
    return ended


def revoke_tokens(session: Session, user_id: str) -> int:
    """Revoke every active API token of ``user_id`` through the ORM; how many."""
    now = utcnow()
    tokens = list(session.scalars(select(ApiToken).where(ApiToken.user_id == user_id,
                                                         ApiToken.revoked_at.is_(None))))
    for token in tokens:
        token.revoked_at = now
    session.flush()
    return len(tokens)


def _set_hash(session: Session, user_id: str, password_hash: str) -> None:
    cred = session.get(PasswordCredential, user_id)
    if cred is None:  # a user who never had a password
        session.add(PasswordCredential(user_id=user_id, password_hash=password_hash))
    else:
        cred.password_hash = password_hash
        cred.updated_at = utcnow()


def _verify(identity: Identity, stored: str | None, password: str) -> bool:
    if stored is None:  # no password (yet): as long as a wrong one takes
        identity._burn(password)
        return False
    try:
        return bool(identity.hasher.verify(stored, password))
    except (VerificationError, InvalidHashError):
        return False


def _throttled(db: Database, limits: list[Limit], what: str) -> None:
    with db.read() as session:
        throttle.check(session, limits, what)
    with db.write() as session:
        throttle.take(session, limits, what)


# -- PUT /api/me/password --------------------------------------------------------------
def change_password(identity: Identity, db: Database, ctx: RequestContext, current: object,
                    new: object, *, revoke_api_tokens: bool = False) -> tuple[int, int]:
    """Change the caller's password; (sessions ended, tokens revoked)."""
    user_id = ctx.principal.user_id
    if user_id is None:
        raise Unauthenticated("Only a signed-in user can change their password.")
    new_password = check_new_password(new, "new_password")
    failure = Unauthenticated("Wrong current password.", code=ProblemCode.INVALID_CREDENTIALS)
    st = identity.settings
    limits = [Limit(f"password:user:{user_id}", st.login_max_failures, st.login_window),
              Limit(f"password:addr:{throttle.address_key(ctx.client_ip)}",
                    st.login_max_failures_per_address, st.login_window)]
    _throttled(db, limits, "failed password changes")
    if not isinstance(current, str) or len(current) > PASSWORD_MAX or not encodable(current):
        raise failure
    with db.read() as session:
        stored = session.scalar(select(PasswordCredential.password_hash).where(
            PasswordCredential.user_id == user_id))
    if not _verify(identity, stored, current):
        raise failure
    password_hash = identity.hasher.hash(new_password)
    with db.write() as session:
        changed = rowcount(session.execute(
            update(PasswordCredential)
            .where(PasswordCredential.user_id == user_id,
                   PasswordCredential.password_hash == stored)
            .values(password_hash=password_hash, updated_at=utcnow())))
        if changed != 1:  # changed meanwhile: what was checked is no longer the password
            raise failure
        ended = end_sessions(session, user_id, keep=ctx.principal.session_id)
        revoked = revoke_tokens(session, user_id) if revoke_api_tokens else 0
        audit.record(session, ctx, "user.password_change", "user", user_id,
                     details={"sessions_ended": ended, "tokens_revoked": revoked})
        throttle.release(session, limits)
    return ended, revoked


# -- POST /api/me/recovery-codes -------------------------------------------------------
def create_recovery_codes(identity: Identity, db: Database, ctx: RequestContext,
                          current: object) -> list[str]:
    """A new set of recovery codes for the caller (the old set is gone); shown once."""
    principal = ctx.principal
    user_id = principal.user_id
    if user_id is None:
        raise Unauthenticated("Only a signed-in user can make recovery codes.")
    if principal.session_id is None:
        raise Forbidden("An API token cannot create recovery codes; log in to create them.",
                        code=ProblemCode.TOKEN_CANNOT_MINT)
    _reauthenticated(identity, db, principal, user_id, current)
    codes = [new_code() for _ in range(RECOVERY_CODES)]
    now = utcnow()
    with db.write() as session:
        replaced = rowcount(session.execute(
            delete(RecoveryCode).where(RecoveryCode.user_id == user_id)))
        session.add_all([RecoveryCode(user_id=user_id, digest=code_digest(c), created_at=now)
                         for c in codes])
        session.flush()
        audit.record(session, ctx, "user.recovery_codes", "user", user_id,
                     details={"count": len(codes), "replaced": replaced})
    return codes


def _reauthenticated(identity: Identity, db: Database, principal: Principal, user_id: str,
                     current: object) -> None:
    """The current password, or a login session at most WHARF_ACCOUNT_REAUTH_SECONDS old
    (as for deleting the account)."""
    st = identity.settings
    if current is None:
        with db.read() as session:
            started = session.scalar(select(LoginSession.created_at).where(
                LoginSession.id == principal.session_id))
        if (st.account_reauth_seconds > 0 and started is not None
                and utcnow() - started <= timedelta(seconds=st.account_reauth_seconds)):
            return
        raise Forbidden("Making recovery codes needs the password (`current_password`), or "
                        f"a login session at most {st.account_reauth_seconds} s old.",
                        code=ProblemCode.REAUTHENTICATION_REQUIRED)
    limits = [Limit(f"reauth:user:{user_id}", st.login_max_failures, st.login_window)]
    _throttled(db, limits, "failed re-authentications")
    if not identity.verify_password(db, user_id, current):
        raise Forbidden("Wrong password.", code=ProblemCode.REAUTHENTICATION_REQUIRED)
    with db.write() as session:
        throttle.release(session, limits)


# -- POST /api/password-resets ---------------------------------------------------------
def reset_password(identity: Identity, db: Database, ctx: RequestContext, username: object,
                   code: object, new: object, *, revoke_api_tokens: bool = False) -> str:
    """Spend one recovery code of ``username`` on a new password; the user's id."""
    new_password = check_new_password(new, "new_password")
    failure = Unauthenticated("Wrong username or recovery code.",
                              code=ProblemCode.INVALID_RECOVERY_CODE)
    st = identity.settings
    address = throttle.address_key(ctx.client_ip)
    limits = [Limit(f"reset:addr:{address}", st.login_max_failures_per_address,
                    st.login_window)]
    reset: tuple[str, ...] = ()
    plausible = isinstance(username, str) and USERNAME_RE.fullmatch(username) is not None
    if plausible and isinstance(username, str):
        pair = f"reset:pair:{username.lower()}:{address}"
        reset = (pair,)
        limits[:0] = [Limit(pair, st.login_max_failures, st.login_window),
                      Limit(f"reset:user:{username.lower()}", st.login_max_failures_per_user,
                            st.login_window)]
    _throttled(db, limits, "failed password resets")
    digest = code_digest(code)
    if not plausible or not isinstance(username, str) or digest is None:
        raise failure
    with db.read() as session:
        row = session.execute(
            select(User.id, User.username, User.status, RecoveryCode.id)
            .join(RecoveryCode, RecoveryCode.user_id == User.id)
            .where(User.username_key == username.lower(), RecoveryCode.digest == digest,
                   RecoveryCode.used_at.is_(None))).first()
    if row is None:
        raise failure
    user_id, name, status, code_id = row
    if status == UserStatus.DISABLED:
        raise account_disabled()  # the right code: not spent
    if status != UserStatus.ACTIVE:
        raise failure
    password_hash = identity.hasher.hash(new_password)
    with db.write() as session:
        spent = rowcount(session.execute(
            update(RecoveryCode).where(RecoveryCode.id == code_id,
                                       RecoveryCode.used_at.is_(None))
            .values(used_at=utcnow())))
        user = session.get(User, user_id)
        if spent != 1 or user is None or user.status != UserStatus.ACTIVE:
            raise failure  # spent meanwhile (or the account went): nothing changes
        _set_hash(session, user_id, password_hash)
        ended = end_sessions(session, user_id)
        revoked = revoke_tokens(session, user_id) if revoke_api_tokens else 0
        left = session.scalar(select(RecoveryCode.id).where(
            RecoveryCode.user_id == user_id, RecoveryCode.used_at.is_(None)).limit(1))
        audit.record(session, _as_user(ctx, user_id, name), "user.password_reset", "user",
                     user_id, details={"by": "recovery_code", "sessions_ended": ended,
                                       "tokens_revoked": revoked,
                                       "codes_left": left is not None})
        throttle.release(session, limits, reset=reset)
    return str(user_id)


# -- wharf user reset-password NAME ----------------------------------------------------
def operator_reset(identity: Identity, db: Database, username: str, new: object) -> int:
    """An operator's new password for ``username``; how many login sessions ended.
    NotFound for no such user, Conflict for one being deleted."""
    new_password = check_new_password(new, "password")
    password_hash = identity.hasher.hash(new_password)
    with db.write() as session:
        user = session.scalar(select(User).where(User.username_key == username.lower())
                              .with_for_update())
        if user is None:
            raise NotFound(f"No user {username}.")
        if user.status == UserStatus.DELETING:
            raise Conflict(f"User {username} is being deleted.")
        _set_hash(session, user.id, password_hash)
        ended = end_sessions(session, user.id)
        audit.record(session, RequestContext(principal=system_principal("user-reset-password")),
                     "user.password_reset", "user", user.id,
                     details={"by": "operator", "sessions_ended": ended})
    return ended
