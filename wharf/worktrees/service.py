"""The worktree lifecycle: create (operation ``create_worktree``), list, read, rename and
change visibility, mark ready and reopen (synchronous), discard (operation
``discard_worktree``). States and rights: :mod:`wharf.worktrees.access`.

The session-level functions compose into a caller's transaction; ``read_worktrees``,
``change_worktree``, ``mark_worktree_ready`` and ``reopen_worktree`` are what the API calls,
each in a transaction of its own (a worktree's detail: :mod:`wharf.worktrees.detail`)."""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, and_, func, or_, select
from sqlalchemy.orm import Session

from storage.enums import Role, values
from storage.models import Space, User, Worktree, WorktreeUnit
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import Principal, RequestContext
from wharf.infra.errors import Conflict, Forbidden, NotFound, ValidationFailed
from wharf.infra.ids import is_id, new_id
from wharf.infra.pagination import TIMESTAMP, decode_cursor, page
from wharf.infra.transactions import in_read, in_write
from wharf.infra.validation import clean_name, one_of
from wharf.operations.service import Operations, Submission
from wharf.spaces.access import SpaceReadOnly, Standing, require_space, team_role_column
from wharf.spaces.access import standing as space_standing
from wharf.worktrees import access
from wharf.worktrees.access import MANAGERS, WRITERS, WorktreeCapabilities
from wharf.worktrees.enums import WorktreeKind, WorktreeState, WorktreeVisibility
from wharf.worktrees.kinds import (
    CREATE_WORKTREE,
    DISCARD_WORKTREE,
    CreateWorktreePayload,
    DiscardWorktreePayload,
)
from wharf.worktrees.limits import check_open

KINDS = values(WorktreeKind)
VISIBILITIES = values(WorktreeVisibility)
SCOPES = ("active", "processed")
SUMMARY_MAX = 10_000
# Text a summary may hold: anything printable, and line breaks and tabs.
_SUMMARY_REFUSED = frozenset(("Cc", "Cs", "Co", "Cn"))
_SUMMARY_ALLOWED = frozenset("\n\r\t")


