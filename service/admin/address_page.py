"""The address page: what is kept of one email address, for its owner who asks.

An operator answering an access request downloads it (:func:`.address_data.export_address`);
one answering an erasure request erases it (:func:`service.erasure.erase_address`), as
``flask games export-address`` and ``erase-address`` do. Each is one transaction, owned
here, with its entry in the audit trail.
"""

from __future__ import annotations

import json

from flask import Response, abort, flash, redirect, render_template, url_for
from flask_login import current_user
from werkzeug.wrappers import Response as BaseResponse

from ..models import OPEN_STATUSES
from ..unit_of_work import transaction
from . import address_data, bp
from .forms import AddressDataForm, AddressLookupForm
from .routes import _filters


@bp.get("/address")
def address_page() -> str:
    """What is kept of the address the query names, counted, with its download; without
    one, a form that asks for it."""
    form: AddressLookupForm = _filters(AddressLookupForm)
    email = (form.email.data or "").strip()
    kept = None
    if email:
        try:
            kept = address_data.kept_of(email)
        except ValueError as exc:
            abort(400, str(exc))
    return render_template(
        "admin/address.html",
        form=form,
        kept=kept,
        empty=kept is not None and address_data.is_empty(kept),
        open_statuses=OPEN_STATUSES,
        export_form=AddressDataForm(formdata=None),
    )


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
