"""The readers of ``WHARF_*`` values: one function per kind of value, each answering one
exact line per malformed variable (:class:`ConfigError`; the CLI prints it and exits with
status 2, the tests match it). :class:`wharf.infra.settings.Settings` names the reader of
each setting that is not a plain number, flag or string; :mod:`wharf.infra.setting_declaration`
picks the plain ones by type."""
import math
import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from wharf.infra.broker_urls import SENTINEL_SCHEME, check_amqp_url, parse_sentinel_url, redacted


class ConfigError(ValueError):
    """A ``WHARF_*`` setting is missing or malformed."""


def read_int(env: Mapping[str, str], name: str, default: int, *, minimum: int = 0,
         maximum: int | None = None) -> int:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ConfigError(f"{name}={raw!r}: expected an integer") from None
    if value < minimum or (maximum is not None and value > maximum):
        bound = f">= {minimum}" if maximum is None else f"between {minimum} and {maximum}"
        raise ConfigError(f"{name}={raw!r}: expected an integer {bound}")
    return value


def read_float(env: Mapping[str, str], name: str, default: float, *, minimum: float = 0.0,
           maximum: float | None = None) -> float:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw.strip())
    except ValueError:
        raise ConfigError(f"{name}={raw!r}: expected a number") from None
    if not math.isfinite(value):
        raise ConfigError(f"{name}={raw!r}: expected a finite number")
    if value < minimum or (maximum is not None and value > maximum):
        bound = f">= {minimum}" if maximum is None else f"between {minimum} and {maximum}"
        raise ConfigError(f"{name}={raw!r}: expected a number {bound}")
    return value


def read_bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{name}={raw!r}: expected true/false")


def db_url(env: Mapping[str, str], name: str, default: str) -> str:
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    scheme = raw.split(":", 1)[0].lower()
    if "://" not in raw:
        raise ConfigError(f"{name}={raw!r}: expected a sqlite:/// or postgresql:// URL")
    if scheme.startswith("postgres"):
        # Accept the common postgres:// and postgresql:// spellings; always use psycopg 3.
        rest = raw.split("://", 1)[1] if "://" in raw else ""
        return "postgresql+psycopg://" + rest
    if scheme.startswith("sqlite"):
        return raw
    raise ConfigError(f"{name}={raw!r}: expected a sqlite:/// or postgresql:// URL")


def namespace(env: Mapping[str, str], name: str, default: str) -> str:
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", raw):
        raise ConfigError(f"{name}={raw!r}: expected 1 to 64 letters, digits, '_', '.' or '-'")
    return raw


def http_url(env: Mapping[str, str], name: str, default: str | None = None) -> str | None:
    raw = (env.get(name) or "").strip()
    if not raw:
        return None
    if not raw.lower().startswith(("http://", "https://")) or not raw.split("://", 1)[1]:
        raise ConfigError(f"{name}={raw!r}: expected an http:// or https:// URL")
    return raw


def origins(env: Mapping[str, str], name: str,
             default: tuple[str, ...] = ()) -> tuple[str, ...]:
    """A comma-separated list of origins: ``scheme://host[:port]``, nothing else.

    Returned normalised (lower case, default port dropped) the way browsers send them.
    """
    out: list[str] = []
    for item in (env.get(name) or "").split(","):
        raw = item.strip()
        if not raw:
            continue
        try:
            parts = urlsplit(raw)
            port = parts.port
        except ValueError:
            raise ConfigError(f"{name}: {raw!r} is not an origin") from None
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname \
                or parts.path not in ("", "/") or parts.query or parts.fragment \
                or parts.username or parts.password:
            raise ConfigError(f"{name}: {raw!r} is not an origin; expected "
                              "http(s)://host[:port], comma-separated")
        out.append(origin(parts.scheme, parts.hostname, port))
    return tuple(dict.fromkeys(out)) or default


