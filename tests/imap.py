"""A real IMAP server for tests: Debian's Dovecot, started on a free port in a folder of its own."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from .smtp import free_port

START_TIMEOUT = 20.0
USER, PASSWORD = "replies", "secret"

CONFIG = """\
base_dir = {root}/run
state_dir = {root}/state
log_path = {root}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
first_valid_uid = 0
mail_location = maildir:{root}/mail/%u
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {root}/users
}}
userdb {{
  driver = static
  args = uid={uid} gid={gid} home={root}/mail/%u
}}
service imap-login {{
  inet_listener imap {{
    port = {port}
  }}
  inet_listener imaps {{
    port = 0
  }}
}}
# The test's folders are private to the user running the tests: so is the password lookup.
service auth {{
  user = {user}
}}
service auth-worker {{
  user = {user}
}}
service stats {{
  unix_listener stats-reader {{
    mode = 0666
  }}
  unix_listener stats-writer {{
    mode = 0666
  }}
}}
"""


def dovecot() -> str | None:
    """The dovecot binary, if Debian's dovecot-imapd is installed."""
    return shutil.which("dovecot") or (
        "/usr/sbin/dovecot" if Path("/usr/sbin/dovecot").exists() else None
    )


def mail_owner() -> tuple[int, int]:
    """Who owns the test's mail: the user running the tests, or Dovecot's own user for root
    (Dovecot never gives a mailbox to root)."""
    if os.getuid() != 0:
        return os.getuid(), os.getgid()
    entry = pwd.getpwnam("dovecot")
    return entry.pw_uid, entry.pw_gid


class IMAPServer:
    """Dovecot in the foreground, with one user, until :meth:`stop`; its files in a folder of
    its own under the system's temporary folder, removed at the end."""

    def __init__(self) -> None:
        # Dovecot's own processes read this folder: it must not be private to the tests' user.
        self.root = Path(tempfile.mkdtemp(prefix="splitmind-imap-"))
        self.root.chmod(0o711)
        self.port = free_port()
        self.user, self.password = USER, PASSWORD
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> IMAPServer:
        binary = dovecot()
        assert binary is not None
        uid, gid = mail_owner()
        for folder in ("run", "state", "mail"):
            (self.root / folder).mkdir(parents=True, exist_ok=True)
        os.chown(self.root / "mail", uid, gid)
        (self.root / "users").write_text(f"{self.user}:{{PLAIN}}{self.password}\n")
        config = self.root / "dovecot.conf"
        config.write_text(
            CONFIG.format(
                root=self.root,
                port=self.port,
                uid=uid,
                gid=gid,
                user=pwd.getpwuid(os.getuid()).pw_name,
            )
        )
        self.process = subprocess.Popen(
            [binary, "-F", "-c", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group: stop() ends Dovecot's children too
        )
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return self
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    log = self.root / "dovecot.log"
                    raise AssertionError(
                        "dovecot did not start: "
                        + (log.read_text() if log.exists() else "")
                        + (self.process.stderr.read().decode() if self.process.stderr else "")
                    ) from None
                time.sleep(0.1)

    def stop(self) -> None:
        if self.process is not None:
            # A test's server keeps nothing: killed at once, with every process it started,
            # rather than waiting a second for Dovecot's orderly shutdown.
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)
            if self.process.stderr is not None:
                self.process.stderr.close()
            self.process = None
        shutil.rmtree(self.root, ignore_errors=True)
