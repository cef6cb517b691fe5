"""dashboard indexes: the open operations by attempts (most retried) and the failing
deletion jobs by age, so that every dashboard panel is an index range, whatever the backlog

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-03 15:10:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None

OPEN = sa.text("status IN ('pending', 'running')")
FAILING = sa.text("attempts > 0")


def upgrade() -> None:
    with op.batch_alter_table('operations', schema=None) as batch_op:
        batch_op.create_index('ix_operations_retried', ['attempts'], unique=False,
                              postgresql_where=OPEN, sqlite_where=OPEN)
    with op.batch_alter_table('object_deletion_jobs', schema=None) as batch_op:
        batch_op.create_index('ix_deletion_jobs_failing', ['created_at'], unique=False,
                              postgresql_where=FAILING, sqlite_where=FAILING)


def downgrade() -> None:
    with op.batch_alter_table('object_deletion_jobs', schema=None) as batch_op:
        batch_op.drop_index('ix_deletion_jobs_failing')
    with op.batch_alter_table('operations', schema=None) as batch_op:
        batch_op.drop_index('ix_operations_retried')
