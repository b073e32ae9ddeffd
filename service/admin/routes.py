"""The dashboard's pages.

Lookups live in :mod:`.listing`, :mod:`.overview` and :mod:`.stats`; every change to a
game goes through :mod:`service.games`, which writes it to the game's log with the admin's
name and to the audit trail (:mod:`service.audit`), as a re-queued message is here.
Each action is one transaction, owned here (:func:`service.unit_of_work.transaction`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection
from datetime import datetime
from typing import Any

from flask import (
    Response,
    abort,
    flash,
    make_response,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import current_user
from flask_wtf import FlaskForm
from sqlalchemy import select
from werkzeug.wrappers import Response as BaseResponse
from wtforms import SelectChoice

from .. import addresses, audit, games, notes, notify
from ..game_text import the_seat, upfirst
from ..logs import redact
from ..mail.compose import with_headers
from ..mail.kinds import written
from ..mail.outbox import requeue, try_now, withdraw_queued
from ..models import (
    OPEN_STATUSES,
    AdminAction,
    Event,
    Game,
    OutboxMessage,
    Player,
    db,
    is_row_id,
    utcnow,
)
from ..rules import other, variant_of
from ..unit_of_work import transaction
from . import bp, cache, export, gamepage, listing, overview, playtest, stats
from .export import attributes, csv_response
from .forms import (
    AddressForm,
    AuditFilterForm,
    BulkRequeueForm,
    CancelForm,
    ExtendForm,
    GameFilterForm,
    MailFilterForm,
    OverviewForm,
    RequeueForm,
    RotateForm,
    SeenVersionForm,
    WithdrawForm,
    forfeit_form,
)

# The HTML body of an email, shown in a sandboxed frame of the message page: no script,
# no request anywhere but images from this site, and only this site may frame it.
MAIL_HTML_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
    "sandbox; frame-ancestors 'self'"
)


def percent(part: int, whole: int) -> str:
    """``part`` as a share of ``whole``: ``42.5%``, or a dash when there is no whole."""
    return f"{100 * part / whole:.1f}%" if whole else "—"


def ratio(part: int, whole: int) -> str:
    """``part`` per unit of ``whole`` with two decimals, or a dash."""
    return f"{part / whole:.2f}" if whole else "—"


def duration(seconds: float | None) -> str:
    """A length of time as people say it: ``45 s``, ``12 min``, ``3 h 20 min``, ``2 d 4 h``."""
    if seconds is None:
        return "—"
    minutes, hours = seconds / 60, seconds / 3600
    if seconds < 60:
        return f"{seconds:.0f} s"
    if minutes < 60:
        return f"{minutes:.0f} min"
    if hours < 24:
        return f"{int(hours)} h {int(minutes % 60)} min"
    return f"{int(hours // 24)} d {int(hours % 24)} h"


AGES = (
    (365 * 86400, "year"),
    (30 * 86400, "month"),
    (7 * 86400, "week"),
    (86400, "day"),
    (3600, "hour"),
    (60, "minute"),
)


@bp.app_template_filter("ago")
def ago(moment: datetime, now: datetime | None = None) -> str:
    """How long ago ``moment`` was, as people say it: ``3 weeks ago``, ``just now``."""
    seconds = ((now or utcnow()) - moment).total_seconds()
    ahead = seconds < 0
    for length, unit in AGES:
        count = int(abs(seconds) // length)
        if count:
            amount = f"{count} {unit}{'s' if count > 1 else ''}"
            return f"in {amount}" if ahead else f"{amount} ago"
    return "just now"


@bp.context_processor
def helpers() -> dict[str, Any]:
    """The figures' formats, and how many rows an export holds, for the dashboard's templates."""
    limit = f"{export.EXPORT_LIMIT:,}"
    return {"percent": percent, "ratio": ratio, "duration": duration, "export_limit": limit}


def _filters(form_class: type, **choices: list[SelectChoice]) -> Any:
    form = form_class(request.args)
    for name, options in choices.items():
        getattr(form, name).choices += options
    if not form.validate():
        # Named field by field, inside the dashboard, with the way back to the whole list.
        refused = [(getattr(form, name).label.text, errors) for name, errors in form.errors.items()]
        abort(make_response(render_template("admin/bad_filters.html", refused=refused), 400))
    return form


def _page(read: Callable[..., listing.Page[Any]], form: Any, *args: Any) -> listing.Page[Any]:
    try:
        return read(*args, after=form.after.data or "", before=form.before.data or "")
    except listing.BadCursor:
        abort(400, "This page position is not valid: start again from the first page.")


def _game_filters() -> tuple[GameFilterForm, listing.GameFilter]:
    form = _filters(GameFilterForm)
    return form, listing.GameFilter(
        status=form.status.data,
        email=(form.email.data or "").strip(),
        search=(form.q.data or "").strip(),
        idle=form.idle.data,
        to_act=form.to_act.data,
        bouncing=form.bouncing.data,
        sort=form.sort.data,
    )


@bp.get("/")
def landing() -> str:
    """What needs attention: stalled games, failed mail, the queue, the worker, bounces,
    deadlines."""
    form = _filters(OverviewForm)
    found = overview.overview(
        utcnow(), stalled_days=form.stalled.data or 7, near_hours=form.hours.data or 24
    )
    return render_template("admin/overview.html", form=form, overview=found, owes=gamepage.owes)


@bp.get("/games")
def games_list() -> str:
    """All games, by last activity or deadline; filter by status, player and who owes a move."""
    form, filters = _game_filters()
    page = _page(listing.games_page, form, filters)
    counts, counted_at = cache.cached("game_counts", listing.game_counts)
    query = {
        name: form[name].data
        for name in ("status", "email", "q", "idle", "to_act", "bouncing", "sort")
        if form[name].data
    }
    return render_template(
        "admin/games.html",
        form=form,
        page=page,
        counts=counts,
        counted_at=counted_at,
        query=query,
        owes=gamepage.owes,
    )


@bp.get("/games.csv")
def games_csv() -> Response:
    """The games the list's filters keep, in its order, as a CSV file."""
    _, filters = _game_filters()
    query = listing.games_in_order(filters)

    def row(game: Game) -> list[Any]:
        seats = [game.player(seat) for seat in ("keeper", "shadow")]
        return [
            game.id,
            game.status,
            *(value for player in seats for value in (player.name, player.email or "computer")),
            game.to_act,
            game.deadline,
            game.created_at,
            game.updated_at,
            game.finished_at,
            game.winner,
        ]

    header = ["game", "status", "keeper", "keeper_email", "shadow", "shadow_email", "to_act"]
    header += ["deadline", "created_at", "updated_at", "finished_at", "winner"]
    return csv_response("splitmind-games.csv", header, query, row)


