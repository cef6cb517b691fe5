"""users: a partial index on disabled accounts (issue 40: the dashboard lists them)

Revision ID: 0030
Revises: 0026
Create Date: 2026-12-07 11:20:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0030'
down_revision = '0026'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index('ix_users_disabled', 'users', ['username_key'], unique=False,
                    postgresql_where=sa.text("status = 'disabled'"),
                    sqlite_where=sa.text("status = 'disabled'"))


def downgrade() -> None:
    op.drop_index('ix_users_disabled', table_name='users')
