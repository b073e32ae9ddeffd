"""The dashboard's forms: sign-in, the actions on a game, the filters of the lists.

Every form that changes something is a :class:`FlaskForm` with a CSRF token
(a form that is only a button renders ``csrf_token()`` alone); the filters are
read from the query string and change nothing.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from flask_wtf import FlaskForm
from wtforms import (
    BooleanField,
    DateField,
    Form,
    HiddenField,
    IntegerField,
    PasswordField,
    SelectChoice,
    SelectField,
    SelectMultipleField,
    StringField,
)
from wtforms.validators import (
    DataRequired,
    InputRequired,
    Length,
    NumberRange,
    Optional,
    ValidationError,
)

from ..fields import WholeNumberField
from ..game_text import seat_name, the_seat
from ..models import EMAIL_LENGTH, GAME_STATUSES, MAIL_STATUSES, MAX_ID
from ..perspective import describe_status
from ..rules import SEATS, other


def _number(label: str, low: int, high: int, **options: Any) -> WholeNumberField:
    """A whole number from ``low`` to ``high``, refused with one message either way."""
    return WholeNumberField(
        label, low=low, high=high, message=f"Number must be between {low} and {high}.", **options
    )


class LoginForm(FlaskForm):
    """An admin's name and password."""

    name = StringField("Name", validators=[InputRequired(), Length(max=40)])
    password = PasswordField("Password", validators=[InputRequired(), Length(max=200)])


class LoginCodeForm(FlaskForm):
    """The second step of signing in, and the first code that turns two-factor sign-in on."""

    code = StringField("Code", validators=[InputRequired(), Length(max=20)])


class EnrolStartForm(FlaskForm):
    """The admin's password, which starts a setup of two-factor sign-in: the answer shows its
    secret, the one time it is shown, and a session alone (a copied cookie) must never read
    it."""

    password = PasswordField("Your password", validators=[InputRequired(), Length(max=200)])


class EnrolForm(LoginCodeForm):
    """The first code that turns two-factor sign-in on, with the admin's password: a session
    alone (a copied cookie) must not put its own authenticator on the account."""

    password = PasswordField("Your password", validators=[InputRequired(), Length(max=200)])


class ConfirmForm(FlaskForm):
    """An action on an admin account that the admin ticks to say they mean it."""

    confirm = BooleanField("Yes, I mean it", validators=[DataRequired()])


class TwoFactorChangeForm(ConfirmForm):
    """A change to an admin's two-factor sign-in (new recovery codes, turning it off): ticked,
    and confirmed by a second factor, as a sign-in is."""

    code = StringField(
        "Code from your app, or a recovery code", validators=[InputRequired(), Length(max=20)]
    )


class ExtendForm(FlaskForm):
    """Give the players who owe a move more days, from the deadline the page showed."""

    days = _number("Days", 1, 60, default=3, validators=[InputRequired()])
    deadline = HiddenField(validators=[InputRequired()])

    def validate_deadline(self, field: HiddenField) -> None:
        """The page writes the deadline it shows; anything else was written by no page."""
        try:
            datetime.fromisoformat(field.data or "")
        except ValueError:
            raise ValidationError("not a deadline the page showed") from None

    def seen_deadline(self) -> datetime:
        """The deadline the page showed (once the form is valid)."""
        return datetime.fromisoformat(self.deadline.data or "")


REASON = "Reason (optional; the players' email and the log say it)"


class SeenVersionForm(FlaskForm):
    """An action on a game as the page showed it: the page writes the game's version, and the
    game service refuses the action if the game has moved on since."""

    version = IntegerField(validators=[InputRequired(), NumberRange(min=0)])


class CancelForm(SeenVersionForm):
    """Cancel a game, once the admin ticks that they mean it; the reason is optional."""

    # Its length is checked by the game service, which says what is too long.
    reason = StringField(REASON)
    confirm = BooleanField("Yes, cancel this game", validators=[DataRequired()])


# The forfeit menu's first choice, and the one it starts on: no seat, so that the admin
# chooses who forfeits rather than confirms a seat the menu happened to show.
NO_SEAT = SelectChoice("", "choose who forfeits")


class ForfeitForm(SeenVersionForm):
    """Declare that a seat forfeits: the other seat wins; the reason is optional."""

    seat = SelectField(
        "Forfeited by",
        choices=[NO_SEAT, SelectChoice("keeper", "Keeper"), SelectChoice("shadow", "Shadow")],
        validators=[InputRequired()],
    )
    reason = StringField(REASON)
    confirm = BooleanField(
        "Yes, end the game: the seat chosen forfeits, and the other wins",
        validators=[DataRequired()],
    )

    def refusal(self) -> str:
        """What the form lacks, once it is not valid for its seat or its confirmation."""
        lacks = [
            what
            for what, field in (
                ("choose who forfeits", self.seat),
                ("tick the box to confirm", self.confirm),
            )
            if field.errors
        ]
        said = " and ".join(lacks)
        return f"{said[:1].upper()}{said[1:]}: nothing was done."


