"""Finding an asset to read (the permission gate), listing a unit's assets, deleting one.
``read_asset``, ``read_worktree_asset`` and ``read_assets`` are what the API calls: each in
one read transaction of its own; what they answer is read through :class:`Asset`."""
from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol, TypeVar

from sqlalchemy import and_, or_, select
from sqlalchemy.orm import Session

from storage.db import Database
from storage.enums import Role
from storage.models import UnitAsset
from wharf.assets import scope
from wharf.assets.kinds import AssetDescription
from wharf.blobs.ingest import risky
from wharf.deletion import service as deletion
from wharf.infra import audit
from wharf.infra.context import RequestContext
from wharf.infra.errors import NotFound
from wharf.infra.ids import is_id
from wharf.infra.pagination import TIMESTAMP, decode_cursor, page
from wharf.infra.transactions import in_read
from wharf.units.resources import find_unit

DELETED = "asset_deleted"


D = TypeVar("D", bound=AssetDescription)


class Asset(Protocol):
    """A published asset as its readers see it (a ``unit_assets`` row, read only)."""

    @property
    def id(self) -> str: ...
    @property
    def unit_id(self) -> str: ...
    @property
    def worktree_id(self) -> str | None: ...
    @property
    def object_key(self) -> str: ...
    @property
    def filename(self) -> str: ...
    @property
    def declared_media_type(self) -> str: ...
    @property
    def detected_media_type(self) -> str: ...
    @property
    def size(self) -> int: ...
    @property
    def sha256(self) -> str: ...
    @property
    def created_by(self) -> str: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def published_at(self) -> datetime | None: ...


def describe(asset: Asset, shape: type[D], **more: Any) -> D:
    """``asset`` as ``shape``, an :class:`AssetDescription` (a ``publish_asset`` result,
    the API's metadata) with ``more`` fields of its own: the one place an asset's
    description is read from its row."""
    return shape(unit_id=asset.unit_id, worktree_id=asset.worktree_id,
                 media_type=asset.declared_media_type,
                 detected_media_type=asset.detected_media_type, size=asset.size,
                 sha256=asset.sha256, content_url=content_url(asset.id, asset.worktree_id),
                 **more)


def content_url(asset_id: str, worktree_id: str | None = None) -> str:
    """The same-origin gateway path of an asset (it re-checks access on every read): the
    trunk gateway, or its worktree's."""
    if worktree_id is not None:
        return f"/api/worktrees/{worktree_id}/assets/{asset_id}/content"
    return f"/api/assets/{asset_id}/content"


def etag_header(asset: Asset) -> str:
    """The strong HTTP ETag: assets never change, so the SHA-256 of the bytes."""
    return f'"{asset.sha256}"'


def is_risky(asset: Asset) -> bool:
    """Served only as an attachment: declared or detected as HTML, SVG, XML or script."""
    return risky(asset.declared_media_type) or risky(asset.detected_media_type)


def asset_for_read(s: Session, ctx: RequestContext, asset_id: str,
                   need: Role = Role.VIEWER) -> tuple[UnitAsset, str]:
    """A trunk asset the caller may read (``need`` on its unit), with its space id; 404
    when there is none, it belongs to a worktree, or its unit is not discoverable (trashed
    included)."""
    asset = s.get(UnitAsset, asset_id) if is_id(asset_id) else None
    if asset is None or asset.worktree_id is not None:
        raise NotFound("No such asset.")
    try:
        _unit, _res, node, _access = find_unit(s, ctx, asset.unit_id, need)
    except NotFound:
        raise NotFound("No such asset.") from None
    return asset, node.space_id


def worktree_asset_for_read(s: Session, ctx: RequestContext, worktree_id: str,
                            asset_id: str) -> UnitAsset:
    """Through a worktree's gateway: its own assets, and the trunk assets of its units
    (review on the worktree and read on the unit); 404 for anything else."""
    asset = s.get(UnitAsset, asset_id) if is_id(asset_id) else None
    if asset is None or asset.worktree_id not in (None, worktree_id):
        raise NotFound("No such asset in this worktree.")
    scope.worktree(s, ctx.principal, worktree_id, asset.unit_id, scope.READ)
    return asset


def list_assets(s: Session, ctx: RequestContext, unit_id: str, *, limit: int,
                cursor: str | None,
                worktree_id: str | None = None) -> tuple[list[UnitAsset], str | None]:
    """A page of a unit's assets, oldest first: its trunk assets (viewer), or a worktree's
    assets of the unit (review)."""
    scope.check(s, ctx.principal, unit_id, worktree_id, scope.READ)
    q = select(UnitAsset).where(UnitAsset.unit_id == unit_id,
                                UnitAsset.worktree_id.is_(None) if worktree_id is None
                                else UnitAsset.worktree_id == worktree_id)
    after = decode_cursor("assets", cursor, (TIMESTAMP, str))
    if after:
        at = after[0]
        q = q.where(or_(UnitAsset.created_at > at,
                        and_(UnitAsset.created_at == at, UnitAsset.id > after[1])))
    rows = list(s.scalars(q.order_by(UnitAsset.created_at, UnitAsset.id).limit(limit + 1)))
    return page(rows, limit, "assets", lambda a: [a.created_at, a.id])


def delete_asset(db: Database, ctx: RequestContext, asset_id: str) -> None:
    """Delete a trunk asset (editor on its unit); its object is queued for deletion in the
    same transaction. Snapshots that still name it read a 404 from then on."""
    with db.write() as s:
        asset, space_id = asset_for_read(s, ctx, asset_id, Role.EDITOR)
        deletion.schedule(s, asset.object_key, DELETED)
        s.delete(asset)
        audit.record(s, ctx, "asset.delete", "asset", asset_id, space_id=space_id,
                     details={"unit_id": asset.unit_id, "size": asset.size})


read_asset = in_read(asset_for_read)
read_worktree_asset = in_read(worktree_asset_for_read)
read_assets = in_read(list_assets)
