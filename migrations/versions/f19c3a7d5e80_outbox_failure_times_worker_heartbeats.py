"""failed messages keep when they failed; mail workers leave a heartbeat

Revision ID: f19c3a7d5e80
Revises: d2a8f63b1e47
Create Date: 2026-12-01 07:20:00.000000

"""
import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = 'f19c3a7d5e80'
down_revision = 'd2a8f63b1e47'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'worker_heartbeats',
        sa.Column('host', sa.String(length=255), nullable=False),
        sa.Column('pid', sa.Integer(), nullable=False),
        sa.Column('beat_at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('host', name=op.f('pk_worker_heartbeats')),
    )
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.add_column(sa.Column('failed_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index(batch_op.f('ix_outbox_failed_at'), ['failed_at'], unique=False)
    # A message that failed before this revision counts as failed when its last attempt was due.
    op.execute("UPDATE outbox SET failed_at = next_attempt_at WHERE status = 'failed'")


def downgrade():
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_outbox_failed_at'))
        batch_op.drop_column('failed_at')
    op.drop_table('worker_heartbeats')
