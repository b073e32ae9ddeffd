"""The address page: what is kept of one email address, for its owner who asks.

An operator answering an access request downloads it (:func:`.address_data.export_address`);
one answering an erasure request erases it (:func:`service.erasure.erase_address`), as
``flask games export-address`` and ``erase-address`` do, with the same refusals. Each is
one transaction, owned here, with its entry in the audit trail.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from flask import Response, abort, flash, make_response, redirect, render_template, url_for
from flask_login import current_user
from markupsafe import Markup
from sqlalchemy import select
from werkzeug.wrappers import Response as BaseResponse

from .. import erasure
from ..models import OPEN_STATUSES, Game, db
from ..unit_of_work import transaction
from . import address_data, bp, cache
from .forms import AddressDataForm, AddressLookupForm, EraseAddressForm
from .routes import _filters

# Why a game holds its address, as the page says it.
HELD_BY = {"active": "in play", "waiting": "waiting for its invitation to be answered"}


@bp.get("/address")
def address_page() -> str:
    """What is kept of the address the query names, counted, with its download and its
    erasure; without one, a form that asks for it."""
    form: AddressLookupForm = _filters(AddressLookupForm)
    return _page((form.email.data or "").strip())


def _page(email: str) -> str:
    """The address page of ``email`` (none: the form alone), its forms empty."""
    kept = None
    if email:
        try:
            kept = address_data.kept_of(email)
        except ValueError as exc:
            abort(400, str(exc))
    playing = [
        (game["game"], game["status"])
        for game in (kept or {}).get("games", [])
        if game["status"] in OPEN_STATUSES
    ]
    return render_template(
        "admin/address.html",
        form=AddressLookupForm(data={"email": email}),
        kept=kept,
        empty=kept is not None and address_data.is_empty(kept),
        playing=still_playing(playing) if playing else None,
        export_form=AddressDataForm(formdata=None),
        erase_form=EraseAddressForm(formdata=None),
    )


def still_playing(games: Iterable[tuple[int, str]]) -> Markup:
    """The games in play or waiting that keep an address from being erased, each linked:
    ``game #3 (in play) and game #5 (waiting …): end them first``."""
    named = [
        Markup('<a href="{}">game #{}</a> ({})').format(
            url_for("admin.game", game_id=game), game, HELD_BY[status]
        )
        for game, status in games
    ]
    listed = (
        Markup(", ").join(named[:-1]) + Markup(" and ") + named[-1] if len(named) > 1 else named[0]
    )
    ending = (
        "them first (cancel them on their pages)"
        if len(named) > 1
        else "it first (cancel it on its page)"
    )
    return listed + f": end {ending}"


@bp.post("/address/export")
def export_address() -> BaseResponse:
    """Everything kept of the address, as a JSON file to send its owner; written in the audit
    trail."""
    form = AddressDataForm()
    if not form.validate():
        flash("This form does not say which address to export: give it again.", "error")
        return redirect(url_for("admin.address_page"), code=303)
    try:
        with transaction():
            kept = address_data.export_address(form.email.data or "", actor=current_user.name)
    except ValueError as exc:
        abort(400, str(exc))
    return Response(
        json.dumps(kept, indent=1, ensure_ascii=False) + "\n",
        mimetype="application/json",
        # Named without the address: a download folder or a proxy's log keeps the name.
        headers={
            "Content-Disposition": 'attachment; filename="splitmind-address-export.json"',
            "Cache-Control": "no-store",
        },
    )


@bp.post("/address/erase")
def erase_address() -> BaseResponse:
    """Erase the address once the admin ticked that they mean it; refused (409, the page as
    it stands) while it plays a game in play or waiting for its invitation's answer."""
    form = EraseAddressForm()
    email = (form.email.data or "").strip()
    if not form.validate():
        if form.email.errors:
            flash("This form does not say which address to erase: give it again.", "error")
            return redirect(url_for("admin.address_page"), code=303)
        flash("Tick the box to confirm that the address is to be erased.", "error")
        return redirect(url_for("admin.address_page", email=email), code=303)
    try:
        with transaction():
            erased = erasure.erase_address(email, actor=current_user.name)
    except erasure.StillPlaying as exc:
        statuses = db.session.execute(
            select(Game.id, Game.status).where(Game.id.in_(exc.games)).order_by(Game.id)
        )
        held = [(game, status) for game, status in statuses]
        flash(Markup("Not erased: the address plays ") + still_playing(held), "error")
        return make_response(_page(email), 409)
    except ValueError as exc:
        abort(400, str(exc))
    cache.forget()
    flash(
        f"The address is erased: {_count(erased.games, 'finished game')} and "
        f"{_count(erased.invitations, 'invitation')} kept without it, "
        f"{_count(erased.emails, 'email')} deleted."
        if erased.found
        else "Nothing was stored of that address; the erasure is in the audit trail.",
        "notice",
    )
    # Back to the page without the address: an erased address is kept in no address either.
    return redirect(url_for("admin.address_page"), code=303)


def _count(number: int, thing: str) -> str:
    return f"{number} {thing}{'s' if number != 1 else ''}"
