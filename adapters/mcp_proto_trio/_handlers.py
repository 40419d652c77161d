"""What the trio stdio server and the trio HTTP server share around one request.

:class:`Context` is what a handler gets (its request, ``progress``, ``log``,
``notify_changed``, a cancel scope); :func:`call` awaits a handler in a scope and
tells its outcome; :class:`Changes` is a stream's change-notification
outbox and the parking lot its writer task waits in.  Neither server module
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
    RequestContext,
    RunHandler,
    ServerSettings,
)

__all__ = ["Changes", "Context", "Handler", "call"]

Handler = Callable[["Context", Any], Awaitable[Any]]
_SPENT = trio.CancelScope()  # a finished request's scope: cancelling it reaches nothing


class Context(AsyncHandlerContext):
    """What an async handler gets: its request, and ``progress``, ``log`` and
    ``notify_changed`` to talk about it.  Cancellation arrives as ``trio.Cancelled``
    (the handler runs in :attr:`scope`).
    """

    def __init__(self, core: RequestContext, session: Any) -> None:
        super().__init__(core, session)
        self.scope = _SPENT  # until it runs (see call): a cancel now is seen as it starts

    def _cancel(self) -> None:
        super()._cancel()
        self.scope.cancel()


class Changes(AsyncChanges):
    """A stream's change notifications: its outbox, and where its writer task waits."""

    def __init__(self, server: ServerSettings[Any], who: str) -> None:
        super().__init__(server.fanout_queue, who)
        self.waiting = trio.lowlevel.ParkingLot()

    def _wake(self) -> None:
        self.waiting.unpark_all()

    async def _sleep(self) -> None:
        await self.waiting.park()


async def call(
    run: RunHandler[Handler, Context], scope: trio.CancelScope
) -> tuple[Any, Exception | None]:
    """Await ``run``'s handler in ``scope``: ``(value, None)``, or ``(None, error)``.

    ``scope`` (entered by the caller, often a worker's for many requests) is the
    request's ``ctx.scope`` while the handler runs, so a cancellation reaches it, and
    ``trio.Cancelled`` propagates for ``scope`` to catch; a request cancelled before it
    started starts cancelled.  Once it is over its scope is a spent one, so a late
    cancel cannot reach the worker's next request.
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
