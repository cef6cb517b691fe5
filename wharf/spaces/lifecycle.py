"""A team space's life after creation: handed to another owner, archived and unarchived.

- **Transfer** (``POST /api/spaces/{id}/transfer``): the owner only (an admin 403
  ``owner_required``, anyone without a role 404); team spaces only (409
  ``not_a_team_space``); the new owner must be a current member (409 ``new_owner_not_member``; an
  unknown user 404). Their membership row goes (the owner is not a member) and the old
  owner becomes an admin. The space row is locked first, as member changes lock it
  (``wharf.spaces.service``): a transfer and a concurrent removal of the new owner
  serialise, and whichever commits second sees the first (no member to hand over to: 409
  ``new_owner_not_member``; the new owner cannot be removed: 409 ``owner_not_member``).
- **Archive / unarchive** (``/archive``, ``/unarchive``): the owner or an admin. Archiving
  sets ``read_only`` (and ``archived_at``): every write in the space is refused with 403
  ``space_read_only`` (``wharf.spaces.access.check``), reads go on, nothing is deleted.
  Both are idempotent (a repeat changes and audits nothing). An orphaned space (read-only
  because its owner's account was deleted, ``wharf.accounts.purge``) is not archived; an
  operator gives it an owner (``wharf space-owner``), unarchiving it is refused (403
  ``space_read_only``).

- **Deletion** (``DELETE /api/spaces/{id}``, the ``delete_space`` operation,
  ``wharf.accounts.space_deletion``): while it is pending the space is read-only (writes
  403 ``space_read_only``), and transfer, archive and unarchive answer 409
  ``space_deleting`` (:func:`deletion_pending`).

Roles come from the database on every request (no per-process role cache): the feed
decides its audience at delivery (``wharf.feed.audience``), so a transfer is heard by
whoever may hear it then.
"""
from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from storage.db import Database
from storage.enums import OPEN_STATUSES, MemberRole, Role, SpaceType
from storage.models import Operation, Space, SpaceMember
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import RequestContext
from wharf.infra.errors import Conflict, Forbidden, NotFound
from wharf.infra.ids import is_id
from wharf.spaces.access import Access, SpaceReadOnly, check, space_role
from wharf.spaces.service import named_user, set_owner

#: The kind of a team space's deletion (registered by ``wharf.accounts.kinds``, above).
DELETE_SPACE = "delete_space"


def deletion_pending(session: Session, space_id: str) -> str | None:
    """The open ``delete_space`` operation of the space, if any."""
    return session.scalar(select(Operation.id).where(
        Operation.kind == DELETE_SPACE, Operation.scope_id == space_id,
        Operation.status.in_([str(x) for x in OPEN_STATUSES])).limit(1))


def refuse_while_deleting(session: Session, space_id: str) -> None:
    """409 ``space_deleting`` while the space's deletion is pending."""
    op_id = deletion_pending(session, space_id)
    if op_id is not None:
        raise Conflict("This space is being deleted.", code="space_deleting",
                       details={"operation_id": op_id})


def _locked_space(session: Session, ctx: RequestContext, space_id: str
                  ) -> tuple[Space, str | None]:
    """The space, locked, and the caller's role in it from the space itself (404 when
    they have none: not an owner or member, or only by public read)."""
    space = session.get(Space, space_id, with_for_update=True) if is_id(space_id) else None
    if space is None:
        raise NotFound("No such space.")
    role = space_role(session, ctx.principal, space)
    check(Access(role), Role.VIEWER, "space")
    refuse_while_deleting(session, space.id)
    return space, role


def transfer(db: Database, ctx: RequestContext, space_id: str, user_id: str | None,
             username: str | None = None) -> tuple[Space, str | None]:
    """Hand the space to the member ``user_id`` (or named ``username``); the space and the
    caller's role in it now (admin)."""
    with db.write() as session:
        space, role = _locked_space(session, ctx, space_id)
        if role != Role.OWNER:
            raise Forbidden("Only the space owner hands the space over.",
                            code="owner_required")
        if space.type != SpaceType.TEAM:
            raise Conflict("A personal space cannot change hands.", code="not_a_team_space")
        if space.read_only and space.archived_at is None:
            raise SpaceReadOnly()
        user = named_user(session, user_id, username)
        if user is None:
            raise NotFound("No such user.")
        if user.id == space.owner_id:
            raise Conflict("You already own this space.", code="owner_not_member")
        member = session.get(SpaceMember, (space.id, user.id))
        if member is None:
            raise Conflict("The new owner must be a member of the space.",
                           code="new_owner_not_member")
        previous = space.owner_id
        was = member.role
        set_owner(session, space, user.id)  # drops their member row
        session.add(SpaceMember(space_id=space.id, user_id=previous, role=MemberRole.ADMIN))
        session.flush()
        audit.record(session, ctx, "space.transfer", "space", space.id, space_id=space.id,
                     details={"from": previous, "to": user.id, "was": was})
        return space, space_role(session, ctx.principal, space)


def _member_role(session: Session, space: Space, ctx: RequestContext, role: str | None
                 ) -> str | None:
    """The caller's own role in the space, uncapped: a member keeps their membership role
    while the space is archived (where every role reads as viewer at most)."""
    if role == Role.OWNER or not ctx.principal.is_user:
        return role
    row = session.scalar(select(SpaceMember.role).where(
        SpaceMember.space_id == space.id, SpaceMember.user_id == ctx.principal.user_id))
    return row if row is not None else role


def set_archived(db: Database, ctx: RequestContext, space_id: str,
                 archived: bool) -> tuple[Space, str | None]:
    """Archive (``archived``) or unarchive the space; the space and the caller's role."""
    with db.write() as session:
        space, role = _locked_space(session, ctx, space_id)
        if _member_role(session, space, ctx, role) not in (Role.OWNER, Role.ADMIN):
            raise Forbidden("Only the space owner or an admin archives or unarchives it.")
        if space.type != SpaceType.TEAM:
            raise Conflict("Only team spaces are archived.", code="not_a_team_space")
        if space.read_only and space.archived_at is None:
            raise SpaceReadOnly()  # orphaned: an operator gives it an owner
        if archived != (space.archived_at is not None):
            now = utcnow()
            space.archived_at = now if archived else None
            space.read_only = archived
            space.updated_at = now
            audit.record(session, ctx, "space.archive" if archived else "space.unarchive",
                         "space", space.id, space_id=space.id)
        return space, space_role(session, ctx.principal, space)
