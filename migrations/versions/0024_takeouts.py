"""takeouts: zip archives of a space or of a user's spaces (wharf.exchange.takeout, issue 38)

exports gains its scope (unit | space | user) and space_id, unit_id becomes optional;
takeout_runs and takeout_items hold a running takeout's plan and progress.

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-07 05:30:00
"""
from alembic import op
import sqlalchemy as sa

import storage.types


revision = '0024'
down_revision = '0023'
branch_labels = None
depends_on = None

ID = sa.String(length=32)
TIME = storage.types.UTCDateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table('exports') as batch:
        batch.add_column(sa.Column('scope', sa.String(length=8), nullable=False,
                                   server_default='unit'))
        batch.add_column(sa.Column('space_id', ID, nullable=True))
        batch.alter_column('unit_id', existing_type=ID, nullable=True)
    op.create_table(
        'takeout_runs',
        sa.Column('operation_id', ID, nullable=False),
        sa.Column('as_of', TIME, nullable=False),
        sa.Column('upload_id', sa.String(length=1024), nullable=False),
        sa.Column('part_size', sa.BigInteger(), nullable=False),
        sa.Column('parts', sa.JSON(), nullable=False),
        sa.Column('written', sa.BigInteger(), nullable=False),
        sa.Column('next_seq', sa.Integer(), nullable=False),
        sa.Column('data_offset', sa.BigInteger(), nullable=False),
        sa.Column('data_crc', sa.BigInteger(), nullable=False),
        sa.Column('items', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('operation_id'),
    )
    op.create_table(
        'takeout_items',
        sa.Column('operation_id', ID, nullable=False),
        sa.Column('seq', sa.Integer(), nullable=False),
        sa.Column('path', sa.Text(), nullable=False),
        sa.Column('source', sa.String(length=16), nullable=False),
        sa.Column('ref', sa.String(length=255), nullable=True),
        sa.Column('revision', sa.BigInteger(), nullable=True),
        sa.Column('unit_type', sa.String(length=8), nullable=True),
        sa.Column('format', sa.String(length=16), nullable=True),
        sa.Column('size', sa.BigInteger(), nullable=True),
        sa.Column('sha256', sa.String(length=64), nullable=True),
        sa.Column('offset', sa.BigInteger(), nullable=True),
        sa.Column('crc32', sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint('operation_id', 'seq'),
    )


def downgrade() -> None:
    op.drop_table('takeout_items')
    op.drop_table('takeout_runs')
    op.execute("DELETE FROM exports WHERE scope <> 'unit'")
    with op.batch_alter_table('exports') as batch:
        batch.alter_column('unit_id', existing_type=ID, nullable=False)
        batch.drop_column('space_id')
        batch.drop_column('scope')
