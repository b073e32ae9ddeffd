"""admins show their lockouts: when the latest one ends, and from which address

Revision ID: a3f0c6e1d9b2
Revises: 5e1b7d0c9a42
Create Date: 2026-12-01 10:20:00.000000

"""
import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = 'a3f0c6e1d9b2'
down_revision = '5e1b7d0c9a42'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('admin_users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('locked_until', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('locked_from', sa.String(length=64), nullable=True))


def downgrade():
    with op.batch_alter_table('admin_users', schema=None) as batch_op:
        batch_op.drop_column('locked_from')
        batch_op.drop_column('locked_until')
