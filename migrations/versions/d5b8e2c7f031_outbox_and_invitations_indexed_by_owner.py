"""outbox and invitations indexed by what they belong to: a player's emails, a game's invitation

Revision ID: d5b8e2c7f031
Revises: a6d3e9f12c48
Create Date: 2026-12-05 23:50:00.000000

A reply by email reads the emails sent to its player (to tell a quoted copy of
one from what the player wrote), and a game's pages and the new-game form ask
for the invitation of a game: without these indexes each read the whole table,
which only grows. The mail page's day filter reads ``created_at`` as it reads
``failed_at``.
"""
from alembic import op

# revision identifiers, used by Alembic.
revision = 'd5b8e2c7f031'
down_revision = 'a6d3e9f12c48'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.create_index('ix_outbox_player_id', ['player_id'], unique=False)
        batch_op.create_index('ix_outbox_created_at', ['created_at'], unique=False)
    with op.batch_alter_table('invitations', schema=None) as batch_op:
        batch_op.create_index('ix_invitations_game_id', ['game_id'], unique=False)


def downgrade():
    with op.batch_alter_table('invitations', schema=None) as batch_op:
        batch_op.drop_index('ix_invitations_game_id')
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_index('ix_outbox_created_at')
        batch_op.drop_index('ix_outbox_player_id')
