"""Unit assets: upload (operation ``publish_asset``), listing, metadata, deletion, and the
content gateway (read access re-checked on every request)."""
from __future__ import annotations

import math

import falcon

from api import contract
from api.content import send_content
from api.resources.blobs import DOWNLOAD, OCTETS, READ_HEADERS, body_reader, head_answers
from api.resources.operations import SUBMISSION_HEADERS, answer_submission, submission_answers
from api.schemas.assets import Asset as AssetBody
from api.schemas.assets import AssetList, AssetUploadQuery
from api.schemas.blobs import BINARY
from api.schemas.common import PageQuery
from api.serialize import timestamp
from storage.blobstore import BlobStore
from storage.db import Database
from wharf import assets
from wharf.infra.settings import Settings
from wharf.operations.idempotency import check_key
from wharf.operations.service import Operations


def asset_body(a: assets.Asset) -> AssetBody:
    return assets.describe(
        a, AssetBody, id=a.id, filename=a.filename, etag=assets.etag_header(a),
        created_by=a.created_by, created_at=timestamp(a.created_at),
        published_at=timestamp(a.published_at) if a.published_at else None)


UPLOAD_DESCRIPTION = (
    "The body is the file's bytes; `Content-Type` is its declared type (served back as "
    "is; risky types only as attachments), `Content-Length` is required (411), at most "
    "WHARF_MAX_ASSET_SIZE (413 `asset_too_large`, nothing read). The bytes are stored "
    "before the answer; a worker then re-checks edit access, verifies them and publishes "
    "the asset (operation `publish_asset`: poll it, its result names the asset). A replay "
    "of the Idempotency-Key answers the same operation if it carries the same bytes: "
    "with `Content-SHA256` the digest is compared and the body is not read, without it "
    "the body is hashed (not stored); 409 `idempotency_key_reused` for other bytes, or "
    "if `Content-Length`, type or name differ. 400 `incomplete_body` when the body is "
    "short, `checksum_mismatch` when it does not hash to `Content-SHA256`.")


class _Uploads:
    """An upload into a unit's scope, and the scope's listing."""

    def __init__(self, db: Database, store: BlobStore, ops: Operations, settings: Settings):
        self.db, self.store, self.ops, self.settings = db, store, ops, settings
        # No generic body limit here: check_upload refuses a declared length above
        # WHARF_MAX_ASSET_SIZE itself (413 `asset_too_large`, `details.limit`), which the
        # middleware's `payload_too_large` would answer first. Neither responder parses a
        # body.
        self.max_body_bytes = math.inf

    def _upload(self, req: falcon.Request, resp: falcon.Response, unit_id: str,
                worktree_id: str | None) -> None:
        # The key first (spec §9 step 1): a request without one is refused 400 whatever
        # else is wrong with it, as on every 202 endpoint.
        idempotency_key = check_key(req.get_header("Idempotency-Key"))
        q = contract.read_query(req, AssetUploadQuery)
        upload = assets.check_upload(
            self.settings, unit_id, filename=q.filename, content_type=req.content_type,
            content_length=req.content_length, content_sha256=req.get_header("Content-SHA256"),
            worktree_id=worktree_id)
        answer_submission(resp, assets.upload_asset(
            self.ops, self.db, self.store, self.settings, req.context.ctx,
            idempotency_key, upload, body_reader(req)))

    def _list(self, req: falcon.Request, resp: falcon.Response, unit_id: str,
              worktree_id: str | None) -> None:
        q = contract.read_query(req, PageQuery)
        items, nxt = assets.read_assets(self.db, req.context.ctx, unit_id, limit=q.limit,
                                        cursor=q.cursor, worktree_id=worktree_id)
        resp.media = AssetList(items=[asset_body(a) for a in items], next_cursor=nxt)


class UnitAssets(_Uploads):
    @contract.op(operation_id="uploadAsset", summary="Upload an asset into a unit (editor)",
                 tags=["assets"], description=UPLOAD_DESCRIPTION, query=AssetUploadQuery,
                 headers=(*SUBMISSION_HEADERS, "Content-SHA256"), raw_body=(OCTETS, BINARY),
                 responses=submission_answers("Stored; publishing (or a replay while not "
                                              "done)."),
                 problems=(403, 404, 409, 411, 413))
    def on_post(self, req: falcon.Request, resp: falcon.Response, unit_id: str) -> None:
        self._upload(req, resp, unit_id, None)

    @contract.op(operation_id="listAssets", summary="A unit's assets, oldest first (viewer)",
                 tags=["assets"], query=PageQuery, responses={200: AssetList},
                 auth="optional")
    def on_get(self, req: falcon.Request, resp: falcon.Response, unit_id: str) -> None:
        self._list(req, resp, unit_id, None)


