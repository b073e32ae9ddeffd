"""Start a game, answer an invitation, stop notifications, ask for a rematch.

GET shows a page with a button; only the POST behind it changes anything
(mail scanners open every link they see), in one transaction owned here
(:func:`service.unit_of_work.transaction`).

The pages speak the visitor's language (:func:`service.language.select_locale`).
A page reached by a player's or a creator's link falls back on the language
that person chose before; the opponent's answer page on the one their address
chose, if any, else on their browser's. The language a creator confirms in, or
an opponent accepts in, is theirs for the game's emails from then on
(:func:`service.invitations.adopt_language`).
"""

from __future__ import annotations

from flask import abort, g, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue
from werkzeug.exceptions import TooManyRequests

from .. import addresses, games, invitations, rematch_rules
from ..extensions import csrf, limited_form
from ..health import check_database
from ..language import current_language, gettext
from ..links import player_for, token_for
from ..mail import compose
from ..models import EMAIL_LENGTH, NAME_LENGTH, Invitation, Player, db
from ..players.home import address_of
from ..rules import other
from ..unit_of_work import transaction
from . import allowances, bp
from .forms import LinksForm, NewGameForm, refilled


@bp.route("/new", methods=["GET", "POST"])
@bp.route("/me/<home>/new", methods=["GET", "POST"])
@limited_form("10 per hour")
def new_game(home: str | None = None) -> ResponseReturnValue:
    """The new-game form; a valid request emails the creator a confirm link.

    Against the computer nobody is invited: the game starts at once, and the
    creator is emailed their link. The creator's address draws on its allowance
    (:mod:`.allowances`); the opponent's only once the creator confirms.

    Reached from a player's home page (``home``, its token), the form is theirs:
    their address is the link's, and needs no confirming. The opponent is invited
    at once, and a game against the computer is a click away. Such requests draw
    on an allowance of their own, which nobody without the link can spend.
    """
    check_database()  # an outage shows before the form is filled in
    owner = address_of(home) if home is not None else None
    if owner is not None and request.method == "POST":
        posted = request.form.copy()
        posted["email"] = owner  # whatever was posted, if anything: the link says whose it is
        form = NewGameForm(formdata=posted)
    else:
        form = NewGameForm()
    if request.method == "GET":
        # The home page's "new game" button fills in the player's own name.
        form.name.data = request.args.get("name", "")[:NAME_LENGTH] or None
        if owner is None:
            form.email.data = request.args.get("email", "")[:EMAIL_LENGTH] or None
    error, refused = None, None
    if form.validate_on_submit():
        computer = form.opponent.data == "computer"
        try:
            taken = _start(form, computer, proven=owner is not None)
        except invitations.InvitationError as exc:  # said in the page's language
            error = str(exc)
        except TooManyRequests as exc:
            error, refused = _spent(form.email.data, proven=owner is not None), exc
        else:
            return render_template(
                "lobby/sent.html",
                email=form.email.data,
                computer=computer,
                home=home,
                game=taken.game if owner is not None else None,
                play_token=token_for,
            )
    status = 400 if request.method == "POST" else 200
    error = error or refilled(form)
    page = render_template("lobby/new.html", form=form, error=error, owner=owner, home=home)
    if refused is not None:
        return page, 429, retry_after(refused)
    return page, status


def retry_after(refused: TooManyRequests) -> list[tuple[str, str]]:
    """The ``Retry-After`` header of a refusal past an allowance: when its day ends."""
    return [header for header in refused.get_headers() if header[0] == "Retry-After"]


def _spent(email: str, *, proven: bool) -> str:
    """Why a request was refused for its creator's allowance (:mod:`.allowances`): the
    address has had as many emails of the form as one may get in a day, whoever asked."""
    if proven:
        return gettext(
            "Nothing was sent: you have asked for as many games from your page as one may in "
            "a day. Try again tomorrow."
        )
    return gettext(
        "Nothing was sent: %(email)s has had as many emails of this form as an address may "
        "get in a day. If you asked for them, their links are in your inbox; else try again "
        "tomorrow, or start a game from your page (“All your games and your email settings” "
        "in any email from this service).",
        email=email,
    )


def _start(form: NewGameForm, computer: bool, *, proven: bool) -> invitations.Taken:
    """Ask for a game against a person, or start one against the computer: the game, or
    :class:`service.invitations.InvitationError` saying why it cannot be made. The same form
    sent twice makes one game (:func:`service.invitations.take_request`)."""
    request = invitations.Request(
        name=form.name.data,
        email=form.email.data,
        opponent_name=form.opponent_name.data or "",
        opponent_email=form.opponent_email.data or "",
        role=form.role.data,
        match=form.format.data == "match",
        days_per_move=form.days.data,
        look=form.look.data,
        language=current_language(),
        computer=form.level.data if computer else None,
        proven=proven,
    )
    try:
        with transaction():
            taken = invitations.take_request(request)
            if taken.made and not proven:
                # The opponent's invitation waits for the creator's confirmation (:func:`_confirm`).
                allowances.draw(("creator", request.email))
            elif taken.made:
                _draw_proven(request)
    except games.ComputerName as exc:
        raise invitations.InvitationError(_computer_name(exc)) from None
    except games.NameWithAddress:
        raise invitations.InvitationError(_name_with_address()) from None
    except games.InvalidGame:
        # The form has checked the level, the look and the days: what is left is an address.
        if computer:
            raise invitations.InvitationError(
                gettext("This address cannot make a game: check it.")
            ) from None
        raise invitations.InvitationError(
            gettext("These addresses cannot make a game: check both of them.")
        ) from None
    return taken


