"""worktree_events: what a permanent delete of trash did to a worktree it did not wait for

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-06 03:00:00

A new, empty table (wharf.worktrees.blockers: the owner's purge takes a unit out of another
user's worktree and tells that worktree's readers).
"""
from alembic import op
import sqlalchemy as sa

import storage.types


revision = '0019'
down_revision = '0018'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'worktree_events',
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('worktree_id', sa.String(length=32), nullable=False),
        sa.Column('kind', sa.String(length=32), nullable=False),
        sa.Column('unit_id', sa.String(length=32), nullable=False),
        sa.Column('resource_id', sa.String(length=32), nullable=True),
        sa.Column('operation_id', sa.String(length=32), nullable=True),
        sa.Column('reason', sa.String(length=16), nullable=False),
        sa.Column('at', storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['worktree_id'], ['worktrees.id'], ),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('worktree_events', schema=None) as batch_op:
        batch_op.create_index('ix_worktree_events_worktree', ['worktree_id', 'id'],
                              unique=False)


def downgrade() -> None:
    with op.batch_alter_table('worktree_events', schema=None) as batch_op:
        batch_op.drop_index('ix_worktree_events_worktree')
    op.drop_table('worktree_events')
