"""issues: the team-space issue tracker (wharf.issues)

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-03 17:00:00
"""
from alembic import op
import sqlalchemy as sa

import storage.types


revision = '0015'
down_revision = '0014'
branch_labels = None
depends_on = None

ID = sa.String(length=32)
TIME = storage.types.UTCDateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        'issue_counters',
        sa.Column('space_id', ID, nullable=False),
        sa.Column('last_number', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['space_id'], ['spaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('space_id'),
    )
    op.create_table(
        'issues',
        sa.Column('id', ID, nullable=False),
        sa.Column('space_id', ID, nullable=False),
        sa.Column('number', sa.Integer(), nullable=False),
        sa.Column('title', sa.String(length=256), nullable=False),
        sa.Column('title_key', sa.String(length=1024), nullable=False),
        sa.Column('body', sa.Text(), nullable=False),
        sa.Column('state', sa.String(length=16), nullable=False),
        sa.Column('state_reason', sa.String(length=16), nullable=True),
        sa.Column('author_user_id', ID, nullable=False),
        sa.Column('closed_by_user_id', ID, nullable=True),
        sa.Column('closed_at', TIME, nullable=True),
        sa.Column('created_at', TIME, nullable=False),
        sa.Column('updated_at', TIME, nullable=False),
        sa.Column('comment_count', sa.Integer(), nullable=False),
        sa.CheckConstraint(
            "(state = 'open' AND state_reason IS NULL) OR "
            "(state = 'closed' AND state_reason IS NOT NULL AND "
            "state_reason IN ('completed', 'not_planned'))",
            name='ck_issues_state_reason'),
        sa.ForeignKeyConstraint(['space_id'], ['spaces.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['author_user_id'], ['users.id']),
        sa.ForeignKeyConstraint(['closed_by_user_id'], ['users.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('space_id', 'number', name='uq_issues_space_number'),
    )
    op.create_index('ix_issues_space_state', 'issues', ['space_id', 'state', 'number'],
                    unique=False)
    op.create_index('ix_issues_author_user_id', 'issues', ['author_user_id'], unique=False)
    op.create_table(
        'issue_comments',
        sa.Column('id', ID, nullable=False),
        sa.Column('issue_id', ID, nullable=False),
        sa.Column('author_user_id', ID, nullable=False),
        sa.Column('body', sa.Text(), nullable=False),
        sa.Column('created_at', TIME, nullable=False),
        sa.Column('updated_at', TIME, nullable=False),
        sa.ForeignKeyConstraint(['issue_id'], ['issues.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['author_user_id'], ['users.id']),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_issue_comments_timeline', 'issue_comments',
                    ['issue_id', 'created_at', 'id'], unique=False)
    op.create_table(
        'issue_events',
        sa.Column('id', ID, nullable=False),
        sa.Column('issue_id', ID, nullable=False),
        sa.Column('kind', sa.String(length=32), nullable=False),
        sa.Column('actor_user_id', ID, nullable=True),
        sa.Column('payload', sa.JSON(), nullable=False),
        sa.Column('created_at', TIME, nullable=False),
        sa.ForeignKeyConstraint(['issue_id'], ['issues.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['actor_user_id'], ['users.id']),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_issue_events_timeline', 'issue_events',
                    ['issue_id', 'created_at', 'id'], unique=False)
    op.create_table(
        'issue_labels',
        sa.Column('id', ID, nullable=False),
        sa.Column('space_id', ID, nullable=False),
        sa.Column('name', sa.String(length=50), nullable=False),
        sa.Column('name_key', sa.String(length=200), nullable=False),
        sa.Column('color', sa.String(length=16), nullable=False),
        sa.Column('created_at', TIME, nullable=False),
        sa.Column('updated_at', TIME, nullable=False),
        sa.ForeignKeyConstraint(['space_id'], ['spaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('space_id', 'name_key', name='uq_issue_labels_name'),
    )
    op.create_table(
        'issue_label_links',
        sa.Column('issue_id', ID, nullable=False),
        sa.Column('label_id', ID, nullable=False),
        sa.Column('created_at', TIME, nullable=False),
        sa.ForeignKeyConstraint(['issue_id'], ['issues.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['label_id'], ['issue_labels.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('issue_id', 'label_id'),
    )
    op.create_index('ix_issue_label_links_label_id', 'issue_label_links', ['label_id'],
                    unique=False)
    op.create_table(
        'issue_assignees',
        sa.Column('issue_id', ID, nullable=False),
        sa.Column('user_id', ID, nullable=False),
        sa.Column('created_at', TIME, nullable=False),
        sa.ForeignKeyConstraint(['issue_id'], ['issues.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('issue_id', 'user_id'),
    )
    op.create_index('ix_issue_assignees_user_id', 'issue_assignees', ['user_id'],
                    unique=False)
    op.create_table(
        'issue_node_refs',
        sa.Column('issue_id', ID, nullable=False),
        sa.Column('node_id', ID, nullable=False),
        sa.Column('created_at', TIME, nullable=False),
        sa.Column('name', sa.String(length=255), nullable=False),
        sa.ForeignKeyConstraint(['issue_id'], ['issues.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['node_id'], ['nodes.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('issue_id', 'node_id'),
    )
    op.create_index('ix_issue_node_refs_node_id', 'issue_node_refs', ['node_id'],
                    unique=False)


def downgrade() -> None:
    op.drop_index('ix_issue_node_refs_node_id', table_name='issue_node_refs')
    op.drop_table('issue_node_refs')
    op.drop_index('ix_issue_assignees_user_id', table_name='issue_assignees')
    op.drop_table('issue_assignees')
    op.drop_index('ix_issue_label_links_label_id', table_name='issue_label_links')
    op.drop_table('issue_label_links')
    op.drop_table('issue_labels')
    op.drop_index('ix_issue_events_timeline', table_name='issue_events')
    op.drop_table('issue_events')
    op.drop_index('ix_issue_comments_timeline', table_name='issue_comments')
    op.drop_table('issue_comments')
    op.drop_index('ix_issues_author_user_id', table_name='issues')
    op.drop_index('ix_issues_space_state', table_name='issues')
    op.drop_table('issues')
    op.drop_table('issue_counters')
