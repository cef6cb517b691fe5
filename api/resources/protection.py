"""Protected ranges: ``/api/units/{unit_id}/permission-objects``,
``/api/permission-objects/{object_id}`` and its ``/collaborators/{user_id}``
(wharf.protection, docs/protection.md).

Every write is one product-database transaction with its audit row (no operation, no
``Idempotency-Key``); a target is then bound in the unit's document. Worktree units have
no management: these routes find trunk units only.
"""
from __future__ import annotations

import falcon
import msgspec

from api import contract
from api.schemas.protection import (
    CollaboratorRequest,
    CreatePermissionObjectRequest,
    ObjectCollaborator,
    ObjectRights,
    PermissionObject,
    PermissionObjectList,
    Strategies,
    UpdatePermissionObjectRequest,
)
from api.schemas.spaces import changes
from api.serialize import timestamp
from storage.db import Database
from storage.enums import EditScope, ObjectRole, ReadScope
from storage.enums import StrategyLevel as Level
from storage.unitstore import UnitStore
from wharf.protection import service
from wharf.protection.rules import DEFAULT_STRATEGIES
from wharf.protection.service import ObjectView

TAGS = ["protection"]
ACCESS = "404 when the caller cannot open the unit (a unit in a worktree included)."
MANAGE = (" The object's creator while they may edit the document, or the document's "
          "owner or an admin of its space (403 otherwise). " + ACCESS)


def object_body(v: ObjectView) -> PermissionObject:
    o = v.obj
    s = {**DEFAULT_STRATEGIES, **(o.strategies or {})}
    return PermissionObject(
        id=o.id, unit_id=o.unit_id, name=o.name, object_type=o.object_type, target=v.target,
        bound=v.target is not None, read_scope=ReadScope(o.read_scope),
        edit_scope=EditScope(o.edit_scope),
        strategies=Strategies(copy=Level(s["copy"]), print=Level(s["print"]),
                              export=Level(s["export"])),
        creator_id=o.creator_id,
        collaborators=[ObjectCollaborator(user_id=c.user_id, username=c.username,
                                          role=ObjectRole(c.role)) for c in v.collaborators],
        rights=ObjectRights(**v.rights.as_dict()), created_at=timestamp(o.created_at),
        updated_at=timestamp(o.updated_at))


class UnitPermissionObjects:
    def __init__(self, db: Database, store: UnitStore):
        self.db, self.store = db, store

    @contract.op(operation_id="listPermissionObjects", summary="A unit's protected ranges",
                 tags=TAGS, responses={200: PermissionObjectList},
                 description="Oldest first, each with its bound target and the caller's "
                             "rights on it (`view`, `edit`, `copy`, `print`, `export`, "
                             "`manage`: advisory for reading, snapshots are not filtered). "
                             "Whoever can open the unit. " + ACCESS, auth="optional")
    def on_get(self, req: falcon.Request, resp: falcon.Response, unit_id: str) -> None:
        items = service.list_objects(self.db, self.store, req.context.ctx, unit_id)
        resp.media = PermissionObjectList(items=[object_body(v) for v in items])

    @contract.op(operation_id="createPermissionObject", summary="Protect a range",
                 tags=TAGS, body=CreatePermissionObjectRequest,
                 responses={201: contract.Answer(PermissionObject, "created")},
                 problems=(409,),
                 description="The unit's editors may protect a target; the caller becomes "
                             "its creator. The ACL is committed first, then the target is "
                             "bound in the document (one new revision): `bound` false when "
                             "that could not be written (PATCH the target again). 409 "
                             "`conflict` past 200 objects per unit. " + ACCESS)
    def on_post(self, req: falcon.Request, resp: falcon.Response, unit_id: str) -> None:
        body = contract.read_body(req, CreatePermissionObjectRequest)
        v = service.create(self.db, self.store, req.context.ctx, unit_id,
                           msgspec.to_builtins(body))
        resp.media = object_body(v)
        resp.status = falcon.HTTP_201


class PermissionObjectItem:
    def __init__(self, db: Database, store: UnitStore):
        self.db, self.store = db, store

    @contract.op(operation_id="getPermissionObject", summary="A protected range", tags=TAGS,
                 responses={200: PermissionObject}, auth="optional",
                 description="Whoever can open the unit. " + ACCESS)
    def on_get(self, req: falcon.Request, resp: falcon.Response, object_id: str) -> None:
        resp.media = object_body(service.read(self.db, self.store, req.context.ctx,
                                              object_id))

    @contract.op(operation_id="updatePermissionObject", summary="Change a protected range",
                 tags=TAGS, body=UpdatePermissionObjectRequest,
                 responses={200: PermissionObject},
                 description="Any of its fields; a new `target` is bound in the document "
                             "after the commit." + MANAGE)
    def on_patch(self, req: falcon.Request, resp: falcon.Response, object_id: str) -> None:
        body = contract.read_body(req, UpdatePermissionObjectRequest)
        fields = {k: msgspec.to_builtins(v) for k, v in changes(body).items()}
        resp.media = object_body(service.update(self.db, self.store, req.context.ctx,
                                                object_id, fields))

    @contract.op(operation_id="deletePermissionObject", summary="Unprotect a range",
                 tags=TAGS, responses={204: contract.Answer(None, "deleted")},
                 description="The ACL and its collaborators go first (the range is "
                             "unprotected at once), then the binding is removed from the "
                             "document." + MANAGE)
    def on_delete(self, req: falcon.Request, resp: falcon.Response, object_id: str) -> None:
        service.delete_object(self.db, self.store, req.context.ctx, object_id)
        resp.status = falcon.HTTP_204


class PermissionObjectCollaborator:
    def __init__(self, db: Database, store: UnitStore):
        self.db, self.store = db, store

    @contract.op(operation_id="putPermissionObjectCollaborator",
                 summary="Give a user a role on a protected range", tags=TAGS,
                 body=CollaboratorRequest, responses={200: PermissionObject},
                 problems=(409,),
                 description="`editor` edits under the target when the edit scope is "
                             "`specified` (and the user may edit the document); either "
                             "role views it. 404 `user_not_found` for an unknown user; 409 "
                             "`conflict` past 500 collaborators." + MANAGE)
    def on_put(self, req: falcon.Request, resp: falcon.Response, object_id: str,
               user_id: str) -> None:
        body = contract.read_body(req, CollaboratorRequest)
        resp.media = object_body(service.put_collaborator(
            self.db, self.store, req.context.ctx, object_id, user_id, str(body.role)))

    @contract.op(operation_id="deletePermissionObjectCollaborator",
                 summary="Take a user's role on a protected range away", tags=TAGS,
                 responses={204: contract.Answer(None, "removed (or had none)")},
                 description="Idempotent." + MANAGE)
    def on_delete(self, req: falcon.Request, resp: falcon.Response, object_id: str,
                  user_id: str) -> None:
        service.remove_collaborator(self.db, req.context.ctx, object_id, user_id)
        resp.status = falcon.HTTP_204


def mount(app: contract.App, db: Database, store: UnitStore) -> None:
    """The protected-range routes (``api.app``)."""
    app.add_route("/api/units/{unit_id}/permission-objects", UnitPermissionObjects(db, store))
    app.add_route("/api/permission-objects/{object_id}", PermissionObjectItem(db, store))
    app.add_route("/api/permission-objects/{object_id}/collaborators/{user_id}",
                  PermissionObjectCollaborator(db, store))