def _game(game_id: int) -> Game:
    game = db.session.get(Game, game_id)
    if game is None:
        abort(404)
    return game


@bp.get("/games/<id:game_id>")
def game(game_id: int) -> str:
    """One game: its players and links, where it stands, its public history and its log."""
    return _game_page(_game(game_id))


def _game_page(found: Game, **kept: FlaskForm) -> str:
    """The game's page as it stands, its forms empty (an action refused re-renders it too)
    but those ``kept`` as they were sent, by their names in the template."""
    events = list(
        db.session.scalars(select(Event).where(Event.game_id == found.id).order_by(Event.id))
    )
    return render_template(
        "admin/game.html",
        game=found,
        live=gamepage.is_live(found),
        waiting=gamepage.invitation_waited_for(found),
        history=gamepage.history(found.state),
        variant=variant_of(found.state),
        log=gamepage.log_lines(found, events),
        notes=notes.of_finished_game(found),
        owes=gamepage.owes(found),
        vacations=gamepage.vacations(found),
        bounces=addresses.bounces(player.email for player in found.players),
        max_reason=games.MAX_REASON,
        **{
            "address_form": AddressForm(formdata=None),
            "rotate_form": RotateForm(formdata=None),
            "extend_form": ExtendForm(formdata=None),
            "cancel_form": CancelForm(formdata=None),
            "forfeit_form": forfeit_form(found.look),
            **kept,
        },
    )


