"""addresses keep their home settings (link key, emails, language, vacation); pages their presence

Revision ID: 3d6d4bf8174b
Revises: 6986e22d124a
Create Date: 2026-12-01 04:28:25.095401

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '3d6d4bf8174b'
down_revision = '6986e22d124a'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('address_settings',
    sa.Column('email', sa.String(length=254), nullable=False),
    sa.Column('home_key', sa.String(length=64), nullable=True),
    sa.Column('email_policy', sa.String(length=16), nullable=False),
    sa.Column('digest_hour', sa.Integer(), nullable=False),
    sa.Column('last_digest_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('language', sa.String(length=8), nullable=True),
    sa.Column('vacation_until', sa.DateTime(timezone=True), nullable=True),
    sa.Column('vacation_year', sa.Integer(), nullable=True),
    sa.Column('vacation_days_used', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('email', name=op.f('pk_address_settings'))
    )
    with op.batch_alter_table('address_settings', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_address_settings_email_policy_digest_hour'), ['email_policy', 'digest_hour'], unique=False)

    with op.batch_alter_table('players', schema=None) as batch_op:
        batch_op.add_column(sa.Column('seen_at', sa.DateTime(timezone=True), nullable=True))



def downgrade():
    with op.batch_alter_table('players', schema=None) as batch_op:
        batch_op.drop_column('seen_at')

    with op.batch_alter_table('address_settings', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_address_settings_email_policy_digest_hour'))

    op.drop_table('address_settings')
