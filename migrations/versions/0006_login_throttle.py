"""login throttle: fixed-window counters of login and registration attempts

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03 04:40:00
"""
from alembic import op
import sqlalchemy as sa
import storage.types


revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('auth_throttle',
    sa.Column('key', sa.String(length=200), nullable=False),
    sa.Column('window_start', storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('count', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('key')
    )
    with op.batch_alter_table('auth_throttle', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_auth_throttle_window_start'), ['window_start'],
                              unique=False)


def downgrade() -> None:
    with op.batch_alter_table('auth_throttle', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_auth_throttle_window_start'))
    op.drop_table('auth_throttle')
