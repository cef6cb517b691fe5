"""Reading units and applying changesets, with the access rules of their resource."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from storage.db import Database
from storage.enums import Role
from storage.unitheads import HeadRow
from storage.unitpatch import UnitLimits
from storage.unitstore import Applied, Revision, UnitStore
from wharf.infra import audit
from wharf.infra.context import Principal, RequestContext
from wharf.infra.errors import NotFound, ValidationFailed, WharfError
from wharf.infra.settings import Settings
from wharf.spaces.access import Access
from wharf.units.resources import find_unit

#: A check of a trunk changeset before it is applied: ``(session, store, principal, access,
#: unit_id, base_revision, changes)``; it raises to refuse. Registered from above
#: (``wharf.protection``: protected ranges), as hook lists are (``wharf.infra.hooks``).
ChangesetGuard = Callable[[Session, UnitStore, Principal, Access, str, int, list[Any]], None]
CHANGESET_GUARDS: list[ChangesetGuard] = []


def unit_limits(settings: Settings) -> UnitLimits:
    """The bounds on a unit document and a changeset (``WHARF_UNIT_MAX_*``)."""
    return UnitLimits(max_bytes=settings.unit_max_snapshot_bytes,
                      max_ops=settings.unit_max_changeset_ops, max_depth=settings.unit_max_depth)


@dataclass(frozen=True)
class UnitView:
    """A unit as its reader sees it: the head, and its document as compact JSON unless
    the reader's copy is current (``document_json`` None)."""

    head: HeadRow
    document_json: bytes | None
    resource_id: str
    node_id: str


def read_unit(db: Database, store: UnitStore, ctx: RequestContext, unit_id: str,
              current: Callable[[int], bool] = lambda revision: False) -> UnitView:
    """The unit (view right). ``current(revision)``: whether the reader already holds that
    revision (then the document is not read at all)."""
    with db.read() as s:
        _, res, node, _ = find_unit(s, ctx, unit_id, Role.VIEWER)
    head = store.head(unit_id)
    if head is None:
        raise NotFound("No such unit.")
    if current(head.revision):
        return UnitView(head, None, res.id, node.id)
    found = store.document_json(unit_id)
    if found is None:
        raise NotFound("No such unit.")
    return UnitView(found[0], found[1], res.id, node.id)


class HistoryPruned(WharfError):
    """The changesets after the reader's revision are partly gone (history retention,
    ``WHARF_HISTORY_RETENTION``): catching up from them is impossible; read the unit
    again (``details.pruned_through``: the newest revision pruned)."""

    status = 410
    code = "history_pruned"
    title = "History pruned"


def read_changesets(db: Database, store: UnitStore, ctx: RequestContext, unit_id: str,
                    after: int, limit: int) -> list[Revision]:
    """The unit's revisions after ``after``, oldest first, at most ``limit`` (view right):
    what a reader holding revision ``after`` applies to catch up; :class:`HistoryPruned`
    when retention deleted some of them (never a page with a hole)."""
    with db.read() as s:
        find_unit(s, ctx, unit_id, Role.VIEWER)
    head = store.head(unit_id)
    if head is None:
        raise NotFound("No such unit.")
    revisions = store.revisions(unit_id, after=after, limit=limit)
    if after < head.revision and (not revisions or revisions[0].revision != after + 1):
        first = store.first_revision(unit_id)
        pruned = head.revision if first is None else first - 1
        raise HistoryPruned(f"Revisions up to {pruned} were pruned; read the unit again.",
                            details={"pruned_through": pruned})
    return revisions


def apply_changeset(db: Database, store: UnitStore, ctx: RequestContext, unit_id: str,
                    base_revision: Any, changes: Any, *, with_document: bool = True) -> Applied:
    if isinstance(base_revision, bool) or not isinstance(base_revision, int) or base_revision < 0:
        raise ValidationFailed("base_revision must be a non-negative integer",
                               details={"field": "base_revision"})
    if not isinstance(changes, list) or not changes:
        raise ValidationFailed("changes must be a non-empty RFC 6902 JSON Patch array",
                               details={"field": "changes"})
    with db.read() as s:
        _, _, node, access = find_unit(s, ctx, unit_id, Role.EDITOR)
        space_id = node.space_id
        for guard in CHANGESET_GUARDS:
            guard(s, store, ctx.principal, access, unit_id, base_revision, changes)
    unit = store.apply_changeset(unit_id, base_revision, changes, ctx.principal.user_id,
                                 with_document=with_document)
    # The UnitStore shares no transaction with the product DB: audit after the fact.
    with db.write() as s:
        audit.record(s, ctx, "unit.changeset", "unit", unit_id, space_id=space_id,
                     details={"revision": unit.revision, "ops": len(changes)})
    return unit
