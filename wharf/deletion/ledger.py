"""The deletion ledger: every permanent deletion of an account or an object, kept outside
the database so that a restored backup cannot bring either back (issue 18, seed 004 §4).

- :func:`record_account` / :func:`record_objects` append ``deletion_records`` rows in the
  transaction that decides the deletion (``wharf.accounts.service`` when an account deletion is
  requested; :mod:`wharf.deletion.service` whenever an object is queued for deletion).
- :func:`ship` (the ``ship_deletion_ledger`` sweep) copies unshipped rows, oldest first, in
  bounded batches, to the blob store as one append-only JSON-lines object per batch under
  :data:`PREFIX` (``ledger/<YYYY-MM-DD>/<first record id>.jsonl``), then marks them shipped.
  A crash between the PUT and the mark ships the same batch again under the same key:
  the object is rewritten with the same lines (replay is idempotent anyway).
- :func:`prune` deletes shipped rows older than ``WHARF_DELETION_LEDGER_RETENTION``. The
  ledger objects themselves are never deleted by Wharf (expire them with a bucket
  lifecycle rule on ``ledger/`` no sooner than the oldest backup you keep).
- :func:`read_shipped` reads the shipped ledger back (``wharf restore-check``).
"""
from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, insert, select, update
from sqlalchemy.orm import Session

from storage.blobstore import BlobStore
from storage.db import Database
from storage.models import DeletionRecord
from storage.results import rowcount
from wharf.infra.clock import utcnow
from wharf.infra.ids import new_id

log = logging.getLogger("wharf.deletion.ledger")

#: Where the shipped ledger lives in the blob store (``wharf fsck`` leaves it alone).
PREFIX = "ledger/"
ACCOUNT = "account"
OBJECT = "object"
#: Records per shipped object.
SHIP_BATCH = 1000


@dataclass(frozen=True)
class Entry:
    """One ledger line: what was deleted, and when."""

    id: str
    kind: str
    subject: str
    recorded_at: datetime
    username_digest: str | None = None
    reason: str = ""

    def line(self) -> str:
        return json.dumps({"id": self.id, "kind": self.kind, "subject": self.subject,
                           "username_digest": self.username_digest, "reason": self.reason,
                           "recorded_at": self.recorded_at.isoformat()},
                          separators=(",", ":"), sort_keys=True)

    @classmethod
    def parse(cls, raw: str) -> Entry:
        data = json.loads(raw)
        kind, subject, at = data["kind"], data["subject"], data["recorded_at"]
        if kind not in (ACCOUNT, OBJECT) or not isinstance(subject, str) or not subject:
            raise ValueError(f"not a ledger line: {raw[:200]!r}")
        return cls(id=str(data["id"]), kind=kind, subject=subject,
                   recorded_at=datetime.fromisoformat(at),
                   username_digest=data.get("username_digest"),
                   reason=str(data.get("reason") or ""))


def record_account(s: Session, user_id: str, username_digest: str, reason: str) -> None:
    """Append an account's deletion (in the transaction that decides it)."""
    s.add(DeletionRecord(id=new_id(), kind=ACCOUNT, subject=user_id,
                         username_digest=username_digest, reason=reason[:64],
                         recorded_at=utcnow()))
    s.flush()


def record_objects(s: Session, object_keys: Sequence[str], reason: str) -> None:
    """Append the deletion of objects (in the transaction that queues their deletion)."""
    if not object_keys:
        return
    now = utcnow()
    s.execute(insert(DeletionRecord), [
        {"id": new_id(), "kind": OBJECT, "subject": key, "username_digest": None,
         "reason": reason[:64], "recorded_at": now, "shipped_at": None, "ledger_key": None}
        for key in object_keys])


def ledger_key(first: Entry) -> str:
    return f"{PREFIX}{first.recorded_at.strftime('%Y-%m-%d')}/{first.id}.jsonl"


def _entry(r: DeletionRecord) -> Entry:
    return Entry(id=r.id, kind=r.kind, subject=r.subject, recorded_at=r.recorded_at,
                 username_digest=r.username_digest, reason=r.reason)


