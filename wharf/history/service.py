"""Reading a trunk unit's history and restoring a revision (view right to read, edit right
to restore; anonymous readers of a publicly readable unit read it too)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select

from storage.db import Database, json_value
from storage.enums import Role
from storage.errors import RevisionConflict
from storage.models import User
from storage.unitpatch import json_size
from storage.unitstore import Revision, Unit, UnitStore
from wharf.identity.placeholder import PLACEHOLDER_ID, PLACEHOLDER_NAME
from wharf.infra import audit
from wharf.infra.context import RequestContext
from wharf.infra.errors import NotFound
from wharf.protection.enforce import check_document
from wharf.protection.pointers import keep_bindings
from wharf.units.resources import find_unit
from wharf.worktrees.merge import diff

#: Revisions one ``?group=session`` page scans at most (a page ends early, with its
#: cursor, when a very long session would take more).
MAX_SCANNED = 5000
_BATCH = 500


@dataclass(frozen=True)
class Author:
    id: str
    username: str


@dataclass(frozen=True)
class Entry:
    """One revision of the history (or, grouped, a session of them: ``first`` ..
    ``last``, ``count`` revisions, the newest's ``origin``)."""

    revision: int
    author: Author | None
    created_at: datetime
    origin: dict[str, Any]
    op_count: int
    size: int
    first_revision: int = 0
    first_at: datetime | None = None
    count: int = 1


@dataclass
class Page:
    entries: list[Entry] = field(default_factory=list)
    next_before: int | None = None
    #: Revisions up to this one were pruned by retention (None: the whole history).
    pruned_through: int | None = None


def origin_of(stored: dict[str, Any] | None) -> dict[str, Any]:
    """A stored revision's ``origin`` as the history shows it: ``{"kind": "edit"}``,
    ``{"kind": "merge", "worktree_id", "operation_id"}`` or ``{"kind": "restore",
    "revision"}``."""
    if stored and isinstance(stored.get("merge"), dict):
        return {"kind": "merge", **stored["merge"]}
    if stored and isinstance(stored.get("restore"), dict):
        return {"kind": "restore", **stored["restore"]}
    return {"kind": "edit"}


def _authors(db: Database, ids: Sequence[str | None]) -> dict[str, Author]:
    """Each author's id and username; an author whose account is gone is the
    deleted-account placeholder."""
    wanted = {i for i in ids if i}
    found: dict[str, Author] = {}
    if wanted:
        with db.read() as s:
            found = {r.id: Author(r.id, r.username) for r in s.execute(
                select(User.id, User.username).where(User.id.in_(list(wanted))))}
    gone = Author(PLACEHOLDER_ID, PLACEHOLDER_NAME)
    return {i: found.get(i, gone) for i in wanted}


def _entry(r: Revision, authors: dict[str, Author]) -> Entry:
    return Entry(r.revision, authors.get(r.author_id) if r.author_id else None, r.created_at,
                 origin_of(r.origin), len(r.changeset), json_size(r.changeset),
                 r.revision, r.created_at)


def _readable(db: Database, store: UnitStore, ctx: RequestContext, unit_id: str) -> int:
    """The unit's current revision, if the caller may read it (404 otherwise)."""
    with db.read() as s:
        find_unit(s, ctx, unit_id, Role.VIEWER)
    head = store.head(unit_id)
    if head is None:
        raise NotFound("No such unit.")
    return head.revision


def list_revisions(db: Database, store: UnitStore, ctx: RequestContext, unit_id: str, *,
                   before: int | None, limit: int, group_gap: float | None = None) -> Page:
    """The unit's revisions newest first, below ``before`` (a cursor's revision), at most
    ``limit`` entries. ``group_gap`` (seconds): consecutive edits by one author at most
    that far apart are one entry (a merge or a restore always stands alone)."""
    head = _readable(db, store, ctx, unit_id)
    if group_gap is None:
        revisions = store.revisions_before(unit_id, before, limit + 1)
        authors = _authors(db, [r.author_id for r in revisions])
        page = Page([_entry(r, authors) for r in revisions[:limit]])
        if len(revisions) > limit:
            page.next_before = revisions[limit - 1].revision
    else:
        page = _sessions(db, store, unit_id, before, limit, timedelta(seconds=group_gap))
    first = store.first_revision(unit_id)
    pruned = head if first is None else first - 1
    page.pruned_through = pruned if pruned > 0 else None
    return page


def _sessions(db: Database, store: UnitStore, unit_id: str, before: int | None, limit: int,
              gap: timedelta) -> Page:
    groups: list[list[Revision]] = []
    scanned, cursor, exhausted = 0, before, False
    while scanned < MAX_SCANNED:
        batch = store.revisions_before(unit_id, cursor, _BATCH)
        for r in batch:
            last = groups[-1][-1] if groups else None
            if last is not None and _joins(last, r, gap):
                groups[-1].append(r)
            elif len(groups) == limit:  # a new entry past the page: the page is complete
                return _grouped(db, groups, next_before=groups[-1][-1].revision)
            else:
                groups.append([r])
        scanned += len(batch)
        if len(batch) < _BATCH:
            exhausted = True
            break
        cursor = batch[-1].revision
    next_before = None if exhausted or not groups else groups[-1][-1].revision
    return _grouped(db, groups, next_before)


def _joins(newer: Revision, older: Revision, gap: timedelta) -> bool:
    """Whether ``older`` belongs to the session ``newer`` ends."""
    return (newer.author_id == older.author_id and newer.origin is None
            and older.origin is None and newer.created_at - older.created_at <= gap)


def _grouped(db: Database, groups: list[list[Revision]], next_before: int | None) -> Page:
    authors = _authors(db, [g[0].author_id for g in groups])
    entries = []
    for g in groups:
        newest, oldest = g[0], g[-1]
        entries.append(Entry(
            newest.revision, authors.get(newest.author_id) if newest.author_id else None,
            newest.created_at, origin_of(newest.origin),
            sum(len(r.changeset) for r in g), sum(json_size(r.changeset) for r in g),
            oldest.revision, oldest.created_at, len(g)))
    return Page(entries, next_before)


def read_revision(db: Database, store: UnitStore, ctx: RequestContext, unit_id: str,
                  revision: int) -> tuple[Entry, list[Any]]:
    """One revision and its changeset (view right)."""
    _readable(db, store, ctx, unit_id)
    found = store.revisions(unit_id, after=revision - 1, limit=1) if revision >= 1 else []
    if not found or found[0].revision != revision:
        raise NotFound("No such revision.")
    r = found[0]
    return _entry(r, _authors(db, [r.author_id])), r.changeset


def snapshot_at(db: Database, store: UnitStore, ctx: RequestContext, unit_id: str,
                revision: int) -> tuple[str, bytes]:
    """The unit's type and its document as it was after ``revision`` (compact JSON; view
    right). Its cost is bounded by the checkpoints, not by ``revision``."""
    _readable(db, store, ctx, unit_id)
    found = store.document_at(unit_id, revision)
    if found is None:
        raise NotFound("No such revision.")
    return found[0].unit_type, found[1]


@dataclass(frozen=True)
class Restored:
    unit: Unit
    resource_id: str
    node_id: str
    restored: bool  # False: the document already was revision n's (nothing written)


def restore(db: Database, store: UnitStore, ctx: RequestContext, unit_id: str,
            revision: int, base_revision: int) -> Restored:
    """Write one new revision (origin ``restore``) whose changeset turns the document at
    ``base_revision`` (the current one: compare-and-set, :class:`RevisionConflict`) into
    the document as it was after ``revision`` (edit right). History is never rewritten;
    when the two are equal nothing is written. The bindings of protected ranges are
    today's, not revision ``revision``'s, and a change under a range the caller may not
    edit is refused (``wharf.protection``)."""
    with db.read() as s:
        _, res, node, access = find_unit(s, ctx, unit_id, Role.EDITOR)
        space_id, resource_id, node_id = node.space_id, res.id, node.id
    old = store.document_at(unit_id, revision)
    if old is None:
        raise NotFound("No such revision.")
    current = store.get(unit_id)
    if current is None:
        raise NotFound("No such unit.")
    if current.revision != base_revision:
        raise RevisionConflict(f"base revision {base_revision} is stale; the unit is at "
                               f"revision {current.revision}",
                               details={"current_revision": current.revision})
    # Protections are not content: the restored document keeps today's bindings, and
    # its changes are checked against them (403 ``protected_range``).
    document = keep_bindings(json_value(old[1]), current.snapshot)
    changes = diff(current.snapshot, document)
    if not changes:
        return Restored(current, resource_id, node_id, False)
    with db.read() as s:
        check_document(s, ctx.principal, unit_id, current.snapshot, changes, access)
    unit = store.append_revision_with_snapshot(
        unit_id, base_revision, changes, document, ctx.principal.user_id,
        origin={"restore": {"revision": revision}})
    with db.write() as s:
        audit.record(s, ctx, "unit.restore", "unit", unit_id, space_id=space_id,
                     details={"revision": unit.revision, "restored_revision": revision,
                              "ops": len(changes)})
    return Restored(unit, resource_id, node_id, True)
