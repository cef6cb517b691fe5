"""The object side of ``wharf fsck``: the blob store's listing against every row that
names an object key.

The references, each table's ``object_key`` (unique in its table) streamed in keyset
pages and merged, and when a row needs its object to exist:

======================== ==============================================================
``blob_resources``       always: a published blob's bytes
``blob_upload_sessions`` ``uploaded``, ``verifying`` or ``importing``: bytes received, not
                         yet published (or read by the import that took them;
                         ``waiting_for_upload`` has none yet; ``completed``: the blob row
                         names the object now; imported/failed/expired/aborted: queued for
                         deletion)
``unit_assets``          always: a published asset's bytes
``unit_asset_uploads``   ``stored`` (``receiving``: the bytes may be streaming right now)
``object_deletion_jobs`` never: the object is being deleted, or reserved for a live upload
                         (a job whose object is gone is fine); a key with a job is never
                         reported missing
======================== ==============================================================

- **Orphaned**: listed by the store, named by no row. Confirmed just before it is reported
  by a ``HEAD`` (an object its deletion job removed since the listing is gone, not an
  orphan) and by re-reading every table, and the payloads of unfinished operations, for
  the key (:func:`wharf.deletion.references.referenced`, a batch at a time): an upload that
  reserved its key after that range of references was read is not an orphan, nor is the
  staged object of a queued ``replace_blob_content``.
- **Foreign**: an unreferenced object whose key is not of a shape Wharf writes
  (:data:`wharf.blobs.ingest.OBJECT_KEY_RE`): another program's file in a shared bucket
  or directory. Reported, never repaired.
- **Missing**: a row needs the object, no deletion job names the key, and the listing has
  no such key. Confirmed by re-reading the rows and a ``HEAD`` of the key.
- **Repair** (``--repair`` / ``WHARF_FSCK_REPAIR``): an orphan last modified longer than
  ``WHARF_FSCK_GRACE_SECONDS`` ago gets a deletion job through
  :func:`wharf.deletion.service.schedule` (the re-check and the job in one write transaction);
  the deletion worker deletes it. A younger orphan is reported, never queued: every upload
  reserves its key with a deletion job before its first byte, so a live upload's object is
  not an orphan at all, and the grace (longer than any upload may run, see
  :func:`wharf.fsck.run.check_grace`) covers anything that writes a key before recording
  it. Queued orphans are referenced by their job from then on, so a second repair queues
  nothing new; the deletion worker re-checks the key before it deletes
  (:func:`wharf.deletion.service.run_job`). Missing objects are only ever reported: the row is
  what tells a user something was lost.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta

from storage.blobstore import BlobNotFound, BlobStore, ListedObject
from storage.db import Database
from wharf.blobs.ingest import OBJECT_KEY_RE
from wharf.deletion import service as deletion
from wharf.deletion.ledger import PREFIX as LEDGER_PREFIX
from wharf.deletion.references import JOBS, SOURCES, Ref, Source, ref, referenced
from wharf.fsck.report import QUEUED, TOO_RECENT, Finding, Report
from wharf.fsck.streams import Candidates, checked, grouped, keyset, outer_join

REASON = deletion.FSCK_REASON  # the deletion job's reason


def references(db: Database, source: Source, page_size: int) -> Iterator[Ref]:
    columns = [source.state] if source.state is not None else []
    rows = keyset(db, source.key, columns, page_size=page_size)
    for row in checked(rows, lambda r: str(r[0]), source.table):
        key, *state = tuple(row)
        yield ref(source, key, state[0] if state else None)


def needing(refs: Sequence[Ref]) -> list[str]:
    """The tables whose rows need the object (none when a deletion job names it)."""
    if any(r.table == JOBS for r in refs):
        return []
    return sorted({r.table for r in refs if r.needs})


def _group_key(group: tuple[str, list[Ref]]) -> str:
    return group[0]


def _object_key(obj: ListedObject) -> str:
    return obj.key


class ObjectCheck:
    def __init__(self, db: Database, store: BlobStore, report: Report, *, now: datetime,
                 grace: timedelta, repair: bool, page_size: int,
                 out_of_time: Callable[[], bool]):
        self.db, self.store, self.report = db, store, report
        self.now, self.grace, self.repair = now, grace, repair
        self.page_size, self.out_of_time = page_size, out_of_time

    def run(self) -> None:
        refs = grouped([references(self.db, src, self.page_size) for src in SOURCES],
                       key=lambda r: r.key)
        listing = checked(self.store.list_objects(page_size=self.page_size),
                          lambda o: o.key, "the blob store's listing")
        orphans = Candidates(self._orphans)
        missing = Candidates(self._missing)
        joined = outer_join(refs, listing, _group_key, _object_key)
        for n, (key, group, obj) in enumerate(joined):
            if obj is not None and group is None and obj.key.startswith(LEDGER_PREFIX):
                continue  # the shipped deletion ledger (wharf.deletion.ledger), not an orphan
            if group is not None:
                self.report.object_references += len(group[1])
            if obj is not None:
                self.report.objects_listed += 1
                if group is None:
                    orphans.add(obj)
            elif group is not None and needing(group[1]):
                missing.add(key)
            if n % 1000 == 999 and self.out_of_time():
                self.report.complete = False
                break
        orphans.flush()
        missing.flush()

    def _orphans(self, listed: list[ListedObject]) -> None:
        # Deletion jobs remove Wharf's keys only: other keys are not HEADed (a shared
        # bucket may hold millions of them).
        batch = [obj for obj in listed
                 if not OBJECT_KEY_RE.match(obj.key) or self._still_stored(obj.key)]
        if not batch:
            return
        findings: list[Finding] = []
        with (self.db.write() if self.repair else self.db.read()) as s:
            refs = referenced(s, [o.key for o in batch])
            for obj in batch:
                if obj.key in refs:
                    continue  # named since its range was read: a new upload's reservation
                age = self.now - obj.modified
                details: dict[str, object] = {
                    "size": obj.size, "modified": obj.modified,
                    "age_seconds": max(0, int(age.total_seconds()))}
                if not OBJECT_KEY_RE.match(obj.key):
                    # Not a key Wharf makes: someone else's file, never repaired.
                    if self.report.admit("foreign_object"):
                        findings.append(Finding("foreign_object", obj.key, details))
                    continue
                old = age >= self.grace
                if not old:
                    self.report.too_recent += 1
                if not self.report.admit("orphaned_object"):
                    continue
                if self.repair:
                    if not old:
                        details["repair"] = TOO_RECENT
                    else:
                        deletion.schedule(s, obj.key, REASON)
                        self.report.repairs_queued += 1
                        details["repair"] = QUEUED
                findings.append(Finding("orphaned_object", obj.key, details))
        for finding in findings:  # after the commit: a reported job exists
            self.report.emit(finding)

    def _still_stored(self, key: str) -> bool:
        """False when the object is gone since the listing (its deletion job ran)."""
        try:
            self.store.head(key)
        except BlobNotFound:
            return False
        return True

    def _missing(self, keys: list[str]) -> None:
        if not keys:
            return
        with self.db.read() as s:
            refs = referenced(s, keys)
        for key in keys:
            tables = needing(refs.get(key, []))
            if not tables:
                continue  # gone, or queued for deletion, since it was read
            try:
                self.store.head(key)
                continue  # written since the listing passed it
            except BlobNotFound:
                pass
            if self.report.admit("missing_object"):
                self.report.emit(Finding("missing_object", key, {"tables": tables}))
