"""Sign-in with an external provider (OpenID Connect, GitHub): the browser's redirects and
the user's linked identities (wharf.identity.external)."""
from __future__ import annotations

import falcon

from api import contract, serialize
from api.middleware import SESSION_COOKIE
from api.schemas.external_login import (
    CallbackQuery,
    ExternalIdentity,
    ExternalIdentityList,
    StartQuery,
)
from storage.db import Database
from wharf.identity.external import REQUEST_TTL, ExternalLogin
from wharf.infra.settings import Settings

#: The cookie that binds a sign-in request to the browser that started it.
BROWSER_COOKIE = "wharf_external_login"
COOKIE_PATH = "/api/auth/"
FAILURES = ("400 `external_login_failed` with `details.reason`: `state_invalid` (unknown, "
            "used or another provider's `state`), `state_expired` (10 minutes), "
            "`browser_mismatch`, `provider_error` (`details.error`), `code_missing`, "
            "`token_exchange_failed`, `id_token_invalid`, `issuer_not_allowed`, "
            "`nonce_mismatch`, `userinfo_invalid`, `account_deleted`; 403 "
            "`account_disabled`; 409 `external_identity_taken` (linked to another user) or "
            "`provider_already_linked`; 503 when the provider does not answer.")


def _redirect_uri(settings: Settings, req: falcon.Request, provider: str) -> str:
    base = settings.auth_redirect_base_url or req.prefix
    return f"{base.rstrip('/')}/api/auth/{provider}/callback"


class ExternalLoginStart:
    def __init__(self, db: Database, external: ExternalLogin, settings: Settings):
        self.db, self.external, self.settings = db, external, settings

    @contract.op(operation_id="startExternalLogin", summary="Sign in with a provider",
                 tags=["identity"],
                 description="Redirects (302) the browser to the provider (`oidc`, "
                             "`github`: those configured) with PKCE (S256), `state` and, for "
                             "OpenID Connect, `nonce`, and sets a short-lived cookie that "
                             "binds the request to this browser. With a login session, the "
                             "identity is linked to that user instead of signing in (403 "
                             "`forbidden` with an API token: linking needs a login "
                             "session). 404 for a provider not configured; 429 "
                             "`rate_limited`; 503 when the provider's discovery document "
                             "does not come.",
                 query=StartQuery,
                 responses={302: contract.Answer(None, "to the provider",
                                                 headers=("Location", "Set-Cookie"))},
                 problems=(403, 404, 429, 503), auth="optional")
    def on_get(self, req: falcon.Request, resp: falcon.Response, provider: str) -> None:
        q = contract.read_query(req, StartQuery)
        started = self.external.start(self.db, req.context.ctx, provider,
                                      _redirect_uri(self.settings, req, provider), q.next)
        resp.set_cookie(BROWSER_COOKIE, started.browser,
                        max_age=int(REQUEST_TTL.total_seconds()), path=COOKIE_PATH,
                        secure=self.settings.secure_cookies, http_only=True, same_site="Lax")
        resp.status = falcon.HTTP_302
        resp.location = started.url
        resp.set_header("Cache-Control", "no-store")


class ExternalLoginCallback:
    def __init__(self, db: Database, external: ExternalLogin, settings: Settings):
        self.db, self.external, self.settings = db, external, settings

    @contract.op(operation_id="finishExternalLogin", summary="The provider's redirect back",
                 tags=["identity"],
                 description="Finishes the request `state` names (once): exchanges the code "
                             "with the PKCE verifier, checks the ID token (signature, "
                             "issuer allowed, audience, expiry, nonce), then signs the "
                             "user in (a first sign-in registers a user, without a password,"
                             " named after the provider's username, made unique) and sets "
                             "`wharf_session`, or links the identity to the user who started"
                             " it. Redirects (302) to the start's `next`. " + FAILURES,
                 query=CallbackQuery,
                 responses={302: contract.Answer(None, "signed in or linked",
                                                 headers=("Location", "Set-Cookie"))},
                 problems=(400, 403, 404, 409, 503), auth="none")
    def on_get(self, req: falcon.Request, resp: falcon.Response, provider: str) -> None:
        contract.read_query(req, CallbackQuery)
        params = {k: req.get_param(k) or "" for k in ("state", "code", "error")}
        browser = req.get_cookie_values(BROWSER_COOKIE)
        resp.unset_cookie(BROWSER_COOKIE, path=COOKIE_PATH)
        done = self.external.callback(self.db, req.context.ctx, provider,
                                      _redirect_uri(self.settings, req, provider), params,
                                      browser[0] if browser else None)
        if done.cookie is not None:
            resp.set_cookie(SESSION_COOKIE, done.cookie, max_age=self.settings.session_ttl,
                            path="/", secure=self.settings.secure_cookies, http_only=True,
                            same_site="Lax")
        resp.status = falcon.HTTP_302
        resp.location = done.next_path
        resp.set_header("Cache-Control", "no-store")


class MyExternalIdentities:
    def __init__(self, db: Database, external: ExternalLogin):
        self.db, self.external = db, external

    @contract.op(operation_id="listExternalIdentities", summary="My linked identities",
                 tags=["identity"], responses={200: ExternalIdentityList})
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = ExternalIdentityList(
            items=[ExternalIdentity(id=i.id, provider=i.provider, subject=i.subject,
                                    display_name=i.display_name,
                                    created_at=serialize.timestamp(i.created_at))
                   for i in self.external.list_identities(self.db, req.context.ctx)],
            providers=sorted(self.external.providers))


class MyExternalIdentity:
    def __init__(self, db: Database, external: ExternalLogin):
        self.db, self.external = db, external

    @contract.op(operation_id="unlinkExternalIdentity", summary="Unlink a provider",
                 tags=["identity"],
                 description="Only while another way to log in remains (a password or "
                             "another linked identity): else 409 `last_login_method`. 404 "
                             "when none of that provider is linked.",
                 responses={204: contract.Answer(None, "unlinked")}, problems=(409,))
    def on_delete(self, req: falcon.Request, resp: falcon.Response, provider: str) -> None:
        self.external.unlink(self.db, req.context.ctx, provider)
        resp.status = falcon.HTTP_204
