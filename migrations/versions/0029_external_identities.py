"""external_identities and external_authorizations: sign-in with an external provider
(OpenID Connect, GitHub; wharf.identity.external, issue 40 item 4)

Revision ID: 0029
Revises: 0028
Create Date: 2026-12-07 11:00:00
"""
from alembic import op
import sqlalchemy as sa

import storage.types


revision = '0029'
down_revision = '0028'
branch_labels = None
depends_on = None

ID = sa.String(length=32)
TIME = storage.types.UTCDateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        'external_identities',
        sa.Column('id', ID, nullable=False),
        sa.Column('user_id', ID, nullable=False),
        sa.Column('provider', sa.String(length=32), nullable=False),
        sa.Column('subject', sa.String(length=255), nullable=False),
        sa.Column('display_name', sa.String(length=255), nullable=True),
        sa.Column('created_at', TIME, nullable=False),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('provider', 'subject',
                            name='uq_external_identities_provider_subject'),
        sa.UniqueConstraint('user_id', 'provider', name='uq_external_identities_user_provider'),
    )
    op.create_table(
        'external_authorizations',
        sa.Column('state_digest', sa.String(length=64), nullable=False),
        sa.Column('provider', sa.String(length=32), nullable=False),
        sa.Column('nonce', sa.String(length=128), nullable=False),
        sa.Column('code_verifier', sa.String(length=128), nullable=False),
        sa.Column('browser_digest', sa.String(length=64), nullable=False),
        sa.Column('user_id', ID, nullable=True),
        sa.Column('next_path', sa.String(length=2048), nullable=False),
        sa.Column('created_at', TIME, nullable=False),
        sa.Column('expires_at', TIME, nullable=False),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('state_digest'),
    )
    op.create_index('ix_external_authorizations_expires_at', 'external_authorizations',
                    ['expires_at'], unique=False)


def downgrade() -> None:
    op.drop_table('external_authorizations')
    op.drop_table('external_identities')
