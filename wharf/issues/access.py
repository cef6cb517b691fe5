"""Who may do what with the issues of a space, from the space role alone (no issue ACL).

1. A space the caller cannot discover is 404 (ids leak nothing); a personal space the
   caller can see is 409 ``not_a_team_space`` (issues exist in team spaces only).
2. Reading needs a logged-in user who can discover the team space (public read included).
3. Every write needs membership: the owner or a member row (:func:`wharf.spaces.access.standing`).
   A public reader who is not a member is 403 ``not_a_member``; in a read-only team space
   (its owner's account was deleted) nobody writes: 403 ``space_read_only``.
4. Title, body and state: the issue's author or a triage role (owner, admin, editor);
   labels, assignees and node references: a triage role; label definitions: the owner or
   an admin. Comments: their author edits; their author, the owner or an admin deletes.
"""
from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session

from storage.enums import Role
from storage.models import Space
from wharf.infra.context import Principal
from wharf.infra.errors import Conflict, Forbidden, NotFound, Unauthenticated
from wharf.infra.ids import is_id
from wharf.spaces.access import SpaceReadOnly, space_role, standing

TRIAGE_ROLES = frozenset((Role.OWNER, Role.ADMIN, Role.EDITOR))
LABEL_ADMIN_ROLES = frozenset((Role.OWNER, Role.ADMIN))


@dataclass(frozen=True)
class IssueAccess:
    """The caller's standing in a team space."""

    space: Space
    user_id: str
    role: str  # owner | admin | editor | viewer (a public reader: viewer)
    member: bool  # the owner or a member row (not only public read)
    read_only: bool = False  # the space is read-only: nobody writes

    @property
    def writes(self) -> bool:
        return self.member and not self.read_only

    @property
    def triage(self) -> bool:
        return self.writes and self.role in TRIAGE_ROLES

    @property
    def admin(self) -> bool:
        return self.writes and self.role in LABEL_ADMIN_ROLES

    def require_member(self) -> IssueAccess:
        if self.member and self.read_only:
            raise SpaceReadOnly()
        if not self.member:
            raise Forbidden("Only the space owner and its members can change issues.",
                            code="not_a_member")
        return self

    def require_triage(self) -> IssueAccess:
        self.require_member()
        if not self.triage:
            raise Forbidden("Only the owner, admins and editors can triage issues.")
        return self

    def require_label_admin(self) -> IssueAccess:
        self.require_member()
        if not self.admin:
            raise Forbidden("Only the owner and admins can change label definitions.")
        return self

    def require_author_or_triage(self, author_user_id: str) -> IssueAccess:
        self.require_member()
        if author_user_id != self.user_id and not self.triage:
            raise Forbidden("Only the author, the owner, admins and editors can change "
                            "this issue.")
        return self


def resolve(session: Session, principal: Principal, space_id: object, *,
            lock: bool = False) -> IssueAccess:
    """The caller's :class:`IssueAccess` in ``space_id`` (see the module docstring);
    ``lock`` takes the space row FOR UPDATE (label definitions: count and unique name)."""
    if not principal.is_user or principal.user_id is None:
        raise Unauthenticated("Log in to use issues.")
    space = session.get(Space, space_id, with_for_update=lock) if is_id(space_id) else None
    if space is None:
        raise NotFound("No such space.")
    role = space_role(session, principal, space)
    if role is None:
        raise NotFound("No such space.")
    if space.type != "team":
        raise Conflict("Issues exist in team spaces only.", code="not_a_team_space")
    standing_ = standing(session, principal, space.id)
    return IssueAccess(space, principal.user_id, role, standing_.role is not None,
                       standing_.read_only)
