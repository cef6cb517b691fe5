"""name search: a trigram index over node names (issue 41 item 1)

PostgreSQL: the ``pg_trgm`` extension and a GIN index on ``lower(name)`` (it serves
``lower(name) LIKE '%q%'`` and ``LIKE 'q%'``). SQLite: an FTS5 table with the ``trigram``
tokenizer over ``nodes.name`` (external content: it stores the index only, keyed by the
nodes' rowid), kept in step by triggers on insert, delete and rename, filled once here.

A later SQLite migration that rebuilds ``nodes`` (batch mode: copy, drop, rename) drops
these triggers and renumbers rowids: it must create them again and run the ``rebuild``
command (see ``docs/search.md``).

Revision ID: 0033
Revises: 0032
Create Date: 2026-12-07 12:00:00
"""
from alembic import op


revision = '0033'
down_revision = '0032'
branch_labels = None
depends_on = None

SQLITE_UP = (
    "CREATE VIRTUAL TABLE node_name_fts USING fts5(name, content='nodes', "
    "content_rowid='rowid', tokenize='trigram')",
    "CREATE TRIGGER node_name_fts_insert AFTER INSERT ON nodes BEGIN "
    "INSERT INTO node_name_fts(rowid, name) VALUES (new.rowid, new.name); END",
    "CREATE TRIGGER node_name_fts_delete AFTER DELETE ON nodes BEGIN "
    "INSERT INTO node_name_fts(node_name_fts, rowid, name) "
    "VALUES ('delete', old.rowid, old.name); END",
    "CREATE TRIGGER node_name_fts_rename AFTER UPDATE OF name ON nodes BEGIN "
    "INSERT INTO node_name_fts(node_name_fts, rowid, name) "
    "VALUES ('delete', old.rowid, old.name); "
    "INSERT INTO node_name_fts(rowid, name) VALUES (new.rowid, new.name); END",
    "INSERT INTO node_name_fts(node_name_fts) VALUES ('rebuild')",
)
SQLITE_DOWN = (
    "DROP TRIGGER IF EXISTS node_name_fts_rename",
    "DROP TRIGGER IF EXISTS node_name_fts_delete",
    "DROP TRIGGER IF EXISTS node_name_fts_insert",
    "DROP TABLE IF EXISTS node_name_fts",
)
POSTGRES_UP = (
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE INDEX IF NOT EXISTS ix_nodes_name_trgm ON nodes "
    "USING gin (lower(name) gin_trgm_ops)",
)
# The extension stays: other databases objects may use it, and dropping it needs ownership.
POSTGRES_DOWN = ("DROP INDEX IF EXISTS ix_nodes_name_trgm",)


def _run(statements: tuple[str, ...]) -> None:
    for statement in statements:
        op.execute(statement)


def upgrade() -> None:
    _run(SQLITE_UP if op.get_bind().dialect.name == "sqlite" else POSTGRES_UP)


def downgrade() -> None:
    _run(SQLITE_DOWN if op.get_bind().dialect.name == "sqlite" else POSTGRES_DOWN)
