"""One typed settings object, read from ``WHARF_*`` environment variables.

Each setting is declared once, as a field of :class:`Settings`: its type, its default,
and a :func:`setting` annotation (``msgspec.Meta``: bounds, the README description). Parsing,
the bounds checked, the error messages and the README's settings table all derive from it
(``python -m wharf.config`` prints the table; ``tests/test_settings.py`` checks the README
against it). ``msgspec.Meta`` is used as the declaration only (bounds and description in
the vocabulary of the wire contract); it does not parse. The parsing is this module's own
small readers (``_int``, ``_float``, ...), because each must answer one exact line per
variable (the CLI prints it and exits with status 2; the tests match it), which neither
msgspec's nor pydantic-settings' multi-line validation errors give without being mapped
back; pydantic-settings would also be one more dependency for the same declarations.

Every value is validated at start; a bad value raises :class:`ConfigError` naming the
variable and what was expected, so an operator sees one clear line instead of a trace.
"""
import dataclasses
import math
import os
import re
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from msgspec import Meta


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


def _http_url(env: Mapping[str, str], name: str, default: str | None = None) -> str | None:
    raw = (env.get(name) or "").strip()
    if not raw:
        return None
    if not raw.lower().startswith(("http://", "https://")) or not raw.split("://", 1)[1]:
        raise ConfigError(f"{name}={raw!r}: expected an http:// or https:// URL")
    return raw


def _origins(env: Mapping[str, str], name: str,
             default: tuple[str, ...] = ()) -> tuple[str, ...]:
    """A comma-separated list of origins: ``scheme://host[:port]``, nothing else.

    Returned normalised (lower case, default port dropped) the way browsers send them.
    """
    from urllib.parse import urlsplit
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


def _token(env: Mapping[str, str], name: str, default: str | None = None) -> str | None:
    raw = (env.get(name) or "").strip()
    if not raw:
        return None
    if len(raw) < 16 or not raw.isascii() or not raw.isprintable() or " " in raw:
        raise ConfigError(f"{name}: expected at least 16 printable ASCII characters "
                          "without spaces")
    return raw

def _optional_int(env: Mapping[str, str], name: str, default: int | None, *,
                  minimum: int = 0, maximum: int | None = None) -> int | None:
    """Unset or blank: ``default``; otherwise an integer within the bounds."""
    if (env.get(name) or "").strip() == "":
        return default
    return _int(env, name, 0, minimum=minimum, maximum=maximum)


def _plain(env: Mapping[str, str], name: str, default: str | None) -> str | None:
    return env.get(name) or default


def _data_dir(env: Mapping[str, str], name: str, default: Path) -> Path:
    return Path(env.get(name) or default).expanduser().resolve()


def _broker(env: Mapping[str, str], name: str, default: str) -> str:
    broker = (env.get(name) or default).strip()
    if broker != "embedded" and not broker.startswith(("redis://", "rediss://", "unix://")):
        raise ConfigError(f"{name}={broker!r}: expected 'embedded' or a redis:// URL")
    return broker


def _blob_store(env: Mapping[str, str], name: str, default: str) -> str:
    blob = (env.get(name) or "").strip() or default
    if not blob.startswith(("s3://", "file://")):
        raise ConfigError(f"{name}={blob!r}: expected s3://bucket[/prefix] or file:///path")
    if blob.startswith("s3://") and not blob[5:].split("/", 1)[0]:
        raise ConfigError(f"{name}={blob!r}: the s3:// URL needs a bucket name")
    return blob


Parser = Callable[[Mapping[str, str], str, Any], Any]