@bp.get("/games/<id:game_id>/replay.json")
def replay(game_id: int) -> Response:
    """A finished game as a replay scenario to download; a live game's would give its deal away."""
    found = _game(game_id)
    try:
        scenario = games.export_game(found)
    except games.GameOpen:
        abort(403, "A game's replay holds its deal: it can be downloaded once the game is over.")
    return Response(
        json.dumps(scenario, indent=1) + "\n",
        mimetype="application/json",
        headers={"Content-Disposition": f'attachment; filename="{games.replay_filename(found)}"'},
    )


def _require_game(game_id: int) -> None:
    if db.session.scalar(select(Game.id).where(Game.id == game_id)) is None:
        abort(404)


def _done(game_id: int) -> BaseResponse:
    return redirect(url_for("admin.game", game_id=game_id), code=303)


def _act(
    game_id: int,
    action: Callable[[], Any],
    success: str | Callable[[Any], str],
    form: FlaskForm | None = None,
    invalid: str | Callable[[], str] = "",
    category: str | Callable[[], str] = "notice",
    keep: str = "",
) -> BaseResponse:
    """Check the form, run a service call for the signed-in admin, say how it went.

    A form that is not valid changes nothing; ``invalid`` says what it lacks (or makes it
    from the form's errors). With ``keep``, the form's name in the game's page, the page
    shows the form as it was sent (400) rather than again empty, as it does when the game
    service refuses what was typed (:class:`games.InvalidGame`). The call is one
    transaction: a refusal leaves nothing of it behind. ``success`` is what to say, or
    makes it from what the call returned; ``category`` is how to say it, or makes it
    once ``success`` has said it. A refusal for the game as it is now (over, or
    moved on since the page was loaded: a :class:`games.MoveError`) answers with its status
    (409) and the game's page as it stands, saying why.
    """
    if form is not None and not form.validate():
        if isinstance(form, SeenVersionForm) and form.version.errors:
            invalid = "This form does not say which version of the game it showed: reload the page."
            keep = ""  # a form written by no page: the page as it stands has the version
        elif isinstance(form, AddressForm) and form.shown.errors:
            invalid = "This form does not say which address it showed: reload the page."
            keep = ""  # nor which seat's form it is
        elif isinstance(form, ExtendForm) and form.deadline.errors:
            keep = ""  # a form written by no page: the page as it stands has the deadline
        flash(invalid() if callable(invalid) else invalid, "error")
        if keep:
            return make_response(_game_page(_game(game_id), **{keep: form}), 400)
        return _done(game_id)
    try:
        with transaction():
            result = action()
            said = success(result) if callable(success) else success
    except games.MoveError as exc:
        flash(exc.message, "error")
        return make_response(_game_page(_game(game_id)), exc.status)
    except games.InvalidGame as exc:
        flash(str(exc), "error")
        if keep:
            return make_response(_game_page(_game(game_id), **{keep: form}), 400)
    else:
        cache.forget()
        flash(said, category() if callable(category) else category)
    return _done(game_id)


def _told(game: Game) -> str:
    """Who an email to both players about the game reaches, as a confirmation says it:
    ``both players are told``, ``only the Keeper is told``, ``no player is told``."""
    reached = notify.told(game)
    if len(reached) == 2:
        return "both players are told"
    if reached:
        return f"only {the_seat(reached[0].seat, game.look)} is told"
    return "no player is told"


def _the(player: Player) -> str:
    """The player's seat as a sentence starts with it, in the game's look: ``The Keeper``,
    ``Jekyll``."""
    return upfirst(the_seat(player.seat, player.game.look))


def _player(game_id: int, player_id: int) -> Player:
    player = db.session.get(Player, player_id)
    if player is None or player.game_id != game_id:
        abort(404)
    return player


