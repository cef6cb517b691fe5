"""Sign-in with an external provider: the callback's query and the linked identities."""
from __future__ import annotations

from typing import Annotated

import msgspec

from api.schemas.common import Id, Response, Timestamp


class StartQuery(msgspec.Struct, forbid_unknown_fields=False):
    """``?next=`` of ``GET /api/auth/{provider}/start``."""

    next: Annotated[str, msgspec.Meta(
        description="Where to go after signing in: a path of this origin (`/…`); anything "
                    "else is `/`.", examples=["/spaces"])] = "/"


class CallbackQuery(msgspec.Struct, forbid_unknown_fields=False):
    """What the provider sends back to ``GET /api/auth/{provider}/callback``."""

    state: Annotated[str, msgspec.Meta(description="The request's `state`.")] = ""
    authorization_code: Annotated[str, msgspec.Meta(
        description="The authorization code.")] = msgspec.field(name="code", default="")
    error: Annotated[str, msgspec.Meta(
        description="The provider's error code (the user refused, ...).")] = ""


class ExternalIdentity(Response):
    id: Id
    provider: Annotated[str, msgspec.Meta(examples=["oidc", "github"])]
    subject: Annotated[str, msgspec.Meta(
        description="The account's stable id at the provider (OIDC `sub`, GitHub user id).")]
    display_name: Annotated[str | None, msgspec.Meta(
        description="What the provider called the account when it was linked.")]
    created_at: Timestamp


class ExternalIdentityList(Response):
    items: list[ExternalIdentity]
    providers: Annotated[list[str], msgspec.Meta(
        description="The providers this server offers (link one with "
                    "`GET /api/auth/{provider}/start` while logged in).")]
