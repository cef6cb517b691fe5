"""unit assets: published assets and uploads in flight

``unit_assets`` are the files embedded in units (images in a doc), served through a
permission gate; ``unit_asset_uploads`` reserve an asset's id and object key while the
request streams its bytes (``receiving``) until a ``publish_asset`` operation publishes it
(``stored`` → row deleted). Worktree-scoped assets (``worktree_id``) arrive with worktrees.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03 12:00:00
"""
from alembic import op
import sqlalchemy as sa

import storage.types

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'unit_assets',
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('unit_id', sa.String(length=32), nullable=False),
        sa.Column('worktree_id', sa.String(length=32), nullable=True),
        sa.Column('object_key', sa.String(length=255), nullable=False),
        sa.Column('filename', sa.String(length=255), nullable=False),
        sa.Column('declared_media_type', sa.String(length=255), nullable=False),
        sa.Column('detected_media_type', sa.String(length=255), nullable=False),
        sa.Column('size', sa.BigInteger(), nullable=False),
        sa.Column('sha256', sa.String(length=64), nullable=False),
        sa.Column('etag', sa.String(length=128), nullable=False),
        sa.Column('created_by', sa.String(length=32), nullable=False),
        sa.Column('created_at', storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column('published_at', storage.types.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(['created_by'], ['users.id'], ),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('object_key'),
    )
    with op.batch_alter_table('unit_assets', schema=None) as batch_op:
        batch_op.create_index('ix_unit_assets_unit', ['unit_id', 'created_at', 'id'],
                              unique=False)
        batch_op.create_index('ix_unit_assets_worktree',
                              ['worktree_id', 'unit_id', 'created_at', 'id'], unique=False)
    op.create_table(
        'unit_asset_uploads',
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('operation_id', sa.String(length=32), nullable=False),
        sa.Column('asset_id', sa.String(length=32), nullable=False),
        sa.Column('object_key', sa.String(length=255), nullable=False),
        sa.Column('unit_id', sa.String(length=32), nullable=False),
        sa.Column('worktree_id', sa.String(length=32), nullable=True),
        sa.Column('actor_id', sa.String(length=32), nullable=False),
        sa.Column('filename', sa.String(length=255), nullable=False),
        sa.Column('declared_media_type', sa.String(length=255), nullable=False),
        sa.Column('detected_media_type', sa.String(length=255), nullable=True),
        sa.Column('expected_size', sa.BigInteger(), nullable=False),
        sa.Column('received_size', sa.BigInteger(), nullable=True),
        sa.Column('sha256', sa.String(length=64), nullable=True),
        sa.Column('etag', sa.String(length=128), nullable=True),
        sa.Column('state', sa.String(length=16), nullable=False),
        sa.Column('created_at', storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column('updated_at', storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column('expires_at', storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.CheckConstraint("state = 'receiving' OR (received_size = expected_size AND "
                           "sha256 IS NOT NULL AND etag IS NOT NULL)",
                           name='ck_asset_uploads_stored_complete'),
        sa.ForeignKeyConstraint(['actor_id'], ['users.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('asset_id'),
        sa.UniqueConstraint('object_key'),
        sa.UniqueConstraint('operation_id'),
    )
    with op.batch_alter_table('unit_asset_uploads', schema=None) as batch_op:
        batch_op.create_index('ix_asset_uploads_expiry', ['state', 'expires_at', 'id'],
                              unique=False)


def downgrade() -> None:
    with op.batch_alter_table('unit_asset_uploads', schema=None) as batch_op:
        batch_op.drop_index('ix_asset_uploads_expiry')
    op.drop_table('unit_asset_uploads')
    with op.batch_alter_table('unit_assets', schema=None) as batch_op:
        batch_op.drop_index('ix_unit_assets_worktree')
        batch_op.drop_index('ix_unit_assets_unit')
    op.drop_table('unit_assets')
