"""Sharing: direct grants and link sharing."""
from __future__ import annotations

from typing import Annotated, ClassVar

import msgspec

from api.schemas.common import Id, Request, Response, Timestamp
from storage.enums import ShareRole


class Grant(Response):
    node_id: Id
    user_id: Id
    role: ShareRole
    created_at: Timestamp


class GrantListItem(Grant):
    username: str


class GrantList(Response):
    items: list[GrantListItem]


class LinkSharingState(Response):
    enabled: bool
    role: ShareRole | None


class PutGrantRequest(Request):
    __example__: ClassVar[dict[str, object]] = {"role": "viewer"}
    role: ShareRole


class PutGrantByNameRequest(Request):
    __example__: ClassVar[dict[str, object]] = {"username": "bob", "role": "viewer"}
    username: Annotated[str, msgspec.Meta(min_length=1, max_length=64, description=(
        "The user's name, any case (404 `user_not_found` when no user has it)."))]
    role: ShareRole


class LinkSharingRequest(Request):
    __example__: ClassVar[dict[str, object]] = {"enabled": True, "role": "viewer"}
    enabled: bool
    role: Annotated[ShareRole | None, msgspec.Meta(
        description="The role a link gives (default viewer).")] = None
