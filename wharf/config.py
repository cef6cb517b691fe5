"""One typed settings object, read from ``WHARF_*`` environment variables.

Every value is validated at start; a bad value raises :class:`ConfigError` naming the
variable and what was expected, so an operator sees one clear line instead of a trace.
"""
from __future__ import annotations

import dataclasses
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping


class ConfigError(ValueError):
    """A ``WHARF_*`` setting is missing or malformed."""


def _int(env: Mapping[str, str], name: str, default: int, *, minimum: int = 0,
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


def _float(env: Mapping[str, str], name: str, default: float, *, minimum: float = 0.0) -> float:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw.strip())
    except ValueError:
        raise ConfigError(f"{name}={raw!r}: expected a number") from None
    if not math.isfinite(value):
        raise ConfigError(f"{name}={raw!r}: expected a finite number")
    if value < minimum:
        raise ConfigError(f"{name}={raw!r}: expected a number >= {minimum}")
    return value


def _bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{name}={raw!r}: expected true/false")


def _db_url(env: Mapping[str, str], name: str, default: str) -> str:
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


def _namespace(env: Mapping[str, str], name: str, default: str) -> str:
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", raw):
        raise ConfigError(f"{name}={raw!r}: expected 1 to 64 letters, digits, '_', '.' or '-'")
    return raw


def _http_url(env: Mapping[str, str], name: str) -> str | None:
    raw = (env.get(name) or "").strip()
    if not raw:
        return None
    if not raw.lower().startswith(("http://", "https://")) or not raw.split("://", 1)[1]:
        raise ConfigError(f"{name}={raw!r}: expected an http:// or https:// URL")
    return raw


def _origins(env: Mapping[str, str], name: str) -> tuple[str, ...]:
    """A comma-separated list of origins: ``scheme://host[:port]``, nothing else.

    Returned normalised (lower case, default port dropped) the way browsers send them.
    """
    from urllib.parse import urlsplit
    out = []
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
    return tuple(dict.fromkeys(out))


