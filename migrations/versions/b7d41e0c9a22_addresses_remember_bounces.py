"""addresses remember a permanent refusal of their mail (a bounce)

Revision ID: b7d41e0c9a22
Revises: b7e3d1a9c2f4
Create Date: 2026-12-01 07:10:00.000000

"""
import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = 'b7d41e0c9a22'
down_revision = 'b7e3d1a9c2f4'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('addresses', schema=None) as batch_op:
        batch_op.add_column(sa.Column('bounce_code', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('bounce_reply', sa.String(length=500), nullable=True))
        batch_op.add_column(sa.Column('bounced_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index(
            'ix_addresses_bounced_at',
            ['bounced_at'],
            unique=False,
            sqlite_where=sa.text('bounced_at IS NOT NULL'),
            postgresql_where=sa.text('bounced_at IS NOT NULL'),
        )


def downgrade():
    with op.batch_alter_table('addresses', schema=None) as batch_op:
        batch_op.drop_index(
            'ix_addresses_bounced_at',
            sqlite_where=sa.text('bounced_at IS NOT NULL'),
            postgresql_where=sa.text('bounced_at IS NOT NULL'),
        )
        batch_op.drop_column('bounced_at')
        batch_op.drop_column('bounce_reply')
        batch_op.drop_column('bounce_code')
