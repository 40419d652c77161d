"""Streamable HTTP for the trio server: a task per TCP connection, HTTP/1.1 in the core.

Each connection's task reads its socket and feeds :class:`mcp_proto.http.HTTPServerConnection`
(one exchange at a time, keep-alive between them).  Sockets are plain non-blocking
stdlib sockets read and written directly, with ``trio.lowlevel.wait_readable`` /
``wait_writable`` only when they are not ready: a trio stream would add a scheduler
round trip to every receive and every send.  A request's handler runs in
its own task, in the connection's nursery, while the connection keeps reading, so a
client that closes the response is seen at once and cancels the handler's scope
(CANCEL-04, HTTP-SSE-5).  A listen with no handler is acknowledged and stays open on
its connection, which sends a keep-alive comment when it has been quiet for
``keepalive_interval`` seconds; change notifications reach it through
:meth:`Server.notify_changed` and a writer task of its own, which closes the connection
when a write takes over ``fanout_timeout`` seconds or the listen falls ``fanout_queue``
notifications behind (after its result).

Listens and buffered bodies draw on the budgets the connections share
(:mod:`mcp_proto.http.limits`).  A connection that closes after its last response
closes lingeringly (``LINGER_TIME``, ``LINGER_BYTES``), once the listen's writer
has stopped.
"""

from __future__ import annotations

import math
import socket
from typing import TYPE_CHECKING, Any

import outcome
import trio

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.http import HTTPServer
from mcp_proto.http.limits import BodyBudget, ListenBudget
from mcp_proto_runtime import (
    LINGER_BYTES,
    LINGER_TIME,
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
    task_status: trio.TaskStatus[tuple[str, int]],
    http_options: dict[str, Any],
) -> None:
    http = HTTPServer(connection=server.connection, **http_options)
    template = server.connection()
    budgets = server.budgets()

    slots = trio.Semaphore(server.max_connections)
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    listener = socket.socket(family, kind, proto)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(address)
        listener.listen(128)
        listener.setblocking(False)
        async with trio.open_nursery() as nursery:
            task_status.started(listener.getsockname()[:2])
            while True:
                await trio.lowlevel.wait_readable(listener)
                try:
                    sock, peer = listener.accept()
                except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                    continue
                sock.setblocking(False)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                if slots.value == 0:
                    sock.close()  # at capacity: refuse the connection rather than grow
                    continue
                link = _Link(server, http, template, sock, budgets=budgets, peer=peer[0])
                nursery.start_soon(_serve_one, slots, link)
    finally:
        trio.lowlevel.notify_closing(listener)
        listener.close()


async def _serve_one(slots: trio.Semaphore, link: _Link) -> None:
    async with slots:
        await link.run()


