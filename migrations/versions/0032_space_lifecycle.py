"""space lifecycle: description, names up to 128, archived_at (issue 41 item 2)

Revision ID: 0032
Revises: 0031
Create Date: 2026-12-07 11:55:00
"""
from alembic import op
import sqlalchemy as sa
import storage.types


revision = '0032'
down_revision = '0031'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('spaces', schema=None) as batch_op:
        batch_op.add_column(sa.Column('description', sa.Text(), server_default=sa.text("''"),
                                      nullable=False))
        batch_op.add_column(sa.Column('archived_at', storage.types.UTCDateTime(timezone=True),
                                      nullable=True))
        batch_op.alter_column('name', existing_type=sa.String(length=100),
                              type_=sa.String(length=128), existing_nullable=False)


def downgrade() -> None:
    with op.batch_alter_table('spaces', schema=None) as batch_op:
        batch_op.alter_column('name', existing_type=sa.String(length=128),
                              type_=sa.String(length=100), existing_nullable=False)
        batch_op.drop_column('archived_at')
        batch_op.drop_column('description')
