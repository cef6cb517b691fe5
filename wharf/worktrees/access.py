"""Who may see and do what with a worktree (specs/assets-worktrees.md §5).

A user worktree belongs to its creator alone. A team worktree belongs to a team space:
only its members find it at all (a ``public_read`` space gives visitors nothing here),
and among them the creator and the space's owner and admins always, the others only
when its visibility is ``space``. A worktree the caller cannot discover is 404 (ids leak
nothing); one they can discover but may not change is 403; a right the caller has but
the worktree's state refuses is 409 (``worktree_busy`` while a merge or discard runs,
``worktree_state`` otherwise).

The capabilities are computed in two parts: :func:`rights` from the caller's relation to
the worktree (creator, team role) and the state rules of :data:`STATES`, decided from the
worktree row alone, so a listing needs no query per row; and :func:`unit_rights`, every
unit's own permission (read on a trunk unit to review it, edit to change or merge it, the
right to create in the target folder of a local unit), which is the hook the units of a
worktree plug into.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import msgspec
from sqlalchemy import and_, select
from sqlalchemy.orm import Session

from storage.enums import Role
from storage.models import (
    Node,
    Resource,
    Space,
    Worktree,
    WorktreeNodeIntent,
    WorktreeUnit,
)
from wharf.infra.context import Principal, RequestContext
from wharf.infra.errors import Forbidden, NotFound, WharfError
from wharf.infra.ids import is_id
from wharf.spaces.access import (
    SpaceReadOnly,
    Standing,
    TreeTooDeep,
    ancestors,
    at_least,
    node_access,
    space_role,
    standing,
)
from wharf.spaces.nodes import resolve_parent
from wharf.worktrees.enums import (
    WorktreeKind,
    WorktreeState,
    WorktreeUnitSource,
    WorktreeVisibility,
)
from wharf.worktrees.errors import WorktreeBusy, WorktreeStateConflict

#: Team roles that manage every worktree of the space (see it, rename, discard, reopen).
MANAGERS = frozenset((Role.OWNER, Role.ADMIN))
#: Team roles that may create, edit and merge.
WRITERS = frozenset((Role.OWNER, Role.ADMIN, Role.EDITOR))

#: The capabilities a worktree summary reports, in order.
CAPABILITIES = ("review", "edit_draft", "add_unit", "change_visibility", "mark_ready",
                "reopen", "merge", "discard")
#: What else a request may need: ``update`` (PATCH name/summary).
ACTIONS = (*CAPABILITIES, "update")

_D, _R = WorktreeState.DRAFT.value, WorktreeState.READY.value
BUSY_STATES = (WorktreeState.MERGING.value, WorktreeState.DISCARDING.value)
#: The states in which each action is accepted (every state for ``review``).
STATES: dict[str, tuple[str, ...]] = {
    "review": tuple(s.value for s in WorktreeState),
    "edit_draft": (_D,), "add_unit": (_D,), "mark_ready": (_D,),
    "change_visibility": (_D, _R), "update": (_D, _R),
    "reopen": (_R,), "merge": (_R,), "discard": (_D, _R),
}
#: What each action needs of every unit (None: nothing unit by unit).
UNIT_NEEDS: dict[str, str | None] = {
    "review": "read", "edit_draft": "edit", "add_unit": None, "change_visibility": None,
    "mark_ready": "edit", "reopen": None, "merge": "edit", "discard": None, "update": None,
}


@dataclass(frozen=True, slots=True)
class Relation:
    """The caller's relation to a worktree: creator or not, and their standing in its team
    space (``owner`` or a membership role, at most viewer in a read-only space; no role
    for a user worktree or a non-member)."""

    is_creator: bool
    standing: Standing

    @property
    def team_role(self) -> str | None:
        return self.standing.role


def relation(principal: Principal, worktree: Worktree, standing: Standing) -> Relation:
    return Relation(is_creator=principal.is_user and worktree.creator_id == principal.user_id,
                    standing=standing)


def relation_to(session: Session, principal: Principal, worktree: Worktree) -> Relation:
    """The principal's :class:`Relation` to ``worktree``, their standing read from its team
    space (:func:`wharf.spaces.access.standing`: public read gives nothing here). One query."""
    return relation(principal, worktree, standing(session, principal, worktree.team_space_id))


def discoverable(kind: str, visibility: str, rel: Relation) -> bool:
    """Whether the worktree exists for the caller at all (else 404)."""
    if kind == WorktreeKind.USER:
        return rel.is_creator
    if rel.team_role is None:  # only the team's members see its worktrees
        return False
    return (rel.is_creator or rel.team_role in MANAGERS
            or visibility == WorktreeVisibility.SPACE)


def rights(kind: str, visibility: str, rel: Relation) -> dict[str, bool]:
    """What the caller's relation allows, whatever the state and the units (the 403
    part of each action)."""
    if not discoverable(kind, visibility, rel):
        return dict.fromkeys(ACTIONS, False)
    creator = rel.is_creator
    if kind == WorktreeKind.USER:
        return {**dict.fromkeys(ACTIONS, creator), "change_visibility": False}
    role = rel.team_role
    # A read-only team space (its owner's account was deleted) is read only for everyone:
    # its members review, nobody changes anything, their own worktrees included.
    writes = rel.standing.writes
    owns = creator and writes
    writer = writes and role in WRITERS
    manager = writes and role in MANAGERS
    return {
        # owner/admin of a private worktree see its summary, not its units
        "review": creator or visibility == WorktreeVisibility.SPACE,
        "edit_draft": owns and writer,
        "add_unit": owns and writer,
        "mark_ready": owns and writer,
        "change_visibility": owns or manager,
        "update": owns or manager,
        "reopen": owns or manager,
        "merge": writer,  # the review flow: not only the creator
        "discard": owns or manager,
    }


@dataclass(frozen=True, slots=True)
class UnitRights:
    """A unit's own permission for the caller: reading it, editing it (for a local unit
    not created yet: creating it in its target), and whether it is *available* at all (its
    node, or its target folder, exists and is not trashed: a merge answers 409
    ``unit_unavailable`` for one that is not). An unavailable unit is never editable; an
    unavailable trunk unit is not readable either (its node is in the trash)."""

    read: bool = True
    edit: bool = True
    available: bool = True

    def allows(self, need: str | None) -> bool:
        return need is None or getattr(self, need)


#: No units, nothing refused.
NO_UNITS = UnitRights()
#: A unit the caller may do nothing with (not in the worktree, or its node gone).
NOTHING = UnitRights(read=False, edit=False)
_GONE = UnitRights(read=False, edit=False, available=False)


def unit_access(session: Session, principal: Principal, worktree: Worktree,
                only: str | None = None) -> dict[str, UnitRights]:
    """Each unit's own permission for the caller (§5), by unit id in the worktree's
    order: the one answer the worktree's requests, the merge and the worktree scope of
    assets ask.

    - a trunk unit (or a local unit a merge activated): *read* / *edit* = viewer / editor
      on its node; a node that is gone or trashed (or lies below a trashed node) makes the
      unit unavailable;
    - a local unit still waiting: *read* = a viewer role in its target space (in a user
      worktree, which only its creator discovers: always; a trashed target hides nothing
      either: the draft is the worktree's own), *edit* = the right to create in its
      target, as ``wharf.spaces.nodes.resolve_parent`` decides it; a target space or
      folder that is gone or trashed makes the unit unavailable (:func:`target_holds`).

    A few queries per unit, bounded by ``WHARF_WORKTREE_MAX_UNITS``; ``only``: that unit
    alone."""
    rows = session.execute(
        select(WorktreeUnit.unit_id, WorktreeUnit.source, Resource.node_id,
               WorktreeNodeIntent.node_id.label("intent_node"),
               WorktreeNodeIntent.activated_at, WorktreeNodeIntent.target_space_id,
               WorktreeNodeIntent.target_parent_id)
        .outerjoin(Resource, Resource.id == WorktreeUnit.resource_id)
        .outerjoin(WorktreeNodeIntent, and_(
            WorktreeNodeIntent.worktree_id == WorktreeUnit.worktree_id,
            WorktreeNodeIntent.unit_id == WorktreeUnit.unit_id))
        .where(WorktreeUnit.worktree_id == worktree.id,
               *([WorktreeUnit.unit_id == only] if only is not None else []))
        .order_by(WorktreeUnit.ordinal, WorktreeUnit.unit_id)).all()
    out: dict[str, UnitRights] = {}
    ctx = RequestContext(principal=principal)
    for r in rows:
        try:
            out[r.unit_id] = _rights(session, principal, ctx, worktree.kind, r)
        except TreeTooDeep:
            out[r.unit_id] = NOTHING  # fail closed, as the resolver does
    return out


def _rights(session: Session, principal: Principal, ctx: RequestContext, kind: str,
            r: Any) -> UnitRights:
    if r.source == WorktreeUnitSource.TRUNK or r.activated_at is not None:
        node_id = r.node_id if r.source == WorktreeUnitSource.TRUNK else r.intent_node
        node = session.get(Node, node_id) if node_id is not None else None
        if node is None or _trashed(session, node):
            return _GONE
        acc = node_access(session, principal, node)
        return UnitRights(read=acc.can_read, edit=acc.can_edit)
    if r.target_space_id is None:  # (a local unit always has its intent)
        return _GONE
    holds = target_holds(session, r.target_space_id, r.target_parent_id)
    space = session.get(Space, r.target_space_id)
    # the draft is the worktree's own: a trashed target, or (in a user worktree, which
    # only its creator discovers) a target they lost their role on, hides nothing
    read = kind == WorktreeKind.USER or (
        space is not None and at_least(space_role(session, principal, space), Role.VIEWER))
    if not read or not holds:
        return UnitRights(read=read, edit=False, available=holds)
    try:
        resolve_parent(session, ctx, r.target_space_id, r.target_parent_id)
    except WharfError:
        return UnitRights(read=True, edit=False)
    return UnitRights()


def _trashed(session: Session, node: Node) -> bool:
    return any(batch is not None for _, batch in ancestors(session, node))


def target_holds(session: Session, space_id: str, parent_id: str | None) -> bool:
    """Whether a local unit's target is still there, whoever looks: the space exists; the
    parent (if any) exists, in that space, not trashed."""
    if session.get(Space, space_id) is None:
        return False
    if parent_id is not None:
        parent = session.get(Node, parent_id)
        if parent is None or parent.space_id != space_id or _trashed(session, parent):
            return False
    return True


def all_units(units: dict[str, UnitRights]) -> UnitRights:
    """What every unit allows together."""
    return UnitRights(read=all(u.read for u in units.values()),
                      edit=all(u.edit for u in units.values()),
                      available=all(u.available for u in units.values()))


def unit_rights(session: Session, principal: Principal, worktree: Worktree) -> UnitRights:
    """Every unit's own permission for the caller together (§5: *unit read* / *unit
    edit* on trunk units, *target create* on unactivated local units); see
    :func:`unit_access`. The listing reports capabilities without it (one query per
    page); a worktree's own answers include it."""
    return all_units(unit_access(session, principal, worktree))


