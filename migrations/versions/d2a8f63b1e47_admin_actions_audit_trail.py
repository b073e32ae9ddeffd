"""an audit trail of every admin action

Revision ID: d2a8f63b1e47
Revises: b7d41e0c9a22
Create Date: 2026-12-01 07:05:00.000000

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "d2a8f63b1e47"
down_revision = "b7d41e0c9a22"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "admin_actions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("admin", sa.String(length=80), nullable=False),
        sa.Column("action", sa.String(length=24), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=True),
        sa.Column("message_id", sa.Integer(), nullable=True),
        sa.Column("note", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
            name=op.f("fk_admin_actions_game_id_games"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["message_id"],
            ["outbox.id"],
            name=op.f("fk_admin_actions_message_id_outbox"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_admin_actions")),
    )
    with op.batch_alter_table("admin_actions", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_admin_actions_admin_id"), ["admin", "id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_admin_actions_game_id_id"), ["game_id", "id"], unique=False
        )


def downgrade():
    with op.batch_alter_table("admin_actions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_admin_actions_game_id_id"))
        batch_op.drop_index(batch_op.f("ix_admin_actions_admin_id"))
    op.drop_table("admin_actions")
