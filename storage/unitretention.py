"""Retention of a unit store's trunk history: the checkpoints no read needs, and (when an
operator asks for it) the revisions older than a period. Each function deletes a bounded
batch in one write transaction of ``db`` and returns how many rows went; the sweeps of
``wharf.retention`` call them until a batch comes back short."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import and_, delete, exists, func, or_, select

from storage.db import Database
from storage.results import rowcount
from storage.unitschema import CHECKPOINTS, DRAFTS, REVISIONS, UNITS


def prune_checkpoints(db: Database, limit: int) -> int:
    """Delete up to ``limit`` checkpoints no document read needs: those between a unit's
    first (its creation, its upgrade to schema version 5, or where its history was
    pruned) and its newest, except the newest at or below each worktree draft's
    ``base_revision`` (a fork shares trunk's document at that revision instead of storing
    it)."""
    earlier = CHECKPOINTS.alias("earlier")
    first = (select(func.min(earlier.c.revision))
             .where(earlier.c.unit_id == CHECKPOINTS.c.unit_id).scalar_subquery())
    between = CHECKPOINTS.alias("between")
    needed = exists().where(
        DRAFTS.c.unit_id == CHECKPOINTS.c.unit_id,
        DRAFTS.c.base_revision >= CHECKPOINTS.c.revision,
        ~select(between.c.revision).where(
            between.c.unit_id == CHECKPOINTS.c.unit_id,
            between.c.revision > CHECKPOINTS.c.revision,
            between.c.revision <= DRAFTS.c.base_revision
        ).correlate(CHECKPOINTS, DRAFTS).exists())
    with db.write() as s:
        conn = s.connection()
        keys = conn.execute(
            select(CHECKPOINTS.c.unit_id, CHECKPOINTS.c.revision)
            .join(UNITS, UNITS.c.id == CHECKPOINTS.c.unit_id)
            .where(CHECKPOINTS.c.revision < UNITS.c.checkpoint_revision,
                   CHECKPOINTS.c.revision > first, ~needed)
            .limit(limit)).all()
        for key in keys:
            conn.execute(delete(CHECKPOINTS).where(
                CHECKPOINTS.c.unit_id == key.unit_id,
                CHECKPOINTS.c.revision == key.revision))
        return len(keys)


def prune_history(db: Database, older_than: datetime, limit: int) -> int:
    """Delete up to ``limit`` trunk revisions (and then the checkpoints below them) that
    are older than ``older_than`` and that no read needs: per unit, the revisions up to
    its newest checkpoint written before ``older_than`` (that checkpoint becomes where its
    history starts), but never at or above a worktree draft's ``base_revision`` (a draft
    reads trunk's document there, and its merge reads trunk's revisions after it). The
    document at every later revision reads as before; earlier ones are gone. Returns how
    many revisions went."""
    lowest_base = (select(func.min(DRAFTS.c.base_revision))
                   .where(DRAFTS.c.unit_id == CHECKPOINTS.c.unit_id).scalar_subquery())
    deleted = 0
    with db.write() as s:
        conn = s.connection()
        cut = (select(CHECKPOINTS.c.unit_id, func.max(CHECKPOINTS.c.revision).label("cut"))
               .where(CHECKPOINTS.c.created_at < older_than, CHECKPOINTS.c.revision > 0,
                      or_(lowest_base.is_(None), CHECKPOINTS.c.revision <= lowest_base))
               .group_by(CHECKPOINTS.c.unit_id).subquery())
        older = CHECKPOINTS.alias("older")
        cuts = conn.execute(select(cut.c.unit_id, cut.c.cut).where(or_(
            exists().where(REVISIONS.c.unit_id == cut.c.unit_id,
                           REVISIONS.c.revision <= cut.c.cut),
            exists().where(older.c.unit_id == cut.c.unit_id, older.c.revision < cut.c.cut)))
            .order_by(cut.c.unit_id).limit(limit)).all()
        for unit_id, boundary in cuts:
            if deleted >= limit:
                break
            first = conn.scalar(select(func.min(REVISIONS.c.revision)).where(
                REVISIONS.c.unit_id == unit_id))
            if first is not None and first <= boundary:
                upto = min(boundary, first + (limit - deleted) - 1)
                deleted += rowcount(conn.execute(delete(REVISIONS).where(
                    REVISIONS.c.unit_id == unit_id, REVISIONS.c.revision <= upto)))
                if upto < boundary:
                    continue
            conn.execute(delete(CHECKPOINTS).where(  # (a few rows: not counted)
                and_(CHECKPOINTS.c.unit_id == unit_id, CHECKPOINTS.c.revision < boundary)))
    return deleted
