"""Sharing: direct grants (personal spaces), link sharing (any space).

Each function takes the ``Database`` and runs in one transaction of its own."""
from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from storage.db import Database
from storage.enums import ShareRole, SpaceType, values
from storage.models import LinkSharing, NodeGrant, User
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import RequestContext
from wharf.infra.errors import Conflict, NotFound, ValidationFailed
from wharf.infra.ids import is_id
from wharf.infra.validation import one_of
from wharf.spaces.access import require_share, space_of
from wharf.spaces.service import named_user

SHARE_ROLES = values(ShareRole)


def list_grants(db: Database, ctx: RequestContext,
                node_id: str) -> list[tuple[NodeGrant, User]]:
    with db.read() as s:
        node, _ = require_share(s, ctx.principal, node_id)
        return list(s.execute(select(NodeGrant, User).join(User, User.id == NodeGrant.user_id)
                              .where(NodeGrant.node_id == node.id)
                              .order_by(NodeGrant.user_id)).tuples())


def put_grant(db: Database, ctx: RequestContext, node_id: str, user_id: str | None,
              role_value: object, *, username: str | None = None) -> tuple[NodeGrant, bool]:
    """The grant and whether it was created (else its role changed); the user is
    ``user_id`` or the one named ``username`` (404 ``user_not_found``)."""
    with db.write() as s:
        return _put_grant(s, ctx, node_id, user_id, role_value, username)


def _put_grant(s: Session, ctx: RequestContext, node_id: str, user_id: str | None,
               role_value: object, username: str | None) -> tuple[NodeGrant, bool]:
    node, _ = require_share(s, ctx.principal, node_id)
    role = one_of(role_value, "role", SHARE_ROLES)
    space = space_of(s, node)
    if space.type != SpaceType.PERSONAL:
        raise Conflict("Grants exist only in personal spaces; use team membership.",
                       code="grants_not_allowed")
    user = named_user(s, user_id, username)
    if user is None:
        raise NotFound("No such user.")
    if user.id == space.owner_id:
        raise Conflict("The space owner already has full access.", code="owner_not_grantee")
    grant = s.get(NodeGrant, (node.id, user.id))
    created = grant is None
    if grant is None:
        grant = NodeGrant(node_id=node.id, user_id=user.id, role=role,
                          created_by=ctx.principal.user_id)
        s.add(grant)
    else:
        grant.role = role
    s.flush()
    audit.record(s, ctx, "node.grant.put", "node", node.id, space_id=node.space_id,
                 details={"user_id": user.id, "role": role})
    return grant, created


def delete_grant(db: Database, ctx: RequestContext, node_id: str, user_id: str) -> None:
    with db.write() as s:
        node, _ = require_share(s, ctx.principal, node_id)
        grant = s.get(NodeGrant, (node.id, user_id)) if is_id(user_id) else None
        if grant is None:
            raise NotFound("That user has no grant on this node.")
        s.delete(grant)
        audit.record(s, ctx, "node.grant.delete", "node", node.id, space_id=node.space_id,
                     details={"user_id": user_id})


def get_link_sharing(db: Database, ctx: RequestContext, node_id: str) -> dict[str, object]:
    """``{"enabled", "role"}`` of the node's link sharing (for those who may share it)."""
    with db.read() as s:
        node, _ = require_share(s, ctx.principal, node_id)
        row = s.get(LinkSharing, node.id)
        return {"enabled": row is not None, "role": row.role if row else None}


def put_link_sharing(db: Database, ctx: RequestContext, node_id: str, enabled: object,
                     role: object) -> dict[str, object]:
    with db.write() as s:
        return _put_link_sharing(s, ctx, node_id, enabled, role)


def _put_link_sharing(s: Session, ctx: RequestContext, node_id: str, enabled: object,
                      role: object) -> dict[str, object]:
    node, _ = require_share(s, ctx.principal, node_id)
    row = s.get(LinkSharing, node.id)
    if enabled is True:
        role = one_of(role if role is not None else ShareRole.VIEWER, "role", SHARE_ROLES)
        if row is None:
            s.add(LinkSharing(node_id=node.id, role=role, created_by=ctx.principal.user_id))
        else:
            row.role = role
            row.updated_at = utcnow()
    elif enabled is False:
        if row is not None:
            s.delete(row)
        role = None
    else:
        raise ValidationFailed("enabled must be a boolean", details={"field": "enabled"})
    s.flush()
    audit.record(s, ctx, "node.link_sharing", "node", node.id, space_id=node.space_id,
                 details={"enabled": enabled, "role": role})
    return {"enabled": enabled, "role": role}
