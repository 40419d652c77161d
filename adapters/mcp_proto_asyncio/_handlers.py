"""What the asyncio stdio server and the asyncio HTTP server share around one request.

:class:`Context` is what a handler gets (its request, ``progress``, ``log``,
``notify_changed``); :func:`call` awaits a handler and tells its outcome;
:class:`Changes` is a stream's change-notification outbox and the event its
writer task waits on.  Neither server module imports the other for these:
``_server`` imports ``_http`` to serve HTTP, and both import this module.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from mcp_proto_runtime import AsyncChanges, AsyncHandlerContext, RunHandler, ServerSettings

__all__ = ["Changes", "Context", "Handler", "call"]

Handler = Callable[["Context", Any], Awaitable[Any]]


class Context(AsyncHandlerContext):
    """What an async handler gets: its request, and ``progress``, ``log`` and
    ``notify_changed`` to talk about it.  Cancellation arrives as ``asyncio.CancelledError``.
    """


class Changes(AsyncChanges):
    """A stream's change notifications: its outbox, and the event its writer task waits on."""

    def __init__(self, server: ServerSettings[Any], who: str) -> None:
        super().__init__(server.fanout_queue, who)
        self.waiting = asyncio.Event()

    def _wake(self) -> None:
        self.waiting.set()

    async def _sleep(self) -> None:
        self.waiting.clear()
        await self.waiting.wait()


async def call(run: RunHandler[Handler, Context]) -> tuple[Any, BaseException | None]:
    """Await ``run``'s handler: ``(value, None)``, or ``(None, error)`` for what it raised.

    Raises ``asyncio.CancelledError`` when this task is being cancelled (the client's
    cancellation, the end of the stream or connection): nothing is answered then
    (STDIO-13).  A ``CancelledError`` the handler raised of its own (from a subtask of
    its) is an error like any other.
    """
    try:
        return await run.handler(run.context, run.request.params), None
    except asyncio.CancelledError as e:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise
        return None, e
    except Exception as e:
        return None, e
