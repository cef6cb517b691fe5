"""The external sign-in providers' contract: :class:`Provider` (what ``external`` asks of
one), its :class:`Profile` and :class:`LoginFailed`, and :func:`configured`, the providers
the settings enable. The Authlib clients themselves are in ``wharf.identity.oauth``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from wharf.infra.settings import Settings


class LoginFailed(Exception):
    """The provider's answer cannot sign anyone in; ``reason`` is stable."""

    def __init__(self, reason: str, message: str, **details: str):
        super().__init__(message)
        self.reason, self.message, self.details = reason, message, details


@dataclass(frozen=True)
class Profile:
    """Who signed in at the provider."""

    subject: str           # stable: OIDC `sub`, GitHub's numeric user id
    username_hint: str     # preferred_username, GitHub login, ...
    display_name: str | None


class Provider(Protocol):
    name: str

    def authorization_url(self, redirect_uri: str, state: str, nonce: str,
                          code_verifier: str) -> str: ...

    def finish(self, redirect_uri: str, code: str, code_verifier: str,
               nonce: str) -> Profile: ...


def configured(settings: Settings) -> dict[str, Provider]:
    """The providers the settings enable, by name."""
    oidc = bool(settings.oidc_issuer and settings.oidc_client_id and settings.oidc_client_secret)
    github = bool(settings.github_client_id and settings.github_client_secret)
    out: dict[str, Provider] = {}
    if not (oidc or github):
        return out
    # Here, not at the top: only a process with a provider configured loads Authlib.
    from wharf.identity.oauth import GitHubProvider, OpenIDProvider
    if oidc:
        out["oidc"] = OpenIDProvider(settings)
    if github:
        out["github"] = GitHubProvider(settings)
    return out
