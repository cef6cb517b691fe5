"""Permission objects of a trunk unit, as the API calls them: create, list, read, update,
delete, and their explicit collaborators. Each write is one product-database
transaction with its audit row (``permission_object.create``, ``.update``, ``.delete``,
``.collaborator_put``, ``.collaborator_remove``); a target's binding is written after it,
in the unit store (:mod:`wharf.protection.binding`).

Who may: reading needs the unit's view right; creating its edit right; everything else
the object's *manage* right (:mod:`wharf.protection.rules`). Worktree units have no
management (they are not found here).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from storage.db import Database
from storage.enums import Role
from storage.models import ContentPermissionCollaborator as Collab
from storage.models import ContentPermissionObject as Obj
from storage.models import UnitResource, User
from storage.results import rowcount
from storage.unitstore import UnitStore
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import RequestContext
from wharf.infra.errors import Conflict, Forbidden, NotFound, Unauthenticated, ValidationFailed
from wharf.infra.ids import is_id, new_id
from wharf.infra.validation import clean_label, one_of
from wharf.protection import binding, records
from wharf.protection.pointers import clean_target
from wharf.protection.records import MAX_COLLABORATORS, MAX_OBJECTS_PER_UNIT
from wharf.protection.rules import (
    ACTIONS,
    DEFAULT_STRATEGIES,
    EDIT_SCOPES,
    LEVELS,
    READ_SCOPES,
    ROLES,
    Rights,
    rights,
)
from wharf.spaces.access import Access
from wharf.units.resources import find_unit

OBJECT_TYPE_MAX = 64


@dataclass(frozen=True)
class Collaborator:
    user_id: str
    username: str
    role: str


@dataclass(frozen=True)
class ObjectView:
    """An object as its reader sees it: its row, its bound target (None: unbound), its
    collaborators and the reader's rights on it."""

    obj: Obj
    target: str | None
    collaborators: list[Collaborator]
    rights: Rights


@dataclass(frozen=True)
class _Found:
    obj: Obj
    unit: UnitResource
    space_id: str
    access: Access


def _signed_in(ctx: RequestContext) -> str:
    if not ctx.principal.is_user or ctx.principal.user_id is None:
        raise Unauthenticated("Sign in to manage protected ranges.")
    return ctx.principal.user_id


def _find(s: Session, ctx: RequestContext, object_id: str) -> _Found:
    obj = s.get(Obj, object_id) if is_id(object_id) else None
    if obj is None:
        raise NotFound("No such permission object.")
    try:
        unit, _, node, access = find_unit(s, ctx, obj.unit_id, Role.VIEWER)
    except NotFound:
        raise NotFound("No such permission object.") from None
    return _Found(obj, unit, node.space_id, access)


def _rights(s: Session, ctx: RequestContext, f: _Found) -> Rights:
    return rights(records.standing(s, ctx.principal, f.access, f.obj.unit_id),
                  records.facts(f.obj))


def _managed(s: Session, ctx: RequestContext, object_id: str) -> _Found:
    _signed_in(ctx)
    f = _find(s, ctx, object_id)
    if not _rights(s, ctx, f).manage:
        raise Forbidden("Only the object's creator (while they may edit the document) or "
                        "the document's owner or admin manage a protected range.")
    return f


def _strategies(value: object, base: dict[str, Any]) -> dict[str, Any]:
    if value is None:
        return dict(base)
    if not isinstance(value, dict) or set(value) - set(ACTIONS):
        raise ValidationFailed(f"strategies takes {', '.join(ACTIONS)}",
                               details={"field": "strategies"})
    out = dict(base)
    for action, level in value.items():
        out[action] = one_of(level, f"strategies.{action}", LEVELS)
    return out


def _target(value: object) -> str:
    cleaned = clean_target(value)
    if isinstance(cleaned, str):
        raise ValidationFailed(cleaned, details={"field": "target"})
    return cleaned[0]


def _collaborators(s: Session, object_ids: list[str]) -> dict[str, list[Collaborator]]:
    out: dict[str, list[Collaborator]] = {i: [] for i in object_ids}
    if object_ids:
        for oid, uid, name, role in s.execute(
                select(Collab.object_id, Collab.user_id, User.username, Collab.role)
                .join(User, User.id == Collab.user_id).where(Collab.object_id.in_(object_ids))
                .order_by(Collab.created_at, Collab.user_id)):
            out[oid].append(Collaborator(uid, name, role))
    return out


