"""games keep a digest of the public page's request that made them, to know it sent twice

Revision ID: b745c285fdb3
Revises: c81f4e2a6d37
Create Date: 2026-12-01 19:00:00.000000

"""
import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = 'b745c285fdb3'
down_revision = 'c81f4e2a6d37'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.add_column(sa.Column('request_key', sa.String(length=64), nullable=True))
        batch_op.create_index(batch_op.f('ix_games_request_key'), ['request_key'], unique=False)


def downgrade():
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_games_request_key'))
        batch_op.drop_column('request_key')