@bp.post("/games/<id:game_id>/players/<id:player_id>/resend")
def resend_link(game_id: int, player_id: int) -> BaseResponse:
    """Email the player their link again, and say to which address: the seat's as it is
    under the game's lock (another admin may have corrected it since the page was loaded)."""
    player = _player(game_id, player_id)
    if player.link_key is None and not player.is_computer:
        flash("This player's link is revoked: rotate it to give them a new one.", "error")
        return _done(game_id)
    warned: list[bool] = []

    def resend() -> str:
        sent = games.resend_link(player.id, actor=current_user.name)
        bounce = addresses.bounces([sent.email]).get(sent.email or "")
        warned.append(bounce is not None)
        if bounce is None:
            return f"{_the(sent)}'s link is on its way to {sent.email}."
        assert bounce.bounced_at is not None
        return (
            f"{_the(sent)}'s link is queued, but mail to {sent.email} bounces "
            f"({bounce.bounce_code} {bounce.bounce_reply}, {ago(bounce.bounced_at)}): "
            "it will likely bounce again. Correct the address if it is wrong."
        )

    return _act(game_id, resend, str, category=lambda: "error" if any(warned) else "notice")


@bp.post("/games/<id:game_id>/players/<id:player_id>/rotate")
def rotate_link(game_id: int, player_id: int) -> BaseResponse:
    """Give the player a new link, once confirmed, and email it if asked (saying to the seat's
    address as it is under the game's lock); the old one stops working at once."""
    player = _player(game_id, player_id)
    form = RotateForm()

    def said(rotated: Player) -> str:
        sent = (
            f"It is on its way to {rotated.email}."
            if form.send.data
            else "Resend it to email it to them."
        )
        return f"{_the(rotated)} has a new link; the old one no longer works. {sent}"

    return _act(
        game_id,
        lambda: games.rotate_link(player.id, actor=current_user.name, send=form.send.data),
        said,
        form,
        "Tick the box to confirm that the link is to be replaced.",
    )


@bp.post("/games/<id:game_id>/players/<id:player_id>/address")
def correct_address(game_id: int, player_id: int) -> BaseResponse:
    """Put the player's corrected address in the seat; it gets a fresh link."""
    player = _player(game_id, player_id)
    form = AddressForm()
    return _act(
        game_id,
        lambda: games.correct_address(
            player.id, form.email.data, actor=current_user.name, seen=form.shown.data
        ),
        f"{_the(player)}'s address is corrected: a new link is on its way to it, "
        "and the old link no longer works.",
        form,
        "Give the corrected address.",
        keep="address_form",
    )


@bp.post("/games/<id:game_id>/extend")
def extend_deadline(game_id: int) -> BaseResponse:
    """Give the players who owe a move more days."""
    _require_game(game_id)
    form = ExtendForm()
    return _act(
        game_id,
        lambda: games.extend_deadline(
            game_id, form.days.data, actor=current_user.name, seen=form.seen_deadline()
        ),
        lambda game: (
            f"The deadline is extended to {game.deadline:%Y-%m-%d %H:%M} UTC; {_told(game)}."
        ),
        form,
        "Extend a deadline by 1 to 60 days.",
        keep="extend_form",
    )


@bp.post("/games/<id:game_id>/cancel")
def cancel(game_id: int) -> BaseResponse:
    """Cancel the game, with an optional reason; both players of a game in play are told.
    Sent unticked, the form comes back as it was sent, its reason kept."""
    _require_game(game_id)
    form = CancelForm()

    def cancel_it() -> str:
        waiting = gamepage.invitation_waited_for(_game(game_id))
        # An invitation sent to its opponent, unanswered: cancelling tells its creator.
        asker = waiting.creator_name if waiting and waiting.status == "invited" else None
        game = games.cancel_game(
            game_id, actor=current_user.name, reason=form.reason.data or "", seen=form.version.data
        )
        if game.started_at:
            return f"The game is cancelled; {_told(game)}."
        if asker is not None:
            return f"The game is cancelled; {asker}, who asked for it, is told by email."
        return "The game is cancelled."

    return _act(
        game_id,
        cancel_it,
        str,
        form,
        "Tick the box to confirm that the game is to be cancelled.",
        keep="cancel_form",
    )


@bp.post("/games/<id:game_id>/forfeit")
def forfeit(game_id: int) -> BaseResponse:
    """End the game by a seat's forfeit, chosen by the admin: the other seat wins."""
    form = forfeit_form(_game(game_id).look, sent=True)
    return _act(
        game_id,
        lambda: games.declare_forfeit(
            game_id,
            form.seat.data,
            actor=current_user.name,
            reason=form.reason.data or "",
            seen=form.version.data,
        ),
        lambda game: (
            f"The game is over by forfeit: {the_seat(other(game.winner), game.look)} "
            f"forfeited and {the_seat(game.winner, game.look)} wins; {_told(game)}."
        ),
        form,
        form.refusal,
        keep="forfeit_form",
    )


