"""The move form, which turns what the page posts into an action in the replay notation,
and the forms of the home page."""

from __future__ import annotations

from typing import Any

from flask_wtf import FlaskForm
from wtforms import (
    BooleanField,
    HiddenField,
    IntegerField,
    RadioField,
    SelectChoice,
    SelectMultipleField,
    StringField,
)
from wtforms.validators import DataRequired, InputRequired, Length

from ..fields import WholeNumberField
from ..language import LANGUAGES, gettext
from ..language import lazy_gettext as _l
from ..rules import ACTION_KINDS, DECK, PLAY, SUITS


class MoveForm(FlaskForm):
    """One move. A play is a single button, ``4H`` or ``4S:H`` (an elixir naming hearts).

    Player links carry their own credential in the URL, not in a cookie, so a
    cross-site request cannot borrow it: the form needs no CSRF token, and a
    page left open for days still submits.
    """

    class Meta:
        csrf = False

    version = IntegerField(validators=[InputRequired(_l("The form lost its game version."))])
    kind = HiddenField(validators=[InputRequired(_l("The form lost its move type."))])
    cards = SelectMultipleField(choices=list(DECK))
    play = StringField()
    # A note to the opponent (service.notes checks it); the page offers it while notes are on.
    note = StringField()

    def action(self) -> dict[str, Any] | None:
        """The action, or ``None`` with the reason in ``self.problem``."""
        self.problem = ""
        kind = self.kind.data
        if kind not in ACTION_KINDS:
            self.problem = gettext("Unknown move type.")
            return None
        if kind != PLAY:
            return {kind: list(self.cards.data or [])}
        card, _, name = (self.play.data or "").partition(":")
        if card not in DECK or (name and name not in SUITS):
            self.problem = gettext("Pick a card to play.")
            return None
        return {"play": card, "name": name} if name else {"play": card}

    def first_error(self) -> str:
        """The first validation message, for the page."""
        for errors in self.errors.values():
            if errors:
                return str(errors[0])
        return gettext("The move could not be read.")


class VersionForm(FlaskForm):
    """A button that acts on the game as the page showed it: its version alone. No CSRF
    token, as for the move form."""

    class Meta:
        csrf = False

    version = IntegerField(validators=[InputRequired(_l("The form lost its game version."))])


class ResignForm(VersionForm):
    """Giving the game up: the version the page showed, and the box ticked to say so."""

    # Ticked: a value that reads as false ("false", empty) confirms nothing.
    confirm = BooleanField(
        validators=[
            DataRequired(_l("Tick the box to say you give the game up: nothing was changed."))
        ]
    )


class LanguageForm(FlaskForm):
    """The language switch on the move page."""

    class Meta:
        csrf = False

    language = StringField(validators=[InputRequired()])

    def choice(self) -> str | None:
        """The chosen language code, or ``None`` if it is not one the service speaks."""
        return self.language.data if self.language.data in LANGUAGES else None


# --- the home page: each form carries a CSRF token -------------------------------

REQUIRED = _l("This field is required.")


class EmailPolicyForm(FlaskForm):
    """When the address wants a "your move" email."""

    policy = RadioField(
        _l("Email me"),
        choices=[
            SelectChoice("every_move", _l("at every move that is mine")),
            SelectChoice(
                "when_away",
                _l("at a move that is mine, once that game's page is no longer open in my browser"),
            ),
            SelectChoice("digest", _l("once a day, with every move I owe (a digest)")),
            SelectChoice("reminders", _l("only to remind me a deadline is near")),
        ],
        validators=[InputRequired(message=REQUIRED)],
    )
    digest_hour = WholeNumberField(
        _l("Hour of the digest (0 to 23)"),
        default=8,
        low=0,
        high=23,
        message=_l("Choose an hour from 0 to 23."),
        validators=[InputRequired(message=REQUIRED)],
    )


class HomeLanguageForm(FlaskForm):
    """The language of the address's pages and emails."""

    language = RadioField(
        _l("Language"),
        choices=[SelectChoice(code, name) for code, name in LANGUAGES.items()],
        validators=[InputRequired(message=REQUIRED)],
    )


class TimeZoneForm(FlaskForm):
    """The time zone the address's emails and home page give times in (an IANA name)."""

    zone = StringField(
        _l("Time zone"),
        validators=[InputRequired(message=REQUIRED), Length(max=64)],
        filters=[lambda value: value.strip() if isinstance(value, str) else value],
    )


class VacationForm(FlaskForm):
    """A vacation of whole days; the route checks the year's allowance, and that the
    vacation still ends when the page said (``ends``: the same form sent twice takes its
    days once)."""

    ends = HiddenField()

    days = WholeNumberField(
        _l("Days of vacation"),
        low=1,
        high=366,
        message=_l("Choose a whole number of days."),
        validators=[InputRequired(message=REQUIRED)],
    )


class GameEmailsForm(FlaskForm):
    """Stop or resume the emails about one game, or withdraw the invitation to one."""

    game = IntegerField(validators=[InputRequired(message=REQUIRED)])


class ButtonForm(FlaskForm):
    """A button with nothing to fill in: the form only carries its CSRF token."""
