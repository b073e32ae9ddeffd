"""The public new-game form, in the visitor's language."""

from __future__ import annotations

from flask_babel import lazy_gettext as _l
from flask_wtf import FlaskForm
from wtforms import EmailField, IntegerField, RadioField, SelectChoice, StringField
from wtforms.validators import Email, InputRequired, Length, NumberRange, Optional

# The validators' messages come from the service's catalogue, like every other word on the page.
REQUIRED = _l("This field is required.")
NOT_AN_ADDRESS = _l("Invalid email address.")
TOO_LONG = _l("Field cannot be longer than %(max)d characters.")
OUT_OF_RANGE = _l("Number must be between %(min)s and %(max)s.")


class NewGameForm(FlaskForm):
    """Who plays, which role the creator takes, how long each move may take."""

    name = StringField(
        _l("Your name"),
        validators=[InputRequired(message=REQUIRED), Length(max=80, message=TOO_LONG)],
    )
    email = EmailField(
        _l("Your email"),
        validators=[
            InputRequired(message=REQUIRED),
            Email(message=NOT_AN_ADDRESS),
            Length(max=254, message=TOO_LONG),
        ],
    )
    opponent_name = StringField(
        _l("Your opponent's name"),
        validators=[InputRequired(message=REQUIRED), Length(max=80, message=TOO_LONG)],
    )
    opponent_email = EmailField(
        _l("Your opponent's email"),
        validators=[
            InputRequired(message=REQUIRED),
            Email(message=NOT_AN_ADDRESS),
            Length(max=254, message=TOO_LONG),
        ],
    )
    role = RadioField(
        _l("Your role"),
        choices=[
            SelectChoice("keeper", _l("Keeper")),
            SelectChoice("shadow", _l("Shadow")),
            SelectChoice("random", _l("Random")),
        ],
        default="random",
    )
    format = RadioField(
        _l("Play"),
        choices=[
            SelectChoice("single", _l("One game")),
            SelectChoice("match", _l("A return match (two games, roles swapped)")),
        ],
        default="single",
    )
    look = RadioField(
        _l("Cards"),
        choices=[
            SelectChoice("standard", _l("Standard deck")),
            SelectChoice("classic", _l("Classic colours")),
        ],
        default="standard",
    )
    days = IntegerField(
        _l("Days per move (empty for no deadline)"),
        default=7,
        validators=[Optional(), NumberRange(min=1, max=60, message=OUT_OF_RANGE)],
    )


class LinksForm(FlaskForm):
    """The address whose games' links to send again."""

    email = EmailField(
        _l("Your email"),
        validators=[
            InputRequired(message=REQUIRED),
            Email(message=NOT_AN_ADDRESS),
            Length(max=254, message=TOO_LONG),
        ],
    )
