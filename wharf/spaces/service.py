"""Personal and team spaces and team membership.

The service functions take the ``Database`` and run each request in one transaction of
their own (``db.read()`` or ``db.write()``); the rows they return were read inside it and
keep their values after it (``expire_on_commit=False``)."""
from __future__ import annotations

from sqlalchemy import delete, or_, select
from sqlalchemy.orm import Session

from storage.db import Database
from storage.enums import MemberRole, Role, SpaceType, values
from storage.limits import SPACE_DESCRIPTION_MAX, SPACE_NAME_MAX
from storage.models import Space, SpaceMember, User
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import RequestContext
from wharf.infra.errors import Conflict, Forbidden, NotFound, ValidationFailed
from wharf.infra.ids import is_id, new_id
from wharf.infra.pagination import decode_cursor, page
from wharf.infra.validation import clean_name, one_of, storable
from wharf.spaces.access import Access, require_space, space_role

MEMBER_ROLES = values(MemberRole)


def set_owner(session: Session, space: Space, owner_id: str, *,
              read_only: bool = False) -> None:
    """``owner_id`` owns the team ``space`` from now on (an admin who inherits it, an
    operator's ``wharf space-owner``): the owner is not a member, so their membership row
    goes in the same transaction (else they would be listed as a member too, and that row
    could never be removed: ``owner_not_member``)."""
    space.owner_id = owner_id
    space.read_only = read_only or space.archived_at is not None  # archived stays so
    space.updated_at = utcnow()
    session.execute(delete(SpaceMember).where(SpaceMember.space_id == space.id,
                                              SpaceMember.user_id == owner_id))


def create_team_space(db: Database, ctx: RequestContext, name: object,
                      type_: object = SpaceType.TEAM) -> Space:
    if type_ != SpaceType.TEAM:
        raise ValidationFailed("only team spaces can be created; the personal space comes "
                               "with the user", details={"field": "type"})
    with db.write() as session:
        space = Space(id=new_id(), type=SpaceType.TEAM,
                      name=clean_name(name, "name", max_len=SPACE_NAME_MAX),
                      owner_id=ctx.principal.user_id, public_read=False)
        session.add(space)
        session.flush()
        audit.record(session, ctx, "space.create", "space", space.id, space_id=space.id)
    return space


def list_spaces(db: Database, ctx: RequestContext, limit: int,
                cursor: str | None) -> tuple[list[tuple[Space, str | None]], str | None]:
    """The spaces the caller owns or belongs to, each with their role in it."""
    after = decode_cursor("spaces", cursor, 1)
    uid = ctx.principal.user_id
    member_of = select(SpaceMember.space_id).where(SpaceMember.user_id == uid)
    q = select(Space).where(or_(Space.owner_id == uid, Space.id.in_(member_of)))
    if after:
        q = q.where(Space.id > after[0])
    with db.read() as session:
        rows = list(session.scalars(q.order_by(Space.id).limit(limit + 1)))
        rows, next_cursor = page(rows, limit, "spaces", lambda s: [s.id])
        return [(s, space_role(session, ctx.principal, s)) for s in rows], next_cursor


def get_space(db: Database, ctx: RequestContext, space_id: str) -> tuple[Space, Access]:
    with db.read() as session:
        return require_space(session, ctx.principal, space_id, Role.VIEWER)


def update_space(db: Database, ctx: RequestContext, space_id: str,
                 changes: dict[str, object]) -> tuple[Space, Access]:
    with db.write() as session:
        return _update_space(session, ctx, space_id, changes)


def _update_space(session: Session, ctx: RequestContext, space_id: str,
                  changes: dict[str, object]) -> tuple[Space, Access]:
    space, access = require_space(session, ctx.principal, space_id, Role.ADMIN)
    if not changes:
        raise ValidationFailed("nothing to change: send name, description and/or "
                               "public_read")
    done: dict[str, object] = {}
    if "name" in changes:
        space.name = clean_name(changes["name"], "name", max_len=SPACE_NAME_MAX)
        done["name"] = space.name
    if "description" in changes:
        space.description = clean_description(changes["description"])
        done["description"] = True  # changed; the text itself stays out of the audit
    if "public_read" in changes:
        if not isinstance(changes["public_read"], bool):
            raise ValidationFailed("public_read must be a boolean",
                                   details={"field": "public_read"})
        space.public_read = changes["public_read"]
        done["public_read"] = space.public_read
    space.updated_at = utcnow()
    audit.record(session, ctx, "space.update", "space", space.id, space_id=space.id,
                 details=done)
    return space, access


def clean_description(value: object) -> str:
    """Free text (line breaks allowed), trimmed, at most ``SPACE_DESCRIPTION_MAX``
    characters; 400 ``validation_failed`` naming ``description`` otherwise."""
    if not isinstance(value, str) or not storable(value):
        raise ValidationFailed("description must be text", details={"field": "description"})
    text = value.strip()
    if len(text) > SPACE_DESCRIPTION_MAX:
        raise ValidationFailed(f"description must be at most {SPACE_DESCRIPTION_MAX} "
                               "characters", details={"field": "description"})
    return text


