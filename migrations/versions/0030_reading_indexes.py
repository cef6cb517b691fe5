"""indexes for reading: disabled accounts (the operators' dashboard) and the audit trail
(issues 40 and 41)

Revision ID: 0030
Revises: 0029
Create Date: 2026-12-07 11:20:00

- ``ix_users_disabled``: the dashboard lists disabled accounts by name (partial: few rows).
- ``ix_audit_scope`` becomes (space_id, id): a space's trail is read newest first by id
  (ids are time-ordered); ``at`` alone never ordered a query.
- ``ix_audit_login_failed``: the failed logins against a user, for their own trail
  (partial: only ``session.login_failed`` rows).

Plain ``CREATE INDEX`` inside the upgrade's transaction, as 0018: on PostgreSQL writes to
``audit_logs`` wait while they build (docs/operations.md, "Upgrades").
"""
from alembic import op
import sqlalchemy as sa


revision = '0030'
down_revision = '0029'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index('ix_users_disabled', 'users', ['username_key'], unique=False,
                    postgresql_where=sa.text("status = 'disabled'"),
                    sqlite_where=sa.text("status = 'disabled'"))
    op.drop_index('ix_audit_scope', table_name='audit_logs')
    op.create_index('ix_audit_scope', 'audit_logs', ['space_id', 'id'], unique=False)
    op.create_index('ix_audit_login_failed', 'audit_logs', ['target_id', 'id'], unique=False,
                    postgresql_where=sa.text("action = 'session.login_failed'"),
                    sqlite_where=sa.text("action = 'session.login_failed'"))


def downgrade() -> None:
    op.drop_index('ix_audit_login_failed', table_name='audit_logs')
    op.drop_index('ix_audit_scope', table_name='audit_logs')
    op.create_index('ix_audit_scope', 'audit_logs', ['space_id', 'at'], unique=False)
    op.drop_index('ix_users_disabled', table_name='users')
