"""Where protected ranges are enforced: a trunk changeset, a worktree draft changeset, a
history restore and a merge's commit check their RFC 6902 operations against the
bindings of the document they apply to (:mod:`wharf.protection.pointers`) and the actor's
edit right on each object (:func:`wharf.protection.rules.may_edit`); an export checks the
Export strategy of every bound object.

The document read is the one the write is compare-and-set against (the trunk head at the
changeset's base revision, the draft at its revision, the trunk document a merge commits
on), so a binding added in between moves the revision and the write answers
``revision_conflict`` instead of slipping past the check.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy.orm import Session

from storage.models import ContentPermissionObject
from storage.unitstore import UnitStore
from wharf.infra.context import Principal
from wharf.infra.errors import WharfError
from wharf.protection import records
from wharf.protection.pointers import Protected, bindings_of, first_violation, protected
from wharf.protection.rules import Standing, may_edit, rights
from wharf.spaces.access import Access


class ProtectedRange(WharfError):
    """A changeset touches a range the actor may not edit (``details.object_id``,
    ``details.op_index``), or an export a bound object's Export strategy forbids
    (``details.object_id``, ``details.action``)."""

    status = 403
    code = "protected_range"
    title = "Protected range"


#: What a check reads of a document: its raw bindings and its effective ones.
Bound = tuple[dict[str, Any], list[Protected]]


def bound_in(doc: Any, objects: Sequence[ContentPermissionObject]) -> Bound:
    """The document's raw bindings (a copy) and those naming one of ``objects``."""
    known = {o.id for o in objects}
    raw = bindings_of(doc)
    return dict(raw), protected(raw, doc, known.__contains__)


def check_changes(s: Session, who: Standing | Callable[[], Standing], unit_id: str,
                  changes: Sequence[Any], read: Callable[[list[ContentPermissionObject]],
                                                         Bound | None]) -> None:
    """Raise :class:`ProtectedRange` for the first operation of ``changes`` the actor may
    not apply. ``read(objects)``: the bindings of the document ``changes`` apply to (None:
    the document is not the expected revision; the write's own compare-and-set answers).
    A unit without objects pays one index probe (``objects_of``), plus the syntactic check of
    ``/protection``."""
    objects = records.objects_of(s, unit_id)
    if not objects:
        _raise(first_violation(changes, [], lambda _: True, None))
        return
    found = read(objects)
    if found is None:
        return
    raw, bound = found
    by_id = {o.id: records.facts(o) for o in objects}
    standing: list[Standing] = []

    def allowed(object_id: str) -> bool:
        if not standing:
            standing.append(who if isinstance(who, Standing) else who())
        return may_edit(standing[0], by_id[object_id])

    _raise(first_violation(changes, bound, allowed, raw))


def _raise(v: Any) -> None:
    if v is not None:
        raise ProtectedRange(f"operation {v.op_index}: {v.reason}; you may not edit it.",
                             details={"object_id": v.object_id, "op_index": v.op_index})


def check_trunk(s: Session, store: UnitStore, principal: Principal, access: Access,
                unit_id: str, base_revision: int, changes: Sequence[Any]) -> None:
    """A trunk changeset at ``base_revision`` (the head's bindings, read from the
    process's copy of the document)."""
    def read(objects: list[ContentPermissionObject]) -> Bound | None:
        found = store.inspect(unit_id, lambda doc: bound_in(doc, objects))
        if found is None or found[0].revision != base_revision:
            return None
        return found[1]

    check_changes(s, lambda: records.standing(s, principal, access, unit_id), unit_id,
                  changes, read)


def check_document(s: Session, principal: Principal, unit_id: str, doc: Any,
                   changes: Sequence[Any], access: Access | None = None) -> None:
    """``changes`` against ``doc`` (a draft, the trunk document a restore or a merge
    writes on): the actor's standing on the trunk unit's current ACL."""
    def who() -> Standing:
        if access is not None:
            return records.standing(s, principal, access, unit_id)
        return records.standing_on_unit(s, principal, unit_id)

    check_changes(s, who, unit_id, changes, lambda objects: bound_in(doc, objects))


def check_export(s: Session, store: UnitStore, principal: Principal, access: Access,
                 unit_id: str) -> None:
    """An export of the unit: refused when a bound object's Export strategy does not
    allow the caller."""
    objects = records.objects_of(s, unit_id)
    if not objects:
        return
    found = store.inspect(unit_id, lambda doc: bound_in(doc, objects))
    if found is None:
        return
    bound = {p.object_id for p in found[1][1]}
    who = records.standing(s, principal, access, unit_id)
    for o in objects:
        if o.id in bound and not rights(who, records.facts(o)).export:
            raise ProtectedRange(f"The protected object {o.name!r} may not be exported by "
                                 "you (its Export strategy).",
                                 details={"object_id": o.id, "action": "export"})
