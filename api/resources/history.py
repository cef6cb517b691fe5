"""A trunk unit's history and restore (``wharf.history``): view right to read (anonymous
readers of a publicly readable unit too), edit right to restore."""
from __future__ import annotations

import falcon
import msgspec

from api import contract
from api.resources.units import unit_etag, write_json
from api.schemas.history import (
    Origin,
    RestoreRequest,
    RevisionDetail,
    RevisionEntry,
    RevisionList,
    RevisionSnapshot,
    RevisionsQuery,
)
from api.schemas.issues import UserRef
from api.schemas.operations import Unit
from api.serialize import timestamp
from storage.db import Database
from storage.enums import UnitType
from storage.unitstore import UnitStore
from wharf.history import service as history
from wharf.infra.errors import InvalidCursor, NotFound
from wharf.infra.pagination import decode_cursor, encode_cursor
from wharf.infra.settings import Settings

TAGS = ["history"]
_CURSOR = "unit_revisions"


def _revision(raw: str) -> int:
    """A revision in a path: plain ASCII digits, else no such revision (404)."""
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 10 or int(raw) > 2**31 - 1:
        raise NotFound("No such revision.")
    return int(raw)


def _entry_fields(e: history.Entry) -> dict[str, object]:
    return {"revision": e.revision,
            "author": None if e.author is None else UserRef(id=e.author.id,
                                                            username=e.author.username),
            "created_at": timestamp(e.created_at), "origin": msgspec.convert(e.origin, Origin),
            "op_count": e.op_count, "size": e.size, "first_revision": e.first_revision,
            "first_created_at": timestamp(e.first_at or e.created_at), "count": e.count}


class UnitRevisions:
    def __init__(self, db: Database, store: UnitStore, settings: Settings):
        self.db, self.store, self.settings = db, store, settings

    @contract.op(operation_id="listUnitRevisions", summary="A unit's history, newest first",
                 tags=TAGS,
                 description="Keyset pages of the unit's revisions (who, when, origin, "
                             "size); `?group=session` groups an author's consecutive edits. "
                             "Readers of the unit.",
                 query=RevisionsQuery, responses={200: RevisionList}, auth="optional")
    def on_get(self, req: falcon.Request, resp: falcon.Response, unit_id: str) -> None:
        q = contract.read_query(req, RevisionsQuery)
        after = decode_cursor(_CURSOR, q.cursor, 1)
        before = None
        if after is not None:
            if not (after[0].isascii() and after[0].isdigit()) or len(after[0]) > 10:
                raise InvalidCursor("The cursor is not valid for this listing.")
            before = int(after[0])
        page = history.list_revisions(
            self.db, self.store, req.context.ctx, unit_id, before=before, limit=q.limit,
            group_gap=self.settings.history_session_gap if q.group == "session" else None)
        resp.media = RevisionList(
            items=[RevisionEntry(**_entry_fields(e)) for e in page.entries],  # type: ignore[arg-type]
            next_cursor=None if page.next_before is None
            else encode_cursor(_CURSOR, [str(page.next_before)]),
            pruned_through=page.pruned_through)


class UnitRevisionItem:
    def __init__(self, db: Database, store: UnitStore):
        self.db, self.store = db, store

    @contract.op(operation_id="getUnitRevision", summary="One revision and its changeset",
                 tags=TAGS, responses={200: RevisionDetail}, auth="optional")
    def on_get(self, req: falcon.Request, resp: falcon.Response, unit_id: str,
               revision: str) -> None:
        entry, changes = history.read_revision(self.db, self.store, req.context.ctx, unit_id,
                                               _revision(revision))
        resp.media = RevisionDetail(**_entry_fields(entry), changes=changes)  # type: ignore[arg-type]


class UnitRevisionSnapshot:
    def __init__(self, db: Database, store: UnitStore):
        self.db, self.store = db, store

    @contract.op(operation_id="getUnitRevisionSnapshot",
                 summary="The document as it was after a revision",
                 tags=TAGS,
                 description="Read from the newest checkpoint at or below the revision and "
                             "the revisions after it: its cost is bounded by the "
                             "checkpoints, not by how old the revision is.",
                 responses={200: RevisionSnapshot}, auth="optional")
    def on_get(self, req: falcon.Request, resp: falcon.Response, unit_id: str,
               revision: str) -> None:
        n = _revision(revision)
        _, document = history.snapshot_at(self.db, self.store, req.context.ctx, unit_id, n)
        write_json(resp, RevisionSnapshot(unit_id=unit_id, revision=n,
                                          snapshot=msgspec.Raw(document)))  # type: ignore[arg-type]


class UnitRestore:
    def __init__(self, db: Database, store: UnitStore):
        self.db, self.store = db, store

    @contract.op(operation_id="restoreUnitRevision",
                 summary="Restore the document as it was after a revision",
                 tags=TAGS,
                 description="Writes one new revision (origin `restore`) whose changeset "
                             "turns the current document into revision `revision`'s; "
                             "history is never rewritten, and nothing is written when the "
                             "two are equal. Editors of the unit. 409 `revision_conflict` "
                             "when `base_revision` is not the current revision.",
                 body=RestoreRequest,
                 responses={200: contract.Answer(Unit, "Restored.", headers=("ETag",))},
                 problems=(409,))
    def on_post(self, req: falcon.Request, resp: falcon.Response, unit_id: str) -> None:
        body = contract.read_body(req, RestoreRequest)
        done = history.restore(self.db, self.store, req.context.ctx, unit_id, body.revision,
                               body.base_revision)
        u = done.unit
        resp.set_header("ETag", unit_etag(u.revision))
        resp.media = Unit(unit_id=u.id, unit_type=UnitType(u.unit_type), revision=u.revision,
                          snapshot=u.snapshot, resource_id=done.resource_id,
                          node_id=done.node_id, updated_at=timestamp(u.updated_at))


def mount(app: contract.App, db: Database, store: UnitStore, settings: Settings) -> None:
    app.add_route("/api/units/{unit_id}/revisions", UnitRevisions(db, store, settings))
    app.add_route("/api/units/{unit_id}/revisions/{revision}", UnitRevisionItem(db, store))
    app.add_route("/api/units/{unit_id}/revisions/{revision}/snapshot",
                  UnitRevisionSnapshot(db, store))
    app.add_route("/api/units/{unit_id}/restore", UnitRestore(db, store))
