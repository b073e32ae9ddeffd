"""inbound replies indexed by when they were read: the sweep forgets the old ones

Revision ID: b08fb740feba
Revises: d5b8e2c7f031
Create Date: 2026-12-06 10:40:00.000000

Every sweep, once a minute, deletes the replies read more than thirty days
before; the only index on ``received_at`` led with ``player_id``, so each sweep
read the whole table, which holds a month of replies.
"""
from alembic import op

# revision identifiers, used by Alembic.
revision = 'b08fb740feba'
down_revision = 'd5b8e2c7f031'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('inbound_replies', schema=None) as batch_op:
        batch_op.create_index('ix_inbound_replies_received_at', ['received_at'], unique=False)


def downgrade():
    with op.batch_alter_table('inbound_replies', schema=None) as batch_op:
        batch_op.drop_index('ix_inbound_replies_received_at')
