"""history entries hold facts only: the engine's English leaves stored game states

Revision ID: 6986e22d124a
Revises: 644fc92f96ed
Create Date: 2026-12-01 01:27:55.095584

"""
from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB


# revision identifiers, used by Alembic.
revision = '6986e22d124a'
down_revision = '644fc92f96ed'
branch_labels = None
depends_on = None

GAMES = sa.table(
    'games',
    sa.column('id', sa.Integer),
    sa.column('state', sa.JSON().with_variant(JSONB(), 'postgresql')),
)
BATCH = 500


def _rewrite_history(change):
    """Store ``change(entry)`` for each history entry of every game, a batch of games at a time."""
    connection = op.get_bind()
    ids = connection.execute(sa.select(GAMES.c.id).order_by(GAMES.c.id)).scalars().all()
    for start in range(0, len(ids), BATCH):
        batch = ids[start:start + BATCH]
        rows = connection.execute(sa.select(GAMES.c.id, GAMES.c.state).where(GAMES.c.id.in_(batch)))
        for game_id, state in rows.all():
            history = [change(entry) for entry in state['history']]
            if history != state['history']:
                connection.execute(
                    GAMES.update().where(GAMES.c.id == game_id).values(state={**state, 'history': history})
                )


def _without_text(entry):
    return {key: value for key, value in entry.items() if key != 'text'}


def _engine_english(entry):
    """The sentence the engine wrote into an entry before this revision, from the entry's facts."""
    names = {'keeper': 'Keeper', 'shadow': 'Shadow'}
    winner = names[entry['winner']]
    loser = names['shadow' if entry['winner'] == 'keeper' else 'keeper']
    effect = entry['effect']
    if effect == 'steal' and entry['outcome'] == 'took':
        return f'Steal: {winner} took a trick from {loser}'
    if effect == 'steal':
        return f'Steal: {loser} had no trick to take'
    if effect == 'swap':
        count = int(entry['outcome'])
        return f"Swap: each gave {count} card{'s' if count > 1 else ''}" if count else 'Swap: no cards left to give'
    if effect == 'reset':
        return 'Reset: suit order cleared'
    if effect == 'none':
        return 'Two elixirs: no effect'
    return ''


def upgrade():
    # Pages, emails and the API put a trick into words from its facts when they show it;
    # the stored English was never read, and a replay of the game no longer writes it.
    _rewrite_history(_without_text)


def downgrade():
    _rewrite_history(lambda entry: {**entry, 'text': _engine_english(entry)})
