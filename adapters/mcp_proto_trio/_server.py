"""The trio server: one reader task, one task per request, in a nursery it owns.

All protocol decisions are the core's (:class:`mcp_proto.ServerConnection`) and the
session's (:class:`mcp_proto_runtime.ServerSession`); this module reads, writes and
starts tasks, on trio streams: ``trio.lowlevel.FdStream`` for stdio, any
``trio.abc.Stream`` for :meth:`Server.serve`.  A client's cancellation cancels the
handler's cancel scope (``trio.Cancelled`` inside it).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any, Literal

import trio

import mcp_proto as m
from mcp_proto_runtime import (
    AsyncServerSettings,
    CancelHandler,
    Handlers,
    RequestContext,
    ResumeReading,
    RunHandler,
    ServerSession,
    Stop,
    Write,
)

from ._handlers import Changes, Context, Handler, Signal, call
from ._http import serve_http
from ._links import FdLink, Link, StreamLink

__all__ = ["Server"]

_IDLE_WORKERS = 8  # handler tasks kept waiting for the next requests


class Server(AsyncServerSettings[Handler]):
    """Handlers ``async fn(ctx, params) -> result``, and the settings of
    :class:`mcp_proto_runtime.ServerSettings`; serves any number of streams.

    ``max_concurrency`` bounds the handlers running at once on one stream.  A write
    to a client that stops reading gives up after ``client_timeout`` seconds and
    ends the stream.  ``io``: ``"streams"`` (the default) serves stdio and HTTP on
    trio's streams (``FdStream``, ``SocketStream``); ``"raw"`` reads and writes the
    descriptors and sockets directly, waiting for readiness only when they are not
    ready, which costs about half the CPU per request (``docs/adapters.md``).
    """

    def __init__(
        self,
        handlers: Handlers[Handler] | Mapping[str, Handler] | None = None,
        *,
        max_concurrency: int = 64,
        io: Literal["streams", "raw"] = "streams",
        **options: Any,
    ) -> None:
        super().__init__(handlers, **options)
        if io not in ("streams", "raw"):
            raise ValueError(f"io must be 'streams' or 'raw', not {io!r}")
        self.max_concurrency = max_concurrency
        self.io = io

    async def serve_stdio(self) -> None:
        """Serve the process's stdin and stdout until stdin ends (STDIO-15).

        Both are read and written on duplicates of their descriptors, in
        non-blocking mode while serving (their mode is restored at the end): through
        ``trio.lowlevel.FdStream``, or directly with ``io="raw"``.  ``sys.stdout``
        points at stderr while serving, so a stray ``print`` cannot corrupt the
        stream (STDIO-06).
        """
        rfd, wfd = os.dup(sys.stdin.fileno()), os.dup(sys.stdout.fileno())
        link: FdLink | StreamLink
        if self.io == "raw":
            link = FdLink(rfd, wfd, self.client_timeout)
        else:
            out, into = trio.lowlevel.FdStream(wfd), trio.lowlevel.FdStream(rfd)
            stdio = trio.StapledStream(out, into)
            link = StreamLink(stdio, self.client_timeout, owns=(out, into))
        real_stdout, sys.stdout = sys.stdout, sys.stderr
        try:
            await self._serve(link)
        finally:
            sys.stdout = real_stdout
            link.close()

    async def serve(self, stream: trio.abc.Stream | trio.StapledStream[Any, Any]) -> None:
        """Serve one byte stream until its input ends; in-flight handlers are cancelled.

        The stream is not closed: it is the caller's.
        """
        await self._serve(StreamLink(stream, self.client_timeout))

    async def _serve(self, link: Link) -> None:
        session = _Session(self, link)
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
        await serve_http(self, host, port, task_status=task_status, http_options=http_options)

    async def _checkpoint(self) -> None:
        await trio.sleep(0)


class _Session:
    """One stream: the I/O of its :class:`~mcp_proto_runtime.ServerSession`.

    The reader task carries out the session's actions; each handler runs on a
    worker task, which then carries out what its end asks (its answer, the next
    queued request).  A request goes to a worker waiting on :attr:`inbox`, or to a
    new one; at most :data:`_IDLE_WORKERS` wait.  Writes are whole messages, never
    cut short, each bounded by ``client_timeout`` (:mod:`._links`).
    """

    def __init__(self, server: Server, link: Link) -> None:
        self.server = server
        self.session: ServerSession[Handler, Context] = ServerSession(
            server, self._context, max_concurrency=server.max_concurrency
        )
        self.conn = self.session.conn
        self.link = link
        self.resumed = Signal()  # the reader, paused
        self.ended = Signal()  # the reader, waiting out the shutdown grace
        self.changes = Changes(server, "a stdio stream")
        self.nursery: trio.Nursery | None = None
        # unbuffered: a request is handed to a waiting worker, or starts a new one
        self.handoff, self.inbox = trio.open_memory_channel[RunHandler[Handler, Context]](0)

    def _context(self, core: RequestContext) -> Context:
        return Context(core, self)

    async def emit(self, event: m.Notification | m.Result) -> None:
        """Send ``event``; a checkpoint (a handler's progress and log come here)."""
        data = self.session.send(event)
        if data:
            await self.link.send(data, checkpoint=True)
        else:
            await trio.sleep(0)

    async def close_stream(self) -> bool:
        """Nothing to close on stdio: the answer comes on this stream (False)."""
        return False

    async def _write(self, data: bytes) -> bool:
        """Write ``data`` from a task that ends or reads next; false if the client is gone."""
        try:
            await self.link.send(data, checkpoint=False)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
            self._gone(f"a write failed: {e!r}")
            return False
        return True

    def _gone(self, reason: str) -> None:
        """The client is gone (or stopped reading): every task of the stream ends now,
        the reader's wait for input included."""
        for cancel in self.session.write_failed(reason):
            cancel.run.context._cancel()
        assert self.nursery is not None
        self.nursery.cancel_scope.cancel()

    async def _write_changes(self) -> None:
        try:
            await self.changes.write_stream(self.conn, self.emit)  # until the client is gone
        except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
            self._gone(f"a change notification could not be written: {e!r}")

    async def run(self) -> None:
        session = self.session
        async with trio.open_nursery() as nursery:
            self.nursery = nursery
            nursery.start_soon(self._write_changes)
            while True:
                action = session.next_action()
                if action is m.NEED_DATA:
                    session.receive_data(await self.link.receive())
                elif isinstance(action, RunHandler):
                    self._start(action)
                elif isinstance(action, Write):
                    await self._write(action.data)
                elif isinstance(action, CancelHandler):
                    action.run.context._cancel()
                elif action is m.PAUSED:  # backpressure: read no more until a request ends
                    await self.resumed.wait()
                elif isinstance(action, Stop):
                    with trio.move_on_after(action.grace):
                        while not session.idle:  # let what was received finish
                            await self.ended.wait()
                        await self.link.drain()  # and their answers are written
                    session.stop_now()  # the nursery's cancellation reaches them all
                    break
            nursery.cancel_scope.cancel()

    def _start(self, run: RunHandler[Handler, Context]) -> None:
        try:
            self.handoff.send_nowait(run)
        except trio.WouldBlock:  # no worker waits
            assert self.nursery is not None
            self.nursery.start_soon(self._worker, run)

    async def _worker(self, run: RunHandler[Handler, Context]) -> None:
        """Runs ``run``'s handler, then those of the requests handed to it, one at a time.

        One cancel scope serves the worker's requests one after the other, each
        request's ``ctx.scope`` while it runs (entering a scope per request cost
        about 10 us of the 40 a call costs): a cancellation cancels that scope, and
        the worker goes on in a new one.  A waiting worker ends with the session.
        """
        following: RunHandler[Handler, Context] | None = run
        while following is not None:
            with trio.CancelScope() as scope:
                while following is not None:
                    current = following
                    value, error = await call(current, scope)
                    following = await self._carry_out(
                        self.session.handler_done(current, value, error)
                    )
                    if following is None:
                        if self.inbox.statistics().tasks_waiting_receive >= _IDLE_WORKERS:
                            return
                        following = await self.inbox.receive()
            if scope.cancelled_caught:  # only ``current``'s cancellation ends up here
                following = await self._carry_out(self.session.handler_cancelled(current))

    async def _carry_out(
        self, actions: list[Write | RunHandler[Handler, Context] | ResumeReading]
    ) -> RunHandler[Handler, Context] | None:
        """Write the answer, wake the reader; the queued request this task runs next."""
        following = None
        for action in actions:
            if isinstance(action, Write):
                await self._write(action.data)
            elif isinstance(action, RunHandler):
                following = action
            else:
                self.resumed.wake()
        self.ended.wake()
        return following
