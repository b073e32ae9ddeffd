"""invitations left open are found by age: a partial index for the sweep that ends them

Revision ID: a6d3e9f12c48
Revises: 8c1d5e3f9a27
Create Date: 2026-12-05 03:50:00.000000

The deadline sweep ends the invitations left unanswered for INVITATION_DAYS.
The index holds the open ones only (unconfirmed or invited), so the sweep's
read costs the invitations waiting, never those answered long ago.
"""
import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = 'a6d3e9f12c48'
down_revision = '8c1d5e3f9a27'
branch_labels = None
depends_on = None

OPEN = sa.text("status IN ('unconfirmed', 'invited')")


def upgrade():
    with op.batch_alter_table('invitations', schema=None) as batch_op:
        batch_op.create_index(
            'ix_invitations_open_updated_at',
            ['updated_at'],
            unique=False,
            sqlite_where=OPEN,
            postgresql_where=OPEN,
        )


def downgrade():
    with op.batch_alter_table('invitations', schema=None) as batch_op:
        batch_op.drop_index(
            'ix_invitations_open_updated_at', sqlite_where=OPEN, postgresql_where=OPEN
        )
