"""A takeout's plan: the archive's members, fixed once when its operation first runs.

The nodes of each space in scope are read in ONE statement (one snapshot: a node moved or
created meanwhile is either wholly in or wholly out), trashed ones left out; each unit's
revision is its head's at that moment (the high-water mark: later edits are not in the
archive); blobs and published trunk assets are immutable. Members, in tree order:
- a folder: ``path/``;
- a blob: its bytes at the node's path;
- a unit: ``<name>.<unit type>.json`` (its document) and, for a type with an Office
  format, ``<name>.<xlsx|docx|pptx>``; its published trunk assets under
  ``<name>.assets/``;
- for a user's takeout, each space they own is a top folder named after the space.
Names are made safe for every unzip (no separators, no ``.``/``..``) and unique among
siblings, ignoring case. More members than ``WHARF_TAKEOUT_MAX_FILES`` fails with
``file_too_complex``.
"""
from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from storage.enums import BlobState, SpaceType
from storage.models import (
    BlobResource,
    Node,
    Resource,
    Space,
    UnitAsset,
    UnitResource,
)
from storage.unitstore import UnitStore
from wharf.exchange import writers
from wharf.exchange.import_errors import FileTooComplex

MANIFEST = "manifest.json"
_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\]')


@dataclass(frozen=True, slots=True)
class Member:
    """One planned member (a ``takeout_items`` row without its written facts)."""

    path: str
    source: str  # folder | blob | asset | unit_json | unit_file
    ref: str | None = None
    revision: int | None = None
    unit_type: str | None = None
    format: str | None = None
    size: int | None = None
    sha256: str | None = None


def safe_name(name: str) -> str:
    """``name`` as one safe path segment (no separators or control characters, not ``.``
    or ``..``, not empty)."""
    safe = _UNSAFE.sub("_", name).strip() or "_"
    return "_" + safe if safe in (".", "..") else safe


class _Names:
    """Unique, safe names among one folder's children: ``a``, ``a (2)``, ``a (3)``, ...
    (the suffix before the extension, so ``r.xlsx`` becomes ``r (2).xlsx``)."""

    def __init__(self) -> None:
        self.taken: set[str] = {MANIFEST}  # the root's manifest; harmless elsewhere

    def take(self, name: str) -> str:
        safe = safe_name(name)
        stem, dot, ext = safe.rpartition(".") if "." in safe[1:] else (safe, "", "")
        candidate, n = safe, 1
        while candidate.casefold() in self.taken:
            n += 1
            candidate = f"{stem} ({n}){dot}{ext}"
        self.taken.add(candidate.casefold())
        return candidate


def _spaces(s: Session, scope: str, space_id: str | None, user_id: str) -> list[Space]:
    if scope == "space":
        space = s.get(Space, space_id)
        return [space] if space is not None else []
    # personal first, then team spaces by name
    return sorted(s.scalars(select(Space).where(Space.owner_id == user_id)),
                  key=lambda sp: (sp.type != SpaceType.PERSONAL, sp.name, sp.id))


def _nodes(s: Session, space_id: str, room: int) -> list[Any]:
    """The space's live nodes with what they hold, at most ``room`` + 1 (one statement)."""
    q = (select(Node.id, Node.parent_id, Node.name, Resource.kind, UnitResource.unit_id,
                UnitResource.unit_type, BlobResource.object_key, BlobResource.size,
                BlobResource.sha256, BlobResource.state)
         .outerjoin(Resource, Resource.node_id == Node.id)
         .outerjoin(UnitResource, UnitResource.resource_id == Resource.id)
         .outerjoin(BlobResource, BlobResource.resource_id == Resource.id)
         .where(Node.space_id == space_id, Node.trash_batch_id.is_(None))
         .order_by(Node.id).limit(room + 1))
    return list(s.execute(q))


