"""login_sessions: user agent, address and last use (issue 40: see and end one's sessions)

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-07 06:40:00
"""
from alembic import op
import sqlalchemy as sa

import storage.types


revision = '0026'
down_revision = '0025'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('login_sessions') as batch:
        batch.add_column(sa.Column('user_agent', sa.String(length=200), nullable=True))
        batch.add_column(sa.Column('address', sa.String(length=64), nullable=True))
        batch.add_column(sa.Column('last_used_at', storage.types.UTCDateTime(timezone=True),
                                   nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('login_sessions') as batch:
        batch.drop_column('last_used_at')
        batch.drop_column('address')
        batch.drop_column('user_agent')
