"""The unit side of ``wharf fsck``: the unit store's trunk units against the product
database's ``unit_resources``, both streamed in bytewise id order from their own databases
(never joined) and merged.

- **Orphaned unit**: a trunk unit that no ``unit_resources`` row names. A worktree's unit
  (a ``worktree_units`` row: a merge creates a local unit's trunk unit before its
  activation writes the resource, and a blocked activation waits) legitimately owns it,
  and so does an operation still creating one: units younger than :data:`UNIT_SETTLE`
  are not reported. Candidates are confirmed (a batch at a time) against both tables and
  the unit store just before they are reported. Drafts are the ``sweep_worktree_drafts``
  sweep's business, not fsck's.
- **Missing unit**: a ``unit_resources`` row whose unit is not in the unit store,
  confirmed the same way.
- Both are reported only, never repaired: a unit is user content, and without its row
  nothing tells a leftover of a failed creation from a live document whose row was lost
  (say, by restoring one database from an older backup than the other). The operator
  decides.
"""
from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Row, select

from storage.db import Database
from storage.models import UnitResource, WorktreeUnit
from storage.unitstore import UnitStore
from wharf.fsck.report import Finding, Report
from wharf.fsck.streams import Candidates, checked, keyset, outer_join, pages

#: Units younger than this are not reported as orphans (a creation may be in flight).
UNIT_SETTLE = timedelta(hours=1)


def _row_key(row: Row[Any]) -> str:
    return str(row[0])


def _unit_key(unit: tuple[str, datetime]) -> str:
    return unit[0]


class UnitCheck:
    def __init__(self, db: Database, unitstore: UnitStore, report: Report, *, now: datetime,
                 page_size: int, out_of_time: Callable[[], bool]):
        self.db, self.unitstore, self.report = db, unitstore, report
        self.now, self.page_size, self.out_of_time = now, page_size, out_of_time

    def run(self) -> None:
        rows = checked(keyset(self.db, UnitResource.unit_id, (UnitResource.resource_id,),
                              page_size=self.page_size), lambda r: str(r[0]), "unit_resources")
        units = checked(pages(lambda after: self.unitstore.unit_page(after, self.page_size),
                              lambda u: u[0]), lambda u: u[0], "the unit store")
        orphans = Candidates(self._orphans)
        missing = Candidates(self._missing)
        joined = outer_join(rows, units, _row_key, _unit_key)
        for n, (unit_id, row, unit) in enumerate(joined):
            if row is not None:
                self.report.unit_references += 1
            if unit is not None:
                self.report.units_listed += 1
                if row is None:
                    if self.now - unit[1] < UNIT_SETTLE:
                        self.report.units_too_recent += 1
                    else:
                        orphans.add(unit)
            elif row is not None:
                missing.add(unit_id)
            if n % 1000 == 999 and self.out_of_time():
                self.report.complete = False
                break
        orphans.flush()
        missing.flush()

    def _orphans(self, batch: list[tuple[str, datetime]]) -> None:
        if not batch:
            return
        ids = [unit_id for unit_id, _ in batch]
        with self.db.read() as s:
            owned = set(s.scalars(select(UnitResource.unit_id).where(
                UnitResource.unit_id.in_(ids))))
            owned |= set(s.scalars(select(WorktreeUnit.unit_id).where(
                WorktreeUnit.unit_id.in_(ids)).distinct()))
        still = self.unitstore.existing_units(ids)
        for unit_id, created_at in batch:
            if unit_id in owned or unit_id not in still:
                continue
            if self.report.admit("orphaned_unit"):
                self.report.emit(Finding("orphaned_unit", unit_id, {
                    "created_at": created_at,
                    "age_seconds": max(0, int((self.now - created_at).total_seconds()))}))

    def _missing(self, ids: list[str]) -> None:
        if not ids:
            return
        with self.db.read() as s:
            rows = {unit_id: resource_id for unit_id, resource_id in s.execute(
                select(UnitResource.unit_id, UnitResource.resource_id)
                .where(UnitResource.unit_id.in_(ids)))}
        present = self.unitstore.existing_units(ids)
        for unit_id in ids:
            if unit_id in rows and unit_id not in present and \
                    self.report.admit("missing_unit"):
                self.report.emit(Finding("missing_unit", unit_id,
                                         {"resource_id": rows[unit_id]}))
