"""admins have a session key, in every session cookie, so that sessions can be ended

Revision ID: 6060eb26bc82
Revises: 83d3ce401245
Create Date: 2026-11-30 21:29:49.358593

"""
import secrets

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '6060eb26bc82'
down_revision = '83d3ce401245'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('admin_users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('session_key', sa.String(length=64), nullable=True))

    # Each admin gets a random key of their own; cookies from before carry none and are refused.
    admins = sa.table('admin_users', sa.column('id', sa.Integer), sa.column('session_key', sa.String))
    connection = op.get_bind()
    for (admin_id,) in connection.execute(sa.select(admins.c.id)).all():
        connection.execute(
            admins.update()
            .where(admins.c.id == admin_id)
            .values(session_key=secrets.token_urlsafe(32))
        )

    with op.batch_alter_table('admin_users', schema=None) as batch_op:
        batch_op.alter_column('session_key', existing_type=sa.String(length=64), nullable=False)


def downgrade():
    with op.batch_alter_table('admin_users', schema=None) as batch_op:
        batch_op.drop_column('session_key')
