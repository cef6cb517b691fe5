"""Content indexing: a unit's text is extracted by a worker after it changes, debounced,
so a changeset pays one small upsert and nothing else.

1. **Marking** (in the writing transaction): every audited write that changes a trunk
   unit's document -- ``unit.changeset``, ``unit.restore``, ``resource.create`` of an
   imported unit (a new unit is empty), ``worktree.unit_activate`` and ``worktree.merge``
   (each unit of the worktree) -- upserts the unit's ``search_dirty`` row (registered in
   ``wharf.infra.audit.AUDITED``). Only the change that creates the row (the first since
   the unit was last indexed) also writes an outbox row ringing :data:`ACTOR`; later ones
   only bump the row's ``token``.
2. **Indexing** (:func:`index_due`, the actor and the ``index_content`` sweep): the rows
   marked at least ``WHARF_SEARCH_INDEX_DELAY`` seconds ago are taken in batches; each
   unit's current document is read from the UnitStore, its text extracted
   (``wharf.search.text``) and written to ``search_documents`` (never over a newer
   revision, so two indexers racing cannot go back), and the row deleted only if its
   ``token`` is unchanged. A unit changed meanwhile keeps its row, marked anew: it is
   indexed again one delay later. The debounce counts from the first change not yet
   indexed, so a unit edited without pause is indexed once per delay, not never.
3. A lost bell (broker restart) is covered by the ``index_content`` sweep, which runs the
   same drain every ``WHARF_SWEEP_INTERVAL``.
"""
from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, delete, func, insert, select, tuple_, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from storage.db import Database, OutboxNotice, announce_after_commit
from storage.models import (
    OutboxMessage,
    SearchDirty,
    SearchDocument,
    UnitResource,
    WorktreeUnit,
)
from storage.results import rowcount
from storage.unitstore import UnitStore
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.ids import new_id
from wharf.infra.settings import Settings
from wharf.search.text import extract

log = logging.getLogger("wharf.search")

ACTOR = "index_content"
QUEUE = "search"
#: Units indexed per transaction.
BATCH = 100
#: How long one drain keeps indexing before it hands over (a bell of its own).
DRAIN_SECONDS = 5.0
_UNIT_TARGET = ("unit.changeset", "unit.restore")
_UNIT_IN_DETAILS = ("resource.create", "worktree.unit_activate")
#: What an imported unit's ``resource.create`` row names (``wharf.exchange.importer``).
_IMPORTED = frozenset(("imported_from", "imported_from_upload_session"))


def _changed_units(session: Session, fields: dict[str, Any]) -> list[str]:
    action = fields["action"]
    if action in _UNIT_TARGET:
        return [str(fields["target_id"])] if fields["target_id"] else []
    if action in _UNIT_IN_DETAILS:
        details = fields.get("details") or {}
        unit_id = details.get("unit_id")
        if action == "resource.create" and not _IMPORTED.intersection(details):
            return []  # a new unit is empty (initial_snapshot): no text until it changes
        return [unit_id] if isinstance(unit_id, str) else []
    if action == "worktree.merge" and fields["target_id"]:
        return list(session.scalars(select(WorktreeUnit.unit_id).where(
            WorktreeUnit.worktree_id == fields["target_id"])))
    return []


def _mark_statement(insert: Any) -> Any:
    stmt = insert(SearchDirty).values(unit_id=bindparam("unit_id"), marked_at=bindparam("at"),
                                      token=bindparam("token"), marks=1)
    return stmt.on_conflict_do_update(
        index_elements=[SearchDirty.unit_id],
        set_={"token": stmt.excluded.token, "marks": SearchDirty.marks + 1}
    ).returning(SearchDirty.marks)


# Built once (a changeset's hot path: no statement construction per call).
_MARK = {"sqlite": _mark_statement(sqlite_insert), "postgresql": _mark_statement(pg_insert)}
_BELL = insert(OutboxMessage.__table__)


def mark(session: Session, unit_ids: list[str]) -> int:
    """Mark ``unit_ids`` for indexing in the session's transaction; the first mark of a
    unit (its row created) rings the indexer once the transaction commits. Returns how
    many rows were created."""
    if not unit_ids:
        return 0
    conn = session.connection()
    stmt = _MARK[conn.dialect.name]
    now = utcnow()
    created = sum(conn.execute(stmt, {"unit_id": u, "at": now, "token": new_id()}).scalar()
                  == 1 for u in sorted(set(unit_ids)))
    if created:
        notice = OutboxNotice(id=new_id(), queue_name=QUEUE, actor_name=ACTOR,
                              subject_id=None)
        conn.execute(_BELL, {"id": notice.id, "actor_name": ACTOR, "queue_name": QUEUE,
                             "subject_id": None, "delay_ms": 0, "created_at": now,
                             "send_attempts": 0, "trace_context": None})
        announce_after_commit(session, notice)
    return int(created)


