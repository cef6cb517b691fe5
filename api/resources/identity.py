"""Users, login sessions, the current principal and API tokens."""
from __future__ import annotations

import falcon
import msgspec

from api import contract, serialize
from api.middleware import SESSION_COOKIE
from api.resources.operations import SUBMISSION_HEADERS, answer_submission, submission_answers
from api.schemas.identity import (
    ApiTokenCreated,
    ApiTokenList,
    CreateTokenRequest,
    DeleteAccountRequest,
    LoginRequest,
    LoginResult,
    LoginSessionItem,
    LoginSessionList,
    RegisterRequest,
    RegisterResult,
    UserLookupQuery,
    UserRef,
    UserRefList,
)
from api.schemas.identity import Me as MeBody
from storage.db import Database
from storage.enums import AuthMethod, TokenScope
from wharf.audittrail import refusals
from wharf.identity import people
from wharf.identity import service as identity
from wharf.identity import sessions as login_sessions
from wharf.identity.service import Identity
from wharf.infra.clock import iso
from wharf.infra.errors import ProblemCode, Unauthenticated
from wharf.infra.settings import Settings
from wharf.operations.service import Operations

THROTTLED = ("429 `rate_limited` (with `Retry-After` and `details.retry_after`) when a "
             "client or a name makes too many attempts.")


class Users:
    def __init__(self, db: Database, identity: Identity):
        self.db, self.identity = db, identity

    @contract.op(operation_id="registerUser", summary="Register a user", tags=["identity"],
                 description="Creates the user and their personal space. 409 "
                             "`username_taken`; " + THROTTLED,
                 body=RegisterRequest,
                 responses={201: contract.Answer(RegisterResult, "registered",
                                                 headers=("Location",))},
                 problems=(409, 429, 503), auth="none")
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = contract.read_body(req, RegisterRequest)
        user, space = self.identity.register(self.db, req.context.ctx, body.username,
                                             body.password)
        resp.media = RegisterResult(**msgspec.structs.asdict(serialize.user(user)),
                                    personal_space_id=space.id)
        resp.status = falcon.HTTP_201
        resp.location = "/api/me"

    @contract.op(operation_id="findUsers", summary="Find a user by username",
                 tags=["identity"],
                 description="Exact, case-insensitive: the user's id and username only, or "
                             "no items. Every lookup counts: 429 `rate_limited` (with "
                             f"`Retry-After`) past {people.LOOKUPS_PER_WINDOW} in "
                             f"{people.LOOKUP_WINDOW} s per user.",
                 query=UserLookupQuery, responses={200: UserRefList}, problems=(429,))
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        q = contract.read_query(req, UserLookupQuery)
        resp.media = UserRefList(items=[
            UserRef(id=uid, username=name)
            for uid, name in people.find_by_username(self.db, req.context.ctx, q.username)])


class LoginSessions:
    def __init__(self, db: Database, identity: Identity, settings: Settings):
        self.db, self.identity, self.settings = db, identity, settings

    @contract.op(operation_id="login", summary="Log in", tags=["identity"],
                 description="Sets the `wharf_session` cookie (HttpOnly, SameSite=Lax). 401 "
                             "`invalid_credentials`; 403 `account_disabled` (the right "
                             "password of a disabled account: no session); " + THROTTLED,
                 body=LoginRequest,
                 responses={201: contract.Answer(LoginResult, "logged in",
                                                 headers=("Set-Cookie",))},
                 problems=(401, 403, 429, 503), auth="none")
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = contract.read_body(req, LoginRequest)
        try:
            login, cookie, user = self.identity.login(self.db, req.context.ctx,
                                                      body.username, body.password)
        except Unauthenticated as exc:  # a wrong name or password: into the audit trail
            if exc.code == ProblemCode.INVALID_CREDENTIALS:
                refusals.failed_login(self.db, self.settings, req.context.ctx,
                                      body.username)
            raise
        resp.media = LoginResult(session_id=login.id,
                                 expires_at=serialize.timestamp(login.expires_at),
                                 user=serialize.user(user))
        resp.set_cookie(SESSION_COOKIE, cookie, max_age=self.settings.session_ttl, path="/",
                        secure=self.settings.secure_cookies, http_only=True, same_site="Lax")
        resp.status = falcon.HTTP_201

    @contract.op(operation_id="listLoginSessions", summary="My login sessions",
                 tags=["identity"],
                 description="The caller's unexpired login sessions, newest first; "
                             "`current` marks the one this request uses.",
                 responses={200: LoginSessionList})
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        ctx = req.context.ctx
        resp.media = LoginSessionList(items=[
            LoginSessionItem(id=s.id, created_at=serialize.timestamp(s.created_at),
                             expires_at=serialize.timestamp(s.expires_at),
                             last_used_at=iso(s.last_used_at),
                             user_agent=s.user_agent, address=s.address,
                             current=s.id == ctx.principal.session_id)
            for s in login_sessions.list_sessions(self.db, ctx)])