def _audit(s: Session, ctx: RequestContext, f: _Found, action: str,
           **details: Any) -> None:
    audit.record(s, ctx, action, "permission_object", f.obj.id, space_id=f.space_id,
                 details={"unit_id": f.obj.unit_id, **details})


def _bind(db: Database, store: UnitStore, ctx: RequestContext, unit_id: str,
          object_id: str, target: str | None, space_id: str) -> None:
    """Bind (or unbind) after the ACL's commit; the revision it writes is audited as a
    changeset of the unit (so the live feed announces it)."""
    done = binding.bind(store, unit_id, object_id, target, ctx.principal.user_id)
    if done.revision is not None:
        with db.write() as s:
            audit.record(s, ctx, "unit.changeset", "unit", unit_id, space_id=space_id,
                         details={"revision": done.revision, "ops": 1,
                                  "permission_object_id": object_id})


def create(db: Database, store: UnitStore, ctx: RequestContext, unit_id: str,
           body: dict[str, Any]) -> ObjectView:
    """A new object of the unit (its edit right), bound to ``target`` after its commit."""
    user_id = _signed_in(ctx)
    target = _target(body.get("target"))
    with db.write() as s:
        unit, _, node, access = find_unit(s, ctx, unit_id, Role.EDITOR)
        s.execute(select(UnitResource.resource_id)
                  .where(UnitResource.resource_id == unit.resource_id)
                  .with_for_update(key_share=True))
        count = s.scalar(select(func.count()).select_from(Obj).where(Obj.unit_id == unit_id))
        if (count or 0) >= MAX_OBJECTS_PER_UNIT:
            raise Conflict(f"A document has at most {MAX_OBJECTS_PER_UNIT} protected "
                           "ranges.", details={"limit": MAX_OBJECTS_PER_UNIT})
        now = utcnow()
        obj = Obj(id=new_id(), unit_id=unit_id, resource_id=unit.resource_id,
                object_type=_object_type(body.get("object_type")),
                name=clean_label(body.get("name"), "name"), creator_id=user_id,
                read_scope=one_of(body.get("read_scope", "all_collaborators"), "read_scope",
                                  READ_SCOPES),
                edit_scope=one_of(body.get("edit_scope", "one_self"), "edit_scope",
                                  EDIT_SCOPES),
                strategies=_strategies(body.get("strategies"), DEFAULT_STRATEGIES),
                created_at=now, updated_at=now)
        s.add(obj)
        s.flush()
        f = _Found(obj, unit, node.space_id, access)
        _audit(s, ctx, f, "permission_object.create", target=target,
               read_scope=obj.read_scope, edit_scope=obj.edit_scope)
        object_id, space_id = obj.id, node.space_id
    _bind(db, store, ctx, unit_id, object_id, target, space_id)
    return read(db, store, ctx, object_id)


def _object_type(value: object) -> str:
    return clean_label(value, "object_type", max_len=OBJECT_TYPE_MAX)


def views(s: Session, ctx: RequestContext, store: UnitStore, access: Access, unit_id: str,
          objects: list[Obj]) -> list[ObjectView]:
    """``objects`` of the unit as the caller sees them (one read of the bindings)."""
    if not objects:
        return []
    targets = binding.targets_of(store, unit_id)
    who = records.standing(s, ctx.principal, access, unit_id)
    people = _collaborators(s, [o.id for o in objects])
    return [ObjectView(o, targets.get(o.id), people[o.id], rights(who, records.facts(o)))
            for o in objects]


def list_objects(db: Database, store: UnitStore, ctx: RequestContext,
                 unit_id: str) -> list[ObjectView]:
    with db.read() as s:
        _, _, _, access = find_unit(s, ctx, unit_id, Role.VIEWER)
        return views(s, ctx, store, access, unit_id, records.objects_of(s, unit_id))


def capabilities(db: Database, store: UnitStore, ctx: RequestContext,
                 unit_id: str) -> list[ObjectView]:
    """What the unit's read answers about its protected ranges (the caller's rights on
    each): one index probe for a unit without any."""
    with db.read() as s:
        objects = records.objects_of(s, unit_id)
        if not objects:
            return []
        _, _, _, access = find_unit(s, ctx, unit_id, Role.VIEWER)
        return views(s, ctx, store, access, unit_id, objects)


