"""Who may read which audit rows, and one keyset page of them.

- ``space_trail``: a space's rows (``audit_logs.space_id``), for its owner and admins
  (a team admin; the owner of a personal space). Members' addresses and user agents are
  not shown to them: who did what, when, to what, and the request id.
- ``my_trail``: the caller's own actions (``actor_id``), plus the failed logins against
  their username (``session.login_failed``, whose target is their user), with address and
  user agent: the place to ask "was that login me?".
- ``operator_trail``: every row, every field, for operators (``WHARF_OPERATORS``).

Pages are newest first by id: ids are time-ordered (UUIDv7), so a time range is an id
range and every walk stays on an index: ``ix_audit_scope`` (space, id) for a space,
``ix_audit_actor`` (actor, id) and the partial ``ix_audit_login_failed`` (target, id) for
the caller's, the primary key for the operators'. Action and actor filters are applied to
the rows walked, at most ``pagination.SCAN_BUDGET`` a request (a rare action gives short
pages with a cursor, never a long scan).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, select, union_all
from sqlalchemy.orm import Session

from storage.db import Database
from storage.enums import Role
from storage.models import AuditLog, User
from wharf.identity.placeholder import PLACEHOLDER_NAME
from wharf.infra.context import RequestContext
from wharf.infra.errors import ValidationFailed
from wharf.infra.operators import require_operator
from wharf.infra.pagination import decode_cursor, scan_page
from wharf.infra.settings import Settings
from wharf.spaces.access import require_space

#: An action (``unit.restore``), or a prefix of actions ending in a dot (``unit.``).
ACTION_PATTERN = r"^[a-z_]{1,32}(\.[a-z_]{1,32})*\.?$"
_ACTION = re.compile(ACTION_PATTERN)
LOGIN_FAILED = "session.login_failed"


@dataclass(frozen=True)
class TrailFilter:
    action: str | None = None
    actor_id: str | None = None
    space_id: str | None = None  # the operators' trail only
    since: datetime | None = None
    until: datetime | None = None

    def keeps(self, row: AuditLog) -> bool:
        if self.action is not None:
            if self.action.endswith("."):
                if not row.action.startswith(self.action):
                    return False
            elif row.action != self.action:
                return False
        return self.actor_id is None or row.actor_id == self.actor_id


@dataclass(frozen=True)
class TrailRow:
    row: AuditLog
    actor_username: str | None
    private: bool  # address and user agent shown


def _utc(when: datetime | None) -> datetime | None:
    if when is None:
        return None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def checked(f: TrailFilter) -> TrailFilter:
    if f.action is not None and (len(f.action) > 64 or not _ACTION.match(f.action)):
        raise ValidationFailed("action: an action such as unit.restore, or a prefix "
                               "ending in a dot (unit.)", details={"field": "action"})
    since, until = _utc(f.since), _utc(f.until)
    if since is not None and until is not None and since >= until:
        raise ValidationFailed("since must be before until", details={"field": "since"})
    return TrailFilter(action=f.action, actor_id=f.actor_id, space_id=f.space_id,
                       since=since, until=until)


def id_at(when: datetime) -> str:
    """The smallest id ``new_id`` gives at ``when`` (UUIDv7: the millisecond first)."""
    ms = int(when.timestamp() * 1000) & ((1 << 48) - 1)
    return f"{ms << 80:032x}"


def _names(s: Session, rows: list[AuditLog]) -> dict[str, str]:
    ids = {r.actor_id for r in rows if r.actor_type == "user" and r.actor_id}
    if not ids:
        return {}
    return {uid: name for uid, name in
            s.execute(select(User.id, User.username).where(User.id.in_(ids)))}


def _page(s: Session, fetch: Callable[[list[Any] | None, int], list[AuditLog]],
          after: list[Any] | None, limit: int, kind: str, f: TrailFilter, private: bool
          ) -> tuple[list[TrailRow], str | None]:
    rows, nxt = scan_page(fetch, after, limit, kind, lambda r: [r.id], f.keeps)
    names = _names(s, rows)
    return [TrailRow(r, names.get(r.actor_id or "", PLACEHOLDER_NAME)
                     if r.actor_type == "user" else None, private) for r in rows], nxt


def _bounds(f: TrailFilter) -> list[ColumnElement[bool]]:
    """since/until as an id range: ids are time-ordered (UUIDv7), so the walk stays on
    the index."""
    out = []
    if f.since is not None:
        out.append(AuditLog.id >= id_at(f.since))
    if f.until is not None:
        out.append(AuditLog.id < id_at(f.until))
    return out


def _walk(s: Session, *where: ColumnElement[bool]
          ) -> Callable[[list[Any] | None, int], list[AuditLog]]:
    """Newest first (by id) after the cursor's id."""
    def fetch(key: list[Any] | None, n: int) -> list[AuditLog]:
        below = [AuditLog.id < key[0]] if key else []
        return list(s.scalars(select(AuditLog).where(*where, *below)
                              .order_by(AuditLog.id.desc()).limit(n)))
    return fetch


def space_trail(db: Database, ctx: RequestContext, space_id: str, f: TrailFilter,
                limit: int, cursor: str | None) -> tuple[list[TrailRow], str | None]:
    """The space's rows, for its owner and admins (404 to whoever cannot see the space,
    403 to its other members)."""
    f = checked(f)
    after = decode_cursor("audit-space", cursor, 1)
    with db.read() as s:
        space, _ = require_space(s, ctx.principal, space_id, Role.ADMIN)
        fetch = _walk(s, AuditLog.space_id == space.id, *_bounds(f))
        return _page(s, fetch, after, limit, "audit-space", f, private=False)


def operator_trail(db: Database, settings: Settings, ctx: RequestContext, f: TrailFilter,
                   limit: int, cursor: str | None) -> tuple[list[TrailRow], str | None]:
    """Every row (of one space when the filter names it), every field: operators only."""
    require_operator(settings, ctx)
    f = checked(f)
    after = decode_cursor("audit-all", cursor, 1)
    where = _bounds(f)
    if f.space_id is not None:
        where.append(AuditLog.space_id == f.space_id)
    with db.read() as s:
        return _page(s, _walk(s, *where), after, limit, "audit-all", f, private=True)


def my_trail(db: Database, ctx: RequestContext, f: TrailFilter, limit: int,
             cursor: str | None) -> tuple[list[TrailRow], str | None]:
    """The caller's own actions and the failed logins against them, newest first."""
    f = checked(TrailFilter(action=f.action, since=f.since, until=f.until))
    after = decode_cursor("audit-me", cursor, 1)
    me = ctx.principal.user_id
    bounds = _bounds(f)

    def fetch(key: list[Any] | None, n: int) -> list[AuditLog]:
        below = [*bounds, *([AuditLog.id < key[0]] if key else [])]
        mine = (select(AuditLog.id).where(AuditLog.actor_id == me, *below)
                .order_by(AuditLog.id.desc()).limit(n))
        failed = (select(AuditLog.id).where(AuditLog.action == LOGIN_FAILED,
                                            AuditLog.target_id == me, *below)
                  .order_by(AuditLog.id.desc()).limit(n))
        ids = union_all(mine.subquery().select(), failed.subquery().select()).subquery()
        return list(s.scalars(select(AuditLog).where(AuditLog.id.in_(select(ids.c.id)))
                              .order_by(AuditLog.id.desc()).limit(n)))

    with db.read() as s:
        return _page(s, fetch, after, limit, "audit-me", f, private=True)

