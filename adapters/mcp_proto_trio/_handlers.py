"""What the trio stdio server and the trio HTTP server share around one request.

:class:`Context` is what a handler gets (its request, ``progress``, ``log``,
``notify_changed``, a cancel scope); :func:`run_handler` runs a handler in that
scope and sends its answer; :class:`Changes` is a stream's change-notification
outbox and the parking lot its writer task waits in.  Neither server module
imports the other for these: ``_server`` imports ``_http`` to serve HTTP, and
both import this module.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from mcp_proto_runtime import (
    SEND_REFUSED,
    AsyncChanges,
    AsyncHandlerContext,
    RequestContext,
    ServerSettings,
    answer,
    internal_error,
    server_log,
)

__all__ = ["Changes", "Context", "Handler", "run_handler"]

Handler = Callable[["Context", Any], Awaitable[Any]]
_SPENT = trio.CancelScope()  # a finished request's scope: cancelling it reaches nothing


class Context(AsyncHandlerContext):
    """What an async handler gets: its request, and ``progress``, ``log`` and
    ``notify_changed`` to talk about it.  Cancellation arrives as ``trio.Cancelled``
    (the handler runs in :attr:`scope`).
    """

    def __init__(self, core: RequestContext, session: Any) -> None:
        super().__init__(core, session)
        self.scope = trio.CancelScope()

    def _cancel(self) -> None:
        super()._cancel()
        self.scope.cancel()

    async def _run_in(self, scope: trio.CancelScope, run: Callable[[], Awaitable[None]]) -> None:
        """``await run()`` in a worker's ``scope``, which is this request's while it runs.

        A request cancelled before it started starts cancelled; once it is over its
        scope is a spent one, so a late cancel cannot reach the worker's next request.
        """
        self.scope = scope
        if self.cancelled:
            scope.cancel()
        try:
            await run()
        finally:
            self.scope = _SPENT


class Changes(AsyncChanges):
    """A stream's change notifications: its outbox, and where its writer task waits."""

    def __init__(self, server: ServerSettings[Any], who: str) -> None:
        super().__init__(server.fanout_queue, who)
        self.waiting = trio.lowlevel.ParkingLot()

    def _wake(self) -> None:
        self.waiting.unpark_all()

    async def _sleep(self) -> None:
        await self.waiting.park()


async def run_handler(
    server: ServerSettings[Handler],
    ctx: Context,
    emit: Callable[[Any], Awaitable[None]],
    cache_hints: tuple[int, str],
    *,
    scoped: bool = True,
) -> None:
    """Run ``ctx``'s handler in its cancel scope and send its answer, unless cancelled.

    ``scoped=False``: the caller runs it inside ``ctx.scope`` already, and a
    cancellation propagates as ``trio.Cancelled`` for the caller's scope to catch.
    """
    request = ctx.request
    handler = server.handlers.find(request.method)
    assert handler is not None
    outcome: Any = None
    with ctx.scope if scoped else contextlib.nullcontext():
        try:
            value = await handler(ctx, request.params)
        except Exception as e:
            outcome = answer(request, error=e)
        else:
            outcome = answer(request, value, cache_hints=cache_hints)
    if outcome is None:
        return  # cancelled: nothing is sent for it (STDIO-13)
    try:
        await emit(outcome)
    except SEND_REFUSED as e:  # the handler's answer broke a send rule or cannot be encoded
        server_log.error("handler for %s: its answer was refused: %s", request.method, e)
        await emit(internal_error(request))
