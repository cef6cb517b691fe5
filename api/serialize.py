"""JSON representations of domain rows."""
from __future__ import annotations

from storage.models import ApiToken, Node, Space, SpaceMember, User
from wharf.access import Access
from wharf.clock import iso


def user(u: User) -> dict:
    return {"id": u.id, "username": u.username, "created_at": iso(u.created_at)}


def space(s: Space, role: str | None) -> dict:
    return {"id": s.id, "type": s.type, "name": s.name, "owner_id": s.owner_id,
            "public_read": bool(s.public_read), "role": role,
            "created_at": iso(s.created_at), "updated_at": iso(s.updated_at)}


def member(m: SpaceMember, u: User) -> dict:
    return {"space_id": m.space_id, "user_id": m.user_id, "username": u.username,
            "role": m.role, "created_at": iso(m.created_at), "updated_at": iso(m.updated_at)}


def node(n: Node, access: Access, resource: dict | None) -> dict:
    return {"id": n.id, "space_id": n.space_id, "parent_id": n.parent_id, "name": n.name,
            "created_by": n.created_by, "created_at": iso(n.created_at),
            "updated_at": iso(n.updated_at), "resource": resource, "role": access.role,
            "capabilities": access.capabilities()}


def token(t: ApiToken) -> dict:
    return {"id": t.id, "name": t.name, "prefix": t.prefix, "scopes": t.scopes.split(),
            "created_at": iso(t.created_at), "expires_at": iso(t.expires_at),
            "last_used_at": iso(t.last_used_at)}
