"""The public new-game form, in the visitor's language."""

from __future__ import annotations

from flask_babel import LazyString
from flask_wtf import FlaskForm
from wtforms import EmailField, Field, RadioField, SelectChoice, StringField
from wtforms.validators import (
    InputRequired,
    Length,
    Optional,
    StopValidation,
    ValidationError,
)

from .. import games
from ..fields import WholeNumberField
from ..game_text import LEVEL_NAMES
from ..language import gettext
from ..language import lazy_gettext as _l
from ..models import EMAIL_LENGTH, NAME_LENGTH

# The validators' messages come from the service's catalogue, like every other word on the page.
REQUIRED = _l("This field is required.")
NOT_AN_ADDRESS = _l("Invalid email address.")
TOO_LONG = _l("Field cannot be longer than %(max)d characters.")
# What a form refused for its CSRF token alone says, shown again as it was filled in
# (service.extensions.limited_form).
FORM_REFILLED = _l(
    "This form could not be checked, as it was open a long time: here it is as you filled "
    "it in. Send it again."
)


def refilled(form: FlaskForm) -> str | None:
    """:data:`FORM_REFILLED` for a form posted with a token it refused; ``None`` otherwise."""
    return str(FORM_REFILLED) if "csrf_token" in form.errors else None


def mailable(form: FlaskForm, field: Field) -> None:
    """Accept what the service accepts (:func:`service.games.clean_email`), saying why not.

    An address with characters beyond ASCII before the @ (an accent, another
    script, a wide letter that looks like a plain one) is named as such: the
    visitor may not see what is wrong with it. An address already found too long
    is not checked again: the length check comes first, and is cheap.
    """
    if field.errors:
        return
    try:
        games.clean_email(field.data or "")
    except games.InvalidGame:
        local = (field.data or "").rpartition("@")[0]
        if local.isascii():
            raise ValidationError(str(NOT_AN_ADDRESS)) from None
        unusual = ", ".join(dict.fromkeys(ch for ch in local if not ch.isascii()))
        raise ValidationError(
            gettext(
                "Before the @ this address has characters that mail servers need not accept "
                "(%(characters)s): use one with only unaccented letters, digits and punctuation.",
                characters=unusual,
            )
        ) from None


def named(form: FlaskForm, field: Field) -> None:
    """Require a name that something is left of once cleaned (:func:`service.games.clean_name`):
    spaces and invisible characters alone would leave the player no name to play under."""
    if not games.clean_name(field.data or "", ""):
        raise StopValidation(str(REQUIRED))


def address_field(label: LazyString, validators: tuple[object, ...] = ()) -> EmailField:
    """An email address field: required, one the service can mail, not too long."""
    return EmailField(
        label,
        validators=[
            *validators,
            InputRequired(message=REQUIRED),
            Length(max=EMAIL_LENGTH, message=TOO_LONG),
            mailable,
        ],
    )


def against_a_person(form: FlaskForm, field: Field) -> None:
    """Check the opponent's fields only when the opponent is a person: the computer has none."""
    if form.opponent.data == "computer":
        raise StopValidation()


class NewGameForm(FlaskForm):
    """Who plays, which role the creator takes, how long each move may take."""

    name = StringField(
        _l("Your name"),
        validators=[
            InputRequired(message=REQUIRED),
            named,
            Length(max=NAME_LENGTH, message=TOO_LONG),
        ],
    )
    email = address_field(_l("Your email"))
    opponent = RadioField(
        _l("Play against"),
        choices=[
            SelectChoice("person", _l("A person, invited by email")),
            SelectChoice("computer", _l("The computer")),
        ],
        default="person",
    )
    level = RadioField(
        _l("The computer's level"),
        choices=[SelectChoice(level, name) for level, name in LEVEL_NAMES.items()],
        default="medium",
    )
    opponent_name = StringField(
        _l("Your opponent's name"),
        validators=[
            against_a_person,
            InputRequired(message=REQUIRED),
            named,
            Length(max=NAME_LENGTH, message=TOO_LONG),
        ],
    )
    opponent_email = address_field(_l("Your opponent's email"), (against_a_person,))
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
    days = WholeNumberField(
        _l("Days per move (empty for no deadline)"),
        default=7,
        low=1,
        high=60,
        message=_l("Write a whole number of days from 1 to 60, or leave it empty."),
        validators=[Optional()],
    )


class LinksForm(FlaskForm):
    """The address whose games' links to send again."""

    email = address_field(_l("Your email"))


class NewAddressForm(FlaskForm):
    """The address a home page's games move to (:mod:`service.address_change`)."""

    email = address_field(_l("Your new email"))
