"""Binding an object's target in the unit's document (``/protection/{object_id}``).

The seed's order: the ACL (the product database's row) is committed first, the binding
after, in the unit store (no transaction spans both). A binding is one trunk revision
written by the manager who asked for it, at the head (compare-and-set, retried a few
times when the head moves). When it cannot be written (the unit store is down, the head
keeps moving) the ACL stays unbound, protecting nothing, and the object answers
``"bound": false``: a ``PATCH`` with its ``target`` binds it again.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jsonpointer import JsonPointer

from storage.errors import RevisionConflict, StorageError
from storage.unitstore import UnitStore
from wharf.protection.pointers import BINDINGS, bindings_of

ATTEMPTS = 5


def targets_of(store: UnitStore, unit_id: str) -> dict[str, str]:
    found = store.inspect(unit_id, lambda doc: dict(bindings_of(doc)))
    return {k: v for k, v in (found[1] if found else {}).items() if isinstance(v, str)}


@dataclass(frozen=True)
class Bound:
    done: bool  # the head binds the object as asked (False: it could not be written)
    revision: int | None = None  # the revision written, if one was


def bind(store: UnitStore, unit_id: str, object_id: str, target: str | None,
         author_id: str | None) -> Bound:
    """Make the head document bind ``object_id`` to ``target`` (None: unbind)."""
    def look(doc: dict[str, Any]) -> tuple[bool, Any]:
        raw = doc.get(BINDINGS)
        return isinstance(raw, dict), (raw or {}).get(object_id) \
            if isinstance(raw, dict) else None

    path = JsonPointer.from_parts([BINDINGS, object_id]).path
    try:
        for _ in range(ATTEMPTS):
            found = store.inspect(unit_id, look)
            if found is None:
                return Bound(False)
            head, (has_map, current) = found
            if current == target:
                return Bound(True)
            changes: list[dict[str, Any]]
            if target is None:
                changes = [{"op": "remove", "path": path}]
            else:
                changes = [] if has_map else [{"op": "add", "path": f"/{BINDINGS}",
                                                "value": {}}]
                changes.append({"op": "add", "path": path, "value": target})
            try:
                applied = store.apply_changeset(unit_id, head.revision, changes, author_id)
                return Bound(True, applied.revision)
            except RevisionConflict:
                continue
    except StorageError:
        return Bound(False)
    return Bound(False)