class WorktreeCapabilities(msgspec.Struct, frozen=True):
    """What the caller may do with the worktree now (its state, their role and every
    unit's own permission considered); the API's ``WorktreeCapabilities``."""

    review: Annotated[bool, msgspec.Meta(description="See its units, drafts and conflicts.")]
    edit_draft: bool
    add_unit: bool
    change_visibility: bool
    mark_ready: bool
    reopen: bool
    merge: bool
    discard: bool



def capabilities(state: str, allowed: dict[str, bool],
                 units: UnitRights = NO_UNITS) -> WorktreeCapabilities:
    """What the caller may do now: their rights, in this state, on these units."""
    return WorktreeCapabilities(**{a: allowed[a] and state in STATES[a]
                           and units.allows(UNIT_NEEDS[a]) for a in CAPABILITIES})


class WorktreeView:
    """A worktree as one caller sees it. Its units' own permissions are read when first
    asked for (most requests concern one unit, or none)."""

    def __init__(self, session: Session, principal: Principal, worktree: Worktree,
                 relation: Relation, rights: dict[str, bool]) -> None:
        self.worktree = worktree
        self.relation = relation
        self.rights = rights
        self.principal = principal
        self._session = session
        self._units: dict[str, UnitRights] | None = None

    @property
    def unit_access(self) -> dict[str, UnitRights]:
        """Each unit's own permission (:func:`unit_access`), by unit id."""
        if self._units is None:
            self._units = unit_access(self._session, self.principal, self.worktree)
        return self._units

    @property
    def units(self) -> UnitRights:
        return all_units(self.unit_access)

    @property
    def capabilities(self) -> WorktreeCapabilities:
        return capabilities(self.worktree.state, self.rights, self.units)


