"""The kind of the assets capability: ``publish_asset`` (an uploaded unit asset verified
and published), its payload and result, declared once here
(``wharf.operations.registry``). Its failure disposes of its input (the upload row is
deleted and its object queued for deletion)."""
from __future__ import annotations

from typing import Annotated

import msgspec

from wharf.operations.kinds import Shape
from wharf.operations.registry import Collaborators, KindSpec, register

PUBLISH_ASSET = "publish_asset"


class PublishAssetPayload(Shape, frozen=True):
    """The upload to publish: its row, the reserved asset id and object key, and the scope
    (``worktree_id`` None = the trunk unit). ``content_sha256`` is the digest the client
    declared (``Content-SHA256``), when it sent one."""

    upload_id: str
    asset_id: str
    unit_id: str
    object_key: str
    filename: str
    media_type: str
    size: int
    worktree_id: str | None = None
    content_sha256: str | None = None


class AssetDescription(Shape, frozen=True, kw_only=True):
    """How an asset is described wherever it is shown: in a ``publish_asset`` result and
    in the asset's metadata (``api.schemas.assets.Asset``, which adds its id, name and
    history). Built from the row by ``wharf.assets.describe``."""

    unit_id: str
    worktree_id: Annotated[str | None, msgspec.Meta(
        description="null: a trunk asset (worktree assets arrive with worktrees).")]
    media_type: Annotated[str, msgspec.Meta(
        description="The type declared at upload (its `Content-Type`), served as "
                    "`Content-Type`.", examples=["image/png"])]
    detected_media_type: Annotated[str, msgspec.Meta(
        description="What the server detected from the bytes (HTML, SVG, XML or script "
                    "in either type: always served as an attachment).")]
    size: int
    sha256: str
    content_url: Annotated[str, msgspec.Meta(
        description="The same-origin path of the bytes: the trunk gateway, or the "
                    "worktree's for a worktree asset.",
        examples=["/api/assets/0f8fad5bd9cb469fa16570867728950e/content"])]


class PublishAssetResult(AssetDescription, frozen=True, kw_only=True):
    asset_id: str



def _publish_asset(c: Collaborators) -> object:
    # imported here: the handler's module imports this one
    from wharf.assets.handler import PublishAsset
    return PublishAsset(c.db, c.blob_store, c.settings)


register(KindSpec(
    name=PUBLISH_ASSET, payload=PublishAssetPayload, result=PublishAssetResult,
    handler=_publish_asset, failure_consumes_input=True, object_keys=("object_key",),
    doc="``publish_asset``: an uploaded unit asset verified and published.",
    result_doc="Once completed: the asset and where its bytes are served.",
    # before results described an asset as its metadata does: a trunk asset unless the
    # row said otherwise, and the declared type (what publishing recorded as detected
    # when detection found nothing)
    result_backfill=lambda stored: {"worktree_id": None,
                                    "detected_media_type": stored.get("media_type")}))