@bp.get("/mail.csv")
def mail_csv() -> Response:
    """The messages the mail list's filters keep, newest first, as a CSV file."""
    _, filters = _mail_filters()
    query = listing.mail_query(filters)

    columns = ["id", "status", "kind", "recipient", "subject", "game_id", "attempts"]
    columns += ["created_at", "sent_at", "failed_at", "last_error"]
    subject, cells = listing.Subjects(), attributes(columns)
    where = columns.index("subject")

    def row(message: OutboxMessage) -> list[Any]:
        found = cells(message)
        found[where] = subject(message)
        return found

    return csv_response("splitmind-mail.csv", columns, query.order_by(OutboxMessage.id.desc()), row)


@bp.get("/mail")
def mail() -> str:
    """The outbox, newest first: filter by status, recipient, game and day; queue failures
    again."""
    return _mail_list()


# What the mail list's address holds: its filters (MailFilterForm) and its page.
MAIL_LIST_ARGS = ("status", "recipient", "game", "day", "after", "before")


def _mail_list_args() -> dict[str, Any]:
    """The mail list's filters and page as the request's query gives them (nothing else)."""
    return {key: request.args[key] for key in MAIL_LIST_ARGS if key in request.args}


def _mail_list(ticked: Collection[int] = ()) -> str:
    """The mail list of the request's filters and page, the failures ``ticked`` ticked."""
    form, filters = _mail_filters()
    page = _page(listing.mail_page, form, filters)
    counts, counted_at = cache.cached("mail_counts", listing.mail_counts)
    query = {
        key: value
        for key, value in {
            "status": filters.status,
            "recipient": filters.recipient,
            "game": filters.game or "",
            "day": filters.day.isoformat() if filters.day else "",
        }.items()
        if value
    }
    return render_template(
        "admin/mail.html",
        form=form,
        page=page,
        counts=counts,
        counted_at=counted_at,
        query=query,
        here=_mail_list_args(),  # the page's own address: a re-queue comes back to it
        ticked=set(ticked),
        # Ticked, but no longer on this page (newer mail pushed them on): kept, not lost.
        elsewhere=sorted(set(ticked) - {message.id for message in page.rows}, reverse=True),
        requeue_form=BulkRequeueForm(),
        refused_for_good=refused_for_good,
        subject=listing.Subjects(),
    )


def _mail_filters() -> tuple[MailFilterForm, listing.MailFilter]:
    form = _filters(MailFilterForm)
    return form, listing.MailFilter(
        status=form.status.data,
        recipient=(form.recipient.data or "").strip(),
        game=form.game.data,
        day=form.day.data,
    )


def _requeue(message_id: int) -> OutboxMessage:
    """Put a failed message back in the queue and write it to the audit trail (caller's
    transaction)."""
    requeued = requeue(message_id)
    _audit_message(requeued, "requeue", "queued message {} again")
    return requeued


def _audit_message(message: OutboxMessage, action: str, note: str) -> None:
    """Write an admin's action on a message to the audit trail; ``note`` names the message
    where it has ``{}``."""
    named = f"{message.id} ({message.kind} to {message.recipient})"
    audit.record(
        current_user.name,
        action,
        note.format(named),
        game_id=message.game_id,
        message_id=message.id,
    )


