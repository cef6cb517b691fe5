"""protected ranges: content permission objects and their collaborators (issue 42)

The protected target of an object is bound to its id inside the unit's document
(``/protection/{id}``, in the unit store), not here.

Revision ID: 0034
Revises: 0033
Create Date: 2026-12-07 14:30:00
"""
from alembic import op
import sqlalchemy as sa
import storage.types


revision = '0034'
down_revision = '0033'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('content_permission_objects',
    sa.Column('id', sa.String(length=32), nullable=False),
    sa.Column('unit_id', sa.String(length=32), nullable=False),
    sa.Column('resource_id', sa.String(length=32), nullable=False),
    sa.Column('object_type', sa.String(length=64), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('creator_id', sa.String(length=32), nullable=False),
    sa.Column('read_scope', sa.String(length=32), nullable=False),
    sa.Column('edit_scope', sa.String(length=32), nullable=False),
    sa.Column('strategies', sa.JSON(), nullable=False),
    sa.Column('created_at', storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['creator_id'], ['users.id'], ),
    sa.ForeignKeyConstraint(['resource_id'], ['resources.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('content_permission_objects', schema=None) as batch_op:
        batch_op.create_index('ix_content_permission_objects_unit',
                              ['unit_id', 'created_at', 'id'], unique=False)
        batch_op.create_index(batch_op.f('ix_content_permission_objects_resource_id'),
                              ['resource_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_content_permission_objects_creator_id'),
                              ['creator_id'], unique=False)
    op.create_table('content_permission_collaborators',
    sa.Column('object_id', sa.String(length=32), nullable=False),
    sa.Column('user_id', sa.String(length=32), nullable=False),
    sa.Column('role', sa.String(length=16), nullable=False),
    sa.Column('created_at', storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['object_id'], ['content_permission_objects.id'],
                            ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('object_id', 'user_id')
    )
    with op.batch_alter_table('content_permission_collaborators', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_content_permission_collaborators_user_id'),
                              ['user_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('content_permission_collaborators', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_content_permission_collaborators_user_id'))
    op.drop_table('content_permission_collaborators')
    with op.batch_alter_table('content_permission_objects', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_content_permission_objects_creator_id'))
        batch_op.drop_index(batch_op.f('ix_content_permission_objects_resource_id'))
        batch_op.drop_index('ix_content_permission_objects_unit')
    op.drop_table('content_permission_objects')
