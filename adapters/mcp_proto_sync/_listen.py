"""The blocking client's listen: a ``subscriptions/listen`` stream read on demand.

There is no reader thread: :meth:`Subscription.next` reads the client's input
until a notification of this listen arrives or its deadline passes.  Over stdio,
notifications of open listens that arrive while a call waits are kept for them
(at most :data:`QUEUED` each, the oldest dropped first); over HTTP each listen
reads its own connection.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

import mcp_proto as m
from mcp_proto import types as t

__all__ = ["QUEUED", "Subscription"]

#: notifications kept per stdio listen while its owner is not reading
QUEUED = 1024


class _Listens(Protocol):
    """What a :class:`Subscription` needs of its client (stdio or HTTP)."""

    def _listen_event(self, id: t.RequestId, deadline: float | None) -> Any: ...
    def _end_listen(self, id: t.RequestId) -> None: ...


class Subscription:
    """An acknowledged listen: iterate for its notifications; :meth:`close` cancels it.

    ``for note in sub`` blocks until each notification; :meth:`next` takes a
    ``timeout``.  Iteration stops when the server ends the stream gracefully
    (SUB-12) or after :meth:`close`; a lost connection raises
    ``ConnectionError`` (re-listen, SUB-14).  Use it as a context manager so the
    stream is closed (SUB-11).
    """

    def __init__(self, client: _Listens, id: t.RequestId, honoured: t.SubscriptionFilter) -> None:
        self.client = client
        self.id = id
        #: what the server agreed to send (SUB-07: may be less than asked)
        self.honoured = honoured
        #: True once the stream is over (ended by the server, or closed)
        self.ended = False

    def next(self, timeout: float | None = None) -> m.Notification | None:
        """The next notification; ``None`` when ``timeout`` passes or the stream is over."""
        if self.ended:
            return None
        deadline = None if timeout is None else time.monotonic() + timeout
        event = self.client._listen_event(self.id, deadline)
        if isinstance(event, m.SubscriptionEnded):
            self.close()
            return None
        note: m.Notification | None = event  # a notification, or None at the deadline
        return note

    def __iter__(self) -> Subscription:
        return self

    def __next__(self) -> m.Notification:
        note = self.next()
        if note is None:
            raise StopIteration
        return note

    def close(self) -> None:
        """Cancel the listen (SUB-11); nothing more arrives for it."""
        if not self.ended:
            self.ended = True
            self.client._end_listen(self.id)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
