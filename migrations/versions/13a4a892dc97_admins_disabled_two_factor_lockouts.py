"""admins may be disabled, use two-factor sign-in and have lockouts lifted

Revision ID: 13a4a892dc97
Revises: 7c2e5a91d0b4
Create Date: 2026-12-01 06:58:04.624666

"""
import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = '13a4a892dc97'
down_revision = '7c2e5a91d0b4'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('admin_recovery_codes',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('admin_id', sa.Integer(), nullable=False),
    sa.Column('code_hash', sa.String(length=64), nullable=False),
    sa.Column('used_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['admin_id'], ['admin_users.id'], name=op.f('fk_admin_recovery_codes_admin_id_admin_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_admin_recovery_codes'))
    )
    with op.batch_alter_table('admin_recovery_codes', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_admin_recovery_codes_admin_id'), ['admin_id'], unique=False)

    with op.batch_alter_table('admin_users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('disabled_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('lockout_key', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('totp_secret', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('totp_enabled_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('totp_last_step', sa.Integer(), nullable=True))


def downgrade():
    with op.batch_alter_table('admin_users', schema=None) as batch_op:
        batch_op.drop_column('totp_last_step')
        batch_op.drop_column('totp_enabled_at')
        batch_op.drop_column('totp_secret')
        batch_op.drop_column('lockout_key')
        batch_op.drop_column('disabled_at')

    with op.batch_alter_table('admin_recovery_codes', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_admin_recovery_codes_admin_id'))

    op.drop_table('admin_recovery_codes')
