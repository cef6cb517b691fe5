"""account deletion: users.status, spaces.read_only and the deletion ledger (wharf.accounts)

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-03 17:10:00
"""
from alembic import op
import sqlalchemy as sa

import storage.types


revision = '0016'
down_revision = '0015'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('status', sa.String(length=16), nullable=False,
                                      server_default=sa.text("'active'")))
    with op.batch_alter_table('spaces', schema=None) as batch_op:
        batch_op.add_column(sa.Column('read_only', sa.Boolean(), nullable=False,
                                      server_default=sa.text('false')))
    op.create_table(
        'deletion_records',
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('kind', sa.String(length=16), nullable=False),
        sa.Column('subject', sa.String(length=255), nullable=False),
        sa.Column('username_digest', sa.String(length=64), nullable=True),
        sa.Column('reason', sa.String(length=64), nullable=False),
        sa.Column('recorded_at', storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column('shipped_at', storage.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column('ledger_key', sa.String(length=255), nullable=True),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('deletion_records', schema=None) as batch_op:
        batch_op.create_index('ix_deletion_records_shipping',
                              ['shipped_at', 'recorded_at', 'id'], unique=False)
        batch_op.create_index('ix_deletion_records_recorded', ['recorded_at'], unique=False)
        batch_op.create_index('ix_deletion_records_username',
                              ['username_digest', 'recorded_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('deletion_records', schema=None) as batch_op:
        batch_op.drop_index('ix_deletion_records_username')
        batch_op.drop_index('ix_deletion_records_recorded')
        batch_op.drop_index('ix_deletion_records_shipping')
    op.drop_table('deletion_records')
    with op.batch_alter_table('spaces', schema=None) as batch_op:
        batch_op.drop_column('read_only')
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_column('status')
