"""emails are written when sent: the outbox keeps what to write them from

Revision ID: 5e1b7d0c9a42
Revises: f19c3a7d5e80
Create Date: 2026-12-01 07:20:00.000000

"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

# revision identifiers, used by Alembic.
revision = '5e1b7d0c9a42'
down_revision = 'f19c3a7d5e80'
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), 'postgresql')


def upgrade():
    # The messages already queued were written when queued: params NULL, sent as they are.
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.add_column(sa.Column('params', JSON, nullable=True))
        batch_op.alter_column('subject', existing_type=sa.String(length=255), nullable=True)
        batch_op.alter_column('text_body', existing_type=sa.Text(), nullable=True)
        batch_op.alter_column('html_body', existing_type=sa.Text(), nullable=True)


def downgrade():
    # A message still to be written goes out empty rather than not at all.
    op.execute("UPDATE outbox SET subject = '' WHERE subject IS NULL")
    op.execute("UPDATE outbox SET text_body = '' WHERE text_body IS NULL")
    op.execute("UPDATE outbox SET html_body = '' WHERE html_body IS NULL")
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.alter_column('html_body', existing_type=sa.Text(), nullable=False)
        batch_op.alter_column('text_body', existing_type=sa.Text(), nullable=False)
        batch_op.alter_column('subject', existing_type=sa.String(length=255), nullable=False)
        batch_op.drop_column('params')