class AssetItem:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="getAsset", summary="An asset's metadata (viewer of its unit)",
                 tags=["assets"], responses={200: AssetBody}, auth="optional")
    def on_get(self, req: falcon.Request, resp: falcon.Response, asset_id: str) -> None:
        asset, _space = assets.read_asset(self.db, req.context.ctx, asset_id)
        resp.media = asset_body(asset)

    @contract.op(operation_id="deleteAsset", summary="Delete an asset (editor of its unit)",
                 tags=["assets"],
                 description="Its object is queued for deletion at once; snapshots that "
                             "still name it read 404.",
                 responses={204: contract.Answer(None, "Deleted.")}, problems=(403,))
    def on_delete(self, req: falcon.Request, resp: falcon.Response, asset_id: str) -> None:
        assets.delete_asset(self.db, req.context.ctx, asset_id)
        resp.status = falcon.HTTP_204


class AssetContent:
    """The gateway: read access on the unit re-checked on every request (trash-aware, 404
    when not discoverable), never cached, hardened against content that could run."""

    def __init__(self, db: Database, store: BlobStore):
        self.db, self.store = db, store

    def _send(self, req: falcon.Request, resp: falcon.Response, asset: assets.Asset) -> None:
        resp.set_header("Cross-Origin-Resource-Policy", "same-origin")
        send_content(req, resp, self.store, object_key=asset.object_key, size=asset.size,
                     etag=assets.etag_header(asset), media_type=asset.declared_media_type,
                     cache_control="private, no-store",
                     attachment=asset.filename if assets.is_risky(asset) else None)

    def _read(self, req: falcon.Request, resp: falcon.Response, asset_id: str) -> None:
        asset, _space = assets.read_asset(self.db, req.context.ctx, asset_id)
        self._send(req, resp, asset)

    @contract.op(operation_id="getAssetContent",
                 summary="An asset's bytes: strong ETag, single Range, never cached",
                 tags=["assets"],
                 description="`Content-Type` is the declared type; HTML, SVG, XML and "
                             "script (declared or detected) come as attachments. "
                             "`Cache-Control: private, no-store`, `nosniff`, a sandbox CSP.",
                 headers=READ_HEADERS, responses=DOWNLOAD, auth="optional")
    def on_get(self, req: falcon.Request, resp: falcon.Response, asset_id: str) -> None:
        self._read(req, resp, asset_id)

    @contract.op(operation_id="getAssetContentHead", summary="getAssetContent without the body",
                 tags=["assets"], headers=READ_HEADERS, responses=head_answers(DOWNLOAD),
                 auth="optional")
    def on_head(self, req: falcon.Request, resp: falcon.Response, asset_id: str) -> None:
        self._read(req, resp, asset_id)


class WorktreeUnitAssets(_Uploads):
    """Uploads into a worktree's unit (published as worktree assets; a merge of the unit
    moves them to trunk) and their listing."""

    @contract.op(operation_id="uploadWorktreeAsset",
                 summary="Upload an asset into a worktree's unit (edit draft)",
                 tags=["assets"],
                 description="As `uploadAsset`, in the worktree's scope: the worktree's "
                             "edit-draft right and the unit's own edit permission; 409 "
                             "`worktree_state` unless the worktree is a draft. The asset "
                             "is served by the worktree's gateway until a merge of its "
                             "unit publishes it to trunk.",
                 query=AssetUploadQuery, headers=(*SUBMISSION_HEADERS, "Content-SHA256"),
                 raw_body=(OCTETS, BINARY),
                 responses=submission_answers("Stored; publishing (or a replay while not "
                                              "done)."),
                 problems=(403, 404, 409, 411, 413))
    def on_post(self, req: falcon.Request, resp: falcon.Response, worktree_id: str,
                unit_id: str) -> None:
        self._upload(req, resp, unit_id, worktree_id)

    @contract.op(operation_id="listWorktreeAssets",
                 summary="A worktree unit's assets, oldest first (review)",
                 tags=["assets"], query=PageQuery, responses={200: AssetList})
    def on_get(self, req: falcon.Request, resp: falcon.Response, worktree_id: str,
               unit_id: str) -> None:
        self._list(req, resp, unit_id, worktree_id)


class WorktreeAssetContent(AssetContent):
    """A worktree's gateway: its own assets and the trunk assets of its units, to those who
    may review it (and read the unit)."""

    def _read_in(self, req: falcon.Request, resp: falcon.Response, worktree_id: str,
                 asset_id: str) -> None:
        asset = assets.read_worktree_asset(self.db, req.context.ctx, worktree_id, asset_id)
        self._send(req, resp, asset)

    @contract.op(operation_id="getWorktreeAssetContent",
                 summary="An asset's bytes through a worktree's gateway (review)",
                 tags=["assets"], headers=READ_HEADERS, responses=DOWNLOAD)
    def on_get(self, req: falcon.Request, resp: falcon.Response,  # type: ignore[override]
               worktree_id: str, asset_id: str) -> None:
        self._read_in(req, resp, worktree_id, asset_id)

    @contract.op(operation_id="getWorktreeAssetContentHead",
                 summary="getWorktreeAssetContent without the body", tags=["assets"],
                 headers=READ_HEADERS, responses=head_answers(DOWNLOAD))
    def on_head(self, req: falcon.Request, resp: falcon.Response,  # type: ignore[override]
                worktree_id: str, asset_id: str) -> None:
        self._read_in(req, resp, worktree_id, asset_id)