def setting(description: str, *, ge: float | None = None, le: float | None = None,
            note: str | None = None, shown: str | None = None, parse: Parser | None = None,
            derived: Callable[[Path], Any] | None = None) -> Meta:
    """The declaration of one ``WHARF_*`` setting, beside its field's type and default.

    ``ge``/``le`` bound a number; ``description`` is the README's "meaning" column;
    ``note`` follows the default there (``14 days``), ``shown`` replaces it where the
    default is not a plain value; ``parse`` reads a value that is not a plain number, flag
    or string; ``derived`` computes a default from the data directory."""
    extra = {key: value for key, value in (("note", note), ("shown", shown), ("parse", parse),
                                           ("derived", derived)) if value is not None}
    return Meta(ge=ge, le=le, description=description, extra=extra or None)


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Every ``WHARF_*`` setting, declared once: the field's type, default and
    :func:`setting` (bounds, README description) drive parsing (:meth:`from_env`), the
    error messages, and the README's settings table (:func:`settings_table`, checked by
    ``tests/test_settings.py``). The variable is ``WHARF_`` + the field name in capitals."""

    data_dir: Annotated[Path, setting(
        "where the embedded defaults keep their files",
        parse=_data_dir, shown="`./var` (made absolute at start)")] = Path("./var")
    database_url: Annotated[str, setting(
        "product database: `sqlite:///path` or `postgresql://user:pass@host/db` "
        "(`postgres://` and `postgresql+psycopg://` also accepted; psycopg 3 is always "
        "used)",
        parse=_db_url, derived=lambda data_dir: f"sqlite:///{data_dir / 'wharf.db'}",
        shown="`sqlite:///$WHARF_DATA_DIR/wharf.db`")]
    unitstore_url: Annotated[str, setting(
        "unit store database, same forms; a separate database, never joined with the "
        "product database",
        parse=_db_url, derived=lambda data_dir: f"sqlite:///{data_dir / 'units.db'}",
        shown="`sqlite:///$WHARF_DATA_DIR/units.db`")]
    broker_url: Annotated[str, setting(
        "`embedded` (in-process broker, only inside `wharf serve`) or a `redis://`, "
        "`rediss://` or `unix://` URL for Dramatiq's RedisBroker",
        parse=_broker)] = "embedded"
    # Prefix of every Redis key and channel Wharf uses (several deployments, or test runs,
    # can share one Redis DB).
    broker_namespace: Annotated[str, setting(
        "prefix of every Redis key and pub/sub channel Wharf uses (Dramatiq's namespace),"
        " so deployments — or test runs — can share one Redis DB; letters, digits, `_`, "
        "`.`, `-`",
        parse=_namespace)] = "wharf"
    blob_store_url: Annotated[str, setting(
        "blob storage: `s3://bucket[/prefix]` or `file:///path`; objects are stored as "
        "`<prefix>/<id>` (`s3://wharf-blobs/objects` → `objects/<id>`; no prefix → `<id>`"
        " at the bucket's root). A bucket that does not exist stops `serve`, `api` and "
        "`worker` at start with its name",
        parse=_blob_store, derived=lambda data_dir: (data_dir / "blobs").as_uri(),
        shown="`file://$WHARF_DATA_DIR/blobs`")]
    s3_endpoint_url: Annotated[str | None, setting(
        "`http(s)://` endpoint of an S3-compatible service (MinIO, Ceph RGW, R2); "
        "credentials come from the standard `AWS_*` variables",
        parse=_http_url, shown="unset: AWS S3")] = None
    s3_region: Annotated[str | None, setting(
        "S3 region",
        shown="unset: boto3's default")] = None
    host: Annotated[str, setting(
        "address `wharf serve` and `wharf api` listen on (`--host` overrides)")] = "127.0.0.1"
    port: Annotated[int, setting(
        "port they listen on (`--port` overrides); `0` picks a free port",
        ge=0, le=65535)] = 8080
    session_ttl: Annotated[int, setting(
        "lifetime of a login session (at least 60)",
        ge=60, note="14 days")] = 14 * 86400
    auth_cache_seconds: Annotated[float, setting(
        "how long an API process reuses a token's or session cookie's principal without "
        "reading the database again (`0`: never). Revoking a token or logging out takes "
        "effect at once in the process that did it, and within this bound in every "
        "other; an expiry is honoured to the instant",
        ge=0.0)] = 2.0
    max_body_bytes: Annotated[int, setting(
        "largest JSON request body, bytes (at least 1024)",
        ge=1024)] = 1024 * 1024
    argon2_time_cost: Annotated[int, setting(
        "argon2id password hashing: iterations",
        ge=1)] = 3
    argon2_memory_cost: Annotated[int, setting(
        "argon2id password hashing: memory, KiB",
        ge=8)] = 65536
    argon2_parallelism: Annotated[int, setting(
        "argon2id password hashing: lanes",
        ge=1)] = 4
    sqlite_busy_timeout_ms: Annotated[int, setting(
        "how long a SQLite writer waits for the write lock before the request answers 503"
        " `database_busy` with `Retry-After`",
        ge=0)] = 5000
    trusted_proxy_count: Annotated[int, setting(
        "reverse proxies in front of the API that append to `X-Forwarded-For`; the client"
        " IP recorded in audit rows is taken that many hops from the right (`0`: the peer"
        " address), and so is the request's scheme from `X-Forwarded-Proto` for the "
        "cookie-write origin check. `wharf serve` passes these two headers through only "
        "when it is set (then it must be reachable only through the proxy)",
        ge=0)] = 0
    secure_cookies: Annotated[bool, setting(
        "mark the session cookie `Secure` (set it behind HTTPS)")] = False
    # operations engine
    idempotency_key_ttl: Annotated[int, setting(
        "how long an `Idempotency-Key` stays bound to its operation after the operation "
        "is done",
        ge=0)] = 86400
    operation_max_attempts: Annotated[int, setting(
        "attempts before an operation that keeps failing with retryable errors is "
        "`failed`",
        ge=1)] = 5
    operation_lease_seconds: Annotated[int, setting(
        "a worker's lease on the operation it executes, renewed every third of it while a "
        "side effect runs; a lease that runs out (worker killed) makes the operation "
        "eligible again. With the recovery interval it bounds how soon an orphan "
        "completes (lease + interval + a claim: about 11 s by default)",
        ge=1)] = 8
    operation_backoff_base: Annotated[float, setting(
        "retry delay after attempt n: `base · 2^(n−1)`, capped, times a random factor in "
        "[0.5, 1]",
        ge=0.0)] = 0.5
    operation_backoff_max: Annotated[float, setting(
        "cap of that delay",
        ge=0.0)] = 300.0
    recovery_interval: Annotated[float, setting(
        "period of the recovery sweep that re-enqueues operations whose lease expired or "
        "whose retry time came (whole seconds, at least 1)",
        ge=0.05)] = 2.0
    relay_interval: Annotated[float, setting(
        "period of the outbox relay, which sends outbox rows not yet dispatched to the "
        "broker",
        ge=0.05)] = 2.0
    worker_batch: Annotated[int, setting(
        "how many due operations of one kind a worker claims at once when it answers a "
        "doorbell (kinds with long side effects: one)",
        ge=1)] = 32
    doorbell_ttl: Annotated[float, setting(
        "life of the Redis flag that says a doorbell is on its way (senders behind it "
        "do not ring again): bounds how long a lost bell keeps new ones from ringing",
        ge=0.05)] = 2.0
    worker_threads: Annotated[int, setting(
        "threads per `wharf worker` process, and worker threads inside `wharf serve`",
        ge=1)] = 4
    worker_processes: Annotated[int, setting(
        "processes started by `wharf worker`",
        ge=1)] = 2
    test_hooks: Annotated[bool, setting(
        "enables the test suite's fault-injection hooks (with `WHARF_TEST_PAUSE_FILE`); "
        "never set it in production")] = False
    # retention
    upload_session_ttl: Annotated[int, setting(
        "blob upload sessions expire this long after creation",
        ge=1)] = 86400
    asset_upload_ttl: Annotated[int, setting(
        "deadline of a unit-asset upload: a request still streaming its bytes this long "
        "after it started stops, and the `sweep_asset_uploads` sweep abandons an upload "
        "whose process died (operation failed, object deleted)",
        ge=1)] = 3600
    operation_retention: Annotated[int, setting(
        "finished operations are deleted this long after they finished",
        ge=0, note="30 days")] = 2592000
    trash_retention: Annotated[int, setting(
        "trash older than this is purged permanently",
        ge=0, note="30 days")] = 2592000
    sweep_interval: Annotated[int, setting(
        "period of the retention sweeps, seconds: they run at every multiple of it since "
        "the Unix epoch (UTC), so `45` every 45 s and `172800` every two days at 00:00 "
        "UTC",
        ge=1)] = 60
    max_upload_size: Annotated[int, setting(
        "largest blob upload, bytes; `wharf serve` refuses (413) any request body above "
        "the largest of this, `WHARF_MAX_ASSET_SIZE` and `WHARF_MAX_BODY_BYTES`, plus "
        "1 MiB, before reading it",
        ge=0, note="512 MiB")] = 512 * 1024 * 1024
    max_asset_size: Annotated[int, setting(
        "largest unit asset (a file embedded in a unit, e.g. an image in a doc), bytes; "
        "larger uploads are refused (413 `asset_too_large`) before a byte is read",
        ge=0, note="20 MiB")] = 20 * 1024 * 1024
    worktree_max_units: Annotated[int, setting(
        "most units one worktree may hold (trunk units added and units new in it); one "
        "more is refused with 409 `worktree_unit_limit`",
        ge=1)] = 200
    merge_max_conflicts: Annotated[int, setting(
        "conflicts a worktree merge records per unit (its `conflict_count` keeps the true "
        "number); a rebase reports at most this many unresolved",
        ge=1)] = 10_000
    worktree_retention: Annotated[int, setting(
        "a merged or discarded worktree's drafts are deleted this long after it was "
        "processed (the worktree and its unit list stay; a unit's draft then answers 410 "
        "`draft_purged`)",
        ge=0, note="30 days")] = 2592000
    verify_rehash: Annotated[bool, setting(
        "before publishing an upload, re-read the stored object and check its SHA-256 "
        "(size and ETag are always checked)")] = True
    # login / registration rate limits (0 disables a limit)
    login_max_failures: Annotated[int, setting(
        "failed logins per username *and* client address within `WHARF_LOGIN_WINDOW`; "
        "then that address gets 429 `rate_limited` with `Retry-After` for that username "
        "until the window ends, even with the right password. The user logging in from "
        "another address is not affected; a successful login clears its own count. Client"
        " addresses are IPv4 addresses and IPv6 /64 networks; `0` disables",
        ge=0)] = 10
    login_max_failures_per_user: Annotated[int, setting(
        "failed logins per username from all addresses together within "
        "`WHARF_LOGIN_WINDOW` (distributed guessing); then 429 for that username from "
        "every address until the window ends; `0` disables",
        ge=0)] = 100
    login_max_failures_per_address: Annotated[int, setting(
        "failed logins per client address (IPv4 address or IPv6 /64; any username) within"
        " `WHARF_LOGIN_WINDOW`; `0` disables",
        ge=0)] = 100
    login_window: Annotated[int, setting(
        "length of the login throttle window, seconds (fixed window starting at the first"
        " failure)",
        ge=1)] = 900
    register_per_address: Annotated[int, setting(
        "registrations per client address (IPv4 address or IPv6 /64) within "
        "`WHARF_REGISTER_WINDOW` (every well-formed attempt counts, a taken name too); "
        "`0` disables",
        ge=0)] = 20
    register_window: Annotated[int, setting(
        "length of the registration throttle window, seconds",
        ge=1)] = 3600
    # CSRF: origins besides the API's own that may send cookie-authenticated writes
    allowed_origins: Annotated[tuple[str, ...], setting(
        "comma-separated origins (`https://app.example.com`, `http://localhost:3000`: "
        "scheme, host, optional port; nothing else) besides the API's own that may send "
        "cookie-authenticated writes",
        parse=_origins, shown="unset: only the API's own origin")] = ()
    # monitoring
    metrics_port: Annotated[int | None, setting(
        "`wharf worker` and `wharf scheduler` serve `/metrics` and `/healthz` on this "
        "port (on `WHARF_HOST`; `--metrics-port` overrides; `0` picks a free port). The "
        "API serves `/metrics` on its own port",
        ge=0, le=65535, shown="unset: no metrics port")] = None
    metrics_token: Annotated[str | None, setting(
        "when set (at least 16 printable characters, no spaces), `/metrics` on every "
        "process and the API's `/healthz/details` need `Authorization: Bearer <token>` "
        "(and `/healthz/details` then also shows operator messages, such as a missing "
        "bucket's name); unset, anyone who reaches them can read them (errors show their "
        "type only)",
        parse=_token, shown="unset")] = field(default=None, repr=False)
    metrics_cache_seconds: Annotated[float, setting(
        "how long an API process reuses the gauges it reads from the database and the "
        "dependency checks (shared by `/metrics` and `/healthz/details`) between "
        "requests; one request at a time recomputes them, the others get the previous "
        "values; `0` recomputes at every request",
        ge=0.0)] = 5.0
    # units (documents): bounds on what one changeset may build
    unit_max_snapshot_bytes: Annotated[int, setting(
        "largest unit document (compact UTF-8 JSON) a changeset may produce, and the most"
        " a single changeset may copy; beyond it 413 `unit_too_large`, nothing stored (at"
        " least 1024)",
        ge=1024, note="16 MiB")] = 16 * 1024 * 1024
    # the request schema caps a changeset at 10000 operations
    unit_max_changeset_ops: Annotated[int, setting(
        "most operations in one changeset; more is 413 `changeset_too_large` (1–10000)",
        ge=1, le=10000)] = 1000
    # above ~400 the JSON encoders and comparisons near Python's recursion limit
    unit_max_depth: Annotated[int, setting(
        "deepest nesting a changeset may give a unit document (the document is level 1); "
        "deeper is 400 `unit_too_deep` (8–400)",
        ge=8, le=400)] = 400
    # HTTP serving (wharf serve; the long-poll limit applies to every API process);
    # long_poll_max_waiters None: half the request threads
    long_poll_max_waiters: Annotated[int | None, setting(
        "long-polls (`GET /api/operations/{id}?wait=`) that may wait at once per API "
        "process; beyond it a long-poll answers at once with the operation's current "
        "state and `Retry-After` (`0`: never wait). Keep it below the request threads",
        ge=0, shown="half the request threads: `wharf serve` 8, `wharf api` 4 per "
                    "gunicorn worker")] = None
    http_threads: Annotated[int, setting(
        "request threads of `wharf serve` (more than `WHARF_LONG_POLL_MAX_WAITERS`)",
        ge=2)] = 16
    http_connection_limit: Annotated[int, setting(
        "open connections `wharf serve` accepts; beyond it new ones wait in the listen "
        "backlog",
        ge=10)] = 1000
    http_send_timeout: Annotated[int, setting(
        "`wharf serve` closes a connection whose pending response made no progress (the "
        "client reads nothing) for this long",
        ge=1)] = 30
    http_receive_timeout: Annotated[int, setting(
        "`wharf serve` closes a connection whose request (headers and body) has not fully"
        " arrived within this many seconds plus one second per "
        "`WHARF_HTTP_MIN_RECEIVE_RATE` bytes received (trickled bytes do not reset it; a "
        "new connection that sends nothing is closed after this long; idle keep-alive "
        "connections close after waitress's 120 s)",
        ge=1)] = 30
    http_min_receive_rate: Annotated[int, setting(
        "bytes per second a slow request must keep up past `WHARF_HTTP_RECEIVE_TIMEOUT` "
        "(`0`: the timeout is absolute)",
        ge=0)] = 1024
    extra: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> "Settings":
        env = dict(os.environ if env is None else env)
        values: dict[str, Any] = {}
        for declared in DECLARED:
            default = declared.default
            if declared.derived is not None:
                default = declared.derived(values["data_dir"])
            values[declared.field] = declared.parse(env, declared.variable, default)
        values.update(overrides)
        return cls(**values)

    def replace(self, **changes: Any) -> "Settings":
        return dataclasses.replace(self, **changes)

    @property
    def embedded_broker(self) -> bool:
        return self.broker_url == "embedded"


@dataclass(frozen=True)
class Declared:
    """One setting as :class:`Settings` declares it."""

    field: str
    variable: str
    type: Any
    default: Any
    meta: Meta

    @property
    def derived(self) -> Callable[[Path], Any] | None:
        return (self.meta.extra or {}).get("derived")

    def parse(self, env: Mapping[str, str], name: str, default: Any) -> Any:
        custom = (self.meta.extra or {}).get("parse")
        if custom is not None:
            return custom(env, name, default)
        ge, le = self.meta.ge, self.meta.le
        if self.type is bool:
            return _bool(env, name, default)
        if self.type is int:
            return _int(env, name, default, minimum=int(ge or 0),
                        maximum=None if le is None else int(le))
        if self.type is float:
            return _float(env, name, default, minimum=float(ge or 0.0))
        if self.type == int | None:
            return _optional_int(env, name, default, minimum=int(ge or 0),
                                 maximum=None if le is None else int(le))
        if self.type in (str, str | None):
            return _plain(env, name, default)
        raise TypeError(f"{self.variable}: no parser for {self.type!r}")

    @property
    def shown_default(self) -> str:
        """The README's "default" column."""
        extra = self.meta.extra or {}
        if "shown" in extra:
            return str(extra["shown"])
        value = self.default
        text = ("true" if value else "false") if isinstance(value, bool) \
            else f"{value:g}" if isinstance(value, float) else str(value)
        return f"`{text}`" + (f" ({extra['note']})" if "note" in extra else "")


def _declarations() -> tuple[Declared, ...]:
    hints = typing.get_type_hints(Settings, include_extras=True)
    out = []
    for f in dataclasses.fields(Settings):
        hint = hints[f.name]
        if typing.get_origin(hint) is not Annotated:
            continue  # not read from the environment (``extra``)
        kind, *metadata = typing.get_args(hint)
        meta = next(m for m in metadata if isinstance(m, Meta))
        default = None if f.default is dataclasses.MISSING else f.default
        out.append(Declared(f.name, "WHARF_" + f.name.upper(), kind, default, meta))
    return tuple(out)


DECLARED = _declarations()


def settings_table() -> str:
    """The README's settings table (markdown), from the declarations."""
    lines = ["| variable | meaning | default |", "| --- | --- | --- |"]
    lines += [f"| `{d.variable}` | {d.meta.description} | {d.shown_default} |"
              for d in DECLARED]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # python -m wharf.config: the README's settings table
    print(settings_table(), end="")
