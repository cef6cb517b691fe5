"""process heartbeats: one row per running Wharf process, upserted every
WHARF_HEARTBEAT_SECONDS (wharf.heartbeats)

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03 14:30:00
"""
from alembic import op
import sqlalchemy as sa

import storage.types

revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('process_heartbeats',
    sa.Column('process_id', sa.String(length=255), nullable=False),
    sa.Column('role', sa.String(length=16), nullable=False),
    sa.Column('hostname', sa.String(length=200), nullable=False),
    sa.Column('pid', sa.Integer(), nullable=False),
    sa.Column('started_at', storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('last_seen_at', storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('stopped_at', storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('version', sa.String(length=64), nullable=False),
    sa.Column('details', sa.JSON(), nullable=True),
    sa.PrimaryKeyConstraint('process_id')
    )
    with op.batch_alter_table('process_heartbeats', schema=None) as batch_op:
        batch_op.create_index('ix_process_heartbeats_seen', ['last_seen_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('process_heartbeats', schema=None) as batch_op:
        batch_op.drop_index('ix_process_heartbeats_seen')

    op.drop_table('process_heartbeats')
