"""outbox kinds are named as their templates, one name per email

Revision ID: 121060839a6b
Revises: 6060eb26bc82
Create Date: 2026-12-01 01:01:05.912497

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '121060839a6b'
down_revision = '6060eb26bc82'
branch_labels = None
depends_on = None

# The kinds whose name was not their templates' name: (before, now).
RENAMED = (
    ('over', 'game_over'),
    ('round', 'round_end'),
    ('ended', 'game_ended'),
    ('links', 'your_games'),
)

outbox = sa.table('outbox', sa.column('kind', sa.String))


def upgrade():
    for before, now in RENAMED:
        op.execute(outbox.update().where(outbox.c.kind == before).values(kind=now))


def downgrade():
    for before, now in RENAMED:
        op.execute(outbox.update().where(outbox.c.kind == now).values(kind=before))
