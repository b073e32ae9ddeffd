"""IMAP reply readers leave a heartbeat, whose age /metrics serves

Revision ID: 2d2315ff65da
Revises: d4b7e1f9a2c6
Create Date: 2026-12-07 01:22:51.239944

A reader the IMAP server refuses (a password changed, TLS failing, the server
down) only logs: each machine's reader writes when it last read its folder,
and a scrape reads the newest, from whichever process wrote it.
"""
import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = '2d2315ff65da'
down_revision = 'd4b7e1f9a2c6'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'imap_reader_heartbeats',
        sa.Column('host', sa.String(length=255), nullable=False),
        sa.Column('pid', sa.Integer(), nullable=False),
        sa.Column('beat_at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('host', name=op.f('pk_imap_reader_heartbeats')),
    )


def downgrade():
    op.drop_table('imap_reader_heartbeats')