@bp.post("/mail/requeue")
def requeue_messages() -> BaseResponse:
    """Queue the ticked failed messages again; those refused for good (5xx) once confirmed.

    Comes back to the mail list it was sent from (its filters and page are the form's
    query); one refused for want of the confirmation shows that list again, ticks kept.
    """
    form = BulkRequeueForm()
    # The list's filters and page position, refused (400) as the list refuses them, before
    # anything is changed: the list it comes back to must be one that shows.
    _page(listing.mail_page, *_mail_filters())
    back = redirect(url_for("admin.mail", **_mail_list_args()), code=303)
    if not form.validate():
        flash("Tick the failed messages to queue again.", "error")
        return back
    if not all(is_row_id(message_id) for message_id in form.message.data):
        abort(404)  # no message has that number, and the database could not compare it
    # Newest first, as the mail page lists them: of two emails of a kind that replaces
    # (turn emails to one player), the newer is queued again and the older refused.
    found = list(
        db.session.scalars(
            select(OutboxMessage)
            .where(OutboxMessage.id.in_(form.message.data))
            .order_by(OutboxMessage.id.desc())
        )
    )
    if len(found) != len(set(form.message.data)):
        abort(404)
    refused = [message.id for message in found if refused_for_good(message)]
    if refused and not form.confirm.data:
        flash(
            f"The server refused {len(refused)} of these for good: tick the box to confirm "
            "that they are to be sent again.",
            "error",
        )
        return make_response(_mail_list(ticked=form.message.data), 400)
    problems: list[str] = []
    with transaction():
        for message in found:
            try:
                _requeue(message.id)
            except ValueError as exc:
                problems.append(f"#{message.id}: {exc}")
    cache.forget()
    done = len(found) - len(problems)
    flash(f"{done} message{'s are' if done != 1 else ' is'} queued again.", "notice")
    if problems:
        flash("Not queued again: " + "; ".join(problems), "error")
    return back


def without_credentials(text: str) -> str:
    """``text`` with the token of every credential link (a seat, a home page, an invitation,
    a rematch, an unsubscribe: those the logs hide, :data:`~service.logs.TOKEN_IN_PATH`) and
    every reply address's tag replaced by a placeholder: an admin reading the mail sees
    where they point, never the token or the tag itself."""
    return redact(text, link="[link hidden]", tag="[tag hidden]")


def _message(message_id: int) -> tuple[OutboxMessage, list[int]]:
    """The message, and the live games that withhold its body (none: it is shown): it may
    show a player's hand, the cards of an exchange or the opponent's notes. A digest is about
    each game of the players it lists."""
    message = db.session.get(OutboxMessage, message_id)
    if message is None:
        abort(404)
    about = [message.game_id] if message.game_id is not None else []
    if message.kind == "digest":
        players = (message.params or {}).get("players") or []
        about = list(
            db.session.scalars(select(Player.game_id).where(Player.id.in_(players)).distinct())
        )
    live = select(Game.id).where(Game.id.in_(about), Game.status.in_(OPEN_STATUSES))
    return message, sorted(db.session.scalars(live)) if about else []


@bp.get("/mail/<id:message_id>")
def message(message_id: int) -> str:
    """One message in full: headers, the text body, and the HTML body in a sandboxed frame.

    A queued message is shown as it would be written now (:func:`service.mail.kinds.written`).
    """
    found, withheld = _message(message_id)
    email = None if withheld else written(found)
    return render_template(
        "admin/message.html",
        message=found,
        subject=email.subject if email is not None else listing.Subjects()(found),
        withheld=withheld,
        refused=refused_for_good(found),
        requeue_form=RequeueForm(),
        waiting=found.status == "queued"
        and found.attempts > 0
        and found.next_attempt_at > utcnow(),
        withdraw_form=WithdrawForm(),
        email=email,
        text=without_credentials(email.text) if email is not None else None,
        headers={
            name: without_credentials(value)
            for name, value in with_headers(found.headers, email.headers if email else {}).items()
        },
    )


@bp.get("/mail/<id:message_id>/html")
def message_html(message_id: int) -> Response:
    """The HTML body alone, under a policy that lets it run nothing and fetch nothing."""
    found, withheld = _message(message_id)
    if withheld:
        abort(403, "This message belongs to a game in play: its body is withheld.")
    email = written(found)
    if email is None:
        abort(404, "This message has no text: nothing is to be sent.")
    response = Response(without_credentials(email.html), mimetype="text/html")
    response.headers["Content-Security-Policy"] = MAIL_HTML_CSP
    response.headers["X-Frame-Options"] = "SAMEORIGIN"
    return response


# A last error that is an SMTP server's permanent refusal: ``550 5.1.1 User unknown``.
PERMANENT_REFUSAL = re.compile(r"5\d\d ")


