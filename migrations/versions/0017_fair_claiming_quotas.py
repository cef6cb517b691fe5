"""fair claiming and quotas: operations' per-actor indexes, API tokens' own quotas

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-03 17:15:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0017'
down_revision = '0016'
branch_labels = None
depends_on = None

WHERE = sa.text("status IN ('pending', 'running')")


def upgrade() -> None:
    with op.batch_alter_table('api_tokens', schema=None) as batch_op:
        batch_op.add_column(sa.Column('quota_pending_operations', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('quota_submissions_per_minute', sa.Integer(),
                                      nullable=True))
    with op.batch_alter_table('operations', schema=None) as batch_op:
        batch_op.create_index('ix_operations_fair', ['kind', 'actor_id', 'created_at', 'id'],
                              unique=False, postgresql_where=WHERE, sqlite_where=WHERE)
        batch_op.create_index('ix_operations_open', ['actor_id'], unique=False,
                              postgresql_where=WHERE, sqlite_where=WHERE)


def downgrade() -> None:
    with op.batch_alter_table('operations', schema=None) as batch_op:
        batch_op.drop_index('ix_operations_open')
        batch_op.drop_index('ix_operations_fair')
    with op.batch_alter_table('api_tokens', schema=None) as batch_op:
        batch_op.drop_column('quota_submissions_per_minute')
        batch_op.drop_column('quota_pending_operations')
