"""bounded merge results: merge_worktree results and their webhook deliveries rewritten
as the bounded summary a merge now writes

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-06 03:00:00

A merge's result used to carry the first 20 conflicts of every unit with their values
(up to 48 MB for one operation, 4.8 MB measured for 20 units of 20 conflicting 4,000-char
strings), and its ``operation.completed`` delivery a copy. They are rewritten as what
``wharf.worktrees.merging`` writes now (its rule, frozen here): the first 200 units
(``units_truncated`` when there were more), conflicts a sample of 3 per unit and 10 in
all, each path and value over 128 bytes of compact JSON replaced by the truncation marker.
The full conflicts stay in the unit store's merge records (``GET …/conflicts``). Rows are
read and written one at a time (a result may be large); no schema change. Downgrade
keeps the summaries (the dropped samples are gone).
"""
import hashlib
import json
from typing import Any

from alembic import op
import sqlalchemy as sa


revision = '0020'
down_revision = '0019'
branch_labels = None
depends_on = None

UNITS, UNIT_CONFLICTS, CONFLICTS, VALUE_BYTES = 200, 3, 10, 128

operations = sa.table('operations', sa.column('id', sa.String), sa.column('kind', sa.String),
                      sa.column('result', sa.JSON))
deliveries = sa.table('webhook_deliveries', sa.column('id', sa.String),
                      sa.column('payload', sa.JSON))


def _clip(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str) and len(value) * 6 + 2 <= VALUE_BYTES:
        return value
    data = json.dumps(value, ensure_ascii=False, separators=(",", ":"),
                      sort_keys=True).encode("utf-8", "surrogatepass")
    if len(data) <= VALUE_BYTES:
        return value
    return {"$truncated": True, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _bounded(result: Any) -> Any:
    if not isinstance(result, dict) or not isinstance(result.get("units"), list):
        return result
    units, shown, kept = result["units"], 0, []
    for unit in units[:UNITS]:
        conflicts = unit.get("conflicts") if isinstance(unit, dict) else None
        if not isinstance(conflicts, list):
            kept.append(unit)
            continue
        sample = [{k: _clip(v) for k, v in c.items()} if isinstance(c, dict) else c
                  for c in conflicts[:min(UNIT_CONFLICTS, CONFLICTS - shown)]]
        shown += len(sample)
        kept.append({**unit, "conflicts": sample})
    out = {**result, "units": kept}
    if len(units) > UNITS:
        out["units_truncated"] = True
    return out


def upgrade() -> None:
    conn = op.get_bind()
    ids = conn.scalars(sa.select(operations.c.id).where(
        operations.c.kind == 'merge_worktree', operations.c.result.isnot(None))
        .order_by(operations.c.id)).all()
    for op_id in ids:
        result = conn.scalar(sa.select(operations.c.result).where(operations.c.id == op_id))
        bounded = _bounded(result)
        if bounded != result:
            conn.execute(sa.update(operations).where(operations.c.id == op_id)
                         .values(result=bounded))
    ids = conn.scalars(sa.select(deliveries.c.id).order_by(deliveries.c.id)).all()
    for delivery_id in ids:
        payload = conn.scalar(sa.select(deliveries.c.payload)
                              .where(deliveries.c.id == delivery_id))
        operation = payload.get("operation") if isinstance(payload, dict) else None
        if not isinstance(operation, dict) or operation.get("kind") != 'merge_worktree':
            continue
        bounded = _bounded(operation.get("result"))
        if bounded != operation.get("result"):
            conn.execute(sa.update(deliveries).where(deliveries.c.id == delivery_id)
                         .values(payload={**payload,
                                          "operation": {**operation, "result": bounded}}))


def downgrade() -> None:
    pass  # the summaries stay: the samples they dropped are not kept anywhere
