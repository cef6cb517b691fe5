"""Unit assets: their metadata (the bytes are not JSON) and the upload's query."""
from __future__ import annotations

from typing import Annotated

import msgspec

from api.schemas.blobs import Sha256
from api.schemas.common import Id, Response, Timestamp


class AssetUploadQuery(msgspec.Struct, forbid_unknown_fields=False):
    """``?filename=`` of an asset upload."""

    filename: Annotated[str, msgspec.Meta(
        max_length=255, description="The original file name (for `Content-Disposition`); "
                                    "default `asset`. No control characters or `/`.",
        examples=["diagram.png"])] | None = None


class Asset(Response):
    """A file embedded in a unit. Snapshots name it by `id`; its bytes are served at
    `content_url`, which re-checks read access on the unit on every request."""

    id: Id
    unit_id: Id
    worktree_id: Annotated[Id | None, msgspec.Meta(
        description="null: a trunk asset (worktree assets arrive with worktrees).")]
    filename: str
    media_type: Annotated[str, msgspec.Meta(
        description="The type declared at upload (its `Content-Type`), served as "
                    "`Content-Type`.", examples=["image/png"])]
    detected_media_type: Annotated[str, msgspec.Meta(
        description="What the server detected from the bytes (HTML, SVG, XML or script "
                    "in either type: always served as an attachment).")]
    size: int
    sha256: Sha256
    etag: Annotated[str, msgspec.Meta(description="The strong ETag of the bytes (quoted).")]
    created_by: Id
    created_at: Timestamp
    published_at: Timestamp | None
    content_url: Annotated[str, msgspec.Meta(
        description="The same-origin path of the bytes.",
        examples=["/api/assets/0f8fad5bd9cb469fa16570867728950e/content"])]


class AssetList(Response):
    items: list[Asset]
    next_cursor: str | None
