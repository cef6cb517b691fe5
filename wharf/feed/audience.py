"""Who may hear an event: decided when it is delivered, for the users listening, by the
access rules every route uses (``wharf.spaces.access``, ``wharf.worktrees.access``).

One query answers for a space's owner and members (the common case: one per event,
whatever the number of listeners); a listener who is neither (a node grant, public read)
is checked alone with the resolver of the matching route. Nobody hears of what they could
not discover: an event about a node they cannot read, a space they are not in, a unit
they cannot view, a worktree that is not discoverable to them, an operation not theirs.
"""
from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import select
from sqlalchemy.orm import Session

from storage.enums import Role
from storage.models import Node, Resource, Space, SpaceMember, UnitResource, Worktree
from wharf.feed.events import Event, EventType
from wharf.infra.context import Principal
from wharf.infra.errors import Conflict, Forbidden, NotFound, Unauthenticated
from wharf.issues import access as issue_access
from wharf.spaces.access import require_node, standing
from wharf.worktrees.access import discoverable, relation_to


def _user(user_id: str) -> Principal:
    return Principal(kind="user", user_id=user_id)


def _standing_users(s: Session, space_id: str) -> set[str]:
    """The space's owner and members (a role in the space itself)."""
    owner = s.scalar(select(Space.owner_id).where(Space.id == space_id))
    if owner is None:
        return set()
    members = s.scalars(select(SpaceMember.user_id).where(SpaceMember.space_id == space_id))
    return {owner, *members}


def _can_read_node(s: Session, user_id: str, node_id: str) -> bool:
    try:
        require_node(s, _user(user_id), node_id, Role.VIEWER)
    except (NotFound, Forbidden):
        return False
    return True


def _can_read_issues(s: Session, user_id: str, space_id: str) -> bool:
    """The issues routes' own rule (``wharf.issues.access.resolve``): a signed-in user who
    can discover the team space, public read included."""
    try:
        issue_access.resolve(s, _user(user_id), space_id)
    except (NotFound, Forbidden, Conflict, Unauthenticated):
        return False
    return True


def _node_of_unit(s: Session, unit_id: str) -> tuple[str, str] | None:
    row = s.execute(select(Node.id, Node.space_id).join(
        Resource, Resource.node_id == Node.id).join(
        UnitResource, UnitResource.resource_id == Resource.id).where(
        UnitResource.unit_id == unit_id)).first()
    return (row[0], row[1]) if row else None


def hearers(s: Session, event: Event, listening: Collection[str]) -> set[str]:
    """The users of ``listening`` who may hear ``event``, now."""
    users = set(listening)
    if not users:
        return set()
    t = event.type
    if t == EventType.OPERATION_DONE:
        return users & {event.actor_id} if event.actor_id else set()
    if t in (EventType.UNIT_CHANGED, EventType.COMMENTS_CHANGED):
        if not event.unit_id:
            return set()
        found = _node_of_unit(s, event.unit_id)
        if found is None:
            return set()
        node_id, space_id = found
        members = users & _standing_users(s, space_id)
        return members | {u for u in users - members if _can_read_node(s, u, node_id)}
    if t == EventType.TREE_CHANGED:
        if not event.space_id:
            return set()
        members = users & _standing_users(s, event.space_id)
        where = event.parent_id or event.node_id
        rest = users - members
        if not rest:
            return members
        if where is None:  # a change at the space's root: those who can read the space
            return members | {u for u in rest if standing_or_public(s, u, event.space_id)}
        return members | {u for u in rest if _can_read_node(s, u, where)}
    if t == EventType.ISSUES_CHANGED:
        if not event.space_id:
            return set()
        members = users & _standing_users(s, event.space_id)
        return members | {u for u in users - members
                          if _can_read_issues(s, u, event.space_id)}
    if t == EventType.WORKTREES_CHANGED:
        worktree = s.get(Worktree, event.worktree_id) if event.worktree_id else None
        if worktree is None:
            return users & _standing_users(s, event.space_id) if event.space_id else set()
        return {u for u in users if discoverable(
            worktree.kind, worktree.visibility, relation_to(s, _user(u), worktree))}
    return set()


def standing_or_public(s: Session, user_id: str, space_id: str) -> bool:
    """They have a role in the space, or it is readable by every user (public read)."""
    if standing(s, _user(user_id), space_id).role is not None:
        return True
    return bool(s.scalar(select(Space.public_read).where(Space.id == space_id)))


def may_subscribe_space(s: Session, user_id: str, space_id: str) -> bool:
    """A subscription to a space's events: its owner, members, and, for a space with
    public read, any signed-in user (they read it through every route)."""
    return standing_or_public(s, user_id, space_id)


def may_subscribe_unit(s: Session, user_id: str, unit_id: str) -> bool:
    found = _node_of_unit(s, unit_id)
    return found is not None and _can_read_node(s, user_id, found[0])
