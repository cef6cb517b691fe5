"""Protected ranges: permission objects of a unit (wharf.protection, docs/protection.md)."""
from __future__ import annotations

from typing import Annotated, ClassVar

import msgspec

from api.schemas.common import Id, Request, Response, Timestamp
from api.schemas.spaces import _Patch
from storage.enums import EditScope, ObjectRole, ReadScope
from storage.enums import StrategyLevel as Level
from wharf.protection.pointers import TARGET_MAX
from wharf.protection.rules import DEFAULT_STRATEGIES

Name = Annotated[str, msgspec.Meta(min_length=1, max_length=255,
                                   examples=["Q3 totals"])]
ObjectType = Annotated[str, msgspec.Meta(
    min_length=1, max_length=64, description="What the object is in the editor's terms "
                                             "(free text: `range`, `worksheet`, ...).",
    examples=["range"])]
Target = Annotated[str, msgspec.Meta(
    max_length=TARGET_MAX,
    description="An RFC 6901 JSON Pointer inside the document's body (`/body...`): the "
                "prefix protected (whole reference tokens; `~0`/`~1` compared decoded).",
    examples=["/body/sheets/s1/cellData/2"])]


class Strategies(Request):
    """The least right each action needs: `reader` (view the object), `editor` (edit
    it), `owner` (manage it)."""

    copy: Level = Level(DEFAULT_STRATEGIES["copy"])
    print: Level = Level(DEFAULT_STRATEGIES["print"])
    export: Level = Level(DEFAULT_STRATEGIES["export"])


class StrategiesPatch(Request):
    copy: Level | msgspec.UnsetType = msgspec.UNSET
    print: Level | msgspec.UnsetType = msgspec.UNSET
    export: Level | msgspec.UnsetType = msgspec.UNSET


class CreatePermissionObjectRequest(Request):
    __example__: ClassVar[dict[str, object]] = {
        "name": "Q3 totals", "object_type": "range", "target": "/body/sheets/s1/cellData/2",
        "read_scope": "all_collaborators", "edit_scope": "specified",
        "strategies": {"copy": "reader", "print": "editor", "export": "editor"}}
    name: Name
    object_type: ObjectType
    target: Target
    read_scope: ReadScope = ReadScope("all_collaborators")
    edit_scope: EditScope = EditScope("one_self")
    strategies: Strategies | None = None


class UpdatePermissionObjectRequest(_Patch):
    __example__: ClassVar[dict[str, object]] = {"edit_scope": "specified"}
    name: Name | msgspec.UnsetType = msgspec.UNSET
    object_type: ObjectType | msgspec.UnsetType = msgspec.UNSET
    target: Target | msgspec.UnsetType = msgspec.UNSET
    read_scope: ReadScope | msgspec.UnsetType = msgspec.UNSET
    edit_scope: EditScope | msgspec.UnsetType = msgspec.UNSET
    strategies: StrategiesPatch | msgspec.UnsetType = msgspec.UNSET


class CollaboratorRequest(Request):
    __example__: ClassVar[dict[str, object]] = {"role": "editor"}
    role: ObjectRole


class ObjectRights(Response):
    """What the caller may do with the object (advisory for reading: snapshots, history
    and exports are not filtered by object scope)."""

    view: bool
    edit: bool
    copy: bool
    print: bool
    export: bool
    manage: bool


class ObjectCollaborator(Response):
    user_id: Id
    username: str
    role: ObjectRole


class PermissionObject(Response):
    id: Id
    unit_id: Id
    name: str
    object_type: str
    target: Annotated[str | None, msgspec.Meta(
        description="The bound target in the unit's current document; null while the "
                    "object is unbound (its binding could not be written: PATCH its "
                    "target again).")]
    bound: bool
    read_scope: ReadScope
    edit_scope: EditScope
    strategies: Strategies
    creator_id: Annotated[str, msgspec.Meta(
        description="`~deleted`'s id once the creator's account was deleted.")]
    collaborators: list[ObjectCollaborator]
    rights: ObjectRights
    created_at: Timestamp
    updated_at: Timestamp


class PermissionObjectList(Response):
    items: list[PermissionObject]
