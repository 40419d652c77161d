"""Streamable HTTP for the trio server: a task per TCP connection, h11 in the core.

Each connection's task reads the stream and feeds :class:`mcp_proto.http.HTTPServerConnection`
(one exchange per h11 cycle, keep-alive between them).  A request's handler runs in
its own task, in the connection's nursery, while the connection keeps reading, so a
client that closes the response is seen at once and cancels the handler's scope
(CANCEL-04, HTTP-SSE-5).  A listen with no handler is acknowledged and stays open on
its connection, which sends a keep-alive comment when it has been quiet for
``keepalive_interval`` seconds; change notifications reach it through
:meth:`Server.notify_changed`.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import trio

import mcp_proto as m
from mcp_proto._app import ClientClock, RequestContext, default_answer
from mcp_proto.http import HTTPServer, HTTPServerConnection, Reply

from ._server import Context, Server, run_handler, send_locked

__all__ = ["serve_http"]

_CHUNK = 65536


async def serve_http(
    server: Server,
    host: str,
    port: int,
    *,
    task_status: trio.TaskStatus[tuple[str, int]],
    http_options: dict[str, Any],
) -> None:
    http = HTTPServer(connection=server.connection, **http_options)
    template = server.connection()

    slots = trio.Semaphore(server.max_connections)

    async def accept(stream: trio.SocketStream) -> None:
        if slots.value == 0:
            await stream.aclose()  # at capacity: refuse the connection rather than grow
            return
        async with slots:
            await _Link(server, http, template, stream).run()

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, accept, port, host=host))
        task_status.started(listeners[0].socket.getsockname()[:2])


class _Link:
    """One TCP connection: its h11 state, its stream, the request it is running."""

    def __init__(
        self, server: Server, http: HTTPServer, template: m.ServerConnection, stream: Any
    ) -> None:
        self.server = server
        self.conn = HTTPServerConnection(http)
        self.template = template  # the configuration, for answers that need no handler
        self.stream = stream
        self.send_lock = trio.Lock()  # one send_all at a time on a trio stream
        self.ctx: Context | None = None
        self.listening = False
        self.clock = ClientClock(trio.current_time())  # slowloris: how long the client may take

    async def emit(self, event: Any) -> None:
        data = self.conn.send(event)
        if data:
            await send_locked(self.send_lock, self.stream, data, shield=False)

    async def run(self) -> None:
        try:
            async with trio.open_nursery() as nursery:
                try:
                    while await self._step(nursery):
                        pass
                finally:
                    nursery.cancel_scope.cancel()
        except* (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the client went away (a reset included); raised in the nursery: a group
        finally:
            self.server._sessions.discard(self)
            await self.stream.aclose()

    async def _step(self, nursery: trio.Nursery) -> bool:
        event = self.conn.next_event()
        if event is m.NEED_DATA:
            wait = self._wait()
            if wait is None:
                return False  # the client took too long to send a request: close (slowloris)
            data = b""
            with trio.move_on_after(wait) as quiet:
                data = await self.stream.receive_some(_CHUNK)
            if quiet.cancelled_caught:
                keepalive = self.conn.keepalive()  # b"" unless a stream is open
                if keepalive:
                    await send_locked(self.send_lock, self.stream, keepalive, shield=False)
                return True
            self.conn.receive_data(bytes(data))
            return True
        if isinstance(event, Reply):
            await self.emit(event)
            return not self.conn.must_close
        if isinstance(event, m.Request):
            self.clock.request_arrived()
            await self._dispatch(event, nursery)
        elif isinstance(event, m.Cancelled):  # the client closed the response (HTTP-SSE-5)
            self.listening = False
            self.server._sessions.discard(self)
            if self.ctx is not None:
                self.ctx._cancel()
        elif isinstance(event, m.ConnectionClosed):
            return False
        return True

    def _wait(self) -> float | None:
        """How long to wait for the client's bytes; ``None`` once its time is up."""
        busy = self.ctx is not None or self.listening
        return self.clock.wait(busy=busy, now=trio.current_time(), settings=self.server)

    async def _dispatch(self, request: m.Request, nursery: trio.Nursery) -> None:
        if self.server.handlers.find(request.method) is None:
            await self.emit(default_answer(self.template, request))
            if request.method == "subscriptions/listen":
                self.listening = True
                self.server._sessions.add(self)  # reached by notify_changed from now on
            return
        self.ctx = Context(RequestContext(request), self)
        nursery.start_soon(self._handle, self.ctx)

    async def _handle(self, ctx: Context) -> None:
        try:
            await run_handler(self.server, ctx, self.emit, self.template.cache_hints)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the client went away while we answered
        finally:
            if self.ctx is ctx:
                self.ctx = None
