"""One typed settings object, read from ``WHARF_*`` environment variables.

Each setting is declared once, as a field of :class:`Settings`: its type, its default,
and a :func:`setting` annotation (``msgspec.Meta``: bounds, the README description). Parsing,
the bounds checked, the error messages and the README's settings table all derive from it
(``python -m wharf.infra.settings`` prints the table; ``tests/api/test_settings.py`` checks
the README against it). ``msgspec.Meta`` is used as the declaration only (bounds and description in
the vocabulary of the wire contract); it does not parse
(:mod:`wharf.infra.setting_declaration` reads a declaration back). The parsing is Wharf's
own small readers (:mod:`wharf.infra.setting_readers`: ``read_int``, ``read_float``, ...),
because each must answer one exact line per variable (the CLI prints it and exits with
status 2; the tests match it), which neither msgspec's nor pydantic-settings' multi-line
validation errors give without being mapped back; pydantic-settings would also be one more
dependency for the same declarations.

Every value is validated at start; a bad value raises :class:`ConfigError` naming the
variable and what was expected, so an operator sees one clear line instead of a trace.
"""
import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from wharf.infra import setting_readers as readers
from wharf.infra.setting_declaration import declarations, setting
from wharf.infra.setting_readers import ConfigError
from wharf.infra.settings_documents import DocumentSettings
from wharf.infra.settings_external import ExternalLoginSettings
from wharf.infra.settings_feed import FeedSettings

__all__ = ["DECLARED", "ConfigError", "Settings", "read_setting", "settings_table"]


