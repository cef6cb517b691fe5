"""worktrees: isolated drafts of units and where their new units will be created

``worktrees`` (state machine draft → ready → merging → merged, or discarding →
discarded), ``worktree_units`` (a trunk unit's copy or a worktree-local unit with a
reserved resource id, and its last merge outcome) and ``worktree_node_intents`` (where a
local unit's node is created when the worktree is merged). The drafts themselves live in
the unit store (schema version 2).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03 12:10:00
"""
from alembic import op
import sqlalchemy as sa

import storage.types

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None

TS = storage.types.UTCDateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        'worktrees',
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('kind', sa.String(length=8), nullable=False),
        sa.Column('name', sa.String(length=255), nullable=False),
        sa.Column('summary', sa.Text(), nullable=True),
        sa.Column('creator_id', sa.String(length=32), nullable=False),
        sa.Column('team_space_id', sa.String(length=32), nullable=True),
        sa.Column('visibility', sa.String(length=8), nullable=False),
        sa.Column('state', sa.String(length=16), nullable=False),
        sa.Column('busy_operation_id', sa.String(length=32), nullable=True),
        sa.Column('last_merge_operation_id', sa.String(length=32), nullable=True),
        sa.Column('processed_at', TS, nullable=True),
        sa.Column('drafts_purged_at', TS, nullable=True),
        sa.Column('created_at', TS, nullable=False),
        sa.Column('updated_at', TS, nullable=False),
        sa.CheckConstraint("(kind = 'user' AND team_space_id IS NULL AND visibility = "
                           "'private') OR (kind = 'team' AND team_space_id IS NOT NULL)",
                           name='ck_worktrees_kind_scope'),
        sa.CheckConstraint("(processed_at IS NOT NULL) = (state IN ('merged', 'discarded'))",
                           name='ck_worktrees_processed'),
        sa.ForeignKeyConstraint(['creator_id'], ['users.id'], ),
        sa.ForeignKeyConstraint(['team_space_id'], ['spaces.id'], ),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('worktrees', schema=None) as batch_op:
        batch_op.create_index('ix_worktrees_creator',
                              ['creator_id', 'processed_at', 'updated_at', 'id'], unique=False)
        batch_op.create_index('ix_worktrees_team',
                              ['team_space_id', 'processed_at', 'updated_at', 'id'],
                              unique=False)
    op.create_table(
        'worktree_units',
        sa.Column('worktree_id', sa.String(length=32), nullable=False),
        sa.Column('unit_id', sa.String(length=32), nullable=False),
        sa.Column('resource_id', sa.String(length=32), nullable=False),
        sa.Column('source', sa.String(length=8), nullable=False),
        sa.Column('unit_type', sa.String(length=8), nullable=False),
        sa.Column('ordinal', sa.Integer(), nullable=False),
        sa.Column('added_by', sa.String(length=32), nullable=False),
        sa.Column('added_at', TS, nullable=False),
        sa.Column('merge_state', sa.String(length=24), nullable=False),
        sa.Column('merged_trunk_revision', sa.Integer(), nullable=True),
        sa.Column('conflict_count', sa.Integer(), nullable=False),
        sa.Column('last_merge_operation_id', sa.String(length=32), nullable=True),
        sa.CheckConstraint('ordinal >= 0', name='ck_worktree_units_ordinal'),
        sa.ForeignKeyConstraint(['added_by'], ['users.id'], ),
        sa.ForeignKeyConstraint(['worktree_id'], ['worktrees.id'], ),
        sa.PrimaryKeyConstraint('worktree_id', 'unit_id'),
        sa.UniqueConstraint('worktree_id', 'resource_id', name='uq_worktree_units_resource'),
    )
    with op.batch_alter_table('worktree_units', schema=None) as batch_op:
        batch_op.create_index('ix_worktree_units_resource', ['resource_id'], unique=False)
    op.create_table(
        'worktree_node_intents',
        sa.Column('worktree_id', sa.String(length=32), nullable=False),
        sa.Column('unit_id', sa.String(length=32), nullable=False),
        sa.Column('node_id', sa.String(length=32), nullable=False),
        sa.Column('target_space_id', sa.String(length=32), nullable=False),
        sa.Column('target_parent_id', sa.String(length=32), nullable=True),
        sa.Column('name', sa.String(length=255), nullable=False),
        sa.Column('unit_type', sa.String(length=8), nullable=False),
        sa.Column('created_by', sa.String(length=32), nullable=False),
        sa.Column('activated_at', TS, nullable=True),
        sa.Column('discarded_at', TS, nullable=True),
        sa.Column('created_at', TS, nullable=False),
        sa.Column('updated_at', TS, nullable=False),
        sa.CheckConstraint('activated_at IS NULL OR discarded_at IS NULL',
                           name='ck_worktree_intents_outcome'),
        sa.ForeignKeyConstraint(['created_by'], ['users.id'], ),
        sa.ForeignKeyConstraint(['target_space_id'], ['spaces.id'], ),
        sa.ForeignKeyConstraint(['worktree_id', 'unit_id'],
                                ['worktree_units.worktree_id', 'worktree_units.unit_id'],
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('worktree_id', 'unit_id'),
        sa.UniqueConstraint('node_id'),
    )
    with op.batch_alter_table('worktree_node_intents', schema=None) as batch_op:
        batch_op.create_index('ix_worktree_intents_parent', ['target_parent_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('worktree_node_intents', schema=None) as batch_op:
        batch_op.drop_index('ix_worktree_intents_parent')
    op.drop_table('worktree_node_intents')
    with op.batch_alter_table('worktree_units', schema=None) as batch_op:
        batch_op.drop_index('ix_worktree_units_resource')
    op.drop_table('worktree_units')
    with op.batch_alter_table('worktrees', schema=None) as batch_op:
        batch_op.drop_index('ix_worktrees_team')
        batch_op.drop_index('ix_worktrees_creator')
    op.drop_table('worktrees')
