"""Who may do what with a unit's comments: the one place it is decided.

1. Everything starts from the unit's open (view) right, resolved by
   :func:`wharf.units.resources.find_unit`: a unit the caller cannot open is 404, the
   anonymous reader of a publicly readable unit included. Only trunk units have comments
   (a worktree's unit is not found here).
2. Listing needs nothing more; every write needs a signed-in user (401 otherwise) and a
   space that takes writes (a read-only team space: 403 ``space_read_only``).
3. Whoever may open the unit adds threads, replies and sets the solved state; only a
   comment's author edits its body; its author or the resource's owner or admin (a role
   from the space itself, as for a purge: :attr:`Access.can_purge`) deletes it.
"""
from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from storage.enums import Role
from storage.models import Node, Resource, Space, UnitResource
from wharf.infra.context import RequestContext
from wharf.infra.errors import Forbidden, Unauthenticated
from wharf.spaces.access import Access, SpaceReadOnly
from wharf.units.resources import find_unit


@dataclass(frozen=True)
class UnitComments:
    """The caller's standing on one trunk unit's comments."""

    unit: UnitResource
    resource: Resource
    node: Node
    access: Access
    user_id: str | None  # None: an anonymous reader

    @property
    def moderates(self) -> bool:
        """The resource's owner or admin: deletes anyone's comment."""
        return self.access.can_purge

    def require_author(self, author_id: str) -> None:
        if author_id != self.user_id:
            raise Forbidden("Only its author can edit a comment.")

    def require_author_or_moderator(self, author_id: str) -> None:
        if author_id != self.user_id and not self.moderates:
            raise Forbidden("Only its author, or the owner or an admin of the document, can "
                            "delete a comment.")


def readable(s: Session, ctx: RequestContext, unit_id: str) -> UnitComments:
    """The unit's comments as the caller may read them (404 when it cannot open it)."""
    unit, res, node, access = find_unit(s, ctx, unit_id, Role.VIEWER)
    principal = ctx.principal
    return UnitComments(unit, res, node, access,
                        principal.user_id if principal.is_user else None)


def writable(s: Session, ctx: RequestContext, unit_id: str) -> UnitComments:
    """The unit's comments for a write: a signed-in user who can open the unit, in a
    space that takes writes."""
    if not ctx.principal.is_user or ctx.principal.user_id is None:
        raise Unauthenticated("Sign in to comment.")
    acc = readable(s, ctx, unit_id)
    if s.scalar(select(Space.read_only).where(Space.id == acc.node.space_id)):
        raise SpaceReadOnly()
    return acc
