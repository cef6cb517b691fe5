"""The external sign-in providers, spoken to with Authlib (never a hand-written OAuth
client): :class:`OpenIDProvider` (OpenID Connect, any issuer, endpoints and keys by
discovery) and :class:`GitHubProvider` (GitHub's OAuth 2.0 and its ``/user`` API).

Both use the authorization-code flow with PKCE (S256) and ``state``; OpenID Connect also
sends a ``nonce``, and its ID token is checked (signature by the issuer's JWKS, ``iss`` in
the allowed issuers, ``aud``/``azp``, ``exp``/``iat``, ``nonce``, ``at_hash``) with
Authlib's :class:`authlib.oidc.core.CodeIDToken` over joserfc (Authlib's own JOSE library).
A provider's answer that is wrong is :class:`~wharf.identity.providers.LoginFailed` (its
``reason`` becomes the problem's ``details.reason``); one that does not come is
:class:`~wharf.infra.errors.Unavailable`.

The discovery document and the keys are cached per process for an hour; an ID token
signed with a key id not in the cache fetches the keys again once.

Imported only where a provider is configured (``providers.configured``): Authlib, joserfc,
cryptography's X.509 and requests were about 6 % of an API process's imports.
"""
from __future__ import annotations

import hmac
import threading
import time
from typing import Any

import requests
from authlib.integrations.base_client.errors import OAuthError
from authlib.integrations.requests_client import OAuth2Session
from authlib.oidc.core import CodeIDToken
from joserfc import jwt
from joserfc.errors import InvalidKeyIdError, JoseError
from joserfc.jwk import KeySet
from joserfc.jws import JWSRegistry

from wharf.identity.providers import LoginFailed, Profile
from wharf.infra.errors import Unavailable
from wharf.infra.settings import Settings

CACHE_SECONDS = 3600.0
LEEWAY = 120  # seconds of clock skew allowed on exp/iat


def _unreachable(what: str) -> Unavailable:
    return Unavailable(f"The sign-in provider did not answer ({what}); try again later.",
                       retry_after=5)


def _get_json(url: str, timeout: float, what: str) -> dict[str, Any]:
    try:
        resp = requests.get(url, timeout=timeout, headers={"Accept": "application/json"})
        resp.raise_for_status()
        body = resp.json()
    except (requests.RequestException, ValueError):
        raise _unreachable(what) from None
    if not isinstance(body, dict):
        raise _unreachable(what)
    return body


def _token(oauth: OAuth2Session, url: str, code: str, code_verifier: str,
           timeout: float) -> dict[str, Any]:
    try:
        token = oauth.fetch_token(url, grant_type="authorization_code", code=code,
                                  code_verifier=code_verifier, timeout=timeout)
    except OAuthError as exc:
        raise LoginFailed("token_exchange_failed",
                          "The provider refused the authorization code.",
                          error=str(exc.error or "")[:64]) from None
    except (requests.RequestException, ValueError):
        raise _unreachable("token endpoint") from None
    if not isinstance(token, dict) or not token.get("access_token"):
        raise LoginFailed("token_exchange_failed", "The provider sent no access token.")
    return dict(token)


