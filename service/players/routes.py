"""GET shows the seat's view; POST applies a move. GET and HEAD never change anything.

Each POST that changes something is one transaction, owned here
(:func:`service.unit_of_work.transaction`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from flask import abort, g, jsonify, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from .. import addresses, games, homes, invitations, notes, rematch_rules
from ..computer import lateness
from ..game_text import LOOKS, from_text, rule_message_in, upfirst
from ..health import check_database
from ..language import current_language, gettext, remember_language
from ..language import lazy_gettext as _l
from ..links import home_token, player_for, signed_home, token_for
from ..mail.compose import result
from ..models import CLOSED_STATUSES, Player, utcnow
from ..notify import opponent_away_until
from ..perspective import (
    PlayerView,
    match_summary,
    player_view,
    seat_facts,
    tag_of,
    view_of,
)
from ..rules import PLAY, other
from ..unit_of_work import reading, transaction
from . import bp
from .annotations import page_context
from .forms import LanguageForm, MoveForm, ResignForm, VersionForm
from .kept import keep, kept_page, page_key

# What the page says after a form that saved a choice, by the ``saved`` of the address its
# POST redirects to: these pages keep no session, so the address carries it, as a name.
SAVED = {
    "language": _l("Saved: the language of your pages and emails, in every game you play."),
}

# The review and the replay file show every card: they wait for the end of the game.
REVIEW_WAITS = _l("The review, with every card shown, opens once the game is over.")


def _player(token: str) -> Player:
    player = player_for(token)
    if player is None:
        abort(404)
    g.player_language = player.language
    return player


@bp.get("/play/<token>")
def play(token: str) -> ResponseReturnValue:
    """The move page; ``?saved=<name>`` adds what a choice just posted saved (:data:`SAVED`)."""
    reading()
    saved = SAVED.get(request.args.get("saved", ""))
    if saved is None:
        page = kept_page(token)
        if page is not None:
            return page
    player = _player(token)
    return _page(player, token, notice=str(saved or ""))


@bp.post("/play/<token>")
def move(token: str) -> ResponseReturnValue:
    """Apply the posted move, then show the page again (or say what was wrong)."""
    player = _player(token)
    key = player.link_key  # the link's, as read: the move checks it again under the lock
    form = MoveForm()
    # A refused form comes back with the note as it was typed, to send with the next try.
    note = form.note.data or ""
    if ENTER in request.form:  # Enter in the note or on a card, without the script: no move
        said = (
            gettext(
                "Enter sends no move: your note is kept. Choose your card, then press its button."
            )
            if note
            else gettext("Enter sends no move: choose your card, then press its button.")
        )
        chosen = request.form.getlist("cards")
        return _page(player, token, said, 200, note=note, chosen=chosen)
    if not form.validate():
        return _page(player, token, form.first_error(), 400, note=note)
    action = form.action()
    if action is None:
        return _page(player, token, form.problem, 400, note=note)
    try:
        with transaction():
            games.apply_move(player.id, form.version.data, action, note, link_key=key)
    except games.UnknownLink:  # rotated or corrected since it was read
        abort(404)
    except games.MoveError as exc:
        # A note with invisible characters would come back with them, unseen: it is dropped;
        # so is one that went with the move a second tap repeats, which would go twice.
        dropped = (isinstance(exc, games.NoteRefused) and exc.invisible) or (
            isinstance(exc, games.StaleVersion)
            and exc.already_moved
            and notes.clean(note) == notes.last_sent(player)
        )
        kept = "" if dropped else note
        # What the refusal is about is tied to it: the note, or the cards chosen to give,
        # which are ticked again as they were sent, to be changed rather than chosen anew.
        invalid = refused_field(exc, action)
        chosen = request.form.getlist("cards") if invalid else []
        return _page(player, token, exc, exc.status, note=kept, chosen=chosen, invalid=invalid)
    return redirect(url_for("players.play", token=token), code=303)


def refused_field(exc: games.MoveError, action: dict[str, Any]) -> str | None:
    """The field of the move form a refused move is about: "note", "cards" (those chosen to
    give, against the rules), or ``None``."""
    if isinstance(exc, games.NoteRefused):
        return "note"
    if isinstance(exc, games.IllegalMove) and PLAY not in action:
        return "cards"
    return None


@bp.post("/play/<token>/resign")
def resign(token: str) -> ResponseReturnValue:
    """Give the game up (the box ticked), then show the page: the opponent has won it."""
    _, refused = _on_seen_version(token, ResignForm, games.resign, _resignation_refused)
    return refused or redirect(url_for("players.play", token=token), code=303)


def _resignation_refused(player: Player, exc: games.MoveError) -> str | None:
    """Why a resignation was refused, in the page's language (``None``: as a move's refusal)."""
    if isinstance(exc, games.AlreadyResigned):
        return gettext("You have resigned this game already: nothing more was changed.")
    if isinstance(exc, games.DeadlinePassed):
        return gettext(
            "The deadline of the move owed has passed: the game ends by timeout, and can no "
            "longer be resigned."
        )
    if isinstance(exc, games.GameClosed):
        return gettext("This game is over: there is nothing to resign.")
    return None


@bp.post("/play/<token>/remind")
def remind(token: str) -> ResponseReturnValue:
    """Remind the opponent of the move they owe, then show the page, which says it was done;
    or say why it was not."""
    player, refused = _on_seen_version(token, VersionForm, games.remind_opponent, _reminder_refused)
    # The page then says the opponent is reminded, as it does for that move from then on.
    return refused or redirect(url_for("players.play", token=token), code=303)


def _on_seen_version(
    token: str,
    form_class: type[VersionForm],
    act: Callable[..., object],
    refusal: Callable[[Player, games.MoveError], str | None],
) -> tuple[Player, ResponseReturnValue | None]:
    """Apply ``act(player_id, version, link_key=...)`` to the game at the version the page's
    form (a ``form_class``) sent, in one transaction: the player, and the page saying why it
    was refused (``refusal`` words it, or ``None`` for a move's words), or ``None`` once it
    is done.

    The form is made once the player is known: making it settles the request's language,
    which must be the one the player chose.
    """
    player = _player(token)
    key = player.link_key  # as read: the act checks it again under the game's lock
    form = form_class()
    if not form.validate():
        return player, _page(player, token, next(iter(form.errors.values()))[0], 400)
    try:
        with transaction():
            act(player.id, form.version.data, link_key=key)
    except games.UnknownLink:  # rotated or corrected since it was read
        abort(404)
    except games.MoveError as exc:
        return player, _page(player, token, refusal(player, exc) or exc, exc.status)
    return player, None


def _reminder_refused(player: Player, refused: games.MoveError) -> str | None:
    """Why the opponent was not reminded, in the page's language (when it may be, in the
    player's time zone); ``None`` for a refusal a move has too."""
    if not isinstance(refused, games.ReminderRefused):
        return None
    name = player.game.player(other(player.seat)).name
    if refused.ready is not None:
        zone = addresses.time_zone(player.email) if player.email else None
        return gettext(
            "A move may be reminded of once it has waited a day: nothing was sent yet. You "
            "may remind %(name)s from %(when)s.",
            name=name,
            when=from_text(refused.ready, zone),
        )
    said = {
        "not_owed": gettext("%(name)s owes no move now: nothing was sent.", name=name),
        "yours_first": gettext(
            "You owe a move too: make yours before reminding %(name)s of theirs. Nothing was sent.",
            name=name,
        ),
        "computer": gettext("The computer moves within seconds: it needs no reminder."),
        "reminded": gettext(
            "%(name)s has been reminded of this move already: nothing more was sent.", name=name
        ),
        "away": gettext(
            "%(name)s is on vacation: their move waits for them, and nothing was sent.",
            name=name,
        ),
        "late": gettext(
            "The deadline of the move owed has passed: the game ends by timeout, and nothing "
            "was sent."
        ),
    }
    return upfirst(said[refused.reason])


# The name of the move forms' first submit button, which Enter in the note presses (see
# play/page.html): it makes no move.
ENTER = "enter"


@bp.post("/play/<token>/notes-off")
def notes_off(token: str) -> ResponseReturnValue:
    """Turn the game's notes off, for both players."""
    player = _player(token)
    with transaction():
        games.turn_notes_off(player)
    return redirect(url_for("players.play", token=token), code=303)


@bp.post("/play/<token>/language")
def language(token: str) -> ResponseReturnValue:
    """Remember the player's language: for their pages and the emails they get, in every
    game they play, as the language on their home page is (one person reads one language;
    the digest and the links they ask for follow it too). The page then says so."""
    player = _player(token)
    chosen = LanguageForm().choice()
    if chosen is None or player.email is None:
        abort(400)
    with transaction():
        homes.set_language(player.email, chosen)
    back = url_for("players.play", token=token, saved="language")
    return remember_language(redirect(back, code=303), chosen)


@bp.post("/play/<token>/seen")
def seen(token: str) -> ResponseReturnValue:
    """The page's script says the page is open, so a turn email may wait (``when_away``).

    A POST, never the GET that polls the game: reading changes nothing.
    """
    player = _player(token)
    with transaction():
        homes.record_presence(player)
    return "", 204


@bp.post("/play/<token>/time-zone")
def time_zone(token: str) -> ResponseReturnValue:
    """The page's script reports the browser's time zone: the emails give deadlines in it.

    Kept on the first report for the player's address; a name that is no IANA
    time zone is refused. The computer's seat has no address and no page.
    """
    player = _player(token)
    zone = request.form.get("zone", "")
    if player.email is None or not addresses.is_time_zone(zone):
        abort(400)
    with transaction():
        addresses.learn_time_zone(player.email, zone)
    return "", 204


@bp.get("/play/<token>/review")
def review(token: str) -> ResponseReturnValue:
    """A closed game step by step, every card shown; a 409 while the game is open."""
    player = _player(token)
    try:
        steps = games.review_game(player.game)
    except games.GameOpen:
        abort(409, description=REVIEW_WAITS)
    return render_template(
        "play/review.html",
        view=player_view(player),
        steps=steps,
        # How it ended, in the words of the home page: a resignation, a timeout or a
        # cancellation stops the steps short of the end of the rules.
        result=result,
        token=token,
        home_token=home_token(player.email) if player.email else None,
    )


@bp.get("/play/<token>/replay.json")
def replay(token: str) -> ResponseReturnValue:
    """A closed game as a replay file (docs/rules.md), to download; a 409 while it is open."""
    player = _player(token)
    game = player.game
    try:
        response = jsonify(games.export_game(game))
    except games.GameOpen:
        abort(409, description=REVIEW_WAITS)
    response.headers["Content-Disposition"] = (
        f'attachment; filename="{games.replay_filename(game)}"'
    )
    return response


def _page(
    player: Player,
    token: str,
    error: str | games.MoveError = "",
    status: int = 200,
    note: str = "",
    chosen: Sequence[str] = (),
    *,
    notice: str = "",
    invalid: str | None = None,
) -> tuple[str, int]:
    """The move page, with the refusal of the last submission if there was one, and the
    ``note`` it held filled in again (and the cards ``chosen`` to give, ticked again); or
    with the ``notice`` of what the last one did. ``invalid`` names the field the refusal
    is about (:func:`refused_field`), which the page ties to it."""
    facts = seat_facts(player)
    view = view_of(facts, match_summary(player))
    if isinstance(error, games.MoveError):
        error = _move_error(view, error)
    # The address's choices give the home link and the zone of the page's times: one read
    # (the session keeps a row it read, not that there was none, so home_token and
    # time_zone would each read again an address that chose nothing).
    settings = addresses.settings_for(player.email) if player.email else None
    home = (
        signed_home(settings.email, settings.home_key) if settings and settings.home_key else None
    )
    context = page_context(
        view, addresses.known_time_zone(settings.time_zone if settings else None)
    )
    away_until = opponent_away_until(player)
    their_notes = notes.from_opponent(player)
    # When the opponent may be reminded of a move: a day after the last, as the version is.
    game = player.game
    ready = game.updated_at + games.REMIND_AFTER
    now = utcnow()
    offer = games.reminder_offer(game.updated_at, game.deadline, now, partial(games.reminded, game))
    # Against the computer, whether the move it owes is late: no worker is making it.
    late = lateness(game.updated_at, now, against_computer=view["opponent_computer"])
    html = render_template(
        "play/page.html",
        view=view,
        token=token,
        error=error,
        notice=notice,
        home_token=home,
        away_until=away_until,
        their_notes=their_notes,
        note_length=notes.MAX_LENGTH,
        note=note[: notes.MAX_LENGTH],
        chosen=chosen,
        invalid=invalid,
        # A game waiting for its players is not over: nothing comes after it yet.
        after_game=_after_game(player, home) if view["status"] in CLOSED_STATUSES else None,
        remind_from=from_text(ready, context["time_zone"]),
        **offer,
        **late,
        **context,
    )
    if status == 200 and not error and not notice:
        key = page_key(
            token,
            tag_of(facts, view["match"]),
            home_token=home,
            away_until=away_until,
            notes_shown=their_notes is not None,
            **offer,
            computer_late_at=late["computer_late_at"],
            computer_late=late["computer_late"],
            due=context["deadline"],
            time_zone=context["time_zone"],
        )
        keep(view, html, key)
    return html, status


def _after_game(player: Player, home: str | None) -> dict[str, Any]:
    """What a closed game's page offers next: the second game of its return match, when it
    is the first and the second was dealt; its rematch (asked for already, possible, or
    why not) and a new game: from the player's home page (``home``, its token), whose link
    vouches for their address, else the public form filled in with it."""
    game = player.game
    opponent = game.player(other(player.seat))
    second = game.match.game(2) if game.match is not None and game.match_game == 1 else None
    # The same person, in the other seat: the second game swaps the roles.
    mine = (
        second.player(other(player.seat))
        if second is not None and second.status != "cancelled"
        else None
    )
    if opponent.is_computer:
        asked = invitations.computer_rematch_of(player) is not None
    else:
        asked = invitations.rematch_of(game) is not None
    return {
        "second_game": url_for("players.play", token=token_for(mine))
        if mine is not None and mine.link_key is not None
        else None,
        "rematch_asked": asked,
        "rematch_refusal": None if asked else rematch_rules.rematch_refusal(player),
        "new_game": url_for("lobby.new_game", home=home, name=player.name)
        if home
        else url_for("lobby.new_game", email=player.email, name=player.name),
    }


def _move_error(view: PlayerView, exc: games.MoveError) -> str:
    """A refused move's message in the page's language and the game's look."""
    if isinstance(exc, games.IllegalMove):
        return rule_message_in(view, exc.rule, exc.params, exc.message)
    if isinstance(exc, games.StaleVersion):
        if exc.already_moved:
            # A second tap, the back button or another tab: the player's own move came first,
            # whoever moves now (winning a trick, or completing an exchange, they move again).
            return gettext(
                "This page was out of date: you had already moved, so nothing more was "
                "changed. Here is the game now."
            )
        return gettext(
            "This page was out of date: %(name)s moved since it was loaded, so nothing "
            "was changed. Here is the game now.",
            name=view["opponent"],
        )
    if isinstance(exc, games.DeadlinePassed):  # the page shows the game in play until the sweep
        return gettext(
            "The deadline of the move owed has passed: the game ends by timeout, and takes no "
            "more moves."
        )
    if isinstance(exc, games.GameClosed):
        return gettext("This game takes no more moves.")
    if isinstance(exc, games.NoteRefused) and exc.invisible:
        return gettext(
            "A note cannot hold invisible formatting characters such as direction marks:"
            " nothing was changed."
        )
    if isinstance(exc, games.NoteRefused):
        return gettext(
            "A note holds at most %(most)s characters, on one line: nothing was changed.",
            most=notes.MAX_LENGTH,
        )
    return gettext("The move could not be read: choose your cards again.")


@bp.get("/")
def home() -> ResponseReturnValue:
    """The front page: a 503 while the database is unavailable, as every form it leads to is."""
    check_database()
    return render_template("home.html")


@bp.get("/rules")
def rules() -> ResponseReturnValue:
    """The full rules, in the page's language and the chosen look (``?look=classic``)."""
    look = request.args.get("look", "standard")
    if look not in LOOKS:
        look = "standard"
    return render_template(f"rules/{current_language()}.html", look=look)