def ship(db: Database, store: BlobStore, *, batch: int = SHIP_BATCH,
         max_batches: int = 100) -> dict[str, int]:
    """Copy unshipped records to the blob store, a batch per object; counts."""
    shipped = objects = 0
    for _ in range(max_batches):
        with db.read() as s:
            rows = [_entry(r) for r in s.scalars(
                select(DeletionRecord).where(DeletionRecord.shipped_at.is_(None))
                .order_by(DeletionRecord.recorded_at, DeletionRecord.id).limit(batch))]
        if not rows:
            break
        key = ledger_key(rows[0])
        body = ("\n".join(e.line() for e in rows) + "\n").encode()
        store.put_stream(key, [body])
        with db.write() as s:
            s.execute(update(DeletionRecord).where(
                DeletionRecord.id.in_([e.id for e in rows]),
                DeletionRecord.shipped_at.is_(None)).values(shipped_at=utcnow(),
                                                            ledger_key=key))
        shipped += len(rows)
        objects += 1
        if len(rows) < batch:
            break
    if shipped:
        log.info("deletion ledger: %d record(s) shipped in %d object(s)", shipped, objects)
    return {"shipped": shipped, "objects": objects}


def prune(db: Database, retention_seconds: int, *, batch: int = 1000,
          max_batches: int = 100) -> int:
    """Delete shipped records older than the retention (bounded batches)."""
    cutoff = utcnow() - timedelta(seconds=retention_seconds)
    total = 0
    for _ in range(max_batches):
        with db.write() as s:
            ids = list(s.scalars(select(DeletionRecord.id).where(
                DeletionRecord.shipped_at.is_not(None),
                DeletionRecord.recorded_at < cutoff).limit(batch)))
            if not ids:
                break
            total += rowcount(s.execute(delete(DeletionRecord).where(
                DeletionRecord.id.in_(ids))))
        if len(ids) < batch:
            break
    return total


def _lines(store: BlobStore, key: str) -> Iterator[str]:
    pending = b""
    for chunk in store.open(key):
        pending += chunk
        *complete, pending = pending.split(b"\n")
        for raw in complete:
            if raw.strip():
                yield raw.decode()
    if pending.strip():
        yield pending.decode()


def read_shipped(store: BlobStore, since: datetime) -> Iterator[Entry]:
    """The shipped entries recorded at or after ``since``. Every ledger object is read (a
    batch is named by its first record's day but may hold later days' records; the
    bucket's lifecycle rule bounds how many there are)."""
    for obj in store.list_objects(prefix=PREFIX):
        if not obj.key.endswith(".jsonl"):
            continue
        for raw in _lines(store, obj.key):
            entry = Entry.parse(raw)
            if entry.recorded_at >= since:
                yield entry


def read_database(db: Database, since: datetime, *, batch: int = 1000) -> Iterator[Entry]:
    """The records the (restored) database holds from ``since`` on, in keyset pages."""
    after: tuple[datetime, str] | None = None
    while True:
        with db.read() as s:
            q = select(DeletionRecord).where(DeletionRecord.recorded_at >= since)
            if after is not None:
                q = q.where((DeletionRecord.recorded_at > after[0]) | (
                    (DeletionRecord.recorded_at == after[0]) & (DeletionRecord.id > after[1])))
            rows = [_entry(r) for r in s.scalars(
                q.order_by(DeletionRecord.recorded_at, DeletionRecord.id).limit(batch))]
        yield from rows
        if len(rows) < batch:
            return
        after = (rows[-1].recorded_at, rows[-1].id)


def known_ids(s: Session, ids: Iterable[str]) -> set[str]:
    wanted = list(ids)
    return set(s.scalars(select(DeletionRecord.id).where(DeletionRecord.id.in_(wanted)))) \
        if wanted else set()


def restore_rows(s: Session, entries: Sequence[Entry]) -> int:
    """Put back (as shipped) the ledger rows a restored database lacks."""
    known = known_ids(s, [e.id for e in entries])
    missing = [e for e in entries if e.id not in known]
    if missing:
        now = utcnow()
        s.execute(insert(DeletionRecord), [
            {"id": e.id, "kind": e.kind, "subject": e.subject,
             "username_digest": e.username_digest, "reason": e.reason[:64],
             "recorded_at": e.recorded_at, "shipped_at": now, "ledger_key": None}
            for e in missing])
    return len(missing)
