"""playtest runs: stored simulation runs for the dashboard

Revision ID: 2d904f10d7de
Revises: 3f1c9d2b7a10
Create Date: 2026-12-01 04:27:42.212268

"""
from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

# revision identifiers, used by Alembic.
revision = '2d904f10d7de'
down_revision = '3f1c9d2b7a10'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('playtest_runs',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('keeper_level', sa.String(length=16), nullable=False),
    sa.Column('shadow_level', sa.String(length=16), nullable=False),
    sa.Column('variant', sa.String(length=200), nullable=False),
    sa.Column('games', sa.Integer(), nullable=False),
    sa.Column('keeper_wins', sa.Integer(), nullable=False),
    sa.Column('settings', sa.JSON().with_variant(postgresql.JSONB(), "postgresql"), nullable=False),
    sa.Column('figures', sa.JSON().with_variant(postgresql.JSONB(), "postgresql"), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_playtest_runs'))
    )
    with op.batch_alter_table('playtest_runs', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_playtest_runs_created_at'), ['created_at'], unique=False)


def downgrade():
    with op.batch_alter_table('playtest_runs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_playtest_runs_created_at'))

    op.drop_table('playtest_runs')
