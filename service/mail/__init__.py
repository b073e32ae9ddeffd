"""Email: a transactional outbox, its composer and its worker.

Emails are queued as rows in the same transaction as the change that causes
them (:func:`queue`); the worker writes and delivers them after the commit.
"""

from .outbox import queue, queued, release, requeue, to_go, withdraw, withdrawal

__all__ = ["queue", "queued", "release", "requeue", "to_go", "withdraw", "withdrawal"]
