"""Unit assets: the files embedded in a unit (an image in a doc). Not nodes, not
resources: an asset inherits the permission of its unit, and a snapshot names it by id.

The request streams the bytes into a key reserved for the upload (``receiving``), marks
the upload ``stored`` and rings a ``publish_asset`` operation; the worker re-checks the
permission, verifies the object and publishes the ``unit_assets`` row (deleting the
upload row) in one transaction. Reads go through a gateway that re-checks read access on
every request.

- ``errors``: the problems the capability raises;
- ``upload``: checking an upload request, reserving, streaming and storing it;
- ``handler``: the ``publish_asset`` operation handler;
- ``scope``: whose permission an asset inherits (its trunk unit's, or its worktree's);
- ``reading``: finding an asset to read, listing a unit's assets, deleting one;
- ``lifecycle``: what purges and the sweep do to assets and uploads.
"""
from __future__ import annotations

from wharf.assets import kinds  # noqa: F401  (registers its operation kinds)
from wharf.assets.errors import (
    AssetTooLarge,
    ChecksumMismatch,
    IncompleteBody,
    UploadExpired,
    UploadIncomplete,
)
from wharf.assets.handler import KIND, PublishAsset
from wharf.assets.lifecycle import (
    abandon_expired_uploads,
    drop_worktree_assets,
    expired_receiving,
    purge_unit_assets,
    stored_but_idle,
)
from wharf.assets.reading import (
    Asset,
    asset_for_read,
    content_url,
    delete_asset,
    describe,
    etag_header,
    is_risky,
    list_assets,
    read_asset,
    read_assets,
    read_worktree_asset,
    worktree_asset_for_read,
)
from wharf.assets.upload import AssetUpload, check_upload, upload_asset
from wharf.infra.hooks import register
from wharf.trash import service as trash
from wharf.worktrees import reactions as worktrees

# Every process that purges trash or drops a worktree imports this package
# (wharfd.capabilities): a purged unit's assets go with it (objects queued); a worktree
# discarded, or a unit taken out of one: its assets go, its uploads fail.
register(trash.UNITS_PURGED, purge_unit_assets)
register(worktrees.DROP_REACTIONS, drop_worktree_assets)

__all__ = [
    "KIND",
    "Asset",
    "AssetTooLarge",
    "AssetUpload",
    "ChecksumMismatch",
    "IncompleteBody",
    "PublishAsset",
    "UploadExpired",
    "UploadIncomplete",
    "abandon_expired_uploads",
    "asset_for_read",
    "check_upload",
    "content_url",
    "delete_asset",
    "describe",
    "etag_header",
    "expired_receiving",
    "is_risky",
    "list_assets",
    "purge_unit_assets",
    "read_asset",
    "read_assets",
    "read_worktree_asset",
    "stored_but_idle",
    "upload_asset",
    "worktree_asset_for_read",
]