def read(db: Database, store: UnitStore, ctx: RequestContext, object_id: str) -> ObjectView:
    with db.read() as s:
        f = _find(s, ctx, object_id)
        return views(s, ctx, store, f.access, f.obj.unit_id, [f.obj])[0]


def update(db: Database, store: UnitStore, ctx: RequestContext, object_id: str,
           changes: dict[str, Any]) -> ObjectView:
    """Change an object's fields and/or its target (manage right); the new target is
    bound after the commit."""
    if not changes:
        raise ValidationFailed("nothing to change")
    target = _target(changes["target"]) if "target" in changes else None
    with db.write() as s:
        f = _managed(s, ctx, object_id)
        obj, done = f.obj, dict[str, Any]()
        if "name" in changes:
            obj.name = done["name"] = clean_label(changes["name"], "name")
        if "object_type" in changes:
            obj.object_type = done["object_type"] = _object_type(changes["object_type"])
        for field, allowed in (("read_scope", READ_SCOPES), ("edit_scope", EDIT_SCOPES)):
            if field in changes:
                done[field] = one_of(changes[field], field, allowed)
                setattr(obj, field, done[field])
        if "strategies" in changes:
            obj.strategies = _strategies(changes["strategies"], dict(obj.strategies))
            done["strategies"] = obj.strategies
        if target is not None:
            done["target"] = target
        obj.updated_at = utcnow()
        s.flush()
        _audit(s, ctx, f, "permission_object.update", **done)
        unit_id, space_id = obj.unit_id, f.space_id
    if target is not None:
        _bind(db, store, ctx, unit_id, object_id, target, space_id)
    return read(db, store, ctx, object_id)


def delete_object(db: Database, store: UnitStore, ctx: RequestContext,
                  object_id: str) -> None:
    """Delete the ACL (manage right), then its binding: a binding left behind names no
    object and protects nothing."""
    with db.write() as s:
        f = _managed(s, ctx, object_id)
        s.execute(delete(Collab).where(Collab.object_id == object_id)
                  .execution_options(synchronize_session=False))
        s.delete(f.obj)
        s.flush()
        _audit(s, ctx, f, "permission_object.delete", name=f.obj.name)
        unit_id, space_id = f.obj.unit_id, f.space_id
    _bind(db, store, ctx, unit_id, object_id, None, space_id)


def put_collaborator(db: Database, store: UnitStore, ctx: RequestContext, object_id: str,
                     user_id: str, role: object) -> ObjectView:
    """Make ``user_id`` an explicit collaborator with ``role`` (manage right)."""
    role = one_of(role, "role", ROLES)
    with db.write() as s:
        f = _managed(s, ctx, object_id)
        if not is_id(user_id) or s.get(User, user_id) is None:
            raise NotFound("No such user.", code="user_not_found")
        row = s.get(Collab, (object_id, user_id))
        if row is None:
            count = s.scalar(select(func.count()).select_from(Collab)
                             .where(Collab.object_id == object_id))
            if (count or 0) >= MAX_COLLABORATORS:
                raise Conflict(f"A protected range has at most {MAX_COLLABORATORS} "
                               "collaborators.", details={"limit": MAX_COLLABORATORS})
            s.add(Collab(object_id=object_id, user_id=user_id, role=role, created_at=utcnow()))
        else:
            row.role = role
        f.obj.updated_at = utcnow()
        s.flush()
        _audit(s, ctx, f, "permission_object.collaborator_put", user_id=user_id, role=role)
    return read(db, store, ctx, object_id)


def remove_collaborator(db: Database, ctx: RequestContext, object_id: str,
                        user_id: str) -> None:
    """Take ``user_id``'s explicit role away (manage right); nothing to take is no error."""
    with db.write() as s:
        f = _managed(s, ctx, object_id)
        gone = rowcount(s.execute(
            delete(Collab).where(Collab.object_id == object_id, Collab.user_id == user_id)
            .execution_options(synchronize_session=False)))
        if gone:
            f.obj.updated_at = utcnow()
            s.flush()
        _audit(s, ctx, f, "permission_object.collaborator_remove", user_id=user_id,
               removed=bool(gone))
