"""a rematch's invitation keeps the game it follows

Revision ID: e8a2c6f04b19
Revises: b08fb740feba
Create Date: 2026-12-06 10:40:00.000000

Every answer to an invitation, and every reading of its page, named the game a
rematch follows by looking for the followed game's ``rematch`` event whose note
is the new game's id: no index finds an event by its note, so each read every
event of every game, a row a move. The invitation now keeps that game; this
fills it in for the rematches already asked for, from those events, once.
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "e8a2c6f04b19"
down_revision = "b08fb740feba"
branch_labels = None
depends_on = None

events = sa.table(
    "events",
    sa.column("id", sa.Integer),
    sa.column("game_id", sa.Integer),
    sa.column("kind", sa.String),
    sa.column("note", sa.Text),
)
invitations = sa.table(
    "invitations", sa.column("game_id", sa.Integer), sa.column("follows_game_id", sa.Integer)
)


def upgrade():
    with op.batch_alter_table("invitations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("follows_game_id", sa.Integer(), nullable=True))
        batch_op.create_index("ix_invitations_follows_game_id", ["follows_game_id"], unique=False)
        batch_op.create_foreign_key(
            "fk_invitations_follows_game_id_games", "games", ["follows_game_id"], ["id"]
        )
    connection = op.get_bind()
    # Each new game's latest rematch event, as the pages read it until now.
    followed = {}
    for game_id, note in connection.execute(
        sa.select(events.c.game_id, events.c.note)
        .where(events.c.kind == "rematch")
        .order_by(events.c.id)
    ):
        if note and note.isdigit():
            followed[int(note)] = game_id
    if followed:
        connection.execute(
            invitations.update()
            .where(invitations.c.game_id == sa.bindparam("new"))
            .values(follows_game_id=sa.bindparam("followed")),
            [{"new": new, "followed": old} for new, old in followed.items()],
        )


def downgrade():
    with op.batch_alter_table("invitations", schema=None) as batch_op:
        batch_op.drop_constraint("fk_invitations_follows_game_id_games", type_="foreignkey")
        batch_op.drop_index("ix_invitations_follows_game_id")
        batch_op.drop_column("follows_game_id")
