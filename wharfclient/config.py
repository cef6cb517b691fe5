"""Where the client finds its server and token.

The url and the token come from ONE source, so a token is never sent to another source's
server: an explicit ``--profile`` (both from that profile); else the environment when
``WHARF_URL`` or ``WHARF_TOKEN`` is set (the two together; a missing one is not taken
from a profile); else the profile
``$WHARF_PROFILE`` or ``default``. Then the flags ``--url`` and ``--token`` override each
field individually (the caller asked for exactly that pair). The file is
``$WHARF_CLIENT_CONFIG`` or ``~/.config/wharf/client.toml``; each TOML table is a profile::

    [default]
    url = "https://wharf.example.com"
    token = "wharf_..."

    [ci]
    url = "http://127.0.0.1:8080"
    token = "wharf_..."

The profile is ``--profile``, else ``$WHARF_PROFILE``, else ``default``. A profile named
explicitly that the file lacks is a usage error; a missing file is not.
"""
from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

DEFAULT_PROFILE = "default"
DEFAULT_PATH = Path("~/.config/wharf/client.toml")


class ConfigError(Exception):
    """The configuration cannot name a server (a usage error, exit status 2)."""


@dataclass(frozen=True)
class Config:
    url: str
    token: str | None


def config_path() -> Path:
    return Path(os.environ.get("WHARF_CLIENT_CONFIG") or DEFAULT_PATH).expanduser()


def _profile(name: str | None) -> dict[str, str]:
    path = config_path()
    chosen = name or os.environ.get("WHARF_PROFILE")
    if not path.is_file():
        if chosen and chosen != DEFAULT_PROFILE:
            raise ConfigError(f"profile {chosen!r}: no profile file at {path}")
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    table = data.get(chosen or DEFAULT_PROFILE)
    if table is None:
        if chosen and chosen != DEFAULT_PROFILE:
            raise ConfigError(f"profile {chosen!r} is not in {path}")
        return {}
    if not isinstance(table, dict):
        raise ConfigError(f"profile {chosen!r} in {path} is not a table")
    return {k: str(v) for k, v in table.items() if k in ("url", "token")}


def load_config(*, url: str | None = None, token: str | None = None,
                profile: str | None = None) -> Config:
    """One source for url and token (see the module docstring), then the flags; a server
    URL is required."""
    env = {"url": os.environ.get("WHARF_URL") or "",
           "token": os.environ.get("WHARF_TOKEN") or ""}
    if profile is None and any(env.values()):
        src = env
    else:
        src = _profile(profile)
    final_url = url or src.get("url")
    if not final_url:
        raise ConfigError("no server: set WHARF_URL, pass --url, or add a profile "
                          f"to {config_path()}")
    final_token = token or src.get("token")
    return Config(url=final_url.rstrip("/"), token=final_token or None)