def _draw_proven(request: invitations.Request) -> None:
    """Count a request from the creator's home page against their allowance of those, and its
    invitation, sent at once, against the opponent's (429 past either, and nothing is made)."""
    if request.computer is not None:
        allowances.draw(("home", request.email))
        return
    try:
        allowances.draw(("home", request.email), ("opponent", request.opponent_email))
    except TooManyRequests:
        if allowances.spent(("home", request.email)):
            raise
        raise invitations.InvitationError(
            gettext(
                "Nothing was sent: %(name)s has had as many invitations from this service as "
                "an address may get in a day. Try again tomorrow.",
                name=request.opponent_name,
            )
        ) from None


def _computer_name(exc: games.ComputerName) -> str:
    return gettext(
        "“%(name)s” is how this service names the computer: choose another name.",
        name=exc.name,
    )


def _name_with_address() -> str:
    return gettext("A name cannot hold a web or email address.")


@bp.route("/links", methods=["GET", "POST"])
@limited_form("10 per hour")
def lost_links() -> ResponseReturnValue:
    """Lost your links? The link to the address's home page goes to that address, with its
    games in play.

    The answer is the same whether or not the address has games: the page
    tells no one who plays here.
    """
    check_database()  # an outage shows before the form is filled in
    form = LinksForm()
    if form.validate_on_submit():
        spent = False
        try:
            with transaction():
                if invitations.send_links(form.email.data, current_language()):
                    allowances.draw(("links", form.email.data))
        except TooManyRequests:
            # The address's allowance is spent, by whoever asked: what they asked for went
            # to it, so a stranger asking over and over locks no one out of their links.
            spent = True
        return render_template("lobby/links.html", form=form, sent=True, spent=spent)
    status = 400 if request.method == "POST" else 200
    page = render_template("lobby/links.html", form=form, sent=False, error=refilled(form))
    return page, status


# The status an answer leaves its invitation in; one found in another is a conflict (409).
ANSWERED = {"accept": "accepted", "decline": "declined"}


@bp.route("/invitations/<token>", methods=["GET", "POST"])
@csrf.exempt
def invitation(token: str) -> ResponseReturnValue:
    """Confirm your address (creator) or accept/decline (opponent); accepting, the opponent
    may give the name they play under."""
    found = invitations.from_token(token)
    if found is None:
        abort(404)
    invite, stage = found
    if stage == "confirm":
        g.player_language = invite.language
    else:
        g.player_language = addresses.language(invite.opponent_email)
    status, error, headers = 200, None, []
    if request.method == "POST" and stage == "confirm":
        refused = _confirm(invite)
        if refused is not None:
            error = gettext(
                "Nothing was sent: %(name)s has had as many invitations from this service as "
                "an address may get in a day. Confirm again later, within a day: this page "
                "keeps working.",
                name=invite.opponent_name,
            )
            headers = retry_after(refused)
        status = 429 if error else 409 if invite.status in ("expired", "closed") else 200
    elif request.method == "POST":
        answer = request.form.get("answer")
        if answer not in ("accept", "decline"):
            abort(400, gettext("Answer accept or decline."))
        try:
            with transaction():
                started = invitations.respond(
                    invite, answer == "accept", request.form.get("name"), current_language()
                )
        except games.GameClosed:
            started, status = None, 409  # the page shows how the invitation ended
        except games.ComputerName as exc:
            error, started, status = _computer_name(exc), None, 400
        except games.NameWithAddress:
            error, started, status = _name_with_address(), None, 400
        if started is not None:
            # Only the answer that started the game leads to the opponent's seat.
            return redirect(url_for("players.play", token=token_for(started)), code=303)
        if error is None and invite.status != ANSWERED[answer]:
            status = 409  # answered otherwise before, expired or closed: the page says which
    reader = invite.creator_email if stage == "confirm" else invite.opponent_email
    # A rematch says so, and what it follows, as its email does.
    followed = invitations.followed_game(invite) if stage == "respond" else None
    page = render_template(
        "lobby/invitation.html",
        invitation=invite,
        stage=stage,
        error=error,
        late=invitations.is_late(invite),
        name_length=NAME_LENGTH,
        time_zone=addresses.time_zone(reader),
        rematch_of=followed[0] if followed else None,
        rematch_winner=followed[1] if followed else None,
    )
    return page, status, headers