def list_members(db: Database, ctx: RequestContext, space_id: str, limit: int,
                 cursor: str | None) -> tuple[list[tuple[SpaceMember, User]], str | None]:
    """A page of a team's members (the owner is not one), by user id."""
    after = decode_cursor("members", cursor, 1)
    with db.read() as session:
        space, _ = require_space(session, ctx.principal, space_id, Role.VIEWER)
        q = (select(SpaceMember, User).join(User, User.id == SpaceMember.user_id)
             .where(SpaceMember.space_id == space.id))
        if after:
            q = q.where(SpaceMember.user_id > after[0])
        rows = [(m, u) for m, u in session.execute(
            q.order_by(SpaceMember.user_id).limit(limit + 1))]
        return page(rows, limit, "members", lambda r: [r[0].user_id])


# Who manages whom in a team space (the role matrix in docs/architecture.md):
# - the owner (not a member row) adds, changes and removes anyone, admins included;
# - an admin adds, changes and removes editors and viewers, but only the owner grants the
#   admin role or changes or removes an admin (403 ``owner_required``); an admin may step
#   down (change their own role to editor/viewer) or leave;
# - any member may leave (DELETE their own membership); the owner is not a member and
#   cannot leave (409 ``owner_not_member``).
def put_member(db: Database, ctx: RequestContext, space_id: str, user_id: str | None,
               role_value: object, *, username: str | None = None
               ) -> tuple[SpaceMember, User, bool]:
    """The member row, its user, and whether they joined (else their role changed). The
    user is ``user_id``, or the one named ``username`` (any case; 404 ``user_not_found``)."""
    with db.write() as session:
        return _put_member(session, ctx, space_id, user_id, role_value, username)


def named_user(session: Session, user_id: str | None, username: str | None) -> User | None:
    """The user ``user_id``, or the one named ``username`` (any case; 404
    ``user_not_found``); None for an unknown id."""
    if username is not None:
        user = session.scalar(select(User).where(User.username_key == username.lower()))
        if user is None:
            raise NotFound("No user has that username.", code="user_not_found")
        return user
    return session.get(User, user_id) if user_id is not None and is_id(user_id) else None


def _put_member(session: Session, ctx: RequestContext, space_id: str, user_id: str | None,
                role_value: object, username: str | None) -> tuple[SpaceMember, User, bool]:
    # Lock the space: concurrent PUTs for the same new member must not both INSERT.
    space, access = require_space(session, ctx.principal, space_id, Role.ADMIN, lock=True)
    role = one_of(role_value, "role", MEMBER_ROLES)
    if space.type != SpaceType.TEAM:
        raise Conflict("Personal spaces have no members.", code="not_a_team_space")
    user = named_user(session, user_id, username)
    if user is None:
        raise NotFound("No such user.")
    if user.id == space.owner_id:
        raise Conflict("The space owner is not a member; their role cannot change.",
                       code="owner_not_member")
    member = session.get(SpaceMember, (space.id, user.id))
    current = member.role if member is not None else None
    if access.role != Role.OWNER:
        is_self = user.id == ctx.principal.user_id
        # An admin may step down themselves; the admin role is otherwise the owner's call.
        if (role == MemberRole.ADMIN and current != MemberRole.ADMIN) or \
                (current == MemberRole.ADMIN and not (is_self and role != MemberRole.ADMIN)):
            raise Forbidden("Only the space owner grants, changes or removes the admin role.",
                            code="owner_required")
    created = member is None
    if member is None:
        member = SpaceMember(space_id=space.id, user_id=user.id, role=role)
        session.add(member)
    else:
        member.role = role
        member.updated_at = utcnow()
    session.flush()
    audit.record(session, ctx, "space.member.put", "user", user.id, space_id=space.id,
                 details={"role": role})
    return member, user, created


def delete_member(db: Database, ctx: RequestContext, space_id: str, user_id: str) -> None:
    """Remove a member: the owner removes anyone, an admin removes editors and viewers, and
    every member may remove themselves (leave)."""
    with db.write() as session:
        _delete_member(session, ctx, space_id, user_id)


def _delete_member(session: Session, ctx: RequestContext, space_id: str,
                   user_id: str) -> None:
    leaving = user_id == ctx.principal.user_id
    space, access = require_space(session, ctx.principal, space_id,
                                  Role.VIEWER if leaving else Role.ADMIN, lock=True)
    if user_id == space.owner_id:
        raise Conflict("The space owner is not a member and cannot leave the space.",
                       code="owner_not_member")
    member = session.get(SpaceMember, (space.id, user_id)) if is_id(user_id) else None
    if member is None:
        raise NotFound("That user is not a member of this space.")
    if not leaving and access.role != Role.OWNER and member.role == MemberRole.ADMIN:
        raise Forbidden("Only the space owner removes an admin.", code="owner_required")
    session.delete(member)
    audit.record(session, ctx, "space.member.delete", "user", user_id, space_id=space.id,
                 details={"left": True} if leaving else None)