def _on_audited(session: Session, fields: dict[str, Any], parent_id: str | None) -> None:
    if fields["action"] in _UNIT_TARGET or fields["action"] in _UNIT_IN_DETAILS or \
            fields["action"] == "worktree.merge":
        mark(session, _changed_units(session, fields))


if _on_audited not in audit.AUDITED:
    audit.AUDITED.append(_on_audited)


@dataclass
class Drained:
    """What one :func:`index_due` did, and when the next marked unit falls due (None:
    nothing is waiting)."""

    indexed: int = 0
    gone: int = 0
    requeued: int = 0
    next_due: datetime | None = None


def index_due(db: Database, unitstore: UnitStore, delay: float, *,
              budget: float = DRAIN_SECONDS, batch: int = BATCH) -> Drained:
    """Index the units marked at least ``delay`` seconds ago, in batches, for at most
    ``budget`` seconds (see the module)."""
    out = Drained()
    deadline = time.monotonic() + budget
    while True:
        now = utcnow()
        with db.read() as s:
            due = s.execute(select(SearchDirty.unit_id, SearchDirty.token)
                            .where(SearchDirty.marked_at <= now - timedelta(seconds=delay))
                            .order_by(SearchDirty.marked_at).limit(batch)).all()
            units = {u: (r, t) for u, r, t in s.execute(
                select(UnitResource.unit_id, UnitResource.resource_id, UnitResource.unit_type)
                .where(UnitResource.unit_id.in_([d.unit_id for d in due])))} if due else {}
        if not due:
            break
        docs = []
        for unit_id, (resource_id, unit_type) in units.items():
            found = unitstore.document_json(unit_id)
            if found is None:
                continue
            head, raw = found
            docs.append({"unit_id": unit_id, "resource_id": resource_id,
                         "revision": head.revision,
                         "body": extract(unit_type, json.loads(raw))})
        out.requeued += _write(db, docs, [(d.unit_id, d.token) for d in due])
        out.indexed += len(docs)
        out.gone += len(due) - len(docs)
        if len(due) < batch or time.monotonic() >= deadline:
            break
    with db.read() as s:
        first = s.scalar(select(func.min(SearchDirty.marked_at)))
    out.next_due = None if first is None else first + timedelta(seconds=delay)
    return out


def _write(db: Database, docs: list[dict[str, Any]], taken: list[tuple[str, str]]) -> int:
    """Upsert the documents (never over a newer revision); delete the dirty rows whose
    token is the one read, mark the others anew (changed meanwhile: indexed again later);
    returns how many were marked anew."""
    now = utcnow()
    docs = sorted(docs, key=lambda d: str(d["unit_id"]))
    taken = sorted(taken)
    with db.write() as s:
        if db.is_postgres and taken:  # rows locked in unit order, as mark() takes them
            s.execute(select(SearchDirty.unit_id).where(
                SearchDirty.unit_id.in_([u for u, _ in taken]))
                .order_by(SearchDirty.unit_id).with_for_update())
        if docs:
            sqlite = s.get_bind().dialect.name == "sqlite"
            insert = sqlite_insert if sqlite else pg_insert
            stmt = insert(SearchDocument).values(
                [{**d, "indexed_at": now, "tsv": None if sqlite else
                  func.to_tsvector("simple", d["body"])} for d in docs])
            stmt = stmt.on_conflict_do_update(
                index_elements=[SearchDocument.unit_id],
                set_={"resource_id": stmt.excluded.resource_id,
                      "revision": stmt.excluded.revision, "body": stmt.excluded.body,
                      "tsv": stmt.excluded.tsv, "indexed_at": stmt.excluded.indexed_at},
                where=SearchDocument.revision <= stmt.excluded.revision)
            s.execute(stmt)
        s.execute(delete(SearchDirty).where(
            tuple_(SearchDirty.unit_id, SearchDirty.token).in_(taken)))
        return rowcount(s.execute(update(SearchDirty).where(
            SearchDirty.unit_id.in_([u for u, _ in taken])).values(marked_at=now)))


def sweep(db: Database, unitstore: UnitStore, settings: Settings) -> dict[str, int]:
    """The ``index_content`` sweep: the same drain, for units whose bell was lost."""
    drained = index_due(db, unitstore, settings.search_index_delay)
    return {"indexed": drained.indexed, "gone": drained.gone}