class OpenIDProvider:
    """OpenID Connect with ``WHARF_OIDC_ISSUER`` (discovery) and its client."""

    name = "oidc"

    def __init__(self, settings: Settings):
        assert settings.oidc_issuer and settings.oidc_client_id
        self.issuer = settings.oidc_issuer
        self.client_id = settings.oidc_client_id
        self.client_secret = settings.oidc_client_secret or ""
        self.allowed = settings.oidc_allowed_issuers or (self.issuer,)
        self.timeout = settings.external_login_timeout
        self._lock = threading.Lock()
        self._metadata: tuple[float, dict[str, Any]] | None = None
        self._keys: tuple[float, KeySet] | None = None

    def _session(self, redirect_uri: str) -> OAuth2Session:
        return OAuth2Session(self.client_id, self.client_secret, scope="openid profile email",
                             redirect_uri=redirect_uri, code_challenge_method="S256",
                             token_endpoint_auth_method="client_secret_basic")

    def metadata(self) -> dict[str, Any]:
        with self._lock:
            cached = self._metadata
        if cached is not None and time.monotonic() - cached[0] < CACHE_SECONDS:
            return cached[1]
        url = self.issuer.rstrip("/") + "/.well-known/openid-configuration"
        meta = _get_json(url, self.timeout, "discovery")
        # OpenID Connect Discovery 1.0, 4.3: the document's issuer is the one asked.
        if meta.get("issuer") != self.issuer or not all(
                isinstance(meta.get(k), str) for k in ("authorization_endpoint",
                                                       "token_endpoint", "jwks_uri")):
            raise _unreachable("discovery document does not match WHARF_OIDC_ISSUER")
        with self._lock:
            self._metadata = (time.monotonic(), meta)
        return meta

    def _key_set(self, force: bool = False) -> KeySet:
        with self._lock:
            cached = self._keys
        if not force and cached is not None and time.monotonic() - cached[0] < CACHE_SECONDS:
            return cached[1]
        raw = _get_json(str(self.metadata()["jwks_uri"]), self.timeout, "keys")
        try:
            keys = KeySet.import_key_set(raw)  # type: ignore[arg-type]
        except (JoseError, ValueError, TypeError, KeyError):
            raise _unreachable("keys") from None
        with self._lock:
            self._keys = (time.monotonic(), keys)
        return keys

    def authorization_url(self, redirect_uri: str, state: str, nonce: str,
                          code_verifier: str) -> str:
        meta = self.metadata()
        url, _ = self._session(redirect_uri).create_authorization_url(
            meta["authorization_endpoint"], state=state, code_verifier=code_verifier,
            nonce=nonce)
        return str(url)

    def finish(self, redirect_uri: str, code: str, code_verifier: str,
               nonce: str) -> Profile:
        meta = self.metadata()
        oauth = self._session(redirect_uri)
        token = _token(oauth, meta["token_endpoint"], code, code_verifier, self.timeout)
        raw = token.get("id_token")
        if not isinstance(raw, str):
            raise LoginFailed("id_token_invalid", "The provider sent no ID token.")
        claims = self._validate(raw, meta, nonce, str(token["access_token"]))
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject or len(subject) > 255:
            raise LoginFailed("id_token_invalid", "The ID token names no subject.")
        hint = claims.get("preferred_username")
        name = claims.get("name")
        if not isinstance(hint, str) and isinstance(meta.get("userinfo_endpoint"), str):
            info = self._userinfo(oauth, str(meta["userinfo_endpoint"]), subject)
            hint, name = info.get("preferred_username"), name or info.get("name")
            if not isinstance(hint, str):
                hint = info.get("email")
        if not isinstance(hint, str):
            hint = claims.get("email")
        return Profile(subject=subject,
                       username_hint=hint.split("@", 1)[0] if isinstance(hint, str) else "",
                       display_name=name[:255] if isinstance(name, str) else None)

    def _validate(self, raw: str, meta: dict[str, Any], nonce: str,
                  access_token: str) -> dict[str, Any]:
        algs = meta.get("id_token_signing_alg_values_supported")
        registry = JWSRegistry(algorithms=algs if isinstance(algs, list) else None,
                               strict_check_header=False)
        try:
            try:
                decoded = jwt.decode(raw, self._key_set(), registry=registry)
            except InvalidKeyIdError:
                decoded = jwt.decode(raw, self._key_set(force=True), registry=registry)
        except (JoseError, ValueError, TypeError, KeyError):
            raise LoginFailed("id_token_invalid",
                              "The ID token's signature does not verify.") from None
        claims = dict(decoded.claims)
        if claims.get("iss") not in self.allowed:
            raise LoginFailed("issuer_not_allowed", "The ID token's issuer is not allowed.",
                              issuer=str(claims.get("iss"))[:200])
        sent = claims.get("nonce")
        if not isinstance(sent, str) or not hmac.compare_digest(sent.encode(), nonce.encode()):
            raise LoginFailed("nonce_mismatch",
                              "The ID token's nonce is not the one this sign-in sent.")
        checked = CodeIDToken(claims, decoded.header,
                              {"iss": {"essential": True, "values": list(self.allowed)},
                               "aud": {"essential": True, "value": self.client_id}},
                              {"nonce": nonce, "client_id": self.client_id,
                               "access_token": access_token})
        try:
            checked.validate(leeway=LEEWAY)
        except (JoseError, ValueError) as exc:
            raise LoginFailed("id_token_invalid",
                              f"The ID token is not valid ({type(exc).__name__}).") from None
        return claims

    def _userinfo(self, oauth: OAuth2Session, url: str, subject: str) -> dict[str, Any]:
        try:
            resp = oauth.get(url, timeout=self.timeout)
            resp.raise_for_status()
            info = resp.json()
        except (requests.RequestException, ValueError, OAuthError):
            raise _unreachable("userinfo") from None
        if not isinstance(info, dict) or info.get("sub") != subject:
            raise LoginFailed("userinfo_invalid", "The provider's user info names someone else.")
        return info


class GitHubProvider:
    """GitHub's OAuth 2.0 (an OAuth app) and ``GET /user`` of its REST API."""

    name = "github"

    def __init__(self, settings: Settings):
        assert settings.github_client_id
        self.client_id = settings.github_client_id
        self.client_secret = settings.github_client_secret or ""
        self.authorize_url = settings.github_authorize_url
        self.token_url = settings.github_token_url
        self.api_url = settings.github_api_url.rstrip("/")
        self.timeout = settings.external_login_timeout

    def _session(self, redirect_uri: str) -> OAuth2Session:
        return OAuth2Session(self.client_id, self.client_secret, scope="read:user",
                             redirect_uri=redirect_uri, code_challenge_method="S256",
                             token_endpoint_auth_method="client_secret_post")

    def authorization_url(self, redirect_uri: str, state: str, nonce: str,
                          code_verifier: str) -> str:
        url, _ = self._session(redirect_uri).create_authorization_url(
            self.authorize_url, state=state, code_verifier=code_verifier)
        return str(url)

    def finish(self, redirect_uri: str, code: str, code_verifier: str,
               nonce: str) -> Profile:
        oauth = self._session(redirect_uri)
        _token(oauth, self.token_url, code, code_verifier, self.timeout)
        try:
            resp = oauth.get(self.api_url + "/user", timeout=self.timeout,
                             headers={"Accept": "application/vnd.github+json"})
            resp.raise_for_status()
            user = resp.json()
        except (requests.RequestException, ValueError, OAuthError):
            raise _unreachable("GitHub user API") from None
        if not isinstance(user, dict):
            raise LoginFailed("userinfo_invalid", "GitHub's user API sent no user.")
        uid, login = user.get("id"), user.get("login")
        if isinstance(uid, bool) or not isinstance(uid, int) or not isinstance(login, str):
            raise LoginFailed("userinfo_invalid", "GitHub's user API sent no user id or login.")
        name = user.get("name")
        return Profile(subject=str(uid), username_hint=login,
                       display_name=(name if isinstance(name, str) and name else login)[:255])