def find(session: Session, principal: Principal, worktree_id: object, *,
         lock: bool = False) -> WorktreeView:
    """The worktree if the caller can discover it (404 otherwise); ``lock`` takes its
    row FOR UPDATE (state changes wait for each other)."""
    wt = session.get(Worktree, worktree_id, with_for_update=lock) \
        if is_id(worktree_id) else None
    if wt is None:
        raise NotFound("No such worktree.")
    rel = relation_to(session, principal, wt)
    if not discoverable(wt.kind, wt.visibility, rel):
        raise NotFound("No such worktree.")
    return WorktreeView(session, principal, wt, rel, rights(wt.kind, wt.visibility, rel))


def check_state(worktree: Worktree, action: str) -> None:
    """409 unless the worktree's state accepts ``action``: ``worktree_busy`` while a merge
    or discard runs, ``worktree_state`` otherwise."""
    allowed = STATES[action]
    if worktree.state in allowed:
        return
    if worktree.state in BUSY_STATES:
        raise WorktreeBusy(worktree.state, worktree.busy_operation_id)
    raise WorktreeStateConflict(worktree.state, allowed, action.replace("_", " "))


def require(view: WorktreeView, action: str, *, units: bool = True) -> None:
    """403 when the caller may not do ``action`` at all, then 409 when the state refuses
    it, then (with ``units``) 403 when a unit refuses it. A caller that checks the units
    itself, with answers of its own (the merge: 409 ``unit_unavailable`` for a trashed
    unit), passes ``units=False``."""
    if not view.rights[action]:
        if view.relation.standing.read_only:
            raise SpaceReadOnly()
        raise Forbidden(f"You may not {action.replace('_', ' ')} this worktree.")
    check_state(view.worktree, action)
    if units and not view.units.allows(UNIT_NEEDS[action]):
        raise Forbidden(f"A unit of this worktree does not allow you to "
                        f"{action.replace('_', ' ')} it.")
