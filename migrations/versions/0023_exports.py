"""exports: units exported to Office files, temporary objects (wharf.exchange, issue 38)

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-07 03:00:00
"""
from alembic import op
import sqlalchemy as sa

import storage.types


revision = '0023'
down_revision = '0022'
branch_labels = None
depends_on = None

ID = sa.String(length=32)
TIME = storage.types.UTCDateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        'exports',
        sa.Column('id', ID, nullable=False),
        sa.Column('unit_id', ID, nullable=False),
        sa.Column('owner_id', ID, nullable=False),
        sa.Column('format', sa.String(length=16), nullable=False),
        sa.Column('filename', sa.String(length=255), nullable=False),
        sa.Column('object_key', sa.String(length=255), nullable=False),
        sa.Column('size', sa.BigInteger(), nullable=False),
        sa.Column('sha256', sa.String(length=64), nullable=False),
        sa.Column('created_at', TIME, nullable=False),
        sa.Column('expires_at', TIME, nullable=False),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('object_key'),
    )
    op.create_index('ix_exports_expiry', 'exports', ['expires_at', 'id'], unique=False)
    op.create_index('ix_exports_unit_id', 'exports', ['unit_id'], unique=False)
    op.create_index('ix_exports_owner_id', 'exports', ['owner_id'], unique=False)
    if op.get_bind().dialect.name == 'postgresql':  # wharf fsck's key order (as 0012)
        op.execute('CREATE INDEX ix_exports_object_key_c ON exports (object_key COLLATE "C")')


def downgrade() -> None:
    if op.get_bind().dialect.name == 'postgresql':
        op.execute('DROP INDEX ix_exports_object_key_c')
    op.drop_index('ix_exports_owner_id', table_name='exports')
    op.drop_index('ix_exports_unit_id', table_name='exports')
    op.drop_index('ix_exports_expiry', table_name='exports')
    op.drop_table('exports')
