"""The ``publish_asset`` operation handler: re-check, verify, publish in one transaction."""
from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from sqlalchemy.orm import Session

from storage.blobstore import BlobStore
from storage.db import Database
from storage.enums import AssetUploadState
from storage.models import Operation, UnitAsset, UnitAssetUpload, Worktree, WorktreeUnit
from wharf.assets import scope
from wharf.assets.errors import UploadIncomplete
from wharf.assets.kinds import PUBLISH_ASSET, PublishAssetPayload, PublishAssetResult
from wharf.assets.reading import describe
from wharf.blobs import verify_object
from wharf.deletion import service as deletion
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import Principal, RequestContext
from wharf.infra.errors import Conflict
from wharf.infra.settings import Settings
from wharf.operations.kinds import payload
from wharf.worktrees.enums import MergeState, WorktreeState

KIND = PUBLISH_ASSET
FAILED = "asset_upload_failed"


def _stored(s: Session, p: PublishAssetPayload, *, lock: bool = False) -> UnitAssetUpload:
    upload = s.get(UnitAssetUpload, p.upload_id, with_for_update=lock)
    if upload is None or upload.state != AssetUploadState.STORED:
        if p.worktree_id is not None:
            # A discard (or the unit's removal) that read this operation as pending just
            # before a worker claimed it deleted the upload: say why it is gone.
            _worktree_scope(s, p, lock=False)
        raise UploadIncomplete("the upload's bytes never arrived completely")
    return upload


#: A worktree unit's merge outcomes after which its assets belong to trunk.
MERGED_STATES = frozenset((MergeState.UNCHANGED, MergeState.FAST_FORWARD, MergeState.MERGED,
                           MergeState.CREATED))


def _worktree_scope(session: Session, p: PublishAssetPayload, *,
                    lock: bool = True) -> str | None:
    """Where a worktree upload is published (§7.7): a discarded worktree refuses it; a
    merged one whose unit merged takes it straight into trunk (None: a publish delayed
    past the merge is not lost); any other state keeps it in the worktree until the
    unit's next successful merge."""
    assert p.worktree_id is not None
    wt = session.get(Worktree, p.worktree_id, with_for_update=lock)
    wu = session.get(WorktreeUnit, (p.worktree_id, p.unit_id))
    if wt is None or wu is None:
        raise Conflict("The unit left the worktree.", code="worktree_discarded")
    if wt.state == WorktreeState.DISCARDED:
        raise Conflict("The worktree was discarded.", code="worktree_discarded")
    if wt.state == WorktreeState.MERGED and wu.merge_state in MERGED_STATES:
        return None
    return p.worktree_id


class PublishAsset:
    """``publish_asset``: the actor may still edit the unit, the stored object is the one
    uploaded, then the ``unit_assets`` row appears and the upload row goes, together."""

    kind = KIND

    def __init__(self, db: Database, store: BlobStore, settings: Settings):
        self.db = db
        self.store = store
        self.settings = settings

    def target_key(self, op: Operation) -> Hashable:
        """Uploads of one actor into one unit share a batch's permission check; each
        upload's own state is checked in ``perform`` and again, locked, in ``commit``."""
        p = payload(op, PublishAssetPayload)
        return (op.actor_id, p.worktree_id, p.unit_id)

    def authorize(self, session: Session, op: Operation, actor: Principal) -> None:
        # The scope's edit permission; a worktree's state is decided in commit (a publish
        # delayed past "ready" or the merge is not refused for it).
        p = payload(op, PublishAssetPayload)
        scope.check(session, actor, p.unit_id, p.worktree_id, scope.EDIT, check_state=False)

    def perform(self, op: Operation) -> None:
        p = payload(op, PublishAssetPayload)
        with self.db.read() as s:
            upload = _stored(s, p)
            size, etag, sha256 = upload.received_size, upload.etag, upload.sha256
        assert size is not None and etag is not None and sha256 is not None  # stored
        verify_object(self.store, p.object_key, size, etag, sha256,
                      self.settings.verify_rehash)

    def commit(self, session: Session, op: Operation, ctx: RequestContext) -> PublishAssetResult:
        p = payload(op, PublishAssetPayload)
        # The worktree is locked before the upload, in the order a discard locks them
        # (worktree, then its uploads): the two wait for each other, never deadlock.
        worktree_id = _worktree_scope(session, p) if p.worktree_id is not None else None
        upload = _stored(session, p, lock=True)
        # authorize() re-checked the unit (it exists, the actor may edit it) in this
        # same transaction, before this commit.
        now = utcnow()
        assert upload.received_size is not None and upload.sha256 is not None \
            and upload.etag is not None  # stored
        detected = upload.detected_media_type or p.media_type
        asset = UnitAsset(
            id=p.asset_id, unit_id=p.unit_id, worktree_id=worktree_id,
            object_key=p.object_key, filename=p.filename, declared_media_type=p.media_type,
            detected_media_type=detected, size=upload.received_size, sha256=upload.sha256,
            etag=upload.etag, created_by=op.actor_id, created_at=now,
            published_at=now if worktree_id is None else None)
        session.add(asset)
        session.delete(upload)
        session.flush()
        deletion.release(session, p.object_key)
        audit.record(session, ctx, "asset.publish", "asset", p.asset_id,
                     space_id=op.scope_id,
                     details={"unit_id": p.unit_id, "size": upload.received_size,
                              "on_behalf_of": op.actor_id})
        return describe(asset, PublishAssetResult, asset_id=asset.id)

    def on_failed(self, session: Session, op: Operation, error: dict[str, Any]) -> None:
        p = payload(op, PublishAssetPayload)
        upload = session.get(UnitAssetUpload, p.upload_id, with_for_update=True)
        streaming = upload is not None and upload.state == AssetUploadState.RECEIVING
        if upload is not None:
            session.delete(upload)
            session.flush()
        if streaming:
            # Cancelled while its request may still be writing the object: deleting it
            # now could run before the object exists. The request queues it itself when
            # it finds the upload gone; if it died, the reservation (kept) comes due.
            return
        deletion.schedule(session, p.object_key, FAILED)

    def compensate(self, op: Operation) -> None:
        pass
