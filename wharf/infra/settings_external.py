"""The settings of sign-in with an external provider (``wharf.identity.external``: OpenID
Connect by discovery, GitHub's OAuth 2.0). Declared as :mod:`wharf.infra.settings` declares
the rest (a base of its ``Settings``). A provider is offered when its client id and secret
are both set (and, for OpenID Connect, its issuer)."""
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated

from wharf.infra import setting_readers as readers
from wharf.infra.setting_declaration import setting
from wharf.infra.setting_readers import ConfigError


def http_urls(env: Mapping[str, str], name: str,
              default: tuple[str, ...] = ()) -> tuple[str, ...]:
    """A comma-separated list of ``http(s)://`` URLs (kept as written: issuers compare
    exactly)."""
    out = []
    for item in (env.get(name) or "").split(","):
        raw = item.strip()
        if raw:
            checked = readers.http_url({name: raw}, name)
            if checked is None or any(c.isspace() for c in raw):
                raise ConfigError(f"{name}: {raw!r} is not an http:// or https:// URL")
            out.append(checked)
    return tuple(dict.fromkeys(out)) or default


def http_url(env: Mapping[str, str], name: str, default: str) -> str:
    """An ``http(s)://`` URL; unset: ``default``."""
    return readers.http_url(env, name) or default


@dataclass(frozen=True, kw_only=True)
class ExternalLoginSettings:
    oidc_issuer: Annotated[str | None, setting(
        "the OpenID Connect issuer to sign in with (`https://accounts.example.com`); its "
        "endpoints and keys come from `<issuer>/.well-known/openid-configuration`. Unset: "
        "no OpenID Connect sign-in",
        parse=readers.http_url, shown="unset")] = None
    oidc_allowed_issuers: Annotated[tuple[str, ...], setting(
        "comma-separated issuers whose ID tokens are accepted (`iss`, compared exactly); "
        "list only issuer names of one identity system, since subjects are unique per "
        "provider",
        parse=http_urls, shown="`WHARF_OIDC_ISSUER`")] = ()
    oidc_client_id: Annotated[str | None, setting(
        "Wharf's client id at the OpenID Connect issuer",
        parse=readers.plain, shown="unset")] = None
    oidc_client_secret: Annotated[str | None, setting(
        "Wharf's client secret at the OpenID Connect issuer (sent with HTTP Basic "
        "authentication to its token endpoint)",
        parse=readers.plain, shown="unset")] = field(default=None, repr=False)
    github_client_id: Annotated[str | None, setting(
        "the client id of Wharf's GitHub OAuth app; unset: no GitHub sign-in",
        parse=readers.plain, shown="unset")] = None
    github_client_secret: Annotated[str | None, setting(
        "the client secret of Wharf's GitHub OAuth app",
        parse=readers.plain, shown="unset")] = field(default=None, repr=False)
    github_authorize_url: Annotated[str, setting(
        "GitHub's authorization endpoint (GitHub Enterprise: `https://HOST/login/oauth/"
        "authorize`)",
        parse=http_url)] = "https://github.com/login/oauth/authorize"
    github_token_url: Annotated[str, setting(
        "GitHub's token endpoint",
        parse=http_url)] = "https://github.com/login/oauth/access_token"
    github_api_url: Annotated[str, setting(
        "GitHub's REST API, where `/user` names the signed-in account (GitHub Enterprise: "
        "`https://HOST/api/v3`)",
        parse=http_url)] = "https://api.github.com"
    auth_redirect_base_url: Annotated[str | None, setting(
        "the address browsers reach Wharf's API at (`https://wharf.example.com`): the "
        "redirect URI registered with a provider is `<it>/api/auth/<provider>/callback`. "
        "Unset: taken from each request's scheme and `Host`",
        parse=readers.http_url, shown="unset: the request's")] = None
    external_login_timeout: Annotated[float, setting(
        "seconds Wharf waits for a provider's discovery document, keys, token endpoint or "
        "user API",
        ge=1, le=120)] = 10.0

    def __post_init__(self) -> None:
        """A provider's settings come whole: half a provider is a mistake, not "off"."""
        oidc = {"WHARF_OIDC_ISSUER": self.oidc_issuer,
                "WHARF_OIDC_CLIENT_ID": self.oidc_client_id,
                "WHARF_OIDC_CLIENT_SECRET": self.oidc_client_secret}
        github = {"WHARF_GITHUB_CLIENT_ID": self.github_client_id,
                  "WHARF_GITHUB_CLIENT_SECRET": self.github_client_secret}
        for group in (oidc, github):
            unset = [name for name, value in group.items() if not value]
            if unset and len(unset) < len(group):
                raise ConfigError(f"{unset[0]}: required when "
                                  f"{next(n for n, v in group.items() if v)} is set")
        if self.oidc_allowed_issuers and not self.oidc_issuer:
            raise ConfigError("WHARF_OIDC_ALLOWED_ISSUERS: set WHARF_OIDC_ISSUER too")