class _Link:
    """One TCP connection: its HTTP state, its socket, the request it is running."""

    def __init__(
        self,
        server: Server,
        http: HTTPServer,
        template: m.ServerConnection,
        sock: socket.socket,
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
        self.conn = self.session.conn
        self.sock = sock
        self.send_lock = trio.Lock()  # held only by a send that has to wait for the socket
        self.changes: Changes | None = None  # while a listen is open
        self.writing: trio.CancelScope | None = None  # its writer's scope
        self.timer = trio.CancelScope()  # the deadline of the current wait for the client
        self.renew = False  # the timer went off as bytes came: use a new one
        self.idle_worker: trio.lowlevel.Task | None = None  # parked in _worker
        self.tasks: trio.CancelScope | None = None  # the scope of the connection's tasks

    def _context(self, core: RequestContext) -> Context:
        return Context(core, self)

    async def emit(self, event: m.Notification | m.Result) -> None:
        data = self.session.send(event)
        if data:
            await self.send(data)

    async def send(self, data: bytes) -> None:
        """Write all of ``data``; trio.BrokenResourceError once the client is gone.

        Written at once when the socket takes it (no scheduler round trip);
        otherwise under ``send_lock``, taken before any wait, so that the
        bytes of two tasks never interleave.
        """
        lock = self.send_lock
        try:
            if lock.locked():
                async with lock:
                    await self._flush(data)
                return
            try:
                sent = self.sock.send(data)
            except BlockingIOError:
                sent = 0
            if sent < len(data):
                lock.acquire_nowait()  # no await since the partial send: nobody got in between
                try:
                    await self._flush(data[sent:])
                finally:
                    lock.release()
        except OSError as e:
            raise trio.BrokenResourceError(f"the client went away: {e}") from e

    async def _flush(self, data: bytes) -> None:
        """Write ``data`` within ``client_timeout`` seconds, or abort the connection.

        A client that stops reading would otherwise hold its connection (and its slot)
        for good: the clock on its reads (:class:`ClientClock`) does not run while the
        server writes.  Past the deadline the connection's tasks are cancelled, its
        handler's included, as when the client closes, and its socket is closed.
        """
        view = memoryview(data)
        with trio.move_on_after(self.server.client_timeout):
            while view:
                try:
                    view = view[self.sock.send(view) :]
                except BlockingIOError:
                    await trio.lowlevel.wait_writable(self.sock)
            return
        write_timed_out(self.peer_name(), self.server.client_timeout)
        if self.tasks is not None:
            self.tasks.cancel()  # run() closes the socket
        raise trio.BrokenResourceError("the client stopped reading")

    async def receive(self, wait: float) -> bytes:
        """Bytes from the client (``b""`` at its end); waits at most ``wait`` seconds.

        The wait's deadline is set on the link's timer scope (:meth:`run`), not
        on a cancel scope of its own: one a request costs more than the rest of
        the wait.  When it passes, the timer scope is cancelled.
        """
        waited = False
        while True:
            try:
                data = self.sock.recv(_CHUNK)
            except BlockingIOError:  # nothing to read yet: wait for readiness below
                pass
            except OSError:
                return b""  # a reset: the end of the client's input
            else:
                if not waited:  # bytes were waiting: let the other tasks run all the same
                    await trio.lowlevel.cancel_shielded_checkpoint()
                return data
            timer = self.timer
            timer.deadline = trio.current_time() + wait
            try:
                await trio.lowlevel.wait_readable(self.sock)
            finally:
                timer.deadline = math.inf
            # woken by the bytes as the deadline passed: the scope would cancel the next
            # wait or send; run() leaves it for a new one
            self.renew = timer.cancel_called
            waited = True

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
            trio.lowlevel.notify_closing(self.sock)
            self.sock.close()
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
                        worker, self.idle_worker = self.idle_worker, None
                        if worker is not None:
                            trio.lowlevel.reschedule(worker, outcome.Value(action))
                        else:
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
                    await self._linger()
                return

    def _open_listen(self, listen: OpenListen, nursery: trio.Nursery) -> None:
        self.changes = Changes(self.server, f"listen {listen.id!r} of {self.peer_name()}")
        self.writing = scope = trio.CancelScope()  # cancelled by _end_listen
        nursery.start_soon(self._write_changes, listen.id, scope, nursery.cancel_scope)
        self.server._sessions.add(self)  # reached by notify_changed from now on

    async def _linger(self) -> None:
        """Shut the write side, then read and drop what the client still sends (bounded)."""
        left = LINGER_BYTES
        with trio.move_on_after(LINGER_TIME):
            try:
                self.sock.shutdown(socket.SHUT_WR)
                while left > 0:
                    try:
                        data = self.sock.recv(min(_CHUNK, left))
                    except BlockingIOError:
                        await trio.lowlevel.wait_readable(self.sock)
                        continue
                    if not data:
                        return
                    left -= len(data)
            except OSError:
                return  # reset: nothing left to read

    async def _worker(self) -> None:
        """Runs this connection's handlers, parked in between (HTTP/1.1: one at a time).

        Waking a parked task costs less than starting one per request; a request
        that arrives while the last handler is still finishing gets a task of
        its own.
        """
        me = trio.lowlevel.current_task()
        while True:
            # one cancel scope for its requests, renewed after a cancellation (as on stdio)
            with trio.CancelScope() as scope:
                while True:
                    self.idle_worker = me
                    run = await trio.lowlevel.wait_task_rescheduled(self._unpark)
                    await self._run(run, scope)
            self.session.handler_cancelled(run)  # only its cancellation ends up here

    def _unpark(self, _: Any) -> trio.lowlevel.Abort:
        self.idle_worker = None  # cancelled while parked: nobody may hand it a request now
        return trio.lowlevel.Abort.SUCCEEDED

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
        return peer_of(self.sock)

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
            with trio.CancelScope() as deadline:
                while (event := await self.changes.next()) is not None:
                    deadline.deadline = trio.current_time() + timeout
                    await self.emit(event)
                    deadline.deadline = math.inf
                deadline.deadline = trio.current_time() + timeout
                await self.emit(listen_end(listen))
            if deadline.cancelled_caught:
                write_timed_out(self.peer_name(), timeout)
            link.cancel()  # the connection ends: run() closes the socket
