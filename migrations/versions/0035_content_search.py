"""content search: extracted unit text and the units waiting to be indexed (issue 41 item 1)

``search_documents`` holds each trunk unit's text (the first 256 KiB); ``search_dirty``
the units changed since. PostgreSQL: a ``tsvector`` column (``to_tsvector('simple',
body)``, written by the indexer) under a GIN index. SQLite: an FTS5 table
``search_documents_fts`` (unicode61 tokenizer; external content over
``search_documents``, keyed by its integer id) kept in step by triggers. Every existing
unit is marked, so the indexer's drains (the ``index_content`` sweep) index them all.

Revision ID: 0035
Revises: 0034
Create Date: 2026-12-07 14:30:00
"""
from datetime import UTC, datetime

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
import storage.types


revision = '0035'
down_revision = '0034'
branch_labels = None
depends_on = None

SQLITE_UP = (
    "CREATE VIRTUAL TABLE search_documents_fts USING fts5(body, content='search_documents', "
    "content_rowid='id', tokenize='unicode61 remove_diacritics 2')",
    "CREATE TRIGGER search_documents_fts_insert AFTER INSERT ON search_documents BEGIN "
    "INSERT INTO search_documents_fts(rowid, body) VALUES (new.id, new.body); END",
    "CREATE TRIGGER search_documents_fts_delete AFTER DELETE ON search_documents BEGIN "
    "INSERT INTO search_documents_fts(search_documents_fts, rowid, body) "
    "VALUES ('delete', old.id, old.body); END",
    "CREATE TRIGGER search_documents_fts_update AFTER UPDATE OF body ON search_documents "
    "BEGIN INSERT INTO search_documents_fts(search_documents_fts, rowid, body) "
    "VALUES ('delete', old.id, old.body); "
    "INSERT INTO search_documents_fts(rowid, body) VALUES (new.id, new.body); END",
)
SQLITE_DOWN = (
    "DROP TRIGGER IF EXISTS search_documents_fts_update",
    "DROP TRIGGER IF EXISTS search_documents_fts_delete",
    "DROP TRIGGER IF EXISTS search_documents_fts_insert",
    "DROP TABLE IF EXISTS search_documents_fts",
)


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    op.create_table('search_documents',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True,
              nullable=False),
    sa.Column('unit_id', sa.String(length=32), nullable=False),
    sa.Column('resource_id', sa.String(length=32), nullable=False),
    sa.Column('revision', sa.Integer(), nullable=False),
    sa.Column('body', sa.Text(), nullable=False),
    sa.Column('tsv', sa.Text().with_variant(postgresql.TSVECTOR(), 'postgresql'), nullable=True),
    sa.Column('indexed_at', storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['resource_id'], ['resources.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('unit_id')
    )
    op.create_index('ix_search_documents_resource_id', 'search_documents', ['resource_id'])
    op.create_table('search_dirty',
    sa.Column('unit_id', sa.String(length=32), nullable=False),
    sa.Column('marked_at', storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('token', sa.String(length=32), nullable=False),
    sa.Column('marks', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('unit_id')
    )
    op.create_index('ix_search_dirty_marked', 'search_dirty', ['marked_at'])
    # Backfill: every existing unit is marked, so the indexer (its sweep) indexes them all.
    dirty = sa.table('search_dirty', sa.column('unit_id'),
                     sa.column('marked_at', storage.types.UTCDateTime()),
                     sa.column('token'), sa.column('marks'))
    units = sa.table('unit_resources', sa.column('unit_id'))
    op.execute(dirty.insert().from_select(
        ['unit_id', 'marked_at', 'token', 'marks'],
        sa.select(units.c.unit_id,
                  sa.literal(datetime.now(UTC), storage.types.UTCDateTime()),
                  units.c.unit_id, sa.literal(1))))
    if sqlite:
        for statement in SQLITE_UP:
            op.execute(statement)
    else:
        op.create_index('ix_search_documents_tsv', 'search_documents', ['tsv'],
                        postgresql_using='gin')


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for statement in SQLITE_DOWN:
            op.execute(statement)
    else:
        op.drop_index('ix_search_documents_tsv', table_name='search_documents')
    op.drop_index('ix_search_dirty_marked', table_name='search_dirty')
    op.drop_table('search_dirty')
    op.drop_index('ix_search_documents_resource_id', table_name='search_documents')
    op.drop_table('search_documents')
