"""queued emails that replace one another share a key, whatever their kind

Revision ID: 644fc92f96ed
Revises: 121060839a6b
Create Date: 2026-12-01 01:49:28.339833

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '644fc92f96ed'
down_revision = '121060839a6b'
branch_labels = None
depends_on = None

TURN_QUEUED = "kind = 'turn' AND status = 'queued'"


def upgrade():
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.add_column(sa.Column('replace_key', sa.String(length=48), nullable=True))

    # Turn emails were the one kind that replaces: each gets the key its kind and player make.
    op.execute(
        "UPDATE outbox SET replace_key = 'turn:' || CAST(player_id AS VARCHAR) "
        "WHERE kind = 'turn' AND player_id IS NOT NULL"
    )

    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_index('uq_outbox_queued_turn', sqlite_where=sa.text(TURN_QUEUED), postgresql_where=sa.text(TURN_QUEUED))
        batch_op.create_index('uq_outbox_queued_replace_key', ['replace_key'], unique=True, sqlite_where=sa.text("status = 'queued'"), postgresql_where=sa.text("status = 'queued'"))


def downgrade():
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_index('uq_outbox_queued_replace_key', sqlite_where=sa.text("status = 'queued'"), postgresql_where=sa.text("status = 'queued'"))
        batch_op.create_index('uq_outbox_queued_turn', ['player_id'], unique=True, sqlite_where=sa.text(TURN_QUEUED), postgresql_where=sa.text(TURN_QUEUED))
        batch_op.drop_column('replace_key')
