"""The asyncio server: one reader loop, one task per request, in a TaskGroup it owns.

All protocol decisions are the core's (:class:`mcp_proto.ServerConnection`), the
handler runtime is :mod:`mcp_proto_runtime`; this module reads, writes and runs
tasks.  A client's cancellation cancels the handler's task (``asyncio.CancelledError``
inside it).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

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
    server_log,
)

from ._handlers import Changes, Context, Handler, call
from ._http import serve_http
from ._stdio import FileWriter, open_stdio

__all__ = ["Server"]

_CHUNK = 65536


class Server(AsyncServerSettings[Handler]):
    """Handlers ``async fn(ctx, params) -> result``, and the settings of
    :class:`mcp_proto_runtime.ServerSettings`; serves any number of streams.

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
        cannot corrupt the stream (STDIO-06).  Either may be a pipe or a regular file
        (:mod:`mcp_proto_asyncio._stdio`).
        """
        real_stdout = sys.stdout
        reader, writer, feeding = await open_stdio(sys.stdin, real_stdout)
        sys.stdout = sys.stderr
        try:
            await self.serve(reader, writer)
        finally:
            sys.stdout = real_stdout
            if feeding is not None:
                feeding.cancel()

    async def serve(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter | FileWriter
    ) -> None:
        """Serve one byte stream until its input ends; in-flight handlers are cancelled."""
        session = _Session(self, writer)
        self._sessions.add(session)
        try:
            await session.run(reader)
        finally:
            self._sessions.discard(session)

    async def serve_http(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        ready: Callable[[tuple[str, int]], None] | None = None,
        **http_options: Any,
    ) -> None:
        """Serve Streamable HTTP on ``host:port`` until cancelled; a task per connection.

        ``http_options`` go to :class:`mcp_proto.http.HTTPServer`; ``ready`` gets
        the bound address once the socket listens (port 0 picks a free one).
        """
        await serve_http(self, host, port, ready=ready, http_options=http_options)

    async def _checkpoint(self) -> None:
        await asyncio.sleep(0)


class _Session:
    """One stream: the I/O of its :class:`~mcp_proto_runtime.ServerSession`.

    The reader task carries out the session's actions; each handler runs in a task of
    the session's ``TaskGroup``, which carries out what its end asks (its answer, the
    next queued request).
    """

    def __init__(self, server: Server, writer: asyncio.StreamWriter | FileWriter) -> None:
        self.server = server
        self.session: ServerSession[Handler, Context] = ServerSession(
            server, self._context, max_concurrency=server.max_concurrency
        )
        self.conn = self.session.conn
        self.writer = writer
        self.tasks: dict[RunHandler[Handler, Context], asyncio.Task[None]] = {}
        self.resumed = asyncio.Event()  # a paused reader waits on it
        self.idle = asyncio.Event()  # set when the last handler ends
        self.changes = Changes(server, "a stdio stream")

    def _context(self, core: RequestContext) -> Context:
        return Context(core, self)

    async def emit(self, event: m.Notification | m.Result) -> None:
        data = self.session.send(event)
        if data:
            self.writer.write(data)
            await self.writer.drain()

    async def close_stream(self) -> bool:
        """Nothing to close on stdio: the answer comes on this stream (False)."""
        return False

    async def _write(self, data: bytes) -> None:
        try:
            self.writer.write(data)
            await self.writer.drain()
        except OSError as e:  # the client went away (a ConnectionError, a closed pipe)
            self._gone(f"a write failed: {e!r}")

    def _gone(self, reason: str) -> None:
        for cancel in self.session.write_failed(reason):
            self._cancel(cancel.run)
        self.resumed.set()

    def _cancel(self, run: RunHandler[Handler, Context]) -> None:
        task = self.tasks.get(run)
        if task is not None:
            task.cancel()

    async def _write_changes(self) -> None:
        try:
            await self.changes.write_stream(self.conn, self.emit)  # until the client is gone
        except OSError as e:
            self._gone(f"a change notification could not be written: {e!r}")

    async def run(self, reader: asyncio.StreamReader) -> None:
        session = self.session
        try:
            async with asyncio.TaskGroup() as group:
                self.group = group
                writing = group.create_task(self._write_changes())
                while True:
                    action = session.next_action()
                    if action is m.NEED_DATA:
                        session.receive_data(await reader.read(_CHUNK))
                    elif isinstance(action, RunHandler):
                        self._start(action)
                    elif isinstance(action, Write):
                        await self._write(action.data)
                    elif isinstance(action, CancelHandler):
                        self._cancel(action.run)
                    elif action is m.PAUSED:  # backpressure: read no more until a request ends
                        self.resumed.clear()  # no await since next_action: none ended since
                        await self.resumed.wait()
                    elif isinstance(action, Stop):
                        await self._wait_idle(action.grace)
                        break
                for cancel in session.stop_now():
                    self._cancel(cancel.run)
                writing.cancel()
        finally:
            self.writer.close()
            with contextlib.suppress(ConnectionError):  # the client is gone: nothing to flush
                await self.writer.wait_closed()  # flushes what is still buffered

    async def _wait_idle(self, grace: float) -> None:
        """The input ended: let what was received finish, for ``grace`` seconds at most."""
        if self.session.idle:
            return
        self.idle.clear()
        try:
            await asyncio.wait_for(self.idle.wait(), grace)
        except TimeoutError:
            server_log.debug("shutdown grace over: cancelling %d handlers", len(self.tasks))

    def _start(self, run: RunHandler[Handler, Context]) -> None:
        self.tasks[run] = self.group.create_task(self._handle(run))

    async def _handle(self, run: RunHandler[Handler, Context]) -> None:
        session = self.session
        try:
            value, error = await call(run)
        except asyncio.CancelledError:  # the client's cancellation, or the stream's end
            self._carry_out(session.handler_cancelled(run))
            raise
        finally:
            del self.tasks[run]
        for data in self._carry_out(session.handler_done(run, value, error)):
            await self._write(data)

    def _carry_out(
        self, actions: list[Write | RunHandler[Handler, Context] | ResumeReading]
    ) -> list[bytes]:
        """Start the next queued request, wake the reader; the bytes left to write."""
        writes = []
        for action in actions:
            if isinstance(action, Write):
                writes.append(action.data)
            elif isinstance(action, RunHandler):
                self._start(action)
            else:
                self.resumed.set()
        if self.session.idle:
            self.idle.set()
        return writes
