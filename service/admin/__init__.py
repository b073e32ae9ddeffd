"""The admin dashboard under ``/admin``: an overview, games, mail, an address, the audit trail
and statistics, for signed-in admins only."""

from flask import Blueprint, Flask

bp = Blueprint("admin", __name__, url_prefix="/admin")

from . import accounts, address_page, auth, cli, routes  # noqa: E402,F401


def init_app(app: Flask) -> None:
    """Register the dashboard, its sign-in and the ``admin`` commands."""
    auth.login_manager.init_app(app)
    app.register_blueprint(bp)
    app.cli.add_command(cli.admin_cli)
