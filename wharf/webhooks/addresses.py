"""Which webhook URLs may be called (SSRF rules).

- ``http`` or ``https`` only, a host, no credentials, at most ``MAX_URL_LENGTH`` chars;
- every address the host resolves to must be global unicast: private, loopback,
  link-local (cloud metadata 169.254.169.254), multicast, unspecified, shared and reserved
  ranges are refused (IPv4-mapped IPv6 is judged as its IPv4), and so are 6to4
  (2002::/16: it embeds any IPv4, a private one included) and the deprecated site-local
  fec0::/10, which Python counts as global (``REFUSED_NETWORKS``), unless
  ``WHARF_WEBHOOK_ALLOW_PRIVATE``;
- checked at registration and again before each delivery (DNS may change: rebinding),
  and the delivery connects to the addresses it checked (``Target.addresses``, each in
  turn until one answers), not to a second resolution;
- the audit log keeps only the URL's origin (``origin``: secrets live in paths and
  queries, e.g. Slack's).
"""
from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from wharf.infra.errors import ProblemCode, ValidationFailed
from wharf.webhooks.events import MAX_URL_LENGTH

CODE = ProblemCode.WEBHOOK_URL_REFUSED


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str  # as written (the Host header and TLS server name)
    port: int
    path: str  # path + query
    addresses: tuple[str, ...]  # the checked IP addresses to connect to, in turn


#: Ranges refused though ``ipaddress`` counts them as global.
REFUSED_NETWORKS = (ipaddress.ip_network("2002::/16"),  # 6to4: embeds any IPv4
                    ipaddress.ip_network("fec0::/10"))  # site-local (deprecated)


def refused(message: str) -> ValidationFailed:
    return ValidationFailed(message, code=CODE, details={"field": "url"})


def _allowed(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if any(ip in net for net in REFUSED_NETWORKS):
        return False
    return ip.is_global and not (ip.is_multicast or ip.is_unspecified or ip.is_reserved)


def origin(url: str) -> str:
    """``scheme://host[:port]`` of a (parsed) URL: what the audit log keeps."""
    scheme, host, port, _ = parse(url)
    shown = f"[{host}]" if ":" in host else host
    default = 443 if scheme == "https" else 80
    return f"{scheme}://{shown}" + ("" if port == default else f":{port}")


def parse(url: str) -> tuple[str, str, int, str]:
    if len(url) > MAX_URL_LENGTH:
        raise refused(f"the URL is longer than {MAX_URL_LENGTH} characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise refused("the URL is not valid") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise refused("only http and https URLs are allowed")
    if not parts.hostname or parts.username is not None or parts.password is not None:
        raise refused("the URL needs a host and no credentials")
    if any(ord(c) < 33 for c in url):
        raise refused("the URL contains spaces or control characters")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return scheme, parts.hostname, port or (443 if scheme == "https" else 80), path


def resolve(url: str, *, allow_private: bool) -> Target:
    """Check ``url`` and pick the address to connect to; raises ``ValidationFailed``
    (``webhook_url_refused``) when it may not be called."""
    scheme, host, port, path = parse(url)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise refused(f"the host {host!r} does not resolve") from None
    addresses = [str(info[4][0]) for info in infos]
    if not addresses:
        raise refused(f"the host {host!r} does not resolve")
    if not allow_private:
        for a in addresses:
            if not _allowed(ipaddress.ip_address(a.split("%", 1)[0])):
                raise refused(f"the host {host!r} resolves to a private, loopback or "
                              "reserved address")
    return Target(scheme, host, port, path, tuple(dict.fromkeys(addresses)))
