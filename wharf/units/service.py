"""Reading units and applying changesets, with the access rules of their resource."""
from __future__ import annotations

from typing import Any

from storage.db import Database
from storage.enums import Role
from storage.unitpatch import UnitLimits
from storage.unitstore import Unit, UnitStore
from wharf.infra import audit
from wharf.infra.context import RequestContext
from wharf.infra.errors import NotFound, ValidationFailed
from wharf.infra.settings import Settings
from wharf.units.resources import find_unit


def unit_limits(settings: Settings) -> UnitLimits:
    """The bounds on a unit document and a changeset (``WHARF_UNIT_MAX_*``)."""
    return UnitLimits(max_bytes=settings.unit_max_snapshot_bytes,
                      max_ops=settings.unit_max_changeset_ops, max_depth=settings.unit_max_depth)


def read_unit(db: Database, store: UnitStore, ctx: RequestContext,
              unit_id: str) -> tuple[Unit, dict[str, Any]]:
    with db.read() as s:
        unit_row, res, node, access = find_unit(s, ctx, unit_id, Role.VIEWER)
        info = {"resource_id": res.id, "node_id": node.id, "unit_type": unit_row.unit_type,
                "role": access.role}
    unit = store.get(unit_id)
    if unit is None:
        raise NotFound("No such unit.")
    return unit, info


def apply_changeset(db: Database, store: UnitStore, ctx: RequestContext, unit_id: str,
                    base_revision: Any, changes: Any) -> Unit:
    if isinstance(base_revision, bool) or not isinstance(base_revision, int) or base_revision < 0:
        raise ValidationFailed("base_revision must be a non-negative integer",
                               details={"field": "base_revision"})
    if not isinstance(changes, list) or not changes:
        raise ValidationFailed("changes must be a non-empty RFC 6902 JSON Patch array",
                               details={"field": "changes"})
    with db.read() as s:
        _, _, node, _ = find_unit(s, ctx, unit_id, Role.EDITOR)
        space_id = node.space_id
    unit = store.apply_changeset(unit_id, base_revision, changes, ctx.principal.user_id)
    # The UnitStore shares no transaction with the product DB: audit after the fact.
    with db.write() as s:
        audit.record(s, ctx, "unit.changeset", "unit", unit_id, space_id=space_id,
                     details={"revision": unit.revision, "ops": len(changes)})
    return unit
