"""Moving an address's games to another: asked from its home page, confirmed from the link
emailed to the new address (:mod:`service.address_change`).

The form is the home page's, posted here as the new-game form of a home page is:
limited per IP as the lobby's forms are, and the new address (one email an hour)
and the asking one (three a day) each have an allowance (:mod:`.allowances`), so
the form is no way to mail strangers. The confirmation page's GET shows what
would move and a button, changing nothing; its POST moves.
"""

from __future__ import annotations

from flask import abort, flash, g, redirect, render_template, request, session, url_for
from flask.typing import ResponseReturnValue
from werkzeug.exceptions import TooManyRequests

from .. import address_change, addresses
from ..address_change import Confirmation, MoveRefused
from ..extensions import csrf, limited_form
from ..language import current_language, gettext, ngettext
from ..links import home_token, signed_home
from ..players.home import REPLACED, SAVED_CATEGORY, address_of
from ..unit_of_work import transaction
from . import allowances, bp
from .forms import NewAddressForm, refilled
from .routes import retry_after


@bp.route("/me/<home>/move", methods=["GET", "POST"])
@limited_form("10 per hour")
def ask_to_move(home: str) -> ResponseReturnValue:
    """The form for the address to move to; a valid one emails it a link to confirm."""
    old = address_of(home)
    form = NewAddressForm()
    status, error, headers, sent = 200, refilled(form), [], False
    if form.validate_on_submit():
        try:
            with transaction():
                if address_change.ask(old, form.email.data, current_language()):
                    allowances.draw(("new_address", form.email.data), ("moves", old))
        except MoveRefused:
            status, error = 400, gettext("That is this page’s address already.")
        except TooManyRequests as refused:
            status, headers = 429, retry_after(refused)
            error = gettext(
                "Nothing was sent: that address, or this page, has had as many of these emails "
                "as one may in a while. Try again later."
            )
        else:
            sent = True
    elif request.method == "POST":
        status = 400
    page = render_template(
        "lobby/move.html", form=form, home=home, old=old, sent=sent, error=error, hours=_hours()
    )
    return page, status, headers


def _confirmation(token: str) -> Confirmation:
    """The move a confirmation link asks for; 404 for a bad link, or one whose move was made
    or whose home link was replaced since."""
    found = address_change.from_token(token)
    if found is None:
        abort(404)
    g.player_language = addresses.language(found.old)  # the language its owner chose
    return found


@bp.route("/moving/<token>", methods=["GET", "POST"])
@csrf.exempt
def confirm_move(token: str) -> ResponseReturnValue:
    """What would move, and the button that moves it; the POST moves it and leads to the new
    address's home page."""
    confirmation = _confirmation(token)
    refusal = None if confirmation.expired else address_change.refusal(confirmation)
    if request.method == "POST" and not confirmation.expired and refusal is None:
        try:
            with transaction():
                address_change.move(confirmation)
        except LookupError:
            abort(404)
        except MoveRefused as exc:
            refusal = exc
        else:
            new = home_token(confirmation.new)
            assert new is not None  # the move gave it one
            # The old home link leads here to the new page, in this browser alone.
            session[REPLACED] = [signed_home(confirmation.old, confirmation.key), new]
            flash("moved", SAVED_CATEGORY)
            return redirect(url_for("home.page", token=new), code=303)
    if confirmation.expired:
        status = 410
    elif refusal is not None:
        status = 409
    else:
        status = 200
    page = render_template(
        "lobby/moving.html",
        confirmation=confirmation,
        counts=address_change.counts(confirmation),
        expired=confirmation.expired,
        refusal=_refusal_text(refusal),
        hours=_hours(),
    )
    return page, status


def _hours() -> int:
    """How many hours a confirmation link works, as the pages say it."""
    return int(address_change.CONFIRM_WITHIN.total_seconds() // 3600)


def _refusal_text(refusal: MoveRefused | None) -> str | None:
    """Why the move cannot be made, in the reader's language."""
    if refusal is None:
        return None
    if refusal.reason == "vacation":
        return gettext(
            "One of these addresses is on vacation: come back from it on its home page first."
        )
    games_named = ", ".join(str(game) for game in refusal.games)
    return ngettext(
        "Both addresses play game %(games)s, not over: one person cannot play against "
        "themselves. Finish it first, or have it cancelled.",
        "Both addresses play games %(games)s, not over: one person cannot play against "
        "themselves. Finish them first, or have them cancelled.",
        len(refusal.games),
        games=games_named,
    )