def forfeit_form(look: str, sent: bool = False) -> ForfeitForm:
    """The forfeit form of a game in ``look``: after a first choice of no seat, each choice
    names the seats as the game does, and who would win. Empty, whatever the request sent,
    unless ``sent``: then it holds the form as the request sent it."""
    form = ForfeitForm() if sent else ForfeitForm(formdata=None)
    form.seat.choices = [NO_SEAT] + [
        SelectChoice(seat, f"{seat_name(seat, look)}: {the_seat(other(seat), look)} wins")
        for seat in SEATS
    ]
    return form


class RotateForm(FlaskForm):
    """Replace a player's link, once the admin ticks that they mean it; and email the new one,
    unless they untick it."""

    confirm = BooleanField(
        "Yes, replace the link: the old one stops working", validators=[DataRequired()]
    )
    send = BooleanField("Email the new link to the player", default=True)


class AddressForm(FlaskForm):
    """A player's corrected address: it gets a fresh link, and the old link stops working.

    The page writes the address it shows: the game service refuses the correction if the
    seat's address has changed since (another admin corrected it first).
    """

    email = StringField("Corrected address", validators=[InputRequired(), Length(max=EMAIL_LENGTH)])
    shown = HiddenField(validators=[InputRequired(), Length(max=EMAIL_LENGTH)])


class AddressDataForm(FlaskForm):
    """An action on the whole address the address page shows (its export, its erasure)."""

    email = HiddenField(validators=[InputRequired(), Length(max=EMAIL_LENGTH)])


class EraseAddressForm(AddressDataForm):
    """Erase the address the page shows, once the admin ticks that they mean it."""

    confirm = BooleanField(
        "Yes, erase this address: nothing of it can be brought back", validators=[DataRequired()]
    )


class BulkRequeueForm(FlaskForm):
    """Queue the failed messages ticked in the mail list again; those the server refused for
    good only once the admin ticks that they mean it."""

    message = SelectMultipleField(coerce=int, validate_choice=False, validators=[DataRequired()])
    confirm = BooleanField("Including those the server refused for good (5xx)")


class WithdrawForm(FlaskForm):
    """Leave a queued message unsent: the admin ticks that they mean it."""

    confirm = BooleanField("Yes, it is not to be sent", validators=[DataRequired()])


class RequeueForm(FlaskForm):
    """Queue a failed message again; after a permanent refusal, the admin ticks that they
    mean it."""

    confirm = BooleanField("Yes, send it again although the server refused it for good")


def _any(label: str) -> list[SelectChoice]:
    return [SelectChoice("", label)]


class GameFilterForm(Form):
    """The games list's filters, sort order and position (a cursor), from the query string."""

    status = SelectField(
        "Status",
        choices=_any("any")
        + [SelectChoice(status, describe_status(status)) for status in GAME_STATUSES],
        default="",
    )
    q = StringField("Search", validators=[Length(max=EMAIL_LENGTH)])
    # Shown with the other filters (a game page's address links here): a search typed while it
    # is set looks among that address's games only.
    email = StringField("Address (whole)", validators=[Length(max=EMAIL_LENGTH)])
    idle = _number("Idle for at least (days)", 1, 3650, validators=[Optional()])
    to_act = SelectField(
        "Owes a move",
        choices=_any("anyone or nobody")
        + [
            # The seats by both their names: the list mixes the standard and classic looks.
            SelectChoice("keeper", "the Keeper (Jekyll)"),
            SelectChoice("shadow", "the Shadow (Hyde)"),
            SelectChoice("both", "both (exchange or swap)"),
            SelectChoice("none", "nobody"),
        ],
        default="",
    )
    # Off for the words a hand-written address may use for no, as for none at all.
    bouncing = BooleanField(
        "A player's address bounces", false_values=("false", "", "0", "n", "no", "off")
    )
    sort = SelectField(
        "Sort by",
        choices=[
            SelectChoice("activity", "last activity, newest first"),
            SelectChoice("oldest", "last activity, oldest first"),
            SelectChoice("deadline", "deadline, soonest first (games with one)"),
        ],
        default="activity",
    )
    after = HiddenField()
    before = HiddenField()


class MailFilterForm(Form):
    """The mail list's filters and position, from the query string."""

    status = SelectField(
        "Status",
        choices=_any("any") + [SelectChoice(status, status) for status in MAIL_STATUSES],
        default="",
    )
    recipient = StringField("Recipient", validators=[Length(max=EMAIL_LENGTH)])
    game = _number("Game", 1, MAX_ID, validators=[Optional()])
    day = DateField("Queued or failed on (UTC)", validators=[Optional()])
    after = HiddenField()
    before = HiddenField()


class AuditFilterForm(Form):
    """The audit page's filters (an admin, a game) and position, from the query string.

    The admins to choose from are those in the trail, set by the view.
    """

    admin = SelectField("Admin", choices=_any("any"), default="")
    game = _number("Game", 1, MAX_ID, validators=[Optional()])
    after = HiddenField()
    before = HiddenField()


class AddressLookupForm(Form):
    """The address page's address, from the query string."""

    email = StringField("Address (whole)", validators=[Length(max=EMAIL_LENGTH)])


class OverviewForm(Form):
    """The landing page's settings, from the query string: how many days without a move make
    a game stalled, how many hours ahead a deadline is near."""

    stalled = _number("Stalled after (days)", 1, 365, default=7, validators=[Optional()])
    hours = _number("Deadline within (hours)", 1, 720, default=24, validators=[Optional()])
