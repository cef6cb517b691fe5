"""Spaces, members and the node tree."""
from __future__ import annotations

from typing import Annotated, ClassVar

import msgspec

from api.schemas.common import Id, IdRef, InvalidField, Request, Response, Timestamp
from storage.enums import MemberRole, Role, SpaceType, UnitType
from storage.limits import SPACE_DESCRIPTION_MAX, SPACE_NAME_MAX

SpaceName = Annotated[str, msgspec.Meta(min_length=1, max_length=SPACE_NAME_MAX,
                                        examples=["Design team"])]
SpaceDescription = Annotated[str, msgspec.Meta(
    max_length=SPACE_DESCRIPTION_MAX, examples=["Plans and designs of the design team."],
    description="Free text; line breaks allowed; trimmed.")]
NodeName = Annotated[str, msgspec.Meta(min_length=1, max_length=255, examples=["Q3 plans"])]


class Space(Response):
    id: Id
    type: SpaceType
    name: str
    description: str
    owner_id: Id
    public_read: bool
    role: Annotated[Role | None, msgspec.Meta(description="The caller's role (null: none).")]
    read_only: Annotated[bool, msgspec.Meta(description=(
        "Nobody writes in the space: it is archived, it is being deleted, or its owner's "
        "account was deleted and it has no owner yet (writes answer 403 "
        "`space_read_only`)."))]
    archived: Annotated[bool, msgspec.Meta(description=(
        "Archived by its owner or an admin (`POST /api/spaces/{id}/unarchive` ends it)."))]
    archived_at: Timestamp | None
    created_at: Timestamp
    updated_at: Timestamp


class SpaceList(Response):
    items: list[Space]
    next_cursor: str | None


class Member(Response):
    space_id: Id
    user_id: Id
    username: str
    role: MemberRole
    created_at: Timestamp
    updated_at: Timestamp


class MemberList(Response):
    items: list[Member]
    next_cursor: str | None


class UnitRef(Response, tag_field="kind", tag="unit"):
    """A node's unit resource."""

    id: Id
    unit_id: Id
    unit_type: UnitType


class BlobRef(Response, tag_field="kind", tag="blob"):
    """A node's blob resource."""

    id: Id
    filename: str
    size: int
    mime_type: str
    etag: Annotated[str, msgspec.Meta(description="The strong ETag of the bytes (quoted).")]


ResourceRef = UnitRef | BlobRef


class Capabilities(Response):
    can_read: bool
    can_edit: bool
    can_create_children: bool
    can_manage: bool
    can_share: bool
    can_trash: bool
    can_purge: bool


class Node(Response):
    id: Id
    space_id: Id
    parent_id: Id | None
    name: str
    created_by: Id
    created_at: Timestamp
    updated_at: Timestamp
    resource: Annotated[ResourceRef | None, msgspec.Meta(
        description="The resource this node holds, if any (`kind` tells which).")]
    role: Role | None
    capabilities: Capabilities


class NodeListItem(Node):
    """In a listing (a space's roots, a node's children): whether the node has a child
    not in the trash (a tree draws an expander)."""

    has_children: bool


class NodeList(Response):
    items: list[NodeListItem]
    next_cursor: str | None


class CreateSpaceRequest(Request):
    __example__: ClassVar[dict[str, object]] = {"name": "Design team"}
    name: SpaceName
    type: Annotated[SpaceType, msgspec.Meta(
        description="Only `team` spaces are created here (the personal space comes with "
                    "the user).")] = SpaceType.TEAM

    def __post_init__(self) -> None:
        if self.type != SpaceType.TEAM:
            raise InvalidField("type", "only team spaces can be created")


class _Patch(Request):
    """A PATCH body: at least one field."""

    __contract_schema__: ClassVar[dict[str, object]] = {"minProperties": 1}

    def __post_init__(self) -> None:
        if not changes(self):
            raise ValueError("the body must set at least one field")


def changes(patch: msgspec.Struct) -> dict[str, object]:
    """The fields a PATCH body sets (those not left UNSET)."""
    return {name: value for name in patch.__struct_fields__
            if (value := getattr(patch, name)) is not msgspec.UNSET}


class UpdateSpaceRequest(_Patch):
    __example__: ClassVar[dict[str, object]] = {"public_read": True}
    name: SpaceName | msgspec.UnsetType = msgspec.UNSET
    description: SpaceDescription | msgspec.UnsetType = msgspec.UNSET
    public_read: bool | msgspec.UnsetType = msgspec.UNSET


class DeleteSpaceRequest(Request):
    """``DELETE /api/spaces/{id}``: the space's name, exactly, as confirmation."""

    __example__: ClassVar[dict[str, object]] = {"confirm_name": "Design team"}
    confirm_name: SpaceName


class TransferSpaceRequest(Request):
    """The new owner: a current member, named by ``user_id`` or ``username`` (one of
    them)."""

    __example__: ClassVar[dict[str, object]] = {"user_id": "0f8fad5bd9cb469fa16570867728950e"}
    user_id: IdRef | None = None
    username: Annotated[str, msgspec.Meta(min_length=1, max_length=64)] | None = None

    def __post_init__(self) -> None:
        if (self.user_id is None) == (self.username is None):
            raise InvalidField("user_id", "name the new owner by user_id or by username")


class PutMemberRequest(Request):
    __example__: ClassVar[dict[str, object]] = {"role": "editor"}
    role: MemberRole


class PutMemberByNameRequest(Request):
    __example__: ClassVar[dict[str, object]] = {"username": "bob", "role": "editor"}
    username: Annotated[str, msgspec.Meta(min_length=1, max_length=64, description=(
        "The user's name, any case (404 `user_not_found` when no user has it)."))]
    role: MemberRole


class CreateNodeRequest(Request):
    __example__: ClassVar[dict[str, object]] = {
        "space_id": "0f8fad5bd9cb469fa16570867728950e", "parent_id": None, "name": "Q3 plans"}
    space_id: IdRef
    name: NodeName
    parent_id: IdRef | None = None


class UpdateNodeRequest(_Patch):
    __example__: ClassVar[dict[str, object]] = {"name": "Q4 plans"}
    name: NodeName | msgspec.UnsetType = msgspec.UNSET
    parent_id: IdRef | msgspec.UnsetType | None = msgspec.UNSET