def _confirm(invite: Invitation) -> TooManyRequests | None:
    """Confirm the creator's address, which invites the opponent; ``None``, or the refusal
    past the opponent's allowance, when nothing was sent.

    The invitation's email draws on the opponent's allowance (:mod:`.allowances`)
    as it is queued, so requests nobody confirms use up none of it. Past the
    allowance the transaction rolls back: the invitation waits unconfirmed, and
    its creator may confirm it again later.
    """
    try:
        with transaction():
            if invitations.confirm(invite, current_language()):
                allowances.draw(("opponent", invite.opponent_email))
    except TooManyRequests as refused:
        return refused
    return None


def _unsubscribing_player(token: str) -> tuple[Player, bool]:
    """The player an unsubscribe token names, and whether it still stops their emails
    (:func:`service.invitations.stops_for`); 404 for a token that is not ours."""
    signed = compose.unsubscribe_link(token)
    player = db.session.get(Player, signed[0]) if signed is not None else None
    if signed is None or player is None or player.email is None:
        abort(404)
    g.player_language = player.language
    return player, invitations.stops_for(player, signed[1])


@bp.route("/unsubscribe/<token>", methods=["GET", "POST"])
@csrf.exempt
def unsubscribe(token: str) -> ResponseReturnValue:
    """Stop emails: a confirm button, or a one-click POST (RFC 8058).

    The link in an email about a game stops that game's emails (and, as the
    page says, invitations to the address); the link in an email about none of
    the address's games (an address to confirm, an invitation, its links) stops
    every email to the address. The address's home page undoes either.

    The page names the home page but links to none of the address's pages: these
    links sit in the header of every email and never change, so whoever holds an
    old email would find the home link its owner has replaced since. For the same
    reason a game's link stops nothing (410) once the seat has had a new link since
    the email (an admin's rotation, its player's replaced home link) or an admin
    has corrected its address.
    """
    address = compose.stopping_address(token)
    if address is not None:
        g.player_language = addresses.emails_language(address)
        if request.method == "POST":
            with transaction():
                invitations.stop_all_emails(address)
        done = invitations.stopped_all_emails(address)
        return render_template("lobby/unsubscribe.html", address=address, done=done)
    player, stops = _unsubscribing_player(token)
    if not stops:
        # Gone for good: the seat has had a new link or address since the email was sent.
        return render_template("lobby/unsubscribe.html", player=player, replaced=True), 410
    if request.method == "POST":
        with transaction():
            invitations.stop_emails(player)
    return render_template("lobby/unsubscribe.html", player=player, done=not player.notify)


@bp.route("/rematch/<token>", methods=["GET", "POST"])
@csrf.exempt
def rematch(token: str) -> ResponseReturnValue:
    """Offer, then propose, a new game against the same opponent with the roles swapped.

    The opponent is invited by email and the game starts when they accept; the
    computer needs no invitation (:func:`_rematch_computer`). A proposal made (or
    found: the opponent asked first) leads back to this page, which shows it; a
    refused one is answered at once, saying why.
    """
    player = player_for(token)
    if player is None:
        abort(404)
    g.player_language = player.language
    if player.game.player(other(player.seat)).is_computer:
        return _rematch_computer(player)
    refusal = None
    if request.method == "POST":
        try:
            with transaction():
                invitations.propose_rematch(player)
        except invitations.InvitationError as exc:
            proposal, refusal = None, str(exc)
        else:
            # The page then shows the invitation as any later read of it does: a reload
            # reads it again, and posts nothing.
            return redirect(url_for("lobby.rematch", token=token), code=303)
    else:
        proposal = invitations.rematch_of(player.game)
        refusal = None if proposal is not None else rematch_rules.rematch_refusal(player)
    # The opponent asked first: this player's link to answer, as their email has it.
    answer = (
        invitations.url(proposal, "respond")
        if proposal is not None and proposal.opponent_email == player.email
        else None
    )
    page = render_template(
        "lobby/rematch.html",
        player=player,
        seat=rematch_rules.seat_in_rematch(player),
        invitation=proposal,
        refusal=refusal,
        answer=answer,
        time_zone=addresses.time_zone(player.email),
    )
    return page, 409 if refusal else 200


def _rematch_computer(player: Player) -> ResponseReturnValue:
    """Offer, then start at once, a new game against the same computer with the roles swapped."""
    refusal = None
    if request.method == "POST":
        try:
            with transaction():
                seat = invitations.rematch_computer(player)
        except invitations.InvitationError as exc:
            refusal = str(exc)
        else:
            return redirect(url_for("players.play", token=token_for(seat)), code=303)
    started = invitations.computer_rematch_of(player)
    if started is None and refusal is None:
        refusal = rematch_rules.rematch_refusal(player)
    page = render_template(
        "lobby/rematch.html",
        player=player,
        seat=rematch_rules.seat_in_rematch(player),
        computer=True,
        started=url_for("players.play", token=token_for(started)) if started is not None else None,
        refusal=refusal,
    )
    return page, 409 if refusal else 200
