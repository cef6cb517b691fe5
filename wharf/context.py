"""Who is acting and where the request came from: passed into every core call."""
from __future__ import annotations

from dataclasses import dataclass, field


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
    extra: dict = field(default_factory=dict, compare=False)
