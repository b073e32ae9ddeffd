"""every address that holds a seat or an invitation has a random home key

Revision ID: 8c1d5e3f9a27
Revises: 5e2b9c4a7d13
Create Date: 2026-12-05 00:10:00.000000

A home link signed an address and an empty key until the address first
replaced it, so whoever held the secret key could sign any address's home link
and open its games. Every address now gets a random key when it takes a seat;
this gives one to every address already playing or invited. Home links sent
before it stop working (each new email, and the move page, carries the new
one); the downgrade gives no key back, as an empty key was never a secret.
"""
import secrets

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = '8c1d5e3f9a27'
down_revision = '5e2b9c4a7d13'
branch_labels = None
depends_on = None

settings = sa.table(
    'address_settings',
    sa.column('email', sa.String),
    sa.column('home_key', sa.String),
    sa.column('email_policy', sa.String),
    sa.column('digest_hour', sa.Integer),
    sa.column('vacation_days_used', sa.Integer),
)
# What an address that chose nothing has (the models' defaults when this was written).
DEFAULTS = {'email_policy': 'every_move', 'digest_hour': 8, 'vacation_days_used': 0}
players = sa.table('players', sa.column('email', sa.String))
invitations = sa.table(
    'invitations', sa.column('creator_email', sa.String), sa.column('opponent_email', sa.String)
)


def upgrade():
    connection = op.get_bind()
    addresses = set(
        connection.scalars(sa.select(players.c.email).where(players.c.email.is_not(None)))
    )
    for pair in connection.execute(
        sa.select(invitations.c.creator_email, invitations.c.opponent_email)
    ):
        addresses.update(pair)
    keyed = dict(connection.execute(sa.select(settings.c.email, settings.c.home_key)).all())
    # Many rows in a few statements (a multi-row insert, a pipelined update), not one each.
    new = [
        {"email": email, "home_key": secrets.token_urlsafe(32), **DEFAULTS}
        for email in sorted(addresses - set(keyed))
    ]
    if new:
        connection.execute(settings.insert(), new)
    keyless = [
        {"address": email, "key": secrets.token_urlsafe(32)}
        for email, key in keyed.items()
        if not key
    ]
    if keyless:
        connection.execute(
            settings.update()
            .where(settings.c.email == sa.bindparam("address"))
            .values(home_key=sa.bindparam("key")),
            keyless,
        )


def downgrade():
    pass
