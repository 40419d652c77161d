"""What the asyncio stdio server and the asyncio HTTP server share around one request.

:class:`Context` is what a handler gets (its request, ``progress``, ``log``,
``notify_changed``); :func:`run_handler` runs a handler and sends its answer;
:class:`Changes` is a stream's change-notification outbox and the event its
writer task waits on.  Neither server module imports the other for these:
``_server`` imports ``_http`` to serve HTTP, and both import this module.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from mcp_proto_runtime import (
    SEND_REFUSED,
    AsyncChanges,
    AsyncHandlerContext,
    ServerSettings,
    answer,
    internal_error,
    server_log,
)

__all__ = ["Changes", "Context", "Handler", "run_handler"]

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


async def run_handler(
    server: ServerSettings[Handler],
    ctx: Context,
    emit: Callable[[Any], Awaitable[None]],
    cache_hints: tuple[int, str],
) -> None:
    """Run ``ctx``'s handler and send its answer; a cancelled handler sends nothing."""
    request = ctx.request
    handler = server.handlers.find(request.method)
    assert handler is not None
    try:
        value = await handler(ctx, request.params)
    except asyncio.CancelledError as e:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            ctx._core.cancelled = True  # nothing is sent for it (STDIO-13)
            raise
        outcome: Any = answer(request, error=e)  # the handler's own subtask, not the client
    except Exception as e:
        outcome = answer(request, error=e)
    else:
        outcome = answer(request, value, cache_hints=cache_hints)
    try:
        await emit(outcome)
    except SEND_REFUSED as e:  # the handler's answer broke a send rule or cannot be encoded
        server_log.error("handler for %s: its answer was refused: %s", request.method, e)
        await emit(internal_error(request))
