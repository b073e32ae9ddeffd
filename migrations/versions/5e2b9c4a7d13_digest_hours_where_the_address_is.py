"""digest hours are read in the address's time zone: move the hours chosen as UTC there

Revision ID: 5e2b9c4a7d13
Revises: b745c285fdb3
Create Date: 2026-12-04 23:59:00.000000

An address that chose 8 when the page said UTC, and whose time zone is known,
keeps getting its digest at the same moment: 8 UTC becomes 4 in New York (in
summer). A zone whose offset is not whole hours rounds up, never earlier than
the hour chosen (8 UTC is 13:30 in Kolkata: 14). Addresses without a zone read
their hour in UTC still, unchanged, as do those that never chose the digest
(their hour is the default, 8, wherever they are).

A stored zone name that is no IANA time zone (``localtime``, the server's own
zone; ``posixrules``, ``Factory``; the ``posix/`` and ``right/`` trees), which
the service no longer takes, is forgotten first: times are then in UTC until
the address's browser reports its zone again. The downgrade does not restore it.
"""
import math
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = '5e2b9c4a7d13'
down_revision = 'b745c285fdb3'
branch_labels = None
depends_on = None

settings = sa.table(
    'address_settings',
    sa.column('email', sa.String),
    sa.column('digest_hour', sa.Integer),
    sa.column('time_zone', sa.String),
    sa.column('email_policy', sa.String),
)
# Files of the zone tree that are no IANA time zone (service.addresses lists the same).
NOT_ZONES = {'localtime', 'posixrules', 'Factory'}
NOT_ZONE_TREES = ('posix/', 'right/')


def _offset_minutes(zone):
    """The zone's offset from UTC now, in minutes; None for a zone this machine lacks."""
    try:
        return datetime.now(ZoneInfo(zone)).utcoffset().total_seconds() // 60
    except (ZoneInfoNotFoundError, ValueError):
        return None


def _move_hours(to_local):
    connection = op.get_bind()
    rows = connection.execute(
        sa.select(settings.c.email, settings.c.digest_hour, settings.c.time_zone).where(
            settings.c.time_zone.is_not(None), settings.c.email_policy == 'digest'
        )
    ).all()
    for email, hour, zone in rows:
        offset = _offset_minutes(zone)
        if offset is None:
            continue
        minutes = hour * 60 + (offset if to_local else -offset)
        moved = math.ceil(minutes / 60) if to_local else math.floor(minutes / 60)
        connection.execute(
            settings.update().where(settings.c.email == email).values(digest_hour=moved % 24)
        )


def _forget_what_is_no_zone():
    connection = op.get_bind()
    zones = {
        name
        for name in available_timezones()
        if name not in NOT_ZONES and not name.startswith(NOT_ZONE_TREES)
    }
    if not zones:
        # A machine without the zone files (no tzdata) knows no zone at all: every name
        # stored would be forgotten, for good. They stay, read in UTC until the files are
        # installed, as the service reads a name it does not know.
        return
    stored = connection.scalars(
        sa.select(settings.c.time_zone).where(settings.c.time_zone.is_not(None)).distinct()
    ).all()
    for name in stored:
        if name not in zones:
            connection.execute(
                settings.update().where(settings.c.time_zone == name).values(time_zone=None)
            )


def upgrade():
    _forget_what_is_no_zone()
    _move_hours(to_local=True)


def downgrade():
    _move_hours(to_local=False)
