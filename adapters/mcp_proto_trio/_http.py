"""Streamable HTTP for the trio server: a task per TCP connection, HTTP/1.1 in the core.

Each connection's task reads its socket and feeds :class:`mcp_proto.http.HTTPServerConnection`
(one exchange at a time, keep-alive between them), through ``trio.SocketStream`` or,
with ``io="raw"``, the socket itself (:mod:`._sockets`).  A request's handler runs on
the connection's worker task, in the connection's nursery, while the connection
keeps reading, so a client that closes the response is seen at once and cancels the
handler's scope (CANCEL-04, HTTP-SSE-5).  A listen with no handler is acknowledged
and stays open on its connection, which sends a keep-alive comment when it has been
quiet for ``keepalive_interval`` seconds; change notifications reach it through
:meth:`Server.notify_changed` and a writer task of its own, which closes the
connection when a write takes over ``fanout_timeout`` seconds or the listen falls
``fanout_queue`` notifications behind (after its result).  Every other write is
bounded by ``client_timeout``; past it the connection is closed.

Listens and buffered bodies draw on the budgets the connections share
(:mod:`mcp_proto.http.limits`).  A connection that closes after its last response
closes lingeringly (``LINGER_TIME``, ``LINGER_BYTES``), once the listen's writer
has stopped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import trio

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.http import HTTPServer
from mcp_proto.http.limits import BodyBudget, ListenBudget
from mcp_proto_runtime import (
    CancelHandler,
    Close,
    EndListen,
    HTTPServerSession,
    OpenListen,
    ReadWithin,
    RequestContext,
    RunHandler,
    Write,
    listen_end,
    server_log,
    write_timed_out,
)

from ._handlers import Changes, Context, Handler, call
from ._sockets import Conn, TimedOut, listen_raw, listen_streams

if TYPE_CHECKING:
    from ._server import Server

__all__ = ["serve_http"]


async def serve_http(
    server: Server,
    host: str,
    port: int,
    *,
    task_status: trio.TaskStatus[tuple[str, int]],
    http_options: dict[str, Any],
) -> None:
    http, template = server.http_binding(http_options)
    budgets = server.budgets()

    async def serve(conn: Conn, host: str) -> None:
        await _Link(server, http, template, conn, budgets=budgets, peer=host).run()

    listen = listen_raw if server.io == "raw" else listen_streams
    await listen(host, port, serve, trio.Semaphore(server.max_connections), task_status)


class _Link:
    """One TCP connection: its HTTP state, its socket, the request it is running."""

    def __init__(
        self,
        server: Server,
        http: HTTPServer,
        template: m.ServerConnection,
        conn: Conn,
        *,
        budgets: tuple[ListenBudget, BodyBudget],
        peer: str,
    ) -> None:
        self.server = server
        self.session: HTTPServerSession[Handler, Context] = HTTPServerSession(
            server,
            http,
            template,
            budgets,
            peer=peer,
            make_context=self._context,
            now=trio.current_time(),
        )
        self.socket = conn  # its reads and writes
        self.changes: Changes | None = None  # while a listen is open
        self.writing: trio.CancelScope | None = None  # its writer's scope
        self.timer = trio.CancelScope()  # the deadline of the current wait for the client
        self.renew = False  # the timer went off as bytes came: use a new one
        # unbuffered: a request goes to the waiting worker, or to a task of its own
        self.handoff, self.inbox = trio.open_memory_channel[RunHandler[Handler, Context]](0)
        self.tasks: trio.CancelScope | None = None  # the scope of the connection's tasks

    def _context(self, core: RequestContext) -> Context:
        return Context(core, self)

    async def emit(self, event: m.Notification | m.Result, timeout: float | None = None) -> None:
        data = self.session.send(event)
        if data:
            await self.send(data, timeout)

    async def close_stream(self) -> bool:
        data = self.session.close_stream()
        if data:
            await self.send(data)
        return bool(data)

    async def send(self, data: bytes, timeout: float | None = None) -> None:
        """Write all of ``data`` within ``timeout`` seconds (``client_timeout`` by default).

        ``trio.BrokenResourceError`` once the client is gone.  A client that stops
        reading would otherwise hold its connection (and its slot) for good: the
        clock on its reads (:class:`ClientClock`) does not run while the server
        writes.  Past the deadline the connection's tasks are cancelled, its
        handler's included, as when the client closes, and its socket is closed.
        """
        timeout = self.server.client_timeout if timeout is None else timeout
        try:
            await self.socket.send(data, timeout)
        except TimedOut:
            write_timed_out(self.socket.peer, timeout)
            if self.tasks is not None:
                self.tasks.cancel()  # run() closes the socket
            raise

    async def receive(self, wait: float) -> bytes:
        """Bytes from the client (``b""`` at its end); waits at most ``wait`` seconds.

        The wait's deadline is set on the link's timer scope (:meth:`run`), not
        on a cancel scope of its own: one a request costs more than the rest of
        the wait.  When it passes, the timer scope is cancelled.
        """
        data = await self.socket.receive(self.timer, wait)
        # woken by the bytes as the deadline passed: the scope would cancel the next
        # wait or send; run() leaves it for a new one
        self.renew = self.timer.cancel_called
        return data

    async def run(self) -> None:
        try:
            async with trio.open_nursery() as nursery:
                self.tasks = nursery.cancel_scope
                nursery.start_soon(self._worker)
                try:
                    await self._carry_out(nursery)
                finally:
                    nursery.cancel_scope.cancel()
        except* (trio.BrokenResourceError, trio.ClosedResourceError) as gone:
            # the client went away (a reset included); raised in the nursery: a group
            server_log.debug("%s: connection lost: %r", self.peer_name(), gone.exceptions[0])
        finally:
            self._end_listen()
            self.socket.close()
            self.session.close()  # gives back its budgets

    async def _carry_out(self, nursery: trio.Nursery) -> None:
        session = self.session
        while True:
            # the timer scope covers this task's waits for the client only: the handlers
            # run in the nursery, outside it
            with trio.CancelScope() as self.timer:
                while True:
                    action = session.next_action(trio.current_time())
                    if isinstance(action, ReadWithin):
                        session.receive_data(await self.receive(action.seconds))
                        if self.renew:
                            break
                    elif isinstance(action, Write):
                        await self.send(action.data)
                    elif isinstance(action, RunHandler):
                        try:
                            self.handoff.send_nowait(action)
                        except trio.WouldBlock:  # the worker is still finishing the last one
                            nursery.start_soon(self._handle, action)
                    elif isinstance(action, CancelHandler):
                        action.run.context._cancel()
                    elif isinstance(action, OpenListen):
                        self._open_listen(action, nursery)
                        await self.send(action.ack)
                    elif isinstance(action, EndListen):
                        self._end_listen()
                    else:
                        break
            self.renew = False
            if self.timer.cancelled_caught:  # the client has been quiet
                keepalive = session.read_timed_out()  # b"" unless a stream is open
                if keepalive:
                    await self.send(keepalive)
            elif isinstance(action, Close):
                self._end_listen()  # no notification may follow the write side's shutdown
                if action.linger:  # the last response is written: let it be read
                    await self.socket.linger()
                return

    def _open_listen(self, listen: OpenListen, nursery: trio.Nursery) -> None:
        self.changes = Changes(self.server, f"listen {listen.id!r} of {self.peer_name()}")
        self.writing = scope = trio.CancelScope()  # cancelled by _end_listen
        nursery.start_soon(self._write_changes, listen.id, scope, nursery.cancel_scope)
        self.server._sessions.add(self)  # reached by notify_changed from now on

    async def _worker(self) -> None:
        """Runs this connection's handlers, waiting on :attr:`inbox` in between
        (HTTP/1.1: one at a time).

        Waking a waiting task costs less than starting one per request, and one
        cancel scope serves its requests (renewed after a cancellation, as on stdio);
        a request that arrives while the last handler is still finishing gets a task
        of its own.
        """
        while True:
            with trio.CancelScope() as scope:
                while True:
                    run = await self.inbox.receive()
                    await self._run(run, scope)
            self.session.handler_cancelled(run)  # only its cancellation ends up here

    async def _handle(self, run: RunHandler[Handler, Context]) -> None:
        with trio.CancelScope() as scope:
            await self._run(run, scope)
        if scope.cancelled_caught:
            self.session.handler_cancelled(run)

    async def _run(self, run: RunHandler[Handler, Context], scope: trio.CancelScope) -> None:
        """Run one handler in ``scope`` (its context's while it runs) and write its answer."""
        value, error = await call(run, scope)
        try:
            await self.send(self.session.handler_done(run, value, error))
        except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
            server_log.debug("%s: the answer was not written: %r", self.peer_name(), e)

    def _end_listen(self) -> None:
        """The listen is over, however it ended: out of the fan-out, its budget given
        back (once), its writer stopped.  Idempotent."""
        self.server._sessions.discard(self)
        self.session.end_listen()
        if self.writing is not None:
            self.writing.cancel()

    def peer_name(self) -> str:
        return self.socket.peer

    async def _write_changes(
        self, listen: t.RequestId, scope: trio.CancelScope, link: trio.CancelScope
    ) -> None:
        """Writes the listen's change notifications, each within ``fanout_timeout`` seconds.

        A listen that fell behind is ended with its result (SUB-12), written within
        the same time; then, or when a write took longer, the connection is closed
        (``link`` is the scope of the connection's tasks).  Runs in ``scope``, which
        :meth:`_end_listen` cancels: then it writes nothing more and closes nothing.
        """
        assert self.changes is not None
        timeout = self.server.fanout_timeout
        with scope:
            while (event := await self.changes.next()) is not None:
                await self.emit(event, timeout)  # TimedOut: the connection is closed
            await self.emit(listen_end(listen), timeout)
            link.cancel()  # the connection ends: run() closes the socket
