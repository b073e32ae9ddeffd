"""addresses keep their time zone, for the deadlines in their emails

Revision ID: 7c2e5a91d0b4
Revises: 2d904f10d7de
Create Date: 2026-12-01 05:45:00.000000

"""
import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = '7c2e5a91d0b4'
down_revision = '2d904f10d7de'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('address_settings', schema=None) as batch_op:
        batch_op.add_column(sa.Column('time_zone', sa.String(length=64), nullable=True))


def downgrade():
    with op.batch_alter_table('address_settings', schema=None) as batch_op:
        batch_op.drop_column('time_zone')