def clean_summary(value: object) -> str | None:
    """A worktree's summary: null, or text of at most ``SUMMARY_MAX`` characters (line
    breaks allowed, other control characters not). Blank is null."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationFailed("summary must be a string or null", details={"field": "summary"})
    if len(value) > SUMMARY_MAX:
        raise ValidationFailed(f"summary must be at most {SUMMARY_MAX} characters",
                               details={"field": "summary"})
    if any(unicodedata.category(ch) in _SUMMARY_REFUSED and ch not in _SUMMARY_ALLOWED
           for ch in value):
        raise ValidationFailed("summary must not contain control or unassigned characters",
                               details={"field": "summary"})
    text = value.strip()
    return text or None


def require_team_writer(s: Session, principal: Principal, space_id: object) -> Space:
    """The team space a worktree may be created in by ``principal``: 404 when it is not
    discoverable or they are not a member, 409 ``not_a_team_space`` for a personal space,
    403 ``space_read_only`` in a read-only space, 403 for a viewer."""
    space, _ = require_space(s, principal, space_id, Role.VIEWER)
    if space.type != "team":
        raise Conflict("Worktrees of a personal space are user worktrees: send "
                       "kind user and no team_space_id.", code="not_a_team_space",
                       details={"field": "team_space_id"})
    standing = space_standing(s, principal, space.id)
    if standing.role is None:
        raise NotFound("No such space.")
    if standing.read_only:
        raise SpaceReadOnly()
    if standing.role not in WRITERS:
        raise Forbidden("Only the team's owner, admins and editors create worktrees.")
    return space


def personal_space_id(s: Session, user_id: str) -> str | None:
    return s.scalar(select(Space.id).where(Space.owner_id == user_id,
                                           Space.type == "personal"))


def scope_of(s: Session, wt: Worktree) -> str | None:
    """The operations' scope: the team space, or the creator's personal space."""
    return wt.team_space_id or personal_space_id(s, wt.creator_id)


# --- create -----------------------------------------------------------------------------

def submit_create_worktree(ops: Operations, ctx: RequestContext, key: str | None,
                           body: dict[str, Any]) -> Submission:
    request = {"kind": body.get("kind"), "name": body.get("name"),
               "summary": body.get("summary"), "team_space_id": body.get("team_space_id"),
               "visibility": body.get("visibility")}

    def prepare(s: Session, op_id: str) -> tuple[str | None, CreateWorktreePayload]:
        kind = one_of(request["kind"], "kind", KINDS)
        name = clean_name(request["name"], "name")
        summary = clean_summary(request["summary"])
        space_id = request["team_space_id"]
        visibility = request["visibility"]
        if kind == WorktreeKind.USER:
            if space_id is not None:
                raise ValidationFailed("A user worktree belongs to no team space; send "
                                       "kind team to create one in a team space.",
                                       details={"field": "team_space_id"})
            if visibility not in (None, WorktreeVisibility.PRIVATE):
                raise ValidationFailed("A user worktree is always private.",
                                       details={"field": "visibility"})
            assert ctx.principal.user_id is not None  # submit admits users only
            scope = personal_space_id(s, ctx.principal.user_id)
            team, visibility = None, WorktreeVisibility.PRIVATE.value
        else:
            if space_id is None:
                raise ValidationFailed("A team worktree needs team_space_id.",
                                       details={"field": "team_space_id"})
            visibility = one_of(WorktreeVisibility.PRIVATE.value if visibility is None
                                else visibility, "visibility", VISIBILITIES)
            team = require_team_writer(s, ctx.principal, space_id).id
            scope = team
        assert ctx.principal.user_id is not None
        check_open(s, ops.settings, ctx.principal.user_id, team)
        return scope, CreateWorktreePayload(worktree_id=new_id(), kind=kind, name=name,
                                            summary=summary, team_space_id=team,
                                            visibility=visibility)

    return ops.submit(ctx, CREATE_WORKTREE, key, request, prepare)


# --- reading ----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Summary:
    """A worktree as the API summarises it for one caller."""

    worktree: Worktree
    team_space_name: str | None
    creator_username: str
    unit_count: int
    capabilities: WorktreeCapabilities


def _summaries(principal: Principal) -> tuple[Select[Any], Any]:
    """The statement behind every summary (a worktree with the team space's name, the
    creator's name, the unit count and the caller's team role) and the condition that
    the caller can discover it."""
    # never None: ``column == None`` would compile to IS NULL
    uid = principal.user_id if principal.is_user and principal.user_id else ""
    role = team_role_column(uid)
    units = (select(func.count()).select_from(WorktreeUnit)
             .where(WorktreeUnit.worktree_id == Worktree.id)
             .correlate(Worktree).scalar_subquery())
    member = role.is_not(None)
    manager = role.in_(sorted(MANAGERS))
    visible = or_(
        and_(Worktree.kind == WorktreeKind.USER.value, Worktree.creator_id == uid),
        and_(Worktree.kind == WorktreeKind.TEAM.value, member,
             or_(Worktree.creator_id == uid, manager,
                 Worktree.visibility == WorktreeVisibility.SPACE.value)))
    q = (select(Worktree, Space.name, User.username, units, role.label("team_role"),
                Space.read_only)
         .join(User, User.id == Worktree.creator_id)
         .outerjoin(Space, Space.id == Worktree.team_space_id))
    return q, visible


def _summary(principal: Principal, row: Any,
             units: access.UnitRights = access.NO_UNITS) -> Summary:
    wt, space_name, username, unit_count, role, read_only = row
    rel = access.relation(principal, wt, Standing(role, bool(read_only)))
    allowed = access.rights(wt.kind, wt.visibility, rel)
    return Summary(wt, space_name, username, int(unit_count or 0),
                   access.capabilities(wt.state, allowed, units))


def summarize(s: Session, ctx: RequestContext, wt: Worktree,
              units: access.UnitRights = access.NO_UNITS) -> Summary:
    """The summary of a worktree the caller discovered (one query)."""
    q, _visible = _summaries(ctx.principal)
    return _summary(ctx.principal, s.execute(q.where(Worktree.id == wt.id)).one(), units)


def list_worktrees(s: Session, ctx: RequestContext, *, scope: str = "active",
                   kind: str | None = None, team_space_id: str | None = None,
                   limit: int, cursor: str | None) -> tuple[list[Summary], str | None]:
    """A page of the worktrees the caller can discover, most recently updated first
    (keyset on ``(updated_at DESC, id DESC)``), in one query."""
    scope = one_of(scope, "scope", SCOPES)
    if kind is not None:
        kind = one_of(kind, "kind", KINDS)
    after = decode_cursor("worktrees", cursor, (TIMESTAMP, str))
    if not ctx.principal.is_user:
        return [], None
    q, visible = _summaries(ctx.principal)
    q = q.where(visible, Worktree.processed_at.is_(None) if scope == "active"
                else Worktree.processed_at.is_not(None))
    if kind is not None:
        q = q.where(Worktree.kind == kind)
    if team_space_id is not None:
        if not is_id(team_space_id):
            return [], None
        q = q.where(Worktree.team_space_id == team_space_id)
    if after:
        at, last = after
        q = q.where(or_(Worktree.updated_at < at,
                        and_(Worktree.updated_at == at, Worktree.id < last)))
    rows = s.execute(q.order_by(Worktree.updated_at.desc(), Worktree.id.desc())
                     .limit(limit + 1)).all()
    items, nxt = page(list(rows), limit, "worktrees",
                      lambda r: [r[0].updated_at, r[0].id])
    return [_summary(ctx.principal, r) for r in items], nxt


def get_worktree(s: Session, ctx: RequestContext, worktree_id: str) -> Summary:
    view = access.find(s, ctx.principal, worktree_id)
    return summarize(s, ctx, view.worktree, view.units)


read_worktrees = in_read(list_worktrees)


# --- synchronous changes ----------------------------------------------------------------

def _touch(wt: Worktree) -> None:
    wt.updated_at = utcnow()


def update_worktree(s: Session, ctx: RequestContext, worktree_id: str,
                    changes: dict[str, object]) -> Summary:
    """PATCH name, summary and/or visibility (§5): name and summary by the creator (team:
    also owner and admins), visibility of team worktrees by the same; only while the
    worktree is a draft or ready."""
    if not changes:
        raise ValidationFailed("nothing to change: send name, summary and/or visibility")
    view = access.find(s, ctx.principal, worktree_id, lock=True)
    wt = view.worktree
    if "visibility" in changes and wt.kind == WorktreeKind.USER:
        raise ValidationFailed("A user worktree is always private.",
                               details={"field": "visibility"})
    if "name" in changes or "summary" in changes:
        access.require(view, "update")
    if "visibility" in changes:
        access.require(view, "change_visibility")
    done: dict[str, Any] = {}
    name = clean_name(changes["name"], "name") if "name" in changes else wt.name
    summary = clean_summary(changes["summary"]) if "summary" in changes else wt.summary
    visibility = one_of(changes["visibility"], "visibility", VISIBILITIES) \
        if "visibility" in changes else wt.visibility
    for field, old, new in (("name", wt.name, name), ("summary", wt.summary, summary),
                            ("visibility", wt.visibility, visibility)):
        if field in changes and old != new:
            setattr(wt, field, new)
            done[field] = new if field != "summary" else (new is not None)
    if done:
        _touch(wt)
        s.flush()
        audit.record(s, ctx, "worktree.update", "worktree", wt.id, space_id=scope_of(s, wt),
                     details=done)
    return summarize(s, ctx, wt, view.units)


def _transition(s: Session, ctx: RequestContext, worktree_id: str, action: str,
                to: WorktreeState, audit_action: str) -> Summary:
    view = access.find(s, ctx.principal, worktree_id, lock=True)
    access.require(view, action)
    wt = view.worktree
    before = wt.state
    wt.state = to.value
    _touch(wt)
    s.flush()
    audit.record(s, ctx, audit_action, "worktree", wt.id, space_id=scope_of(s, wt),
                 details={"from": before})
    return summarize(s, ctx, wt, view.units)


def mark_ready(s: Session, ctx: RequestContext, worktree_id: str) -> Summary:
    """``draft → ready``: frozen for review (only ``ready`` merges)."""
    return _transition(s, ctx, worktree_id, "mark_ready", WorktreeState.READY,
                       "worktree.ready")


def reopen(s: Session, ctx: RequestContext, worktree_id: str) -> Summary:
    """``ready → draft``: editable again."""
    return _transition(s, ctx, worktree_id, "reopen", WorktreeState.DRAFT, "worktree.reopen")


# What the API calls: each in a write transaction of its own.
change_worktree = in_write(update_worktree)
mark_worktree_ready = in_write(mark_ready)
reopen_worktree = in_write(reopen)


# --- discard ----------------------------------------------------------------------------

def submit_discard(ops: Operations, ctx: RequestContext, key: str | None,
                   worktree_id: str) -> Submission:
    """``draft|ready → discarding`` in the transaction that records the operation (a
    second discard or a merge is refused with 409 ``worktree_busy`` from then on); the
    worker deletes the worktree's assets and marks it ``discarded``."""
    request = {"worktree_id": worktree_id}

    def prepare(s: Session, op_id: str) -> tuple[str | None, DiscardWorktreePayload]:
        view = access.find(s, ctx.principal, worktree_id, lock=True)
        access.require(view, "discard")
        wt = view.worktree
        from_state = wt.state
        wt.state = WorktreeState.DISCARDING.value
        wt.busy_operation_id = op_id
        _touch(wt)
        s.flush()
        return scope_of(s, wt), DiscardWorktreePayload(worktree_id=wt.id,
                                                       from_state=from_state)

    return ops.submit(ctx, DISCARD_WORKTREE, key, request, prepare)