def origin(scheme: str, host: str, port: int | None) -> str:
    """The serialised origin (RFC 6454): lower case, default port omitted, IPv6 bracketed."""
    scheme, host = scheme.lower(), host.lower()
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    default = {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{host}" if port in (None, default) else f"{scheme}://{host}:{port}"
def _optional_port(env: Mapping[str, str], name: str) -> int | None:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return None
    return _int(env, name, 0, minimum=0, maximum=65535)


def _token(env: Mapping[str, str], name: str) -> str | None:
    raw = (env.get(name) or "").strip()
    if not raw:
        return None
    if len(raw) < 16 or not raw.isascii() or not raw.isprintable() or " " in raw:
        raise ConfigError(f"{name}: expected at least 16 printable ASCII characters "
                          "without spaces")
    return raw


@dataclass(frozen=True)
class Settings:
    data_dir: Path
    database_url: str
    unitstore_url: str
    broker_url: str
    blob_store_url: str
    # Prefix of every Redis key and channel Wharf uses (several deployments, or test runs,
    # can share one Redis DB).
    broker_namespace: str = "wharf"
    s3_endpoint_url: str | None = None
    s3_region: str | None = None
    host: str = "127.0.0.1"
    port: int = 8080
    session_ttl: int = 14 * 86400
    max_body_bytes: int = 1024 * 1024
    argon2_time_cost: int = 3
    argon2_memory_cost: int = 65536
    argon2_parallelism: int = 4
    sqlite_busy_timeout_ms: int = 5000
    trusted_proxy_count: int = 0
    secure_cookies: bool = False
    # operations engine
    idempotency_key_ttl: int = 86400
    operation_max_attempts: int = 5
    operation_lease_seconds: int = 30
    operation_backoff_base: float = 0.5
    operation_backoff_max: float = 300.0
    recovery_interval: float = 5.0
    relay_interval: float = 2.0
    worker_threads: int = 4
    worker_processes: int = 2
    test_hooks: bool = False
    # retention
    upload_session_ttl: int = 86400
    asset_upload_ttl: int = 3600
    operation_retention: int = 2592000
    trash_retention: int = 2592000
    sweep_interval: int = 60
    max_upload_size: int = 512 * 1024 * 1024
    verify_rehash: bool = True
    # login / registration rate limits (0 disables a limit)
    login_max_failures: int = 10
    login_max_failures_per_address: int = 100
    login_max_failures_per_user: int = 100
    login_window: int = 900
    register_per_address: int = 20
    register_window: int = 3600
    # CSRF: origins besides the API's own that may send cookie-authenticated writes
    allowed_origins: tuple[str, ...] = ()
    # monitoring
    metrics_port: int | None = None
    metrics_token: str | None = field(default=None, repr=False)
    metrics_cache_seconds: float = 5.0
    # units (documents): bounds on what one changeset may build
    unit_max_snapshot_bytes: int = 16 * 1024 * 1024
    unit_max_changeset_ops: int = 1000
    unit_max_depth: int = 400
    # HTTP serving (wharf serve; the long-poll limit applies to every API process)
    http_threads: int = 16
    http_connection_limit: int = 1000
    http_send_timeout: int = 30
    http_receive_timeout: int = 30
    http_min_receive_rate: int = 1024
    long_poll_max_waiters: int | None = None  # None: half the request threads
    extra: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides) -> "Settings":
        env = dict(os.environ if env is None else env)
        data_dir = Path(env.get("WHARF_DATA_DIR") or "./var").expanduser().resolve()
        broker = (env.get("WHARF_BROKER_URL") or "embedded").strip()
        if broker != "embedded" and not broker.startswith(("redis://", "rediss://", "unix://")):
            raise ConfigError(f"WHARF_BROKER_URL={broker!r}: expected 'embedded' or a redis:// URL")
        blob = (env.get("WHARF_BLOB_STORE_URL") or "").strip() or (data_dir / "blobs").as_uri()
        if not blob.startswith(("s3://", "file://")):
            raise ConfigError(f"WHARF_BLOB_STORE_URL={blob!r}: expected s3://bucket[/prefix] or file:///path")
        if blob.startswith("s3://") and not blob[5:].split("/", 1)[0]:
            raise ConfigError(f"WHARF_BLOB_STORE_URL={blob!r}: the s3:// URL needs a bucket name")
        values = dict(
            data_dir=data_dir,
            database_url=_db_url(env, "WHARF_DATABASE_URL", f"sqlite:///{data_dir / 'wharf.db'}"),
            unitstore_url=_db_url(env, "WHARF_UNITSTORE_URL", f"sqlite:///{data_dir / 'units.db'}"),
            broker_url=broker,
            broker_namespace=_namespace(env, "WHARF_BROKER_NAMESPACE", "wharf"),
            blob_store_url=blob,
            s3_endpoint_url=_http_url(env, "WHARF_S3_ENDPOINT_URL"),
            s3_region=(env.get("WHARF_S3_REGION") or None),
            host=(env.get("WHARF_HOST") or "127.0.0.1"),
            port=_int(env, "WHARF_PORT", 8080, minimum=0, maximum=65535),
            session_ttl=_int(env, "WHARF_SESSION_TTL", 14 * 86400, minimum=60),
            max_body_bytes=_int(env, "WHARF_MAX_BODY_BYTES", 1024 * 1024, minimum=1024),
            argon2_time_cost=_int(env, "WHARF_ARGON2_TIME_COST", 3, minimum=1),
            argon2_memory_cost=_int(env, "WHARF_ARGON2_MEMORY_COST", 65536, minimum=8),
            argon2_parallelism=_int(env, "WHARF_ARGON2_PARALLELISM", 4, minimum=1),
            sqlite_busy_timeout_ms=_int(env, "WHARF_SQLITE_BUSY_TIMEOUT_MS", 5000, minimum=0),
            trusted_proxy_count=_int(env, "WHARF_TRUSTED_PROXY_COUNT", 0, minimum=0),
            secure_cookies=_bool(env, "WHARF_SECURE_COOKIES", False),
            idempotency_key_ttl=_int(env, "WHARF_IDEMPOTENCY_KEY_TTL", 86400, minimum=0),
            operation_max_attempts=_int(env, "WHARF_OPERATION_MAX_ATTEMPTS", 5, minimum=1),
            operation_lease_seconds=_int(env, "WHARF_OPERATION_LEASE_SECONDS", 30, minimum=1),
            operation_backoff_base=_float(env, "WHARF_OPERATION_BACKOFF_BASE", 0.5),
            operation_backoff_max=_float(env, "WHARF_OPERATION_BACKOFF_MAX", 300.0),
            recovery_interval=_float(env, "WHARF_RECOVERY_INTERVAL", 5.0, minimum=0.05),
            relay_interval=_float(env, "WHARF_RELAY_INTERVAL", 2.0, minimum=0.05),
            worker_threads=_int(env, "WHARF_WORKER_THREADS", 4, minimum=1),
            worker_processes=_int(env, "WHARF_WORKER_PROCESSES", 2, minimum=1),
            test_hooks=_bool(env, "WHARF_TEST_HOOKS", False),
            upload_session_ttl=_int(env, "WHARF_UPLOAD_SESSION_TTL", 86400, minimum=1),
            asset_upload_ttl=_int(env, "WHARF_ASSET_UPLOAD_TTL", 3600, minimum=1),
            operation_retention=_int(env, "WHARF_OPERATION_RETENTION", 2592000, minimum=0),
            trash_retention=_int(env, "WHARF_TRASH_RETENTION", 2592000, minimum=0),
            sweep_interval=_int(env, "WHARF_SWEEP_INTERVAL", 60, minimum=1),
            max_upload_size=_int(env, "WHARF_MAX_UPLOAD_SIZE", 512 * 1024 * 1024, minimum=0),
            verify_rehash=_bool(env, "WHARF_VERIFY_REHASH", True),
            login_max_failures=_int(env, "WHARF_LOGIN_MAX_FAILURES", 10, minimum=0),
            login_max_failures_per_address=_int(env, "WHARF_LOGIN_MAX_FAILURES_PER_ADDRESS",
                                                100, minimum=0),
            login_max_failures_per_user=_int(env, "WHARF_LOGIN_MAX_FAILURES_PER_USER",
                                             100, minimum=0),
            login_window=_int(env, "WHARF_LOGIN_WINDOW", 900, minimum=1),
            register_per_address=_int(env, "WHARF_REGISTER_PER_ADDRESS", 20, minimum=0),
            register_window=_int(env, "WHARF_REGISTER_WINDOW", 3600, minimum=1),
            allowed_origins=_origins(env, "WHARF_ALLOWED_ORIGINS"),
            metrics_port=_optional_port(env, "WHARF_METRICS_PORT"),
            metrics_token=_token(env, "WHARF_METRICS_TOKEN"),
            metrics_cache_seconds=_float(env, "WHARF_METRICS_CACHE_SECONDS", 5.0),
            unit_max_snapshot_bytes=_int(env, "WHARF_UNIT_MAX_SNAPSHOT_BYTES", 16 * 1024 * 1024,
                                         minimum=1024),
            # the request schema caps a changeset at 10000 operations
            unit_max_changeset_ops=_int(env, "WHARF_UNIT_MAX_CHANGESET_OPS", 1000, minimum=1,
                                        maximum=10000),
            # above ~400 the JSON encoders and comparisons near Python's recursion limit
            unit_max_depth=_int(env, "WHARF_UNIT_MAX_DEPTH", 400, minimum=8, maximum=400),
            http_threads=_int(env, "WHARF_HTTP_THREADS", 16, minimum=2),
            http_connection_limit=_int(env, "WHARF_HTTP_CONNECTION_LIMIT", 1000, minimum=10),
            http_send_timeout=_int(env, "WHARF_HTTP_SEND_TIMEOUT", 30, minimum=1),
            http_receive_timeout=_int(env, "WHARF_HTTP_RECEIVE_TIMEOUT", 30, minimum=1),
            http_min_receive_rate=_int(env, "WHARF_HTTP_MIN_RECEIVE_RATE", 1024, minimum=0),
            long_poll_max_waiters=(_int(env, "WHARF_LONG_POLL_MAX_WAITERS", 0, minimum=0)
                                   if (env.get("WHARF_LONG_POLL_MAX_WAITERS") or "").strip()
                                   else None),
        )
        values.update(overrides)
        return cls(**values)

    def replace(self, **changes) -> "Settings":
        return dataclasses.replace(self, **changes)

    @property
    def embedded_broker(self) -> bool:
        return self.broker_url == "embedded"
