"""fsck key order: on PostgreSQL, an index on each object-key column (and
unit_resources.unit_id) COLLATE "C", so wharf fsck's keyset pages (ORDER BY key
COLLATE "C" on a database whose default collation is not bytewise) are index scans

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-03 15:15:00
"""
from alembic import op

revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None

COLUMNS = (("blob_resources", "object_key"), ("blob_upload_sessions", "object_key"),
           ("unit_assets", "object_key"), ("unit_asset_uploads", "object_key"),
           ("object_deletion_jobs", "object_key"), ("unit_resources", "unit_id"))


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table, column in COLUMNS:
        op.execute(f'CREATE INDEX ix_{table}_{column}_c ON {table} ({column} COLLATE "C")')


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table, column in COLUMNS:
        op.execute(f'DROP INDEX ix_{table}_{column}_c')
