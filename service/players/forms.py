"""The move form: turns what the page posts into an action in the replay notation."""

from __future__ import annotations

from typing import Any

from flask_babel import gettext
from flask_babel import lazy_gettext as _l
from flask_wtf import FlaskForm
from wtforms import HiddenField, IntegerField, SelectMultipleField, StringField
from wtforms.validators import InputRequired

from ..language import LANGUAGES
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


class LanguageForm(FlaskForm):
    """The language switch on the move page."""

    class Meta:
        csrf = False

    language = StringField(validators=[InputRequired()])

    def choice(self) -> str | None:
        """The chosen language code, or ``None`` if it is not one the service speaks."""
        return self.language.data if self.language.data in LANGUAGES else None
