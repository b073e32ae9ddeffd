"""The local mailbox: in development without an SMTP server, emails are read here."""

from flask import Blueprint

bp = Blueprint("mailbox", __name__, url_prefix="/mailbox")

from . import views  # noqa: E402,F401
