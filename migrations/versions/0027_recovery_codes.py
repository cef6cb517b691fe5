"""recovery_codes: one-time codes that reset a forgotten password (issue 40 item 1)

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-07 11:10:00
"""
from alembic import op
import sqlalchemy as sa

import storage.types


revision = '0027'
down_revision = '0026'
branch_labels = None
depends_on = None

ID = sa.String(length=32)
TIME = storage.types.UTCDateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        'recovery_codes',
        sa.Column('id', ID, nullable=False),
        sa.Column('user_id', ID, nullable=False),
        sa.Column('digest', sa.String(length=64), nullable=False),
        sa.Column('created_at', TIME, nullable=False),
        sa.Column('used_at', TIME, nullable=True),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_recovery_codes_user_digest', 'recovery_codes', ['user_id', 'digest'],
                    unique=True)


def downgrade() -> None:
    op.drop_table('recovery_codes')
