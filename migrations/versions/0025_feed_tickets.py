"""feed_tickets: one-use passes into the live change feed (wharf.feed.tickets, issue 39)

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-07 06:00:00
"""
from alembic import op
import sqlalchemy as sa

import storage.types


revision = '0025'
down_revision = '0024'
branch_labels = None
depends_on = None

ID = sa.String(length=32)
TIME = storage.types.UTCDateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        'feed_tickets',
        sa.Column('digest', sa.String(length=64), nullable=False),
        sa.Column('user_id', ID, nullable=False),
        sa.Column('session_id', ID, nullable=True),
        sa.Column('token_id', ID, nullable=True),
        sa.Column('expires_at', TIME, nullable=False),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['session_id'], ['login_sessions.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['token_id'], ['api_tokens.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('digest'),
    )
    op.create_index('ix_feed_tickets_user_id', 'feed_tickets', ['user_id'], unique=False)
    op.create_index('ix_feed_tickets_session_id', 'feed_tickets', ['session_id'],
                    unique=False)
    op.create_index('ix_feed_tickets_token_id', 'feed_tickets', ['token_id'], unique=False)
    op.create_index('ix_feed_tickets_expires_at', 'feed_tickets', ['expires_at'],
                    unique=False)


def downgrade() -> None:
    op.drop_table('feed_tickets')
