"""Trunk documents: read from checkpoints and the revision log, kept hot per process.

A unit's document is not stored on its ``units`` row (schema version 5). The document at
revision ``r`` is the newest checkpoint at or below ``r`` (``unit_checkpoints``: a whole
document) with the changesets of the revisions after it applied, in order. A changeset
therefore writes only its revision row and a few head columns: the bytes the database
writes follow the changeset, not the document. A checkpoint is written when the changesets
since the last one outgrow the document (:func:`needs_checkpoint`), so loading a document
cold reads at most about twice its size.

Each process keeps the documents it used last in a :class:`HeadCache`, bounded by their
compact JSON size. An entry is trusted only for the revision and incarnation it was
loaded at, both checked against the ``units`` row read in the caller's transaction: a
process behind by a few revisions applies just those revisions' changesets (any number of
API processes may write one unit; nothing needs sticky routing), one that finds a newer
checkpoint (a merge stores the document it computed as one) reloads from it.

An entry's document is mutated in place by the changeset that holds its slot's lock; the
lock is held until that transaction has committed (or the changes are undone), so no
other thread of the process sees a document ahead of the database.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, select

from storage.errors import RevisionConflict
from storage.unitpatch import Journal, ParsedOp, UnitLimits, apply_tracked, parse_changeset
from storage.unitschema import CHECKPOINTS, REVISIONS

#: A checkpoint is written once the changesets since the last one exceed both the
#: document's size and this many bytes (small documents are not rewritten every edit).
CHECKPOINT_MIN_LOG_BYTES = 256 * 1024

#: Replaying stored changesets: they were checked when written, under the limits of
#: that day; a stored revision is never refused on the way back.
REPLAY_LIMITS = UnitLimits(max_bytes=2**62, max_ops=2**31, max_depth=2**31,
                           owned_values=True)

#: A process behind by more revisions than this reloads from the checkpoint instead.
MAX_CATCH_UP = 2000

#: Units whose lock (and kept document) the cache remembers at most; the least recently
#: used unlocked ones go first.
MAX_SLOTS = 4096


class HeadMoved(RevisionConflict):
    """The head row read is no longer the unit's (its checkpoint was replaced, or the unit
    deleted, since): read the row again."""


@dataclass
class Head:
    """A document at one revision of one incarnation of a unit (``created_at``: a unit
    deleted and created again under its id is another incarnation; a worktree draft's
    also names its base revision, which a rebase or a merge moves)."""

    incarnation: Hashable
    revision: int
    doc: dict[str, Any]
    size: int


@dataclass
class HeadRow:
    """What the ``units`` row says: enough to validate a cached head and to load one."""

    unit_id: str
    unit_type: str
    revision: int
    size: int
    checkpoint_revision: int
    log_bytes: int
    created_at: datetime
    updated_at: datetime


@dataclass
class Slot:
    """One unit's place in the cache: its lock and, when loaded, its head (``counted``:
    the bytes the cache's total holds for it)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    head: Head | None = None
    counted: int = 0


