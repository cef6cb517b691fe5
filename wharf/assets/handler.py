"""The ``publish_asset`` operation handler: re-check, verify, publish in one transaction."""
from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from sqlalchemy import select
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
from wharf.blobs.verify import verify_many
from wharf.deletion import service as deletion
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import Principal, RequestContext, system_principal
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


def _details(op: Operation, p: PublishAssetPayload, asset: UnitAsset) -> dict[str, Any]:
    return {"unit_id": p.unit_id, "size": asset.size, "on_behalf_of": op.actor_id}


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

    def perform_many(self, ops: Sequence[Operation]) -> None:
        """A batch's verification: its uploads read in one query, their objects re-checked
        concurrently (``verify_many``). Raises on the first failure (the executor then
        performs each on its own, so each error is its operation's)."""
        ps = [payload(op, PublishAssetPayload) for op in ops]
        with self.db.read() as s:
            rows = {u.id: u for u in s.scalars(select(UnitAssetUpload).where(
                UnitAssetUpload.id.in_([p.upload_id for p in ps])))}
            checks = []
            for p in ps:
                upload = rows.get(p.upload_id)
                if upload is None or upload.state != AssetUploadState.STORED:
                    raise UploadIncomplete("the upload's bytes never arrived completely")
                assert upload.received_size is not None and upload.etag is not None \
                    and upload.sha256 is not None  # stored
                checks.append((p.object_key, upload.received_size, upload.etag,
                               upload.sha256))
        verify_many(self.store, checks, self.settings.verify_rehash)

    def commit(self, session: Session, op: Operation, ctx: RequestContext) -> PublishAssetResult:
        p = payload(op, PublishAssetPayload)
        # The worktree is locked before the upload, in the order a discard locks them
        # (worktree, then its uploads): the two wait for each other, never deadlock.
        worktree_id = _worktree_scope(session, p) if p.worktree_id is not None else None
        upload = _stored(session, p, lock=True)
        # authorize() re-checked the unit (it exists, the actor may edit it) in this
        # same transaction, before this commit.
        asset = self._publish(session, op, p, upload, worktree_id)
        session.flush()
        deletion.release(session, p.object_key)
        audit.record_core(session, ctx, "asset.publish", "asset", p.asset_id,
                          space_id=op.scope_id, details=_details(op, p, asset))
        return describe(asset, PublishAssetResult, asset_id=asset.id)

    def commit_many(self, session: Session, ops: Sequence[Operation]) -> list[PublishAssetResult]:
        """Trunk uploads of a batch published together: their upload rows locked in one
        query (in id order), the assets inserted and the uploads deleted in one flush,
        their reservations released in one statement and their audit rows written in one
        executemany. Worktree uploads (which lock their worktree first) go one by one."""
        results: dict[str, PublishAssetResult] = {}
        ps = {op.id: payload(op, PublishAssetPayload) for op in ops}
        trunk = [op for op in ops if ps[op.id].worktree_id is None]
        if trunk:
            ids = sorted(ps[op.id].upload_id for op in trunk)
            uploads = {u.id: u for u in session.scalars(
                select(UnitAssetUpload).where(UnitAssetUpload.id.in_(ids))
                .order_by(UnitAssetUpload.id).with_for_update())}
            assets = []
            for op in trunk:
                p = ps[op.id]
                upload = uploads.get(p.upload_id)
                if upload is None or upload.state != AssetUploadState.STORED:
                    raise UploadIncomplete("the upload's bytes never arrived completely")
                assets.append((op, p, self._publish(session, op, p, upload, None)))
            session.flush()
            deletion.release_many(session, [p.object_key for _, p, _ in assets])
            rows = [audit.values(RequestContext(principal=system_principal(op.id)),
                                 "asset.publish", "asset", p.asset_id, space_id=op.scope_id,
                                 details=_details(op, p, asset)) for op, p, asset in assets]
            session.connection().execute(audit.INSERT, rows)
            for row in rows:
                audit.announce(session, row)
            for op, _, asset in assets:
                results[op.id] = describe(asset, PublishAssetResult, asset_id=asset.id)
        for op in ops:
            if op.id not in results:
                results[op.id] = self.commit(
                    session, op, RequestContext(principal=system_principal(op.id)))
        return [results[op.id] for op in ops]

    @staticmethod
    def _publish(session: Session, op: Operation, p: PublishAssetPayload,
                 upload: UnitAssetUpload, worktree_id: str | None) -> UnitAsset:
        """The ``unit_assets`` row of a stored upload added, the upload row deleted
        (written at the session's next flush)."""
        now = utcnow()
        assert upload.received_size is not None and upload.sha256 is not None \
            and upload.etag is not None  # stored
        asset = UnitAsset(
            id=p.asset_id, unit_id=p.unit_id, worktree_id=worktree_id,
            object_key=p.object_key, filename=p.filename, declared_media_type=p.media_type,
            detected_media_type=upload.detected_media_type or p.media_type,
            size=upload.received_size, sha256=upload.sha256,
            etag=upload.etag, created_by=op.actor_id, created_at=now,
            published_at=now if worktree_id is None else None)
        session.add(asset)
        session.delete(upload)
        return asset

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
