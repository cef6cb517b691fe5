"""audit rows by actor: an account deletion walks its user's rows on an index

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-03 19:30:00

A plain ``CREATE INDEX``, inside the upgrade's one transaction like every revision (an
upgrade that fails changes nothing): on PostgreSQL writes to ``audit_logs`` wait while it
builds (8.7 s for 2 million rows on the development machine;
docs/operations.md, "Upgrades": or build it beforehand, concurrently).
"""
from alembic import op


revision = '0018'
down_revision = '0017'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # IF NOT EXISTS: an operator may have built it beforehand with CREATE INDEX CONCURRENTLY;
    # one such build that failed left an INVALID index, which is dropped and built again.
    if op.get_bind().dialect.name == 'postgresql':
        op.execute("DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_index i JOIN pg_class c "
                   "ON c.oid = i.indexrelid WHERE c.relname = 'ix_audit_actor' "
                   "AND c.relnamespace = current_schema()::regnamespace "
                   "AND NOT i.indisvalid) THEN DROP INDEX ix_audit_actor; END IF; END $$")
    op.execute('CREATE INDEX IF NOT EXISTS ix_audit_actor ON audit_logs (actor_id, id)')


def downgrade() -> None:
    op.execute('DROP INDEX IF EXISTS ix_audit_actor')
