"""What ``wharf fsck`` found: one :class:`Finding` per inconsistency, and a
:class:`Report` of counts.

Rules:

- Five kinds of finding: ``orphaned_object`` (in the store, referenced by no row),
  ``missing_object`` (a row needs an object the store does not have), ``orphaned_unit``
  (in the unit store, owned by no ``unit_resources`` or ``worktree_units`` row),
  ``missing_unit`` (a ``unit_resources`` row whose unit is gone) and ``foreign_object``
  (in the store, named by no row, and not of a shape Wharf writes: another program's
  file in a shared bucket or directory; reported, never repaired).
- Counts keep going to the end of the run; at most ``max_findings`` findings are handed
  out in detail (and, with repair, repaired) per run, so a badly broken store costs a
  bounded amount of output and work: run again for the next ones.
- ``complete`` is false when the run stopped at its time budget: the counts then cover
  only what was compared.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from wharf.infra.clock import iso

KINDS = ("orphaned_object", "missing_object", "orphaned_unit", "missing_unit",
         "foreign_object")

#: A finding's repair: queued for deletion now, too recent to delete (younger than the
#: grace), or none (report-only kinds, or repair not asked for).
QUEUED, TOO_RECENT = "deletion_queued", "too_recent"


@dataclass(frozen=True)
class Finding:
    kind: str                      # one of KINDS
    subject: str                   # the object key or the unit id
    details: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        field_name = "key" if self.kind.endswith("_object") else "unit_id"
        return {"finding": self.kind, field_name: self.subject,
                **{k: iso(v) if isinstance(v, datetime) else v
                   for k, v in self.details.items()}}

    def as_text(self) -> str:
        label = self.kind.replace("_", " ")
        parts = [f"{label:16} {self.subject}"]
        for name, value in self.details.items():
            if isinstance(value, datetime):
                value = iso(value)
            elif isinstance(value, list):
                value = ",".join(str(v) for v in value)
            parts.append(f"{name}={value}")
        return "  ".join(parts)


@dataclass
class Report:
    max_findings: int
    emit: Callable[[Finding], None] = lambda _finding: None
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    repairs_queued: int = 0
    too_recent: int = 0            # orphans younger than the grace (reported, not repaired)
    units_too_recent: int = 0      # units without a row, too young to call orphans
    objects_listed: int = 0
    object_references: int = 0
    units_listed: int = 0
    unit_references: int = 0
    listed: int = 0                # findings handed out in detail
    complete: bool = True

    def admit(self, kind: str) -> bool:
        """Count one finding of ``kind``; True if it is to be handed out in detail (and
        may be repaired), within the detail cap."""
        self.counts[kind] += 1
        if self.listed >= self.max_findings:
            return False
        self.listed += 1
        return True

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def truncated(self) -> bool:
        return self.total > self.listed

    def summary(self) -> dict[str, Any]:
        return {**self.counts, "repairs_queued": self.repairs_queued,
                "orphans_too_recent": self.too_recent,
                "units_too_recent": self.units_too_recent,
                "objects_listed": self.objects_listed,
                "object_references": self.object_references,
                "units_listed": self.units_listed, "unit_references": self.unit_references,
                "findings_listed": self.listed, "truncated": self.truncated,
                "complete": self.complete}

    def counts_for_sweep(self) -> dict[str, int]:
        """The integers a sweep records on its tick (the fsck gauges read them back)."""
        return {**self.counts, "repairs_queued": self.repairs_queued,
                "orphans_too_recent": self.too_recent, "complete": int(self.complete)}
