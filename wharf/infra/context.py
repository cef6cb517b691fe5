"""Who is acting and where the request came from: passed into every core call."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# C0 controls, DEL and C1 controls: a header may carry them (NUL included), but no
# database column should (PostgreSQL refuses NUL in text outright).
# Lone surrogates (no UTF-8 encoding) are replaced too.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
CLIENT_IP_MAX = 64
USER_AGENT_MAX = 512


def recorded_text(value: str | None, limit: int) -> str | None:
    """Client-supplied request metadata as it may be stored: control characters replaced
    by U+FFFD, lone surrogates too, cut to ``limit`` characters; None when empty."""
    if not value:
        return None
    return _CONTROL.sub("\ufffd", value[:limit])


@dataclass(frozen=True)
class Principal:
    """A verified actor. ``kind`` is ``user``, ``anonymous`` (never a row) or ``system``."""

    kind: str
    user_id: str | None = None
    username: str | None = None
    # None means "every scope" (a login session); a token carries its own scopes.
    scopes: frozenset[str] | None = None
    token_id: str | None = None
    session_id: str | None = None
    # The token's own quotas (``wharf.operations.quotas``); None: the server's settings.
    quota_pending: int | None = None
    quota_per_minute: int | None = None

    @property
    def is_user(self) -> bool:
        return self.kind == "user"

    def has_scope(self, scope: str) -> bool:
        return self.scopes is None or scope in self.scopes


ANONYMOUS = Principal(kind="anonymous")


def system_principal(operation_id: str | None = None) -> Principal:
    return Principal(kind="system", user_id=None, username=operation_id)


@dataclass(frozen=True)
class RequestContext:
    principal: Principal = ANONYMOUS
    request_id: str | None = None
    client_ip: str | None = None
    user_agent: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        # Whoever builds a context (the API from headers, the CLI, a task), what lands in
        # the audit log, login sessions and throttling rows is storable text.
        object.__setattr__(self, "client_ip", recorded_text(self.client_ip, CLIENT_IP_MAX))
        object.__setattr__(self, "user_agent", recorded_text(self.user_agent,
                                                             USER_AGENT_MAX))
