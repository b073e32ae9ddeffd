"""The unit of work: the one place where a transaction is committed or rolled back.

Service functions (:mod:`service.games`, :mod:`service.invitations` and the
others) only flush what they change, and log it; whoever starts an operation
owns its transaction and says so with one block::

    with transaction():
        games.apply_move(human, version, action)
        games.apply_move(computer, version + 1, reply)

The outermost block commits when it ends, or rolls back if an exception leaves
it; a block inside another joins it and commits nothing. So service calls
compose: both moves above are applied, under the same row locks and version
checks as one move alone, or neither is. The owners are the routes (one block
per request that changes something), the command line, the deadline sweep (one
per game) and the mail worker (one per message).

Emails need nothing more: the outbox rows are written in the same transaction,
and the worker sends only what was committed. What must happen only once the
commit has succeeded (counting a move in the metrics) is handed to
:func:`after_commit`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from .models import db

log = logging.getLogger(__name__)

# Where the open unit of work is kept: on the session it commits, so each
# application context (each request, each worker thread) has its own.
KEY = "splitmind.unit_of_work"


class RolledBack(RuntimeError):
    """A block inside the transaction failed and the exception was caught: nothing was committed."""


@dataclass
class UnitOfWork:
    """The open transaction: what to run after its commit, and whether an inner block failed."""

    after_commit: list[Callable[[], object]] = field(default_factory=list)
    failed: bool = False


@contextmanager
def transaction() -> Iterator[None]:
    """Commit what the block did when the outermost block ends; roll it all back on an exception.

    A block inside another joins it. An exception that leaves an inner block
    dooms the whole transaction, even if the code around it catches the
    exception: the outermost block then rolls back and raises
    :class:`RolledBack`, so a half-done operation is never committed.
    """
    work = db.session.info.get(KEY)
    if work is not None:
        try:
            yield
        except BaseException:
            work.failed = True
            raise
        return
    work = db.session.info[KEY] = UnitOfWork()
    try:
        yield
        if work.failed:
            raise RolledBack("an inner block failed, so the transaction was rolled back")
        db.session.commit()
    except BaseException:
        db.session.rollback()
        raise
    finally:
        db.session.info.pop(KEY, None)
    for action in work.after_commit:
        try:
            action()
        except Exception:
            log.exception("an action after the commit failed; what was committed stands")


def reading() -> None:
    """Run the rest of this request's statements each on its own, outside any transaction.

    For a request that only reads (a GET never changes anything). Each statement
    sees the data as of its own start, as it would inside a transaction at
    PostgreSQL's READ COMMITTED, so the transaction would only cost the round
    trips of its BEGIN and ROLLBACK. Inside an open transaction it does nothing.
    """
    if not db.session().in_transaction():
        db.session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})


def after_commit(action: Callable[[], object]) -> None:
    """Run ``action`` once the open transaction has committed; never if it rolls back."""
    work = db.session.info.get(KEY)
    if work is None:
        raise RuntimeError("after_commit() is for work inside a transaction() block")
    work.after_commit.append(action)
