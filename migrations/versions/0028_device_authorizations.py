"""device_authorizations: CLI logins approved in the browser (RFC 8628; issue 40 item 5)

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-07 11:00:00
"""
from alembic import op
import sqlalchemy as sa

import storage.types


revision = '0028'
down_revision = '0027'
branch_labels = None
depends_on = None

ID = sa.String(length=32)
TIME = storage.types.UTCDateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        'device_authorizations',
        sa.Column('id', ID, nullable=False),
        sa.Column('device_code_hash', sa.String(length=64), nullable=False),
        sa.Column('user_code_hash', sa.String(length=64), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('user_id', ID, nullable=True),
        sa.Column('created_at', TIME, nullable=False),
        sa.Column('expires_at', TIME, nullable=False),
        sa.Column('decided_at', TIME, nullable=True),
        sa.Column('interval', sa.Integer(), nullable=False),
        sa.Column('last_polled_at', TIME, nullable=True),
        sa.Column('client_name', sa.String(length=100), nullable=True),
        sa.Column('user_agent', sa.String(length=200), nullable=True),
        sa.Column('address', sa.String(length=64), nullable=True),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('device_code_hash'),
        sa.UniqueConstraint('user_code_hash'),
    )
    op.create_index('ix_device_authorizations_user_id', 'device_authorizations', ['user_id'],
                    unique=False)
    op.create_index('ix_device_authorizations_expires_at', 'device_authorizations',
                    ['expires_at'], unique=False)


def downgrade() -> None:
    op.drop_table('device_authorizations')