@dataclass(frozen=True, kw_only=True)
class Settings(DocumentSettings, FeedSettings, ExternalLoginSettings):
    """Every ``WHARF_*`` setting, declared once: the field's type, default and
    :func:`setting` (bounds, README description) drive parsing (:meth:`from_env`), the
    error messages, and the README's settings table (:func:`settings_table`, checked by
    ``tests/api/test_settings.py``). The variable is ``WHARF_`` + the field name in capitals."""

    data_dir: Annotated[Path, setting(
        "where the embedded defaults keep their files",
        parse=readers.data_dir, shown="`./var` (made absolute at start)")] = Path("./var")
    database_url: Annotated[str, setting(
        "product database: `sqlite:///path` or `postgresql://user:pass@host/db` "
        "(`postgres://` and `postgresql+psycopg://` also accepted; psycopg 3 is always "
        "used)",
        parse=readers.db_url, derived=lambda data_dir: f"sqlite:///{data_dir / 'wharf.db'}",
        shown="`sqlite:///$WHARF_DATA_DIR/wharf.db`")]
    unitstore_url: Annotated[str, setting(
        "unit store database, same forms; a separate database, never joined with the "
        "product database",
        parse=readers.db_url, derived=lambda data_dir: f"sqlite:///{data_dir / 'units.db'}",
        shown="`sqlite:///$WHARF_DATA_DIR/units.db`")]
    broker_url: Annotated[str, setting(
        "`embedded` (in-process broker, only inside `wharf serve`); a `redis://`, "
        "`rediss://` or `unix://` URL for Dramatiq's RedisBroker; "
        "`redis+sentinel://[[user]:password@]host1:port1[,host2:port2…]/<master>[/<db>]"
        "[?sentinel_password=…]` for Redis behind Sentinel; or `amqp://` / `amqps://` for "
        "Dramatiq's RabbitmqBroker (docs/operations.md, \"Choosing a broker\")",
        parse=readers.broker)] = "embedded"
    # Prefix of every Redis key and channel Wharf uses (several deployments, or test runs,
    # can share one Redis DB).
    broker_namespace: Annotated[str, setting(
        "prefix of every Redis key and pub/sub channel Wharf uses (Dramatiq's namespace),"
        " so deployments — or test runs — can share one Redis DB; letters, digits, `_`, "
        "`.`, `-`. On RabbitMQ, the prefix of every queue name (`<namespace>.operations`)",
        parse=readers.namespace)] = "wharf"
    blob_store_url: Annotated[str, setting(
        "blob storage: `s3://bucket[/prefix]` or `file:///path`; objects are stored as "
        "`<prefix>/<id>` (`s3://wharf-blobs/objects` → `objects/<id>`; no prefix → `<id>`"
        " at the bucket's root). A bucket that does not exist stops `serve`, `api` and "
        "`worker` at start with its name",
        parse=readers.blob_store, derived=lambda data_dir: (data_dir / "blobs").as_uri(),
        shown="`file://$WHARF_DATA_DIR/blobs`")]
    s3_endpoint_url: Annotated[str | None, setting(
        "`http(s)://` endpoint of an S3-compatible service (MinIO, Ceph RGW, R2); "
        "credentials come from the standard `AWS_*` variables",
        parse=readers.http_url, shown="unset: AWS S3")] = None
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
    database_pool_size: Annotated[int, setting(
        "PostgreSQL connections each process keeps per database (opened as needed, kept "
        "once opened, never more); a request that finds them all in use waits up to "
        "10 s, then answers 503 `database_busy`. Keep it above the process's threads "
        "(`wharf api`: gunicorn's threads per worker, 32 by default, plus a few "
        "background threads); the server's `max_connections` must cover processes x it "
        "x 2 (the product database and the unit store) at worst",
        ge=1, le=1000)] = 40  # storage.db.PG_POOL_SIZE (this module imports no storage)
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
    worker_batch_max: Annotated[int, setting(
        "the most a drain claims at once: while its claims come back full (a backlog), "
        "each claims twice as many as the one before, from `WHARF_WORKER_BATCH` up to "
        "this (no growth when it is not above `WHARF_WORKER_BATCH`, the default: a larger "
        "claim lengthens another user's wait behind a backlog, docs/operations.md)",
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
        "enables the test suite's fault-injection hooks (with `WHARF_TEST_PAUSE_FILE`, "
        "`WHARF_TEST_READ_PAUSE_FILE`); "
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
    verify_rehash: Annotated[bool, setting(
        "before publishing an upload, re-read the stored object and check its SHA-256 "
        "(size and ETag are always checked)")] = True
    # login / registration rate limits (0 disables a limit)
    login_max_failures: Annotated[int, setting(
        "failed logins per username *and* client address within `WHARF_LOGIN_WINDOW`; "
        "then that address gets 429 `rate_limited` with `Retry-After` for that username "
        "until the window ends, even with the right password. The user logging in from "
        "another address is not affected; a successful login clears its own count. Client"
        " addresses are IPv4 addresses and IPv6 /64 networks; `0` disables. The three login"
        " limits also count wrong current passwords at `PUT /api/me/password` and wrong"
        " recovery codes at `POST /api/password-resets`, each under keys of its own",
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
    audit_refusals_per_minute: Annotated[int, setting(
        "failed logins and refused writes recorded in the audit trail per minute, all "
        "clients together; past it they are answered as always but not recorded (counted "
        "in `wharf_audit_refusals_dropped_total`)",
        ge=1)] = 600
    audit_refusals_per_address: Annotated[int, setting(
        "failed logins and refused writes recorded per minute per client address (IPv4 "
        "address or IPv6 /64), so one client cannot use up the whole allowance",
        ge=1)] = 30
    # CSRF: origins besides the API's own that may send cookie-authenticated writes
    allowed_origins: Annotated[tuple[str, ...], setting(
        "comma-separated origins (`https://app.example.com`, `http://localhost:3000`: "
        "scheme, host, optional port; nothing else) besides the API's own that may send "
        "cookie-authenticated writes",
        parse=readers.origins, shown="unset: only the API's own origin")] = ()
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
        parse=readers.token, shown="unset")] = field(default=None, repr=False)
    metrics_cache_seconds: Annotated[float, setting(
        "how long an API process reuses the gauges it reads from the database and the "
        "dependency checks (shared by `/metrics` and `/healthz/details`) between "
        "requests; one request at a time recomputes them, the others get the previous "
        "values; `0` recomputes at every request",
        ge=0.0)] = 5.0
    # HTTP serving (wharf serve; the long-poll limit applies to every API process);
    # long_poll_max_waiters None: three quarters of the request threads
    long_poll_max_waiters: Annotated[int | None, setting(
        "long-polls (`GET /api/operations/{id}?wait=`, and submissions sent with "
        "`Prefer: wait`) that may wait at once per API process; beyond it a long-poll "
        "answers at once with the operation's current state and `Retry-After` (a "
        "submission: its 202) (`0`: never wait). Keep it below the request threads",
        ge=0, shown="three quarters of the request threads: `wharf serve` 12, `wharf api` "
                    "24 per gunicorn worker")] = None
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
    # operators (issue 15): who may see the dashboard and act on any user's operations
    operators: Annotated[tuple[str, ...], setting(
        "comma-separated usernames of the operators: they may open the dashboard and read,"
        " retry and cancel any user's operation through the operations endpoints (with a "
        "login session, or an API token that has both the `read` and `write` scopes); "
        "case-insensitive",
        parse=readers.usernames, shown="unset: nobody")] = ()
    # process heartbeats (issue 15): what the dashboard and `wharf processes` show
    heartbeat_seconds: Annotated[float, setting(
        "every `wharf worker` process, `wharf scheduler`, `wharf serve` and `wharf api` "
        "gunicorn worker writes its heartbeat row (`process_heartbeats`) this often; rows "
        "not seen for a day are deleted; at most 3600 (an hour)",
        ge=0.1, le=3600)] = 10.0
    # logs (wharfd/logs.py; WHARF_LOG_LEVEL is read by the `wharf` command itself)
    log_format: Annotated[str, setting(
        "how every process writes its log lines (to stderr; gunicorn's access log: where "
        "its configuration says): `json` (one JSON object per line: "
        "`timestamp`, `level`, `logger`, `message`, `exception`, and the request's or "
        "operation's context: `request_id`, `user_id`, `operation_id`, `kind`, `attempt`, "
        "`trace_id`, `span_id`), `text` (for people) or `auto`: `json` for `wharf api`, "
        "`wharf feed`, `wharf worker` and `wharf scheduler`, `text` for `wharf serve` and "
        "the short commands (docs/operations.md, \"Logs\")",
        parse=readers.log_format)] = "auto"
    access_log: Annotated[bool, setting(
        "one line per request, in `WHARF_LOG_FORMAT`, never with the query string: `wharf "
        "serve` writes `GET /api/me 200` to stderr (logger `wharf.access`, fields "
        "`method`, `path`, `status`, `duration_ms`, `request_id`; `wharf serve --quiet` "
        "turns it off too), `wharf api` gunicorn's access log to stdout (its packaged "
        "configuration)")] = True
    # wharf fsck (consistency of the stores with the product database)
    fsck_grace_seconds: Annotated[int, setting(
        "`wharf fsck --repair` (and the `fsck` sweep with `WHARF_FSCK_REPAIR`) queues the "
        "deletion of an orphaned object only once it was last modified longer ago than "
        "this; must exceed the longest a live upload may write (`WHARF_UPLOAD_SESSION_TTL`"
        ", `WHARF_ASSET_UPLOAD_TTL` + 300 s), or fsck refuses to start",
        ge=1, note="2 days")] = 172800
    fsck_interval: Annotated[int, setting(
        "period of the `fsck` sweep, seconds (ticks at multiples of it since the Unix "
        "epoch, a Thursday: the default runs Thursdays at 00:00 UTC); it exports the "
        "`wharf_fsck_*` gauges",
        ge=60, note="7 days")] = 604800
    fsck_repair: Annotated[bool, setting(
        "the `fsck` sweep also queues the deletion of orphaned objects older than "
        "`WHARF_FSCK_GRACE_SECONDS` (off: it only reports)")] = False
    webhook_allow_private: Annotated[bool, setting(
        "webhooks may target private, loopback, link-local and reserved addresses "
        "(tests, trusted networks only: off refuses them, against SSRF)")] = False
    webhook_max_per_user: Annotated[int, setting(
        "how many webhook endpoints one user may register", ge=1)] = 10
    webhook_timeout: Annotated[float, setting(
        "seconds a webhook delivery may take (connect and response; 0.1 to 60: a "
        "delivery holds a worker thread that long)", ge=0.1, le=60)] = 5.0
    webhook_retry_schedule: Annotated[str, setting(
        "seconds between the attempts of a webhook delivery (comma-separated; jitter "
        "is added; after the last one the delivery gives up)", parse=readers.delays)] = (
        "5,30,120,600,1800,3600,7200,14400,28800,28800")
    webhook_claim_margin_seconds: Annotated[float, setting(
        "margin of a webhook send's claim over its deadline (`WHARF_WEBHOOK_TIMEOUT` + "
        "1 s): a worker that died mid-send leaves the delivery to be sent again this long "
        "after the deadline, and the `retry_webhook_deliveries` sweep rings a delivery "
        "overdue by this long (a lost message) again; 1 to 3600",
        ge=1, le=3600)] = 60.0
    fair_claiming: Annotated[bool, setting(
        "a claim takes due operations round-robin across the actors that have some "
        "(each actor's oldest first), so one actor's backlog cannot starve another's "
        "(off: oldest first over all actors)")] = True
    quota_pending_operations: Annotated[int, setting(
        "how many operations one user may have pending or running at once; more answer "
        "429 `quota_exceeded` (`0`: unlimited; an API token may carry its own)",
        ge=0, le=10_000_000)] = 10000
    quota_submissions_per_minute: Annotated[int, setting(
        "how many operations one user may submit in any 60 seconds; more answer 429 "
        "`quota_exceeded` (`0`: unlimited; an API token may carry its own)",
        ge=0, le=10_000_000)] = 0
    account_reauth_seconds: Annotated[int, setting(
        "`DELETE /api/me` and `POST /api/me/recovery-codes` without the password are "
        "accepted from a login session at most this old (`0`: the password is always "
        "required)",
        ge=0, le=3600, note="5 minutes")] = 300
    username_retention: Annotated[int, setting(
        "a deleted account's username stays taken this long after the deletion was "
        "requested",
        ge=0, le=10 * 365 * 86400, note="30 days")] = 2592000
    deletion_ledger_retention: Annotated[int, setting(
        "deletion ledger rows (`deletion_records`) are kept in the database this long "
        "after they were shipped to the blob store's `ledger/` prefix; set it at least "
        "to the age of the oldest backup you may restore",
        ge=86400, le=10 * 365 * 86400, note="90 days")] = 7776000
    account_deletion_batch: Annotated[int, setting(
        "rows an account or team space deletion removes per transaction",
        ge=10, le=10000)] = 500
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


DECLARED = declarations(Settings)


def read_setting(name: str, env: Mapping[str, str] | None = None) -> Any:
    """One setting (by field name) from the environment, parsed and checked as
    :meth:`Settings.from_env` would, without reading the others (for what a process must
    know before its command checks the whole configuration, such as the log format)."""
    declared = next(d for d in DECLARED if d.field == name)
    if declared.derived is not None:
        raise ValueError(f"{declared.variable}: derived from the data directory")
    return declared.parse(os.environ if env is None else env, declared.variable,
                          declared.default)


def settings_table() -> str:
    """The README's settings table (markdown), from the declarations."""
    lines = ["| variable | meaning | default |", "| --- | --- | --- |"]
    lines += [f"| `{d.variable}` | {d.meta.description} | {d.shown_default} |"
              for d in DECLARED]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # python -m wharf.infra.settings: the README's settings table
    print(settings_table(), end="")
