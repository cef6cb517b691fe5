"""Domain rows as response Structs (``api.schemas``).

The rows come from the core's service functions, which read them inside their own
transaction; the API reads their fields after it ended (the sessions keep loaded values,
``expire_on_commit=False``). What each function reads of a row is declared here as a
protocol: the API imports no ORM model (``tests/architecture/test_api_unit_of_work.py``)."""
from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

import msgspec

from api.schemas.identity import ApiToken as ApiTokenBody
from api.schemas.identity import User as UserBody
from api.schemas.operations import Resource as ResourceBody
from api.schemas.operations import ResourceUnit
from api.schemas.spaces import Capabilities, Member, ResourceRef
from api.schemas.spaces import Node as NodeBody
from api.schemas.spaces import Space as SpaceBody
from storage.enums import MemberRole, ResourceKind, Role, SpaceType, TokenScope, UnitType
from wharf.infra.clock import iso
from wharf.spaces.access import Access


class User(Protocol):
    id: str
    username: str
    created_at: datetime


class Space(Protocol):
    id: str
    type: str
    name: str
    description: str
    owner_id: str
    public_read: bool
    read_only: bool
    archived_at: datetime | None
    created_at: datetime
    updated_at: datetime


class SpaceMember(Protocol):
    space_id: str
    user_id: str
    role: str
    created_at: datetime
    updated_at: datetime


class Node(Protocol):
    id: str
    space_id: str
    parent_id: str | None
    name: str
    created_by: str
    created_at: datetime
    updated_at: datetime


class Resource(Protocol):
    id: str
    kind: str
    created_by: str
    created_at: datetime


class UnitResource(Protocol):
    unit_id: str
    unit_type: str


class ApiToken(Protocol):
    id: str
    name: str
    prefix: str
    scopes: str
    created_at: datetime
    expires_at: datetime | None
    last_used_at: datetime | None
    quota_pending_operations: int | None
    quota_submissions_per_minute: int | None


def timestamp(value: datetime) -> str:
    """A stored (non-null) time as the API writes it (RFC 3339, UTC)."""
    out = iso(value)
    assert out is not None
    return out


def user(u: User) -> UserBody:
    return UserBody(id=u.id, username=u.username, created_at=timestamp(u.created_at))


def space(s: Space, role: str | None) -> SpaceBody:
    return SpaceBody(id=s.id, type=SpaceType(s.type), name=s.name,
                     description=s.description or "", owner_id=s.owner_id,
                     public_read=bool(s.public_read), role=Role(role) if role else None,
                     read_only=bool(s.read_only), archived=s.archived_at is not None,
                     archived_at=timestamp(s.archived_at) if s.archived_at else None,
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


def resource(res: Resource, n: Node, access: Access, unit: UnitResource | None,
             node_resource: dict[str, Any] | None) -> ResourceBody:
    """A resource with its unit, if it is one, and its node (``node_resource``: the node's
    ``resources_for`` entry)."""
    return ResourceBody(
        id=res.id, kind=ResourceKind(res.kind), node_id=n.id, created_by=res.created_by,
        created_at=timestamp(res.created_at),
        unit=(ResourceUnit(unit_id=unit.unit_id, unit_type=UnitType(unit.unit_type))
              if unit else None),
        node=node(n, access, node_resource))


def token(t: ApiToken) -> ApiTokenBody:
    return ApiTokenBody(id=t.id, name=t.name, prefix=t.prefix,
                        scopes=[TokenScope(s) for s in t.scopes.split()],
                        created_at=timestamp(t.created_at), expires_at=iso(t.expires_at),
                        last_used_at=iso(t.last_used_at),
                        quota_pending_operations=t.quota_pending_operations,
                        quota_submissions_per_minute=t.quota_submissions_per_minute)
