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
from mcp_proto import types as t
from mcp_proto_runtime import (
    AsyncServerSettings,
    Handlers,
    RequestContext,
    default_answer,
    server_log,
)

from ._handlers import Changes, Context, Handler, run_handler
from ._http import serve_http

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
        cannot corrupt the stream (STDIO-06).
        """
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=_CHUNK)
        pipe, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), sys.stdin
        )
        # the pipe transport reads 256 KiB at a time: a fresh mmap and munmap per read here,
        # for requests of a few hundred bytes; where it has this knob, read 64 KiB
        if isinstance(getattr(pipe, "max_size", None), int):
            pipe.max_size = _CHUNK  # type: ignore[attr-defined]
        real_stdout = sys.stdout
        unused = asyncio.StreamReader()  # a StreamReaderProtocol knows when the pipe closed
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(unused), real_stdout
        )
        writer = asyncio.StreamWriter(transport, protocol, unused, loop)
        sys.stdout = sys.stderr
        try:
            await self.serve(reader, writer)
        finally:
            sys.stdout = real_stdout

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
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
    def __init__(self, server: Server, writer: asyncio.StreamWriter) -> None:
        self.server = server
        self.conn = server.connection()
        self.writer = writer
        self.tasks: dict[t.RequestId, asyncio.Task[None]] = {}
        self.slots = asyncio.Semaphore(server.max_concurrency)
        self.slot_freed = asyncio.Event()
        self.changes = Changes(server, "a stdio stream")

    async def emit(self, event: Any) -> None:
        data = self.conn.send(event)
        if data:
            self.writer.write(data)
            await self.writer.drain()

    async def _write_changes(self) -> None:
        with contextlib.suppress(OSError):  # the client went away: the reader sees the end
            await self.changes.write_stream(self.conn, self.emit)

    async def run(self, reader: asyncio.StreamReader) -> None:
        try:
            async with asyncio.TaskGroup() as tasks:
                writing = tasks.create_task(self._write_changes())
                while await self._step(reader, tasks):
                    pass
                if self.tasks:  # the input ended: let what was received finish
                    pending = list(self.tasks.values())
                    await asyncio.wait(pending, timeout=self.server.shutdown_grace)
                for task in (*self.tasks.values(), writing):
                    task.cancel()
        finally:
            self.writer.close()
            with contextlib.suppress(ConnectionError):
                await self.writer.wait_closed()  # flushes what is still buffered

    async def _step(self, reader: asyncio.StreamReader, tasks: asyncio.TaskGroup) -> bool:
        chunk = await reader.read(_CHUNK)
        self.conn.receive_data(chunk)
        while True:
            try:
                event = self.conn.next_event()
            except m.RemoteProtocolError as e:
                server_log.error("input framing lost: %s", e)
                return False
            if event is m.NEED_DATA:
                return bool(chunk)
            if event is m.PAUSED:  # backpressure: read no more until a request ends
                if not self.tasks:
                    server_log.error("paused with no handler running: nothing can resume it")
                    return False
                self.slot_freed.clear()  # no await since next_event: no request ended since
                await self.slot_freed.wait()
                continue
            if isinstance(event, m.ConnectionClosed):
                return False
            if isinstance(event, m.Request):
                if self.server.handlers.find(event.method) is None:
                    await self.emit(default_answer(self.conn, event))
                    continue
                ctx = Context(RequestContext(event), self)
                self.tasks[event.id] = tasks.create_task(self._handle(ctx))
            elif isinstance(event, m.Cancelled):
                task = self.tasks.get(event.id)
                if task is not None:
                    task.cancel()
            elif isinstance(event, m.InvalidMessage):
                await self.emit(event)

    async def _handle(self, ctx: Context) -> None:
        try:
            async with self.slots:
                await run_handler(self.server, ctx, self.emit, self.conn.cache_hints)
        except OSError:
            pass  # the client went away while we answered: the reader sees the end
        finally:
            self.tasks.pop(ctx.request.id, None)
            self.slot_freed.set()
