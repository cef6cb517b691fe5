"""The broker URLs beyond ``redis://`` (docs/operations.md, "Choosing a broker"): the
``redis+sentinel://`` grammar, the ``amqp(s)://`` check, and which kind of broker a URL
names."""
import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlsplit

SENTINEL_SCHEME = "redis+sentinel"
SENTINEL_PORT = 26379
#: The query options of a ``redis+sentinel://`` URL.
SENTINEL_OPTIONS = frozenset({"sentinel_password", "client_name"})


@dataclass(frozen=True)
class SentinelURL:
    """``redis+sentinel://[[user]:password@]host1[:port1][,host2[:port2]...]/master[/db]
    [?sentinel_password=...&client_name=...]``: the sentinels to ask, the master's name
    and DB; the user and password are the master's (and its replicas'), the sentinels'
    own password (if they require one) is ``sentinel_password``."""

    sentinels: tuple[tuple[str, int], ...]
    master: str
    db: int = 0
    username: str | None = None
    password: str | None = None
    sentinel_password: str | None = None
    client_name: str | None = None


def redacted(url: str) -> str:
    """``url`` without the password of its user part nor the values of its query (one
    of them may be a password: ``sentinel_password``), for messages."""
    base, q, query = url.partition("?")
    if q:
        names = (part.partition("=") for part in query.split("&"))
        query = "&".join(f"{name}=***" if eq else name for name, eq, _ in names)
    scheme, sep, rest = base.partition("://")
    userinfo, at, hosts = rest.rpartition("@")
    if sep and at and ":" in userinfo:
        base = f"{scheme}://{userinfo.split(':', 1)[0]}:***@{hosts}"
    return f"{base}{q}{query}"


def _host_port(raw: str, default_port: int) -> tuple[str, int]:
    if raw.startswith("["):  # [IPv6]:port
        host, _, rest = raw[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
        if rest and not rest.startswith(":"):
            raise ValueError(f"bad host {raw!r}")
    else:
        host, _, port_text = raw.partition(":")
    if not host or not re.fullmatch(r"[A-Za-z0-9_.:%-]{1,253}", host):
        raise ValueError(f"bad host {raw!r}")
    if port_text == "":
        return host, default_port
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise ValueError(f"bad port in {raw!r} (1 to 65535)")
    return host, int(port_text)


def parse_sentinel_url(url: str) -> SentinelURL:
    """Parse a ``redis+sentinel://`` URL (:class:`SentinelURL`); ValueError says what is
    wrong, without the password."""
    parts = urlsplit(url)
    if parts.scheme != SENTINEL_SCHEME:
        raise ValueError(f"expected {SENTINEL_SCHEME}://")
    if parts.fragment:
        raise ValueError("no #fragment expected")
    userinfo, at, hosts = parts.netloc.rpartition("@")
    username = password = None
    if at:
        user, colon, secret = userinfo.partition(":")
        username = unquote(user) or None
        password = unquote(secret) if colon else None
    if not hosts:
        raise ValueError("expected at least one sentinel host:port")
    raw_hosts = hosts.split(",")
    if len(raw_hosts) > 16:
        raise ValueError("at most 16 sentinels")
    sentinels = tuple(_host_port(h.strip(), SENTINEL_PORT) for h in raw_hosts)
    path = [p for p in parts.path.split("/") if p != ""]
    if not 1 <= len(path) <= 2:
        raise ValueError("expected the master's name after the hosts: "
                         "redis+sentinel://host:port/<master-name>[/<db>]")
    master = unquote(path[0])
    if not re.fullmatch(r"[A-Za-z0-9_.:-]{1,128}", master):
        raise ValueError(f"bad master name {master!r}")
    db = 0
    if len(path) == 2:
        if not path[1].isdigit() or not 0 <= int(path[1]) <= 1_000_000:
            raise ValueError(f"bad DB number {path[1]!r}")
        db = int(path[1])
    options: dict[str, str] = {}
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key not in SENTINEL_OPTIONS:
            raise ValueError(f"unknown option {key!r} (expected "
                             f"{', '.join(sorted(SENTINEL_OPTIONS))})")
        options[key] = value
    return SentinelURL(sentinels=sentinels, master=master, db=db, username=username,
                       password=password,
                       sentinel_password=options.get("sentinel_password") or None,
                       client_name=options.get("client_name") or None)


def check_amqp_url(url: str) -> None:
    """``amqp(s)://[user:password@]host[:port][/vhost][?options]`` (pika's URL form;
    pika checks the options when the broker connects)."""
    parts = urlsplit(url)
    hosts = parts.netloc.rpartition("@")[2]
    if not hosts:
        raise ValueError("expected amqp://[user:password@]host[:port][/vhost]")
    _host_port(hosts, 5671 if parts.scheme == "amqps" else 5672)
    if parts.path.count("/") > 1:
        raise ValueError("expected at most one path segment (the vhost; %2F for '/')")


def broker_kind(url: str) -> str:
    """``embedded``, ``redis`` (redis://, rediss://, unix://, redis+sentinel://) or
    ``rabbitmq`` (amqp://, amqps://)."""
    if url == "embedded":
        return "embedded"
    return "rabbitmq" if url.startswith(("amqp://", "amqps://")) else "redis"
