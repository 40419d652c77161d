"""Streamable HTTP for the asyncio server: a task per TCP connection, HTTP/1.1 in the core.

Each connection's task reads the socket and feeds :class:`mcp_proto.http.HTTPServerConnection`
(one exchange at a time, keep-alive between them).  A request's handler runs in
its own task while the connection keeps reading, so a client that closes the
response is seen at once and cancels the handler (CANCEL-04, HTTP-SSE-5).  A listen
with no handler is acknowledged and stays open on its connection, which sends a
keep-alive comment when it has been quiet for ``keepalive_interval`` seconds;
change notifications reach it through :meth:`Server.notify_changed` and a writer task
of its own, which closes the connection when a write takes over ``fanout_timeout``
seconds or the listen falls ``fanout_queue`` notifications behind (after its result).

Listens and buffered bodies draw on the budgets the connections share
(:mod:`mcp_proto.http.limits`).  A connection that closes after its last response
closes lingeringly (``LINGER_TIME``, ``LINGER_BYTES``), once the listen's writer
has stopped.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.http import HTTPServer
from mcp_proto.http.limits import BodyBudget, ListenBudget
from mcp_proto_runtime import (
    LINGER_BYTES,
    LINGER_TIME,
    CancelHandler,
    EndListen,
    HTTPServerSession,
    OpenListen,
    ReadWithin,
    RequestContext,
    RunHandler,
    Write,
    listen_end,
    peer_of,
    server_log,
    write_timed_out,
)

from ._handlers import Changes, Context, Handler, call

if TYPE_CHECKING:
    from ._server import Server

__all__ = ["serve_http"]

_CHUNK = 65536


async def serve_http(
    server: Server,
    host: str,
    port: int,
    *,
    ready: Callable[[tuple[str, int]], None] | None,
    http_options: dict[str, Any],
) -> None:
    http, template = server.http_binding(http_options)
    budgets = server.budgets()

    slots = asyncio.Semaphore(server.max_connections)
    links: set[asyncio.Task[Any]] = set()

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if slots.locked():
            writer.close()  # at capacity: refuse the connection rather than grow
            return
        task = asyncio.current_task()
        assert task is not None
        links.add(task)
        try:
            async with slots:
                await _Link(server, http, template, reader, writer, budgets=budgets).run()
        finally:
            links.discard(task)

    listener = await asyncio.start_server(accept, host, port)
    try:
        async with listener:
            if ready is not None:
                ready(listener.sockets[0].getsockname()[:2])
            await listener.serve_forever()
    finally:  # stopping the server ends its connections too, as on trio
        for task in list(links):
            task.cancel()
        if links:
            await asyncio.wait(list(links), timeout=5)


class _Link:
    """One TCP connection: the I/O of its :class:`~mcp_proto_runtime.HTTPServerSession`."""

    def __init__(
        self,
        server: Server,
        http: HTTPServer,
        template: m.ServerConnection,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        budgets: tuple[ListenBudget, BodyBudget],
    ) -> None:
        self.server = server
        peer = writer.get_extra_info("peername")
        self.session: HTTPServerSession[Handler, Context] = HTTPServerSession(
            server,
            http,
            template,
            budgets,
            peer=str(peer[0]) if isinstance(peer, tuple) else str(peer),
            make_context=self._context,
            now=time.monotonic(),
        )
        self.conn = self.session.conn
        self.reader = reader
        self.writer = writer
        self.task: asyncio.Task[None] | None = None  # the running handler's
        self.changes: Changes | None = None  # while a listen is open
        self.writing: asyncio.Task[None] | None = None  # its writer

    def _context(self, core: RequestContext) -> Context:
        return Context(core, self)

    async def emit(self, event: m.Notification | m.Result) -> None:
        await self.send(self.session.send(event))

    async def close_stream(self) -> bool:
        data = self.session.close_stream()
        await self.send(data)
        return bool(data)

    async def send(self, data: bytes) -> None:
        """Write ``data`` within ``client_timeout`` seconds, or abort the connection.

        A client that stops reading would otherwise hold its connection (and its slot)
        for good: the clock on its reads (:class:`ClientClock`) does not run while the
        server writes.  Past the deadline the transport is aborted, so the reader sees
        the end and the handler is cancelled as when the client closes; raises
        ``ConnectionResetError`` then.
        """
        if not data:
            return
        self.writer.write(data)
        try:
            async with asyncio.timeout(self.server.client_timeout):
                await self.writer.drain()
        except TimeoutError:
            write_timed_out(self.peer_name(), self.server.client_timeout)
            self.writer.transport.abort()
            raise ConnectionResetError("the client stopped reading") from None

    async def run(self) -> None:
        try:
            await self._carry_out()
        except OSError as e:  # the client went away (a reset, a write past its deadline)
            server_log.debug("%s: connection lost: %r", self.peer_name(), e)
        finally:
            self._end_listen()
            if self.task is not None:
                self.task.cancel()
            self.writer.close()
            self.session.close()  # gives back its body budget

    async def _carry_out(self) -> None:
        session = self.session
        while True:
            action = session.next_action(time.monotonic())
            if isinstance(action, ReadWithin):
                try:
                    async with asyncio.timeout(action.seconds):  # no extra task, unlike wait_for
                        data = await self.reader.read(_CHUNK)
                except TimeoutError:
                    await self.send(session.read_timed_out())  # a keep-alive, if a stream is open
                else:
                    session.receive_data(data)
            elif isinstance(action, Write):
                await self.send(action.data)
            elif isinstance(action, RunHandler):
                self.task = asyncio.get_running_loop().create_task(self._handle(action))
            elif isinstance(action, CancelHandler):
                if self.task is not None:
                    self.task.cancel()
            elif isinstance(action, OpenListen):
                self._open_listen(action)
                await self.send(action.ack)
            elif isinstance(action, EndListen):
                self._end_listen()
            else:
                self._end_listen()  # no notification may follow the write side's shutdown
                if action.linger:  # the last response is written: let the client read it
                    await self._linger()
                return

    def _open_listen(self, listen: OpenListen) -> None:
        self.changes = Changes(self.server, f"listen {listen.id!r} of {self.peer_name()}")
        self.writing = asyncio.get_running_loop().create_task(self._write_changes(listen.id))
        self.server._sessions.add(self)  # reached by notify_changed from now on

    async def _linger(self) -> None:
        """Shut the write side, then read and drop what the client still sends (bounded)."""
        if self.writer.can_write_eof():
            self.writer.write_eof()
        left = LINGER_BYTES
        try:
            async with asyncio.timeout(LINGER_TIME):
                while left > 0 and (data := await self.reader.read(min(_CHUNK, left))):
                    left -= len(data)
        except TimeoutError:
            server_log.debug("%s: lingering close: time is up", self.peer_name())

    def _end_listen(self) -> None:
        """The listen is over, however it ended: out of the fan-out, its budget given
        back (once), its writer stopped.  Idempotent."""
        self.server._sessions.discard(self)
        self.session.end_listen()
        if self.writing is not None and self.writing is not asyncio.current_task():
            self.writing.cancel()

    async def _handle(self, run: RunHandler[Handler, Context]) -> None:
        session = self.session
        try:
            value, error = await call(run)
        except asyncio.CancelledError:  # the client closed the response, or the connection
            session.handler_cancelled(run)
            raise
        finally:
            if self.task is asyncio.current_task():
                self.task = None
        try:
            await self.send(session.handler_done(run, value, error))
        except OSError as e:  # the client went away while we answered: the reader sees it
            server_log.debug("%s: the answer was not written: %r", self.peer_name(), e)

    def peer_name(self) -> str:
        return peer_of(self.writer.get_extra_info("socket"))

    async def _write_changes(self, listen: t.RequestId) -> None:
        """Writes the listen's change notifications, each within ``fanout_timeout`` seconds.

        A listen that fell behind is ended with its result (SUB-12), written within
        the same time; then, or when a write took longer, the connection is closed.
        """
        assert self.changes is not None
        transport = self.writer.transport
        timeout = self.server.fanout_timeout
        try:
            async with asyncio.timeout(None) as deadline:
                while (event := await self.changes.next()) is not None:
                    deadline.reschedule(asyncio.get_running_loop().time() + timeout)
                    await self.emit(event)
                    deadline.reschedule(None)
                deadline.reschedule(asyncio.get_running_loop().time() + timeout)
                await self.emit(listen_end(listen))
                transport.close()  # after what is still buffered
                await self.writer.wait_closed()
        except TimeoutError:
            write_timed_out(self.peer_name(), timeout)
        except OSError as e:  # the client went away: the reader sees the end
            server_log.debug("%s: a change notification was not written: %r", self.peer_name(), e)
        finally:
            transport.abort()  # nothing left to send, or no time left to send it
