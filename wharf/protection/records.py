"""The protection capability's reads of the product database: a unit's objects, the
caller's standing on the unit (:class:`wharf.protection.rules.Standing`), and the objects'
facts as the rules read them."""
from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from storage.models import ContentPermissionCollaborator as Collab
from storage.models import ContentPermissionObject as Obj
from storage.models import (
    Node,
    Resource,
    UnitResource,
)
from wharf.infra.context import Principal
from wharf.protection.rules import ObjectFacts, Standing
from wharf.spaces.access import Access, node_access

#: Objects one unit may have, and explicit collaborators one object may have.
MAX_OBJECTS_PER_UNIT = 200
MAX_COLLABORATORS = 500


def objects_of(s: Session, unit_id: str) -> list[Obj]:
    """The unit's permission objects, oldest first (one indexed probe when it has none: the
    changeset path of an unprotected unit costs no more)."""
    return list(s.scalars(select(Obj).where(Obj.unit_id == unit_id)
                          .order_by(Obj.created_at, Obj.id)))


def facts(obj: Obj) -> ObjectFacts:
    return ObjectFacts(obj.id, obj.creator_id, obj.read_scope, obj.edit_scope,
                       obj.strategies or {})


def standing(s: Session, principal: Principal, access: Access, unit_id: str) -> Standing:
    """``principal``'s standing on the unit whose file they reach with ``access``."""
    user_id = principal.user_id if principal.is_user else None
    roles: dict[str, str] = {}
    if user_id is not None:
        roles = {oid: role for oid, role in s.execute(
            select(Collab.object_id, Collab.role).join(Obj, Obj.id == Collab.object_id)
            .where(Obj.unit_id == unit_id, Collab.user_id == user_id))}
    return Standing(user_id=user_id, can_view=access.can_read, can_edit=access.can_edit,
                    takeover=access.can_purge and not access.read_only, roles=roles)


def standing_on_unit(s: Session, principal: Principal, unit_id: str) -> Standing:
    """The standing of ``principal`` on a trunk unit found by id alone (a worktree's
    check, a merge's commit): no right at all when the unit has no trunk resource or its
    node is out of reach."""
    found = s.execute(select(Node).join(Resource, Resource.node_id == Node.id)
                      .join(UnitResource, UnitResource.resource_id == Resource.id)
                      .where(UnitResource.unit_id == unit_id)).scalar_one_or_none()
    access = node_access(s, principal, found) if found is not None else Access(None)
    return standing(s, principal, access, unit_id)