class HeadCache:
    """Documents kept in memory, least recently used dropped first, up to ``max_bytes`` of
    their compact JSON size (Python objects take several times that in memory). A
    document larger than the whole budget is not kept."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self._slots: OrderedDict[str, Slot] = OrderedDict()
        self._mutex = threading.Lock()
        self._bytes = 0

    @property
    def cached_bytes(self) -> int:
        return self._bytes

    def slot(self, unit_id: str) -> Slot:
        with self._mutex:
            slot = self._slots.get(unit_id)
            if slot is None:
                slot = self._slots[unit_id] = Slot()
            self._slots.move_to_end(unit_id)
            return slot

    def keep(self, unit_id: str, slot: Slot, head: Head | None) -> None:
        """Set ``slot``'s head (its lock held by the caller; None: nothing trusted) and
        evict to the budget."""
        with self._mutex:
            if head is not None and head.size > self.max_bytes:
                head = None
            slot.head = head
            self._count(slot, head.size if head else 0)
            current = self._slots.get(unit_id)
            if current is not slot:  # evicted meanwhile (or replaced): this one stands
                if current is not None:
                    self._count(current, 0)
                    current.head = None
                self._slots[unit_id] = slot
            self._evict(keep=unit_id)

    def _count(self, slot: Slot, size: int) -> None:
        self._bytes += size - slot.counted
        slot.counted = size

    def forget(self, unit_id: str) -> None:
        with self._mutex:
            slot = self._slots.pop(unit_id, None)
            if slot is not None:
                self._count(slot, 0)
                slot.head = None

    def _evict(self, keep: str) -> None:
        for unit_id in list(self._slots):
            if self._bytes <= self.max_bytes and len(self._slots) <= MAX_SLOTS:
                return
            if unit_id == keep:
                continue
            slot = self._slots[unit_id]
            if not slot.lock.acquire(blocking=False):
                continue  # in use: stays
            try:
                del self._slots[unit_id]
                self._count(slot, 0)
                slot.head = None
            finally:
                slot.lock.release()

    @contextmanager
    def locked(self, unit_id: str) -> Iterator[Slot]:
        slot = self.slot(unit_id)
        with slot.lock:
            yield slot


class Edit:
    """One changeset's edit of a cached document, under its slot's lock
    (:func:`editing`): :meth:`load` the head read in the caller's transaction, :meth:`apply`
    the operations (journaled), set ``committed`` once the writes are done."""

    def __init__(self, cache: HeadCache, key: str, slot: Slot):
        self.cache, self.key, self.slot = cache, key, slot
        self.journal = Journal()
        self.head: Head | None = slot.head  # as it is until loaded
        self.committed: Head | None = None

    @property
    def cached(self) -> Head | None:
        return self.slot.head

    def load(self, head: Head) -> Head:
        """Take ``head`` as the document edited; until committed, the cache trusts
        nothing for this key (the lock is held anyway)."""
        self.head = head
        self.cache.keep(self.key, self.slot, None)
        return head

    def apply(self, ops: list[ParsedOp], limits: UnitLimits) -> tuple[dict[str, Any], int]:
        """The loaded document and its size with ``ops`` applied in place (journaled)."""
        assert self.head is not None, "load the head first"
        return apply_tracked(self.head.doc, self.head.size, ops, limits, self.journal)


@contextmanager
def editing(cache: HeadCache, key: str) -> Iterator[Edit]:
    """Hold ``key``'s slot for one changeset. If the block raises (a refusal, a conflict,
    a failed commit), the changes are undone and the document, as it is at the stored
    revision again, stays cached; otherwise ``edit.committed`` is kept. The caller's
    transaction must commit inside the block."""
    with cache.locked(key) as slot:
        edit = Edit(cache, key, slot)
        try:
            yield edit
        except BaseException:
            if edit.committed is not None:  # written: the document is not undone
                cache.keep(key, slot, None)
                raise
            try:
                edit.journal.undo()
            except BaseException:
                edit.head = None
                raise
            finally:
                # a member put back at its object's end: equal, not as stored
                cache.keep(key, slot, None if edit.journal.reordered else edit.head)
            raise
        cache.keep(key, slot, edit.committed)


def load_head(conn: Connection, row: HeadRow, cached: Head | None) -> Head:
    """The document at ``row``'s revision: ``cached`` as it is, or brought forward by the
    revisions it lacks, or loaded from the newest checkpoint at or below the revision and
    the revisions after it. A ``cached`` head is mutated when it is brought forward (its
    slot's lock is held by the caller)."""
    return reuse(cached, row.created_at, row.revision, row.checkpoint_revision,
                 lambda head: forward(conn, row.unit_id, head, row.revision),
                 lambda: read_document(conn, row))


def reuse(cached: Head | None, incarnation: Hashable, revision: int,
          checkpoint_revision: int, catch_up: Callable[[Head], Head],
          load: Callable[[], Head]) -> Head:
    """The document at ``revision`` of ``incarnation`` (a trunk unit's, a draft's):
    ``cached`` when it is that one; ``catch_up(cached)`` when it is a little behind and
    nothing replaced the document since it was loaded (no checkpoint after it: the log
    reaches it); otherwise ``load()``, from the newest checkpoint."""
    if cached is not None and cached.incarnation == incarnation:
        if cached.revision == revision:
            return cached
        if (cached.revision < revision <= cached.revision + MAX_CATCH_UP
                and checkpoint_revision <= cached.revision):
            try:
                return catch_up(cached)
            except Exception:
                pass
    return load()


def read_document(conn: Connection, row: HeadRow) -> Head:
    """The unit's document at ``row``'s revision: its newest checkpoint (the one at
    ``row.checkpoint_revision``) with the revisions after it applied. That checkpoint
    may be gone when ``row`` was read before a newer one was written and the prune sweep
    ran (PostgreSQL reads at READ COMMITTED): :class:`HeadMoved`, never an older
    checkpoint and a longer replay."""
    head = _from_checkpoint(conn, row, row.revision,
                            CHECKPOINTS.c.revision == row.checkpoint_revision)
    if head is None:
        raise HeadMoved("the unit moved on while it was read; read it again",
                        details={"scope": "trunk"})
    return head


def read_document_at(conn: Connection, row: HeadRow, revision: int) -> Head | None:
    """The unit's document at an earlier ``revision`` (at most ``row.revision``): its
    newest checkpoint at or below it with the revisions after it applied; None when none
    is left."""
    return _from_checkpoint(conn, row, revision, CHECKPOINTS.c.revision <= revision)


def _from_checkpoint(conn: Connection, row: HeadRow, revision: int,
                     which: Any) -> Head | None:
    """The newest checkpoint of ``row``'s unit that ``which`` selects, brought forward to
    ``revision``; None without one."""
    checkpoint = conn.execute(
        select(CHECKPOINTS.c.revision, CHECKPOINTS.c.snapshot, CHECKPOINTS.c.size)
        .where(CHECKPOINTS.c.unit_id == row.unit_id, which)
        .order_by(CHECKPOINTS.c.revision.desc()).limit(1)).first()
    if checkpoint is None:
        return None
    head = Head(row.created_at, checkpoint.revision, checkpoint.snapshot, checkpoint.size)
    return forward(conn, row.unit_id, head, revision)


def forward(conn: Connection, unit_id: str, head: Head, revision: int) -> Head:
    """``head`` with the changesets of trunk revisions ``head.revision + 1 .. revision``
    applied in place (:func:`replay_onto`)."""
    if head.revision == revision:
        return head
    changesets = conn.scalars(
        select(REVISIONS.c.changeset)
        .where(REVISIONS.c.unit_id == unit_id, REVISIONS.c.revision > head.revision,
               REVISIONS.c.revision <= revision)
        .order_by(REVISIONS.c.revision)).all()
    return replay_onto(unit_id, head, revision, changesets)


def replay_onto(name: str, head: Head, revision: int, changesets: Sequence[Any]) -> Head:
    """``head`` brought to ``revision`` by ``changesets`` (those of revisions
    ``head.revision + 1 .. revision``, in order, as stored), applied in place; on a
    failure the document is as it was (:func:`apply_tracked` undoes the journal the
    changesets share). :class:`LookupError` when some of them are missing."""
    if len(changesets) != revision - head.revision:
        raise LookupError(f"{name}: revisions {head.revision + 1}..{revision} are "
                          f"not all stored")
    journal = Journal()
    doc, size = head.doc, head.size
    for changeset in changesets:
        doc, size = apply_tracked(doc, size, parse_changeset(changeset, REPLAY_LIMITS),
                                  REPLAY_LIMITS, journal)
    head.doc, head.size, head.revision = doc, size, revision
    return head


def needs_checkpoint(log_bytes: int, size: int) -> bool:
    """Whether the changesets since the last checkpoint (``log_bytes``) have outgrown the
    document (``size``): then the next checkpoint is due."""
    return log_bytes > max(size, CHECKPOINT_MIN_LOG_BYTES)
