"""operations claim index: due operations in claim order (created_at, id), pending/running only

The batched claim (``wharf.operations.executor``) takes the oldest due operations with
``ORDER BY created_at, id LIMIT n``; a partial index over the operations that can still be
due keeps that a short index scan however many completed operations the table holds.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03 09:30:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None

WHERE = sa.text("status IN ('pending', 'running')")


def upgrade() -> None:
    with op.batch_alter_table('operations', schema=None) as batch_op:
        batch_op.create_index('ix_operations_claim', ['created_at', 'id'], unique=False,
                              postgresql_where=WHERE, sqlite_where=WHERE)


def downgrade() -> None:
    with op.batch_alter_table('operations', schema=None) as batch_op:
        batch_op.drop_index('ix_operations_claim')
