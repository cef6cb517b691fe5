"""Domain rows as response Structs (``api.schemas``)."""
from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec

from api.schemas.identity import ApiToken as ApiTokenBody
from api.schemas.identity import User as UserBody
from api.schemas.spaces import Capabilities, Member, ResourceRef
from api.schemas.spaces import Node as NodeBody
from api.schemas.spaces import Space as SpaceBody
from storage.enums import MemberRole, Role, SpaceType, TokenScope
from storage.models import ApiToken, Node, Space, SpaceMember, User
from wharf.infra.clock import iso
from wharf.spaces.access import Access


def timestamp(value: datetime) -> str:
    """A stored (non-null) time as the API writes it (RFC 3339, UTC)."""
    out = iso(value)
    assert out is not None
    return out


def user(u: User) -> UserBody:
    return UserBody(id=u.id, username=u.username, created_at=timestamp(u.created_at))


def space(s: Space, role: str | None) -> SpaceBody:
    return SpaceBody(id=s.id, type=SpaceType(s.type), name=s.name, owner_id=s.owner_id,
                     public_read=bool(s.public_read), role=Role(role) if role else None,
                     created_at=timestamp(s.created_at), updated_at=timestamp(s.updated_at))


def member(m: SpaceMember, u: User) -> Member:
    return Member(space_id=m.space_id, user_id=m.user_id, username=u.username,
                  role=MemberRole(m.role), created_at=timestamp(m.created_at),
                  updated_at=timestamp(m.updated_at))


def resource_ref(data: dict[str, Any] | None) -> ResourceRef | None:
    """``wharf.spaces.nodes.resources_for``'s entry of a node as its typed reference."""
    return None if data is None else msgspec.convert(data, ResourceRef)


def node(n: Node, access: Access, resource: dict[str, Any] | None) -> NodeBody:
    return NodeBody(id=n.id, space_id=n.space_id, parent_id=n.parent_id, name=n.name,
                    created_by=n.created_by, created_at=timestamp(n.created_at),
                    updated_at=timestamp(n.updated_at), resource=resource_ref(resource),
                    role=Role(access.role) if access.role else None,
                    capabilities=Capabilities(**access.capabilities()))


def token(t: ApiToken) -> ApiTokenBody:
    return ApiTokenBody(id=t.id, name=t.name, prefix=t.prefix,
                        scopes=[TokenScope(s) for s in t.scopes.split()],
                        created_at=timestamp(t.created_at), expires_at=iso(t.expires_at),
                        last_used_at=iso(t.last_used_at),
                        quota_pending_operations=t.quota_pending_operations,
                        quota_submissions_per_minute=t.quota_submissions_per_minute)
