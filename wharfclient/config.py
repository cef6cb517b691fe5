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

``wharf-client login`` writes the file (``save_profile``): the profile's ``url`` and
``token`` set, every other profile and key kept, the file replaced atomically with mode
0600 (it holds credentials). Comments in the file are not kept.
"""
from __future__ import annotations

import os
import re
import tempfile
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


def profile_name(name: str | None) -> str:
    return name or os.environ.get("WHARF_PROFILE") or DEFAULT_PROFILE


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _toml_string(text: str) -> str:
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _toml_string(key)


def _toml_value(value: object, where: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    raise ConfigError(f"cannot rewrite {config_path()}: {where} is not a plain value")


def save_profile(name: str, url: str, token: str) -> Path:
    """Set profile ``name``'s url and token in the profile file (see the module
    docstring); the file's path."""
    path = config_path()
    data: dict[str, object] = {}
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"cannot read {path}: {exc}") from None
    table = data.get(name, {})
    if not isinstance(table, dict):
        raise ConfigError(f"profile {name!r} in {path} is not a table")
    data[name] = {**table, "url": url, "token": token}
    lines: list[str] = []
    for profile, values in data.items():
        if not isinstance(values, dict):
            raise ConfigError(f"cannot rewrite {path}: {profile!r} is not a table")
        lines.append(f"[{_toml_key(profile)}]")
        lines += [f"{_toml_key(k)} = {_toml_value(v, f'{profile}.{k}')}"
                  for k, v in values.items()]
        lines.append("")
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".client.toml.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:  # mkstemp: mode 0600
            f.write("\n".join(lines))
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path
