"""replies are read once: each reply's Message-ID, its player, outcome and answer

Revision ID: b7e3d1a9c2f4
Revises: 13a4a892dc97
Create Date: 2026-12-01 07:15:00.000000

"""
import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = 'b7e3d1a9c2f4'
down_revision = '13a4a892dc97'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'inbound_replies',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('message_id', sa.String(length=255), nullable=False),
        sa.Column('player_id', sa.Integer(), nullable=False),
        sa.Column('outcome', sa.String(length=16), nullable=False),
        sa.Column('reason', sa.String(length=255), nullable=True),
        sa.Column('answered', sa.Boolean(), nullable=False),
        sa.Column('received_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['player_id'], ['players.id'], name=op.f('fk_inbound_replies_player_id_players'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_inbound_replies')),
        sa.UniqueConstraint('message_id', name=op.f('uq_inbound_replies_message_id')),
    )
    with op.batch_alter_table('inbound_replies', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_inbound_replies_player_id_received_at'), ['player_id', 'received_at'], unique=False)


def downgrade():
    with op.batch_alter_table('inbound_replies', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_inbound_replies_player_id_received_at'))
    op.drop_table('inbound_replies')
