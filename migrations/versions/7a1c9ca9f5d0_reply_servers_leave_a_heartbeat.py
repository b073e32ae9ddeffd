"""LMTP (or SMTP) reply servers leave a heartbeat, whose age /metrics serves

Revision ID: 7a1c9ca9f5d0
Revises: 2d2315ff65da
Create Date: 2026-12-07 02:16:42.908439

A reply server that is down leaves the mail server queueing the replies
silently: each machine's server writes every few seconds that it listens,
and a scrape reads the newest, from whichever process wrote it.
"""
import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = '7a1c9ca9f5d0'
down_revision = '2d2315ff65da'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'inbound_server_heartbeats',
        sa.Column('host', sa.String(length=255), nullable=False),
        sa.Column('pid', sa.Integer(), nullable=False),
        sa.Column('beat_at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('host', name=op.f('pk_inbound_server_heartbeats')),
    )


def downgrade():
    op.drop_table('inbound_server_heartbeats')
