"""trace context: the submitting request's W3C traceparent on operations and outbox rows

A nullable ``trace_context`` (at most 55 characters: a version-00 ``traceparent``) on
``operations`` (every attempt's span is its child) and ``outbox`` (the relay sends the
message in that trace). NULL while tracing is off (docs/operations.md, "Tracing").

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-03 14:30:00
"""
from alembic import op
import sqlalchemy as sa

revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('operations') as batch:
        batch.add_column(sa.Column('trace_context', sa.String(length=55), nullable=True))
    with op.batch_alter_table('outbox') as batch:
        batch.add_column(sa.Column('trace_context', sa.String(length=55), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('outbox') as batch:
        batch.drop_column('trace_context')
    with op.batch_alter_table('operations') as batch:
        batch.drop_column('trace_context')
