"""the computer may play a seat: players have a computer level and may have no address

Revision ID: 3f1c9d2b7a10
Revises: 3d6d4bf8174b
Create Date: 2026-12-01 04:30:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "3f1c9d2b7a10"
down_revision = "3d6d4bf8174b"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("players", schema=None) as batch_op:
        batch_op.add_column(sa.Column("computer_level", sa.String(length=8), nullable=True))
        batch_op.alter_column("email", existing_type=sa.String(length=254), nullable=True)
        batch_op.create_index(
            "ix_players_computer_game_id",
            ["game_id"],
            unique=False,
            sqlite_where=sa.text("computer_level IS NOT NULL"),
            postgresql_where=sa.text("computer_level IS NOT NULL"),
        )
        batch_op.create_check_constraint(
            op.f("ck_players_person_or_computer"), "(email IS NULL) = (computer_level IS NOT NULL)"
        )

    # Every figure written so far is of a game between people: both columns stay empty.
    with op.batch_alter_table("game_figures", schema=None) as batch_op:
        batch_op.add_column(sa.Column("computer_seat", sa.String(length=8), nullable=True))
        batch_op.add_column(sa.Column("computer_level", sa.String(length=8), nullable=True))


def downgrade():
    with op.batch_alter_table("game_figures", schema=None) as batch_op:
        batch_op.drop_column("computer_level")
        batch_op.drop_column("computer_seat")

    with op.batch_alter_table("players", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_players_person_or_computer"), type_="check")
        batch_op.drop_index(
            "ix_players_computer_game_id",
            sqlite_where=sa.text("computer_level IS NOT NULL"),
            postgresql_where=sa.text("computer_level IS NOT NULL"),
        )

    # The older schema knows only people: the computer's seats keep an address no mail can
    # reach (the reserved .invalid domain), and nobody moves them any more.
    op.execute(
        "UPDATE players SET email = 'computer@splitmind.invalid' WHERE computer_level IS NOT NULL"
    )
    with op.batch_alter_table("players", schema=None) as batch_op:
        batch_op.alter_column("email", existing_type=sa.String(length=254), nullable=False)
        batch_op.drop_column("computer_level")
