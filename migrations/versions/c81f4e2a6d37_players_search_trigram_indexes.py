"""players search trigram indexes: the admin games search served by an index on PostgreSQL

Revision ID: c81f4e2a6d37
Revises: a3f0c6e1d9b2
Create Date: 2026-12-01 10:30:00.000000

"""
from alembic import op

# revision identifiers, used by Alembic.
revision = 'c81f4e2a6d37'
down_revision = 'a3f0c6e1d9b2'
branch_labels = None
depends_on = None

INDEXES = {
    'ix_players_lower_email_trgm': 'lower(email)',
    'ix_players_lower_name_trgm': 'lower(name)',
}


def upgrade():
    # SQLite has no trigram index: its search reads the table, as before.
    if op.get_bind().dialect.name != 'postgresql':
        return
    # pg_trgm is a trusted extension (PostgreSQL 13+): the database's owner may create it.
    op.execute('CREATE EXTENSION IF NOT EXISTS pg_trgm')
    for name, expression in INDEXES.items():
        op.execute(f'CREATE INDEX {name} ON players USING gin ({expression} gin_trgm_ops)')


def downgrade():
    if op.get_bind().dialect.name != 'postgresql':
        return
    # The extension stays: something else in the database may use it.
    for name in INDEXES:
        op.execute(f'DROP INDEX {name}')
