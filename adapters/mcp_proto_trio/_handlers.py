"""What the trio stdio server and the trio HTTP server share around one request.

:class:`Context` is what a handler gets (its request, ``progress``, ``log``,
``notify_changed``, a cancel scope); :func:`call` awaits a handler in a scope and
tells its outcome; :class:`Changes` is a stream's change-notification
outbox and the :class:`Signal` its writer task waits for.  Neither server module
imports the other for these: ``_server`` imports ``_http`` to serve HTTP, and
both import this module.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import trio

from mcp_proto_runtime import (
    AsyncChanges,
    AsyncHandlerContext,
    AsyncStream,
    RequestContext,
    RunHandler,
    ServerSettings,
)

__all__ = ["Changes", "Context", "Handler", "Signal", "call", "send_whole"]

Handler = Callable[["Context", Any], Awaitable[Any]]
_SPENT = trio.CancelScope()  # a finished request's scope: cancelling it reaches nothing


class Context(AsyncHandlerContext):
    """What an async handler gets: its request, and ``progress``, ``log`` and
    ``notify_changed`` to talk about it.  Cancellation arrives as ``trio.Cancelled``
    (the handler runs in :attr:`scope`).
    """

    def __init__(self, core: RequestContext, session: AsyncStream) -> None:
        super().__init__(core, session)
        self.scope = _SPENT  # until it runs (see call): a cancel now is seen as it starts

    def _cancel(self) -> None:
        super()._cancel()
        self.scope.cancel()


class Signal:
    """A wake-up for the tasks waiting now: :meth:`wake` wakes them all, and is not
    remembered when nobody waits (a task checks its condition, then waits).
    """

    __slots__ = ("_event",)

    def __init__(self) -> None:
        self._event: trio.Event | None = None

    async def wait(self) -> None:
        """Until the next :meth:`wake`; a cancellation ends the wait."""
        if self._event is None:
            self._event = trio.Event()
        await self._event.wait()

    def wake(self) -> None:
        """Wake every task in :meth:`wait`; nothing if none is."""
        if self._event is not None:
            self._event.set()
            self._event = None


class Changes(AsyncChanges):
    """A stream's change notifications: its outbox, and the signal its writer task waits for."""

    def __init__(self, server: ServerSettings[Any], who: str) -> None:
        super().__init__(server.fanout_queue, who)
        self.waiting = Signal()

    def _wake(self) -> None:
        self.waiting.wake()

    async def _sleep(self) -> None:
        await self.waiting.wait()


async def call(
    run: RunHandler[Handler, Context], scope: trio.CancelScope
) -> tuple[Any, Exception | None]:
    """Await ``run``'s handler in ``scope``: ``(value, None)``, or ``(None, error)``.

    ``scope`` (entered by the caller) is the request's ``ctx.scope`` while the handler
    runs, so a cancellation reaches it, and ``trio.Cancelled`` propagates for ``scope``
    to catch; a request cancelled before it started starts cancelled.  Once it is over
    its scope is a spent one, so a late cancel reaches nothing the caller runs next.
    """
    ctx = run.context
    ctx.scope = scope
    if ctx.cancelled:
        scope.cancel()
    try:
        return await run.handler(ctx, run.request.params), None
    except Exception as e:
        return None, e
    finally:
        ctx.scope = _SPENT


async def send_whole(
    stream: trio.abc.SendStream, lock: trio.Lock, data: bytes, timeout: float
) -> bool:
    """``stream.send_all(data)`` under ``lock``, shielded, within ``timeout`` seconds.

    The message is never cut short by a cancellation (the stream is shared: its
    next message would follow half of this one), and never waits for a client
    that stopped reading for longer than ``timeout``.  False if that time ran out
    (the stream then holds part of ``data``: the caller ends it).
    """
    try:
        lock.acquire_nowait()  # uncontended: no trip through the scheduler
    except trio.WouldBlock:
        await lock.acquire()
    try:
        with trio.CancelScope(shield=True, deadline=trio.current_time() + timeout) as scope:
            await stream.send_all(data)
    finally:
        lock.release()
    return not scope.cancelled_caught