def _assets(s: Session, unit_ids: list[str]) -> dict[str, list[UnitAsset]]:
    out: dict[str, list[UnitAsset]] = defaultdict(list)
    for i in range(0, len(unit_ids), 500):
        for asset in s.scalars(select(UnitAsset).where(
                UnitAsset.unit_id.in_(unit_ids[i:i + 500]), UnitAsset.worktree_id.is_(None),
                UnitAsset.published_at.is_not(None)).order_by(UnitAsset.filename,
                                                              UnitAsset.id)):
            out[asset.unit_id].append(asset)
    return out


def _unit_members(path: str, unit_id: str, unit_type: str, revision: int,
                  assets: list[UnitAsset], names: _Names) -> Iterator[Member]:
    base = path.rpartition("/")[2]
    folder = path[:len(path) - len(base)]
    yield Member(folder + names.take(f"{base}.{unit_type}.json"), "unit_json", unit_id,
                 revision, unit_type)
    fits = writers.FORMATS.get(unit_type, ())
    if fits:
        office = base if base.lower().endswith("." + fits[0]) else f"{base}.{fits[0]}"
        yield Member(folder + names.take(office), "unit_file", unit_id, revision,
                     unit_type, fits[0])
    if assets:
        under = folder + names.take(f"{base}.assets") + "/"
        yield Member(under, "folder")
        inner = _Names()
        for asset in assets:
            yield Member(under + inner.take(asset.filename), "asset", asset.object_key,
                         size=asset.size, sha256=asset.sha256)


def _ordered(rows: list[Any]) -> list[Any]:
    """Siblings by name, last first (taken from the end)."""
    return sorted(rows, key=lambda r: (r.name, r.id), reverse=True)


def plan(s: Session, unitstore: UnitStore, scope: str, space_id: str | None,
         user_id: str, max_files: int) -> list[Member]:
    """The archive's members (without the manifest), in order."""
    members: list[Member] = []
    top = _Names()

    def room() -> int:
        return max_files - len(members)

    for space in _spaces(s, scope, space_id, user_id):
        prefix = top.take(space.name) + "/" if scope == "user" else ""
        if prefix:
            members.append(Member(prefix, "folder"))
        rows = _nodes(s, space.id, room())
        if len(rows) > room():
            raise FileTooComplex(f"the takeout would hold more than {max_files} files "
                                 "(WHARF_TAKEOUT_MAX_FILES)", details={"limit": max_files})
        children: dict[str | None, list[Any]] = defaultdict(list)
        live = {row.id for row in rows}
        for row in rows:
            # a node whose parent is not live (trashed apart from it) hangs at the root
            children[row.parent_id if row.parent_id in live else None].append(row)
        assets = _assets(s, [row.unit_id for row in rows if row.unit_id])
        stack: list[tuple[str, list[Any], _Names]] = [
            (prefix, _ordered(children[None]), _Names())]
        while stack:
            folder, pending, names = stack[-1]
            if not pending:
                stack.pop()
                continue
            row = pending.pop()
            if row.unit_id:
                head = unitstore.head(row.unit_id)
                if head is not None:
                    members.extend(_unit_members(folder + row.name.replace("/", "_"),
                                                 row.unit_id, row.unit_type, head.revision,
                                                 assets.get(row.unit_id, []), names))
                continue
            if row.object_key:
                if row.state == BlobState.QUARANTINED:
                    continue  # withheld until released (wharf/blobs/quarantine.py)
                members.append(Member(folder + names.take(row.name), "blob", row.object_key,
                                      size=row.size, sha256=row.sha256))
                continue
            path = folder + names.take(row.name) + "/"
            members.append(Member(path, "folder"))
            stack.append((path, _ordered(children[row.id]), _Names()))
        if len(members) > max_files:
            raise FileTooComplex(f"the takeout would hold more than {max_files} files "
                                 "(WHARF_TAKEOUT_MAX_FILES)", details={"limit": max_files})
    return members