def refused_for_good(message: OutboxMessage) -> bool:
    """Whether the message failed on a permanent refusal (5xx): sent again, it will likely
    be refused again."""
    return message.status == "failed" and bool(PERMANENT_REFUSAL.match(message.last_error or ""))


@bp.post("/mail/<id:message_id>/requeue")
def requeue_message(message_id: int) -> BaseResponse:
    """Put a failed message back in the queue; after a permanent refusal, once confirmed."""
    found = db.session.get(OutboxMessage, message_id)
    if found is None:
        abort(404)
    if refused_for_good(found) and not RequeueForm().confirm.data:
        flash(
            f"The server refused this message for good ({found.last_error}): "
            "tick the box to confirm that it is to be sent again.",
            "error",
        )
        return redirect(url_for("admin.message", message_id=message_id), code=303)
    return _on_message(message_id, lambda: _requeue(message_id), "The message is queued again.")


@bp.post("/mail/<id:message_id>/withdraw")
def withdraw_message(message_id: int) -> BaseResponse:
    """Leave a queued message unsent for good, once the admin ticked that they mean it."""
    if not WithdrawForm().validate():
        flash("Tick the box to confirm that the message is not to be sent.", "error")
        return redirect(url_for("admin.message", message_id=message_id), code=303)

    def withdraw() -> None:
        withdrawn = withdraw_queued(message_id, f"withdrawn by an admin ({current_user.name})")
        _audit_message(withdrawn, "withdraw", "withdrew message {}")

    return _on_message(message_id, withdraw, "The message is withdrawn: it will not be sent.")


@bp.post("/mail/<id:message_id>/retry")
def retry_message(message_id: int) -> BaseResponse:
    """Have a queued message waiting for its next attempt tried at the worker's next pass."""

    def retry() -> None:
        _audit_message(try_now(message_id), "retry", "had message {} tried now")

    return _on_message(message_id, retry, "The message is tried again at the worker's next pass.")


def _on_message(message_id: int, act: Callable[[], object], done: str) -> BaseResponse:
    """Do an admin's action on a message in one transaction, then back to the message's page,
    saying ``done`` or why it was refused (404 for no such message)."""
    try:
        with transaction():
            act()
    except LookupError:
        abort(404)
    except ValueError as exc:
        flash(str(exc), "error")
    else:
        cache.forget()
        flash(done, "notice")
    return redirect(url_for("admin.message", message_id=message_id), code=303)


def _audit_filters() -> AuditFilterForm:
    admins = [SelectChoice(name, name) for name in listing.audit_admins()]
    form: AuditFilterForm = _filters(AuditFilterForm, admin=admins)
    return form


@bp.get("/audit")
def audit_trail() -> str:
    """Every admin action across games, newest first: filter by admin and by game."""
    form = _audit_filters()
    admin, game_id = form.admin.data or "", form.game.data
    page = _page(listing.audit_page, form, admin, game_id)
    query = {key: value for key, value in {"admin": admin, "game": game_id}.items() if value}
    return render_template("admin/audit.html", form=form, page=page, query=query)


@bp.get("/audit.csv")
def audit_csv() -> Response:
    """The audit trail the filters keep, newest first, as a CSV file."""
    form = _audit_filters()
    query = listing.audit_query(form.admin.data or "", form.game.data)

    columns = ["id", "created_at", "admin", "action", "game_id", "message_id", "note"]
    return csv_response(
        "splitmind-audit.csv", columns, query.order_by(AdminAction.id.desc()), attributes(columns)
    )


@bp.get("/stats")
def statistics() -> str:
    """Games per week, time per move, timeouts, and the playtest figures."""
    refresh = request.args.get("refresh") == "1"
    figures, computed_at = cache.cached(
        "statistics", lambda: stats.statistics(utcnow()), refresh=refresh
    )
    counts, _ = cache.cached("game_counts", listing.game_counts, refresh=refresh)
    return render_template(
        "admin/stats.html", stats=figures, counts=counts, computed_at=computed_at
    )


@bp.get("/playtest")
def playtest_page() -> str:
    """The playtest lab: people's games and simulation runs."""
    return render_template("admin/playtest.html", **playtest.page())
