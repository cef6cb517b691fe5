"""Unit assets: their metadata (the bytes are not JSON) and the upload's query."""
from __future__ import annotations

from typing import Annotated

import msgspec

from api.schemas.common import Id, Response, Timestamp
from wharf.assets.kinds import AssetDescription


class AssetUploadQuery(msgspec.Struct, forbid_unknown_fields=False):
    """``?filename=`` of an asset upload."""

    filename: Annotated[str, msgspec.Meta(
        max_length=255, description="The original file name (for `Content-Disposition`); "
                                    "default `asset`. No control characters or `/`.",
        examples=["diagram.png"])] | None = None


class Asset(AssetDescription, frozen=True, kw_only=True):
    """A file embedded in a unit. Snapshots name it by `id`; its bytes are served at
    `content_url`, which re-checks read access on the unit on every request. Described
    as a `publish_asset` result describes it (`AssetDescription`), plus its id, name and
    history."""

    id: Id
    filename: str
    etag: Annotated[str, msgspec.Meta(description="The strong ETag of the bytes (quoted).")]
    created_by: Id
    created_at: Timestamp
    published_at: Timestamp | None


class AssetList(Response):
    items: list[Asset]
    next_cursor: str | None
