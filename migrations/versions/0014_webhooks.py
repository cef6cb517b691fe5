"""webhooks: endpoints users register, and their deliveries (wharf.webhooks)

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-03 15:40:00
"""
from alembic import op
import sqlalchemy as sa

import storage.types


revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'webhooks',
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('user_id', sa.String(length=32), nullable=False),
        sa.Column('url', sa.String(length=2048), nullable=False),
        sa.Column('events', sa.JSON(), nullable=False),
        sa.Column('secret', sa.String(length=128), nullable=False),
        sa.Column('enabled', sa.Boolean(), nullable=False),
        sa.Column('disabled_reason', sa.String(length=500), nullable=True),
        sa.Column('disabled_at', storage.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column('consecutive_failures', sa.Integer(), nullable=False),
        sa.Column('failing_since', storage.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column('created_at', storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_webhooks_user', 'webhooks', ['user_id', 'enabled'], unique=False)
    op.create_table(
        'webhook_deliveries',
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('webhook_id', sa.String(length=32), nullable=False),
        sa.Column('event_type', sa.String(length=64), nullable=False),
        sa.Column('subject_id', sa.String(length=32), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('next_attempt_at', storage.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column('last_attempt_at', storage.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column('last_status_code', sa.Integer(), nullable=True),
        sa.Column('last_error', sa.String(length=500), nullable=True),
        sa.Column('created_at', storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column('claim', sa.String(length=32), nullable=True),
        sa.Column('payload', sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(['webhook_id'], ['webhooks.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_webhook_deliveries_webhook', 'webhook_deliveries',
                    ['webhook_id', 'id'], unique=False)
    op.create_index('ix_webhook_deliveries_due', 'webhook_deliveries',
                    ['next_attempt_at'], unique=False)
    op.create_index('ix_webhook_deliveries_created', 'webhook_deliveries',
                    ['created_at'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_webhook_deliveries_created', table_name='webhook_deliveries')
    op.drop_index('ix_webhook_deliveries_due', table_name='webhook_deliveries')
    op.drop_index('ix_webhook_deliveries_webhook', table_name='webhook_deliveries')
    op.drop_table('webhook_deliveries')
    op.drop_index('ix_webhooks_user', table_name='webhooks')
    op.drop_table('webhooks')
