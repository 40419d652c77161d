"""Change-notification fan-out: the policy the adapters share, with no I/O and no clock.

A server's ``notify_changed`` never writes to a subscriber.  It offers the
notification to each subscriber's :class:`Outbox` (a stdio stream, or an HTTP
connection holding a ``subscriptions/listen``) and returns; the subscriber's own
writer (a task or a thread of the adapter) takes the notifications out in order
and writes them.  A subscriber that does not keep up is ended, never waited for:

* its outbox already holds ``limit`` notifications when another comes: the
  outbox drops what it holds, accepts nothing more, and turns :attr:`Outbox.ending`;
  the writer, once its current write is done, ends the subscription gracefully
  with the listen's result (SUB-11, SUB-12) instead of writing anything else;
* on HTTP, a write (a notification, or that result) that does not complete within
  the adapter's ``fanout_timeout``: the connection is closed.

The adapters hold the clock and the writers; this module holds the bound, the
verdicts and the logger that reports every subscriber ended this way.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable
from enum import Enum
from typing import Any, Generic, TypeVar

from mcp_proto import Notification, Result
from mcp_proto import types as t

from ._log import server_log

__all__ = [
    "AsyncChanges",
    "FANOUT_QUEUE",
    "FANOUT_TIMEOUT",
    "Offer",
    "Outbox",
    "listen_end",
    "log",
    "peer_of",
    "write_timed_out",
]

#: change notifications one subscriber may have waiting for its writer (the bound of its outbox)
FANOUT_QUEUE = 64
#: seconds a write to an HTTP subscriber may take before its connection is closed
FANOUT_TIMEOUT = 5.0
#: where the adapters report a subscriber they ended for being slow (``mcp_proto.server``)
log = server_log

T = TypeVar("T")


class Offer(Enum):
    """What :meth:`Outbox.offer` did with a notification."""

    #: queued: wake the writer
    QUEUED = "queued"
    #: the outbox was full: nothing queued, the subscriber is ending now (log it, wake the writer)
    OVERFLOW = "overflow"
    #: the subscriber is already ending: dropped
    DROPPED = "dropped"


class Outbox(Generic[T]):
    """One subscriber's notifications waiting for its writer, oldest first, at most ``limit``.

    ``who`` names the subscriber in the warning :data:`log` gets when it falls
    behind.  Not thread-safe: the blocking adapter holds a lock around it.

    >>> box = Outbox[str](limit=2)
    >>> [box.offer(n).name for n in "abc"]
    ['QUEUED', 'QUEUED', 'OVERFLOW']
    >>> box.ending, len(box), box.pop(), box.offer("d").name
    (True, 0, None, 'DROPPED')
    """

    __slots__ = ("_items", "ending", "limit", "who")

    def __init__(self, limit: int = FANOUT_QUEUE, who: str = "a subscriber") -> None:
        if limit < 1:
            raise ValueError("an outbox holds one notification at least")
        self.limit = limit
        self.who = who
        self._items: deque[T] = deque()
        #: the subscriber fell behind: its writer ends the subscription, nothing more is queued
        self.ending = False

    def __len__(self) -> int:
        return len(self._items)

    def offer(self, item: T) -> Offer:
        """Queue ``item`` unless the subscriber is ending or this one would pass ``limit``."""
        if self.ending:
            return Offer.DROPPED
        if len(self._items) >= self.limit:
            self.ending = True
            self._items.clear()  # never written: the subscription ends before them
            log.warning("%s fell %d change notifications behind: ending it", self.who, self.limit)
            return Offer.OVERFLOW
        self._items.append(item)
        return Offer.QUEUED

    def pop(self) -> T | None:
        """The oldest waiting notification, or ``None``; always ``None`` once ending."""
        return self._items.popleft() if self._items and not self.ending else None

    def reopen(self) -> None:
        """The writer ended the subscriptions: accept notifications again (for new listens)."""
        self.ending = False
        self._items.clear()


def listen_end(id: t.RequestId) -> Result:
    """The graceful end of listen ``id`` (SUB-12); the core stamps its ``subscriptionId``."""
    return Result(id=id, result=t.SubscriptionsListenResult())


def peer_of(sock: Any) -> str:
    """``host:port`` of a connected socket's peer, to name it in a warning."""
    try:
        host, port = sock.getpeername()[:2]
    except (OSError, AttributeError):  # gone already, or no socket
        return "an HTTP client"
    return f"{host}:{port}"


def write_timed_out(who: str, timeout: float) -> None:
    """Log that a write to ``who`` took over ``timeout`` seconds and its connection was closed."""
    log.warning("%s: a write took over %s s: connection closed", who, timeout)


class AsyncChanges:
    """A stream's change notifications in an async adapter: its outbox, and its writer's waits.

    The adapter subclasses it with how its writer task sleeps and is woken
    (:meth:`_sleep`, :meth:`_wake`).  ``writing`` is true while the writer holds a
    notification it took out and has not written yet.
    """

    def __init__(self, limit: int, who: str) -> None:
        self.outbox = Outbox[Notification](limit, who)
        self.writing = False

    @property
    def idle(self) -> bool:
        """Nothing waits to be written: a notification written at once stays in order."""
        return not (self.outbox or self.writing or self.outbox.ending)

    def offer(self, event: Notification) -> None:
        """Queue ``event`` for the writer, or drop it; never waits."""
        if self.outbox.offer(event) is not Offer.DROPPED:
            self._wake()

    async def next(self) -> Notification | None:
        """The next notification to write, once there is one; ``None``: end the subscriptions."""
        self.writing = False  # the last one was written
        while (event := self.outbox.pop()) is None:
            if self.outbox.ending:
                return None
            await self._sleep()
        self.writing = True
        return event

    async def write_stream(self, conn: Any, emit: Callable[[Any], Awaitable[None]]) -> None:
        """A stdio stream's writer: its notifications, as slowly as its reader takes them.

        A stream that fell behind has every open listen of ``conn`` ended with its
        result (SUB-12), then gets the notifications of the listens it opens next.
        Returns only by the exceptions of ``emit`` (the adapter's "client gone").
        """
        while True:
            event = await self.next()
            if event is not None:
                await emit(event)
                continue
            for id in conn.subscriptions():
                await emit(listen_end(id))
            self.outbox.reopen()

    def _wake(self) -> None:
        raise NotImplementedError

    async def _sleep(self) -> None:
        raise NotImplementedError
