"""Reading the audit trail (``wharf.audittrail``)."""
from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import msgspec

from api.schemas.common import Cursor, Id, IdRef, Limit, Response, Timestamp
from wharf.audittrail.reading import ACTION_PATTERN
from wharf.infra.pagination import DEFAULT_LIMIT

Action = Annotated[str, msgspec.Meta(
    max_length=64, pattern=ACTION_PATTERN, examples=["unit.restore", "unit."],
    description="An action, or a prefix of actions ending in a dot.")]
Since = Annotated[datetime, msgspec.Meta(description="Rows at or after this instant "
                                                     "(RFC 3339; UTC when no offset).")]
Until = Annotated[datetime, msgspec.Meta(description="Rows before this instant.")]


class MyAuditQuery(msgspec.Struct, forbid_unknown_fields=False):
    action: Action | None = None
    since: Since | None = None
    until: Until | None = None
    limit: Limit = DEFAULT_LIMIT
    cursor: Cursor | None = None


class SpaceAuditQuery(MyAuditQuery, forbid_unknown_fields=False):
    actor_id: IdRef | None = None


class OperatorAuditQuery(SpaceAuditQuery, forbid_unknown_fields=False):
    space_id: IdRef | None = None


class Actor(Response):
    type: Annotated[str, msgspec.Meta(description="`user`, `anonymous` or `system` (a "
                                                  "worker: `id` is the operation's)")]
    id: str | None
    username: str | None


class AuditEntry(Response):
    id: Id
    at: Timestamp
    action: str
    actor: Actor
    target_type: str
    target_id: str | None
    space_id: str | None
    request_id: str | None
    details: dict[str, Any] | None
    client_ip: Annotated[str | None, msgspec.Meta(
        description="Only in one's own trail and the operators'.")] = None
    user_agent: str | None = None


class AuditPage(Response):
    items: list[AuditEntry]
    next_cursor: str | None
