"""unit comments: threads anchored in trunk units, and their comments (wharf.comments)

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-07 02:30:00
"""
from alembic import op
import sqlalchemy as sa

import storage.types


revision = '0022'
down_revision = '0021'
branch_labels = None
depends_on = None

ID = sa.String(length=32)
TIME = storage.types.UTCDateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        'unit_comment_threads',
        sa.Column('id', ID, nullable=False),
        sa.Column('unit_id', ID, nullable=False),
        sa.Column('resource_id', ID, nullable=False),
        sa.Column('anchor', sa.JSON(), nullable=False),
        sa.Column('solved', sa.Boolean(), nullable=False),
        sa.Column('generation', sa.Integer(), nullable=False),
        sa.Column('created_at', TIME, nullable=False),
        sa.Column('updated_at', TIME, nullable=False),
        sa.Column('created_by', ID, nullable=False),
        sa.ForeignKeyConstraint(['resource_id'], ['resources.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['created_by'], ['users.id']),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_unit_comment_threads_unit', 'unit_comment_threads',
                    ['unit_id', 'created_at', 'id'], unique=False)
    op.create_index('ix_unit_comment_threads_resource_id', 'unit_comment_threads',
                    ['resource_id'], unique=False)
    op.create_index('ix_unit_comment_threads_created_by', 'unit_comment_threads',
                    ['created_by'], unique=False)
    op.create_table(
        'unit_comments',
        sa.Column('id', ID, nullable=False),
        sa.Column('thread_id', ID, nullable=False),
        sa.Column('unit_id', ID, nullable=False),
        sa.Column('author_id', ID, nullable=False),
        sa.Column('body', sa.Text(), nullable=False),
        sa.Column('generation', sa.Integer(), nullable=False),
        sa.Column('created_at', TIME, nullable=False),
        sa.Column('updated_at', TIME, nullable=False),
        sa.ForeignKeyConstraint(['thread_id'], ['unit_comment_threads.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['author_id'], ['users.id']),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_unit_comments_thread', 'unit_comments',
                    ['thread_id', 'created_at', 'id'], unique=False)
    op.create_index('ix_unit_comments_author_id', 'unit_comments', ['author_id'],
                    unique=False)


def downgrade() -> None:
    op.drop_index('ix_unit_comments_author_id', table_name='unit_comments')
    op.drop_index('ix_unit_comments_thread', table_name='unit_comments')
    op.drop_table('unit_comments')
    op.drop_index('ix_unit_comment_threads_created_by', table_name='unit_comment_threads')
    op.drop_index('ix_unit_comment_threads_resource_id', table_name='unit_comment_threads')
    op.drop_index('ix_unit_comment_threads_unit', table_name='unit_comment_threads')
    op.drop_table('unit_comment_threads')
