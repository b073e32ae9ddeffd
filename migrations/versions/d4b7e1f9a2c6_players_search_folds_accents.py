"""players search folds accents: the admin games search finds Élodie by "elodie"

Revision ID: d4b7e1f9a2c6
Revises: e8a2c6f04b19
Create Date: 2026-12-06 12:30:00.000000

"""
from alembic import op

# revision identifiers, used by Alembic.
revision = 'd4b7e1f9a2c6'
down_revision = 'e8a2c6f04b19'
branch_labels = None
depends_on = None

# A name folded as the search folds it: lower case, without accents (unaccent's rules: é is
# e, ß is ss). Immutable, so an index may hold it; the dictionary named, as an index's
# function must not depend on the search path.
FOLD = """
CREATE FUNCTION splitmind_fold(text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
AS $$ SELECT lower(public.unaccent('public.unaccent'::regdictionary, $1)) $$
"""


def upgrade():
    # SQLite has no index of it: its connections are given the function (service.connections).
    if op.get_bind().dialect.name != 'postgresql':
        return
    # unaccent is a trusted extension (PostgreSQL 13+), as pg_trgm: the database's owner may
    # create it.
    op.execute('CREATE EXTENSION IF NOT EXISTS unaccent SCHEMA public')
    op.execute(FOLD)
    op.execute(
        'CREATE INDEX ix_players_folded_name_trgm ON players'
        ' USING gin (splitmind_fold(name) gin_trgm_ops)'
    )
    op.execute('DROP INDEX ix_players_lower_name_trgm')


def downgrade():
    if op.get_bind().dialect.name != 'postgresql':
        return
    op.execute(
        'CREATE INDEX ix_players_lower_name_trgm ON players USING gin (lower(name) gin_trgm_ops)'
    )
    op.execute('DROP INDEX ix_players_folded_name_trgm')
    # The extension stays: something else in the database may use it.
    op.execute('DROP FUNCTION splitmind_fold(text)')
