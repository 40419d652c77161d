"""The trio server: one reader loop, one task per request, in a nursery it owns.

All protocol decisions are the core's (:class:`mcp_proto.ServerConnection` and
:mod:`mcp_proto._app`); this module reads, writes and runs tasks.  A client's
cancellation cancels the handler's cancel scope (``trio.Cancelled`` inside it).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import trio

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto._app import (
    FANOUT_TIMEOUT,
    SATURATION_PAUSE,
    SEND_REFUSED,
    AsyncHandlerContext,
    Handlers,
    RequestContext,
    ServerSettings,
    answer,
    default_answer,
    internal_error,
)

__all__ = ["Context", "Handler", "Server"]

Handler = Callable[["Context", Any], Awaitable[Any]]
_CHUNK = 65536


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


class Server(ServerSettings[Handler]):
    """Handlers ``async fn(ctx, params) -> result``, and the settings of
    :class:`mcp_proto._app.ServerSettings`; serves any number of streams.

    ``max_concurrency`` bounds the handlers running at once on one stream.
    """

    def __init__(
        self,
        handlers: Handlers[Handler] | Mapping[str, Handler] | None = None,
        *,
        max_concurrency: int = 64,
        **options: Any,
    ) -> None:
        super().__init__(handlers, **options)
        self.max_concurrency = max_concurrency

    async def serve_stdio(self) -> None:
        """Serve the process's stdin and stdout until stdin ends (STDIO-15).

        ``sys.stdout`` points at stderr while serving, so a stray ``print``
        cannot corrupt the stream (STDIO-06).
        """
        stdin = trio.lowlevel.FdStream(os.dup(sys.stdin.fileno()))
        stdout = trio.lowlevel.FdStream(os.dup(sys.stdout.fileno()))
        real_stdout, sys.stdout = sys.stdout, sys.stderr
        try:
            await self.serve(trio.StapledStream(stdout, stdin))
        finally:
            sys.stdout = real_stdout
            await stdin.aclose()
            await stdout.aclose()

    async def serve(
        self, stream: trio.abc.HalfCloseableStream | trio.StapledStream[Any, Any]
    ) -> None:
        """Serve one byte stream until its input ends; in-flight handlers are cancelled."""
        session = _Session(self, stream)
        self._sessions.add(session)
        try:
            await session.run()
        finally:
            self._sessions.discard(session)

    async def serve_http(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        task_status: trio.TaskStatus[tuple[str, int]] = trio.TASK_STATUS_IGNORED,
        **http_options: Any,
    ) -> None:
        """Serve Streamable HTTP on ``host:port`` until cancelled; a task per connection.

        ``http_options`` go to :class:`mcp_proto.http.HTTPServer`.  With
        ``await nursery.start(server.serve_http, host, 0)`` you get the bound
        address back once the socket listens.
        """
        from ._http import serve_http

        await serve_http(self, host, port, task_status=task_status, http_options=http_options)

    async def notify_changed(self, method: str, params: Any = None) -> None:
        """Fan a change notification out to every matching subscription of every stream."""
        event = m.Notification(method=method, params=params or t.NotificationParams())
        for session in list(self._sessions):
            gone = (trio.BrokenResourceError, trio.ClosedResourceError)  # the others still get it
            with trio.move_on_after(FANOUT_TIMEOUT), contextlib.suppress(*gone):
                await session.emit(event)  # a subscriber that stopped reading is skipped


class _Session:
    def __init__(self, server: Server, stream: Any) -> None:
        self.server = server
        self.conn = server.connection()
        self.stream = stream
        self.send_lock = trio.Lock()  # one send_all at a time on a trio stream
        self.contexts: dict[t.RequestId, Context] = {}
        self.limiter = trio.CapacityLimiter(server.max_concurrency)
        self.slot_freed = trio.lowlevel.ParkingLot()

    async def emit(self, event: Any) -> None:
        data = self.conn.send(event)
        if data:
            await send_locked(self.send_lock, self.stream, data, shield=True)

    async def run(self) -> None:
        async with trio.open_nursery() as nursery:
            while await self._step(nursery):
                pass
            with trio.move_on_after(self.server.shutdown_grace):
                while self.contexts:  # the input ended: let what was received finish
                    await self.slot_freed.park()
            nursery.cancel_scope.cancel()

    async def _step(self, nursery: trio.Nursery) -> bool:
        while self.conn.saturated:  # backpressure: read no more while requests end...
            with trio.move_on_after(SATURATION_PAUSE) as paused:
                await self.slot_freed.park()
            if paused.cancelled_caught:
                break  # ...but none ended for a while: read on, a cancel may be waiting
        chunk = await self.stream.receive_some(_CHUNK)
        self.conn.receive_data(chunk)
        while True:
            try:
                event = self.conn.next_event()
            except m.RemoteProtocolError as e:
                print(f"mcp-proto: input framing lost: {e}", file=sys.stderr)
                return False
            if event is m.NEED_DATA:
                return bool(chunk)
            if isinstance(event, m.ConnectionClosed):
                return False
            if isinstance(event, m.Request):
                if self.server.handlers.find(event.method) is None:
                    await self.emit(default_answer(self.conn, event))
                    continue
                ctx = Context(RequestContext(event), self)
                self.contexts[event.id] = ctx
                nursery.start_soon(self._handle, ctx)
            elif isinstance(event, m.Cancelled):
                cancelled = self.contexts.get(event.id)
                if cancelled is not None:
                    cancelled._cancel()
            elif isinstance(event, m.InvalidMessage):
                await self.emit(event)

    async def _handle(self, ctx: Context) -> None:
        try:
            try:  # a free slot is taken without a trip through the scheduler
                self.limiter.acquire_nowait()
            except trio.WouldBlock:
                await self.limiter.acquire()
            try:
                await run_handler(self.server, ctx, self.emit, self.conn.cache_hints)
            finally:
                self.limiter.release()
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the client went away while we answered: the reader sees the end
        finally:
            self.contexts.pop(ctx.request.id, None)
            self.slot_freed.unpark_all()


async def send_locked(lock: trio.Lock, stream: Any, data: bytes, *, shield: bool) -> None:
    """``send_all`` under ``lock`` (trio streams take one sender at a time).

    An uncontended lock is taken without a checkpoint: one scheduler trip less per message.
    ``shield``: a cancellation waits for the whole message (a stream shared by many
    requests, stdio).  Without it, a send cancelled halfway closes the stream: a
    half-written message must never be followed by another (an HTTP connection).
    """
    try:
        lock.acquire_nowait()
    except trio.WouldBlock:
        await lock.acquire()
    try:
        with trio.CancelScope(shield=shield):
            await stream.send_all(data)
    except trio.Cancelled:
        await trio.aclose_forcefully(stream)
        raise
    finally:
        lock.release()


async def run_handler(
    server: Server,
    ctx: Context,
    emit: Callable[[Any], Awaitable[None]],
    cache_hints: tuple[int, str],
) -> None:
    """Run ``ctx``'s handler in its cancel scope and send its answer, unless cancelled."""
    request = ctx.request
    handler = server.handlers.find(request.method)
    assert handler is not None
    outcome: Any = None
    with ctx.scope:
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
        print(f"mcp-proto: handler for {request.method}: {e}", file=sys.stderr)
        await emit(internal_error(request))
