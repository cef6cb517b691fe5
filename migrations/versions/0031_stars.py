"""stars: a user's starred resources (issue 41 item 4)

Revision ID: 0031
Revises: 0030
Create Date: 2026-12-07 11:20:00
"""
from alembic import op
import sqlalchemy as sa
import storage.types


revision = '0031'
down_revision = '0030'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('stars',
    sa.Column('user_id', sa.String(length=32), nullable=False),
    sa.Column('resource_id', sa.String(length=32), nullable=False),
    sa.Column('created_at', storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['resource_id'], ['resources.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('user_id', 'resource_id')
    )
    with op.batch_alter_table('stars', schema=None) as batch_op:
        batch_op.create_index('ix_stars_user_time', ['user_id', 'created_at', 'resource_id'],
                              unique=False)
        batch_op.create_index(batch_op.f('ix_stars_resource_id'), ['resource_id'],
                              unique=False)


def downgrade() -> None:
    with op.batch_alter_table('stars', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_stars_resource_id'))
        batch_op.drop_index('ix_stars_user_time')
    op.drop_table('stars')
