"""Statements on a worktree draft's rows inside the caller's transaction, shared by the
drafts (:mod:`wharf.worktrees.drafts`) and the merge commits
(:mod:`wharf.worktrees.records`): the draft's key, its revision check, the
compare-and-set that advances it, and replaying its revisions onto a document."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import Connection, insert, select, update

from storage.enums import DraftRevisionKind
from storage.errors import RevisionConflict, StorageError
from storage.results import rowcount
from storage.unitheads import REPLAY_LIMITS, Head, replay_onto
from storage.unitpatch import apply_changeset, json_size, parse_changeset
from storage.unitrows import read_trunk_at
from storage.unitschema import DRAFT_REVISIONS, DRAFTS

#: Replaying revisions whose changesets the caller stores afterwards (a fast-forward, a
#: created unit's history): their values are copied in, never shared with the document.
_REPLAY_COPYING = replace(REPLAY_LIMITS, owned_values=False)


class StoredChangeset(Protocol):
    """A stored revision, as far as :func:`replay` reads it."""

    @property
    def changeset(self) -> list[Any]: ...


def check_draft_revision(current: int, expected: int) -> None:
    if current != expected:
        raise RevisionConflict(f"the draft is at revision {current}, not {expected}",
                               details={"current_revision": current, "scope": "draft"})


def draft_is(worktree_id: str, unit_id: str) -> tuple[Any, Any]:
    return DRAFTS.c.worktree_id == worktree_id, DRAFTS.c.unit_id == unit_id


#: A draft's stored document that is trunk's document at the draft's ``base_revision``
#: (JSON ``null``: a unit's document is always an object, so it means nothing else). A
#: fork stores it for its base and its head: it shares trunk's document, stored once.
SHARED = None


def on_trunk(revision: int, size: int) -> dict[str, Any]:
    """A trunk draft's new values once its base and its head are both trunk's document
    at ``revision`` (``size`` bytes; after a merge or a sync): :data:`SHARED`, so the
    document is not written again for the draft."""
    return {"snapshot": SHARED, "base_snapshot": SHARED, "base_revision": revision,
            "snapshot_bytes": size, "base_bytes": size}


def shared(conn: Connection, unit_id: str, base_revision: int,
           document: dict[str, Any] | None) -> dict[str, Any]:
    """A draft's stored document, trunk's at ``base_revision`` where it is :data:`SHARED`
    (read from trunk's checkpoint and revisions: a copy the caller owns)."""
    if document is SHARED:
        return read_trunk_at(conn, unit_id, base_revision)
    stored: dict[str, Any] = document
    return stored


def draft_key(worktree_id: str, unit_id: str) -> str:
    """A draft's key in the process's document cache (beside trunk units' ids)."""
    return f"draft/{worktree_id}/{unit_id}"


#: The columns :func:`draft_document` reads (with the draft's key).
DOCUMENT_COLUMNS = (DRAFTS.c.worktree_id, DRAFTS.c.unit_id, DRAFTS.c.base_revision,
                    DRAFTS.c.snapshot, DRAFTS.c.snapshot_revision, DRAFTS.c.revision,
                    DRAFTS.c.snapshot_bytes, DRAFTS.c.created_at)


def draft_incarnation(row: Any) -> tuple[datetime, int]:
    """What a kept draft head is valid for besides its revision: the draft (removed and
    added again, it is another) and its base revision (a rebase, a merge or a sync sets
    a new base, and the head may then be trunk's document, equal to the kept one by the
    merge's equality but not in every byte)."""
    return row.created_at, int(row.base_revision)


def draft_document(conn: Connection, row: Any) -> Head:
    """The draft head's document (a copy the caller owns) at the draft's revision: its
    stored checkpoint (``snapshot``, trunk's document while :data:`SHARED`) at
    ``snapshot_revision`` with the draft revisions after it applied. ``row`` has
    :data:`DOCUMENT_COLUMNS`."""
    head = Head(draft_incarnation(row), row.snapshot_revision,
                shared(conn, row.unit_id, row.base_revision, row.snapshot), 0)
    forward_draft(conn, row.worktree_id, row.unit_id, head, row.revision)
    head.size = int(row.snapshot_bytes)  # (the replay tracked the difference only)
    return head


def forward_draft(conn: Connection, worktree_id: str, unit_id: str, head: Head,
                  revision: int) -> Head:
    """``head`` with the changesets of draft revisions ``head.revision + 1 ..
    revision`` applied in place (:func:`storage.unitheads.replay_onto`)."""
    if head.revision == revision:
        return head
    changesets = conn.scalars(
        select(DRAFT_REVISIONS.c.changeset)
        .where(*_revisions_of(worktree_id, unit_id), DRAFT_REVISIONS.c.revision > head.revision,
               DRAFT_REVISIONS.c.revision <= revision)
        .order_by(DRAFT_REVISIONS.c.revision)).all()
    return replay_onto(draft_key(worktree_id, unit_id), head, revision, changesets)


def _revisions_of(worktree_id: str, unit_id: str) -> tuple[Any, Any]:
    return (DRAFT_REVISIONS.c.worktree_id == worktree_id,
            DRAFT_REVISIONS.c.unit_id == unit_id)


def replay(document: dict[str, Any], revisions: Sequence[StoredChangeset]) -> Any:
    """``document`` (the caller's own copy, changed in place) with the revisions' stored
    changesets applied in order; None if one of them no longer applies. Their operations
    run as one changeset: the size of the result is measured once, not once per revision
    (a whole-document serialization each)."""
    operations = [op for revision in revisions for op in revision.changeset]
    try:
        return apply_changeset(document, parse_changeset(operations, _REPLAY_COPYING),
                               _REPLAY_COPYING, lambda: 0)
    except StorageError:
        return None



def advance_draft(conn: Connection, worktree_id: str, unit_id: str, expected_revision: int,
                   revisions: Sequence[tuple[list[Any], str | None, DraftRevisionKind]],
                   values: dict[str, Any], now: datetime, *, rebased: bool = False) -> int:
    """Compare-and-set the draft from ``expected_revision``, setting ``values``, with one
    draft revision per entry of ``revisions``; ``rebased``: the base was just set, so
    ``base_draft_revision`` := the resulting revision. Returns that revision."""
    revision = expected_revision + len(revisions)
    extra: dict[str, Any] = {"base_draft_revision": revision} if rebased else {}
    if "snapshot" in values:  # a new checkpoint of the head, at the resulting revision
        extra.update(snapshot_revision=revision, log_bytes=0)
    for document, size in (("snapshot", "snapshot_bytes"), ("base_snapshot", "base_bytes")):
        if document in values and size not in values:  # written with their documents
            extra[size] = json_size(values[document])
    result = conn.execute(update(DRAFTS).where(
        *draft_is(worktree_id, unit_id), DRAFTS.c.revision == expected_revision).values(
        revision=revision, updated_at=now, **{**values, **extra}))
    if rowcount(result) != 1:
        raise RevisionConflict("the draft changed concurrently; retry",
                               details={"scope": "draft"})
    if revisions:
        conn.execute(insert(DRAFT_REVISIONS), [
            {"worktree_id": worktree_id, "unit_id": unit_id, "revision": expected_revision + i,
             "changeset": changeset, "author_id": author_id, "kind": str(kind),
             "created_at": now}
            for i, (changeset, author_id, kind) in enumerate(revisions, start=1)])
    return revision


@dataclass(frozen=True)
class DraftRevision:
    worktree_id: str
    unit_id: str
    revision: int
    changeset: list[Any]
    author_id: str | None
    kind: str
    created_at: datetime


def select_draft_revisions(conn: Connection, worktree_id: str, unit_id: str,
                            after: int) -> list[DraftRevision]:
    rows = conn.execute(select(*DRAFT_REVISIONS.c).where(
        DRAFT_REVISIONS.c.worktree_id == worktree_id, DRAFT_REVISIONS.c.unit_id == unit_id,
        DRAFT_REVISIONS.c.revision > after).order_by(DRAFT_REVISIONS.c.revision))
    return [DraftRevision(r.worktree_id, r.unit_id, r.revision, r.changeset, r.author_id,
                          r.kind, r.created_at) for r in rows]


