"""The local mailbox: in development without an SMTP server, emails are read here."""

from flask import Blueprint

bp = Blueprint("local_mailbox", __name__, url_prefix="/mailbox")

from . import routes  # noqa: E402,F401