class LoginSession:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="endLoginSession", summary="End one of my login sessions",
                 tags=["identity"],
                 description="Its cookie is refused at once by this API process and by "
                             "every other within `WHARF_AUTH_CACHE_SECONDS`. Ending the "
                             "current session is a logout (its cookie is cleared). 404 for "
                             "another user's session or an unknown one.",
                 responses={204: contract.Answer(None, "ended", headers=("Set-Cookie",))})
    def on_delete(self, req: falcon.Request, resp: falcon.Response, session_id: str) -> None:
        if login_sessions.end_session(self.db, req.context.ctx, session_id):
            resp.unset_cookie(SESSION_COOKIE, path="/")
        resp.status = falcon.HTTP_204


class CurrentLoginSession:
    def __init__(self, db: Database, identity: Identity, settings: Settings):
        self.db, self.identity, self.settings = db, identity, settings

    @contract.op(operation_id="logout", summary="Log out", tags=["identity"],
                 description="Ends the current login session and clears its cookie (401 "
                             "`no_session` when authenticated by a token).",
                 responses={204: contract.Answer(None, "logged out", headers=("Set-Cookie",))})
    def on_delete(self, req: falcon.Request, resp: falcon.Response) -> None:
        self.identity.logout(self.db, req.context.ctx)
        resp.unset_cookie(SESSION_COOKIE, path="/")
        resp.status = falcon.HTTP_204


class Me:
    def __init__(self, db: Database, identity: Identity | None = None,
                 settings: Settings | None = None, operations: Operations | None = None):
        self.db, self.identity, self.settings, self.ops = db, identity, settings, operations

    @contract.op(operation_id="me", summary="The current principal", tags=["identity"],
                 description="The user, their personal space, how they authenticated and "
                             "their scopes (a session has every scope).",
                 responses={200: MeBody})
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        p = req.context.principal
        user, personal = identity.me(self.db, p)
        scopes = sorted(p.scopes) if p.scopes is not None else list(TokenScope)
        resp.media = MeBody(**msgspec.structs.asdict(serialize.user(user)),
                            personal_space_id=personal,
                            auth=AuthMethod.TOKEN if p.token_id else AuthMethod.SESSION,
                            scopes=[TokenScope(x) for x in scopes])


class ApiTokens:
    def __init__(self, db: Database, identity: Identity):
        self.db, self.identity = db, identity

    @contract.op(operation_id="createApiToken", summary="Create an API token",
                 tags=["identity"],
                 description="The secret is in this answer only. A token cannot mint "
                             "tokens (403 `token_cannot_mint`). Quotas above the server's "
                             "(operations pending, submissions per minute) need an "
                             "operator (400 `validation_failed`).",
                 body=CreateTokenRequest, responses={201: ApiTokenCreated})
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = contract.read_body(req, CreateTokenRequest)
        token, raw = self.identity.create_token(
            self.db, req.context.ctx, body.name, [str(x) for x in body.scopes],
            body.expires_in_days, quota_pending_operations=body.quota_pending_operations,
            quota_submissions_per_minute=body.quota_submissions_per_minute)
        resp.media = ApiTokenCreated(**msgspec.structs.asdict(serialize.token(token)),
                                     token=raw)
        resp.status = falcon.HTTP_201

    @contract.op(operation_id="listApiTokens", summary="My active API tokens",
                 tags=["identity"], responses={200: ApiTokenList})
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = ApiTokenList(items=[
            serialize.token(t) for t in self.identity.list_tokens(self.db, req.context.ctx)])


class ApiToken:
    def __init__(self, db: Database, identity: Identity):
        self.db, self.identity = db, identity

    @contract.op(operation_id="revokeApiToken", summary="Revoke an API token",
                 tags=["identity"], responses={204: contract.Answer(None, "revoked")})
    def on_delete(self, req: falcon.Request, resp: falcon.Response, token_id: str) -> None:
        self.identity.revoke_token(self.db, req.context.ctx, token_id)
        resp.status = falcon.HTTP_204


class MeWithDeletion(Me):
    """``/api/me`` where operations run: DELETE deletes the account."""

    @contract.op(operation_id="deleteAccount", summary="Delete my account",
                 tags=["identity"],
                 description="Records a `delete_account` operation: at once the account is "
                             "`deleting`, every login session and API token is revoked and "
                             "every request as it answers 401; a worker then deletes what "
                             "it owns (docs/accounts.md). Re-authentication: `password`, or "
                             "a login session younger than `WHARF_ACCOUNT_REAUTH_SECONDS` "
                             "(403 `reauthentication_required`; " + THROTTLED + ")",
                 headers=SUBMISSION_HEADERS, body=DeleteAccountRequest,
                 responses=submission_answers("Accepted: the account is being deleted."),
                 problems=(403, 429))
    def on_delete(self, req: falcon.Request, resp: falcon.Response) -> None:
        from wharf.accounts import service as accounts
        assert self.identity is not None and self.settings is not None and self.ops is not None
        body = contract.read_body(req, DeleteAccountRequest)
        answer_submission(resp, accounts.submit_deletion(
            self.db, self.ops, self.identity, self.settings, req.context.ctx,
            req.get_header("Idempotency-Key"), body.password))
        resp.unset_cookie(SESSION_COOKIE, path="/")