def origin(scheme: str, host: str, port: int | None) -> str:
    """The serialised origin (RFC 6454): lower case, default port omitted, IPv6 bracketed."""
    scheme, host = scheme.lower(), host.lower()
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    default = {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{host}" if port in (None, default) else f"{scheme}://{host}:{port}"


def token(env: Mapping[str, str], name: str, default: str | None = None) -> str | None:
    raw = (env.get(name) or "").strip()
    if not raw:
        return None
    if len(raw) < 16 or not raw.isascii() or not raw.isprintable() or " " in raw:
        raise ConfigError(f"{name}: expected at least 16 printable ASCII characters "
                          "without spaces")
    return raw

def read_optional_int(env: Mapping[str, str], name: str, default: int | None, *,
                  minimum: int = 0, maximum: int | None = None) -> int | None:
    """Unset or blank: ``default``; otherwise an integer within the bounds."""
    if (env.get(name) or "").strip() == "":
        return default
    return read_int(env, name, 0, minimum=minimum, maximum=maximum)


def plain(env: Mapping[str, str], name: str, default: str | None) -> str | None:
    return env.get(name) or default


def data_dir(env: Mapping[str, str], name: str, default: Path) -> Path:
    return Path(env.get(name) or default).expanduser().resolve()


def broker(env: Mapping[str, str], name: str, default: str) -> str:
    broker = (env.get(name) or default).strip()
    if broker == "embedded" or broker.startswith(("redis://", "rediss://", "unix://")):
        return broker
    try:
        if broker.startswith(SENTINEL_SCHEME + "://"):
            parse_sentinel_url(broker)
        elif broker.startswith(("amqp://", "amqps://")):
            check_amqp_url(broker)
        else:
            raise ValueError("expected 'embedded', or a redis://, rediss://, unix://, "
                             f"{SENTINEL_SCHEME}:// or amqp(s):// URL")
    except ValueError as exc:
        raise ConfigError(f"{name}={redacted(broker)!r}: {exc}") from None
    return broker




def blob_store(env: Mapping[str, str], name: str, default: str) -> str:
    blob = (env.get(name) or "").strip() or default
    if not blob.startswith(("s3://", "file://")):
        raise ConfigError(f"{name}={blob!r}: expected s3://bucket[/prefix] or file:///path")
    if blob.startswith("s3://") and not blob[5:].split("/", 1)[0]:
        raise ConfigError(f"{name}={blob!r}: the s3:// URL needs a bucket name")
    return blob


#: The pattern of a username, declared here (config imports nothing of the core) for
#: ``WHARF_OPERATORS`` and ``wharf.identity.service.USERNAME_RE`` alike.
USERNAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.-]{2,63}"


def usernames(env: Mapping[str, str], name: str,
               default: tuple[str, ...] = ()) -> tuple[str, ...]:
    """A comma-separated list of usernames, returned in lower case (usernames are
    case-insensitive), without repeats."""
    out: list[str] = []
    for item in (env.get(name) or "").split(","):
        raw = item.strip()
        if not raw:
            continue
        if not re.fullmatch(USERNAME_PATTERN, raw):
            raise ConfigError(f"{name}: {raw!r} is not a username; expected comma-separated "
                              "usernames (3-64 letters, digits, '_', '.', '-')")
        out.append(raw.lower())
    return tuple(dict.fromkeys(out)) or default
LOG_FORMATS = ("auto", "json", "text")


def log_format(env: Mapping[str, str], name: str, default: str) -> str:
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    if raw.lower() not in LOG_FORMATS:
        raise ConfigError(f"{name}={raw!r}: expected one of {', '.join(LOG_FORMATS)}")
    return raw.lower()

SOFFICE_NETWORK = ("auto", "isolated", "host")


def soffice_network(env: Mapping[str, str], name: str, default: str) -> str:
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    if raw.lower() not in SOFFICE_NETWORK:
        raise ConfigError(f"{name}={raw!r}: expected one of {', '.join(SOFFICE_NETWORK)}")
    return raw.lower()


def delays(env: Mapping[str, str], name: str, default: str) -> str:
    """Comma-separated seconds (1 to 50 of them, each 0 to 86400)."""
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    try:
        values = [float(part) for part in raw.split(",")]
    except ValueError:
        raise ConfigError(f"{name}={raw!r}: expected comma-separated seconds") from None
    if not 1 <= len(values) <= 50 or not all(0 <= v <= 86400 for v in values):
        raise ConfigError(f"{name}={raw!r}: expected 1 to 50 delays of 0 to 86400 seconds")
    return raw
