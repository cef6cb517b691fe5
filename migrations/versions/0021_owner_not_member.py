"""a space's owner is not its member: drop the membership rows of owners

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-06 02:50:00

An admin who inherited a team space (its owner's account was deleted) or a user whom
``wharf space-owner`` made its owner kept their ``space_members`` row: listed as a member
as well as the owner, a row the API can never remove (``owner_not_member``). Ownership
changes now drop it in the same transaction (``wharf.spaces.set_owner``); this removes the
rows left before.
"""
from alembic import op


revision = '0021'
down_revision = '0020'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute('DELETE FROM space_members WHERE EXISTS (SELECT 1 FROM spaces '
               'WHERE spaces.id = space_members.space_id '
               'AND spaces.owner_id = space_members.user_id)')


def downgrade() -> None:
    pass  # the rows were wrong; nothing to restore
