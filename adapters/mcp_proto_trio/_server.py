"""The trio server: one reader loop, one task per request, in a nursery it owns.

All protocol decisions are the core's (:class:`mcp_proto.ServerConnection`), the
handler runtime is :mod:`mcp_proto_runtime`; this module reads, writes and runs
tasks.  A client's cancellation cancels the handler's cancel scope
(``trio.Cancelled`` inside it).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Mapping
from functools import partial
from typing import Any

import outcome
import trio

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
_PENDING_LIMIT = 1 << 18  # bytes queued for stdout before senders wait
_IDLE_WORKERS = 8  # handler tasks kept parked for the next requests


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
        link = _FdLink(os.dup(sys.stdin.fileno()), os.dup(sys.stdout.fileno()))
        real_stdout, sys.stdout = sys.stdout, sys.stderr
        try:
            await self._serve(link)
        finally:
            sys.stdout = real_stdout
            link.close()

    async def serve(
        self, stream: trio.abc.HalfCloseableStream | trio.StapledStream[Any, Any]
    ) -> None:
        """Serve one byte stream until its input ends; in-flight handlers are cancelled."""
        await self._serve(_StreamLink(stream))

    async def _serve(self, link: _StreamLink | _FdLink) -> None:
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
        await trio.lowlevel.checkpoint()


class _StreamLink:
    """Any trio stream: ``receive_some``, and ``send_all`` under a lock.

    A trio stream takes one sender at a time; the send is shielded, so a
    cancellation waits for the whole message (the stream is shared by every
    request).  An uncontended lock is taken without a checkpoint.
    """

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.lock = trio.Lock()  # one send_all at a time on a trio stream

    async def receive(self) -> bytes:
        return await self.stream.receive_some(_CHUNK)  # type: ignore[no-any-return]

    async def send(self, data: bytes, *, checkpoint: bool) -> None:
        lock = self.lock
        try:
            lock.acquire_nowait()
        except trio.WouldBlock:
            await lock.acquire()
        try:
            with trio.CancelScope(shield=True):
                await self.stream.send_all(data)  # always a checkpoint
        finally:
            lock.release()


class _FdLink:
    """Two file descriptors (stdin, stdout) in non-blocking mode, read and written directly.

    A read or write that can proceed now costs no trip through the scheduler: a task
    waits (``wait_readable``, ``wait_writable``) only when the pipe is empty or full.
    Writes need no lock: a message that fits is written whole at once; one that does
    not goes to :attr:`pending`, and the task that wrote it keeps flushing
    (:attr:`writing`), cancellation shielded, while the others append whole messages
    behind it, in order.  Past :data:`_PENDING_LIMIT` queued bytes, senders wait for the
    queue to shrink before they append (backpressure; a sender cancelled while it waits
    sends nothing).  A write to a closed pipe raises ``trio.BrokenResourceError``, as
    ``FdStream`` does; :meth:`close` restores the descriptors' blocking mode.
    """

    def __init__(self, rfd: int, wfd: int) -> None:
        self.rfd, self.wfd = rfd, wfd
        self.blocking = os.get_blocking(rfd), os.get_blocking(wfd)
        os.set_blocking(rfd, False)
        os.set_blocking(wfd, False)
        self.pending = bytearray()
        self.writing = False
        # a pipe read short was emptied: the next read waits first, sparing a read that
        # would only say "nothing yet" (a regular file cannot be waited for: never)
        mode = os.fstat(rfd).st_mode
        self.pollable = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
        self.emptied = False
        self.drained = trio.lowlevel.ParkingLot()

    def close(self) -> None:
        for fd, blocking in ((self.wfd, self.blocking[1]), (self.rfd, self.blocking[0])):
            trio.lowlevel.notify_closing(fd)
            with contextlib.suppress(OSError):
                os.set_blocking(fd, blocking)
            os.close(fd)

    async def receive(self) -> bytes:
        """Up to :data:`_CHUNK` bytes, ``b""`` at the end; a checkpoint either way."""
        waited = False
        if self.emptied:  # the last read emptied the pipe: a read now would find nothing
            await trio.lowlevel.wait_readable(self.rfd)
            waited = True
        while True:
            try:
                data = os.read(self.rfd, _CHUNK)
            except BlockingIOError:
                await trio.lowlevel.wait_readable(self.rfd)
                waited = True
                continue
            except OSError as e:
                raise _broken(e) from e
            self.emptied = self.pollable and 0 < len(data) < _CHUNK
            if not waited:  # the others still get a turn between two reads
                await trio.lowlevel.checkpoint()
            return data

    async def send(self, data: bytes, *, checkpoint: bool) -> None:
        """Write ``data`` whole, or queue it whole behind the task that is writing.

        ``checkpoint``: yield to the scheduler at least once (a handler's progress or
        log must not starve the others); without it, a write that fits yields nothing.
        """
        while self.writing:
            if len(self.pending) < _PENDING_LIMIT:
                self.pending += data  # the writer flushes it
                if checkpoint:
                    await trio.lowlevel.checkpoint()
                return
            await self.drained.park()
        try:
            sent = os.write(self.wfd, data)
        except BlockingIOError:
            sent = 0
        except OSError as e:
            raise _broken(e) from e
        if sent == len(data):
            if checkpoint:
                await trio.lowlevel.checkpoint()
            return
        self.pending += memoryview(data)[sent:]
        self.writing = True
        try:
            with trio.CancelScope(shield=True):  # a message is never cut short
                await self._flush()
        finally:
            self.writing = False
            self.pending.clear()  # empty unless the pipe broke
            self.drained.unpark_all()

    async def _flush(self) -> None:
        while self.pending:
            await trio.lowlevel.wait_writable(self.wfd)
            try:
                sent = os.write(self.wfd, self.pending)
            except BlockingIOError:
                continue
            except OSError as e:
                raise _broken(e) from e
            del self.pending[:sent]
            self.drained.unpark_all()


def _broken(e: OSError) -> trio.BrokenResourceError | trio.ClosedResourceError:
    if e.errno == errno.EBADF:
        return trio.ClosedResourceError("file was already closed")
    return trio.BrokenResourceError(str(e))


class _Session:
    def __init__(self, server: Server, link: _StreamLink | _FdLink) -> None:
        self.server = server
        self.conn = server.connection()
        self.link = link
        self.contexts: dict[t.RequestId, Context] = {}
        self.running = 0  # handlers holding one of the max_concurrency slots
        self.slot_queue = trio.lowlevel.ParkingLot()  # handlers waiting for a slot, in order
        self.slot_freed = trio.lowlevel.ParkingLot()
        self.idle: list[trio.lowlevel.Task] = []  # workers parked for the next request
        self.changes = Changes(server, "a stdio stream")

    async def emit(self, event: Any) -> None:
        """Send ``event``; a checkpoint (a handler's progress and log come here)."""
        data = self.conn.send(event)
        if data:
            await self.link.send(data, checkpoint=True)
        else:
            await trio.lowlevel.checkpoint()

    async def _answer(self, event: Any) -> None:
        """Send ``event`` from a task that ends or reads next: no checkpoint needed."""
        data = self.conn.send(event)
        if data:
            await self.link.send(data, checkpoint=False)

    async def _write_changes(self) -> None:
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await self.changes.write_stream(self.conn, self.emit)  # until the client is gone

    async def run(self) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._write_changes)
            while await self._step(nursery):
                pass
            with trio.move_on_after(self.server.shutdown_grace):
                while self.contexts:  # the input ended: let what was received finish
                    await self.slot_freed.park()
            nursery.cancel_scope.cancel()

    async def _step(self, nursery: trio.Nursery) -> bool:
        chunk = await self.link.receive()
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
                if not self.contexts:
                    server_log.error("paused with no handler running: nothing can resume it")
                    return False
                await self.slot_freed.park()
                continue
            if isinstance(event, m.ConnectionClosed):
                return False
            if isinstance(event, m.Request):
                if self.server.handlers.find(event.method) is None:
                    await self._answer(default_answer(self.conn, event))
                    continue
                ctx = Context(RequestContext(event), self)
                self.contexts[event.id] = ctx
                if self.idle:  # waking a parked worker costs less than starting a task
                    trio.lowlevel.reschedule(self.idle.pop(), outcome.Value(ctx))
                else:
                    nursery.start_soon(self._worker, ctx)
            elif isinstance(event, m.Cancelled):
                cancelled = self.contexts.get(event.id)
                if cancelled is not None:
                    cancelled._cancel()
            elif isinstance(event, m.InvalidMessage):
                await self._answer(event)

    async def _worker(self, ctx: Context | None) -> None:
        """Runs ``ctx``'s handler, then, parked in between, those of the requests handed to it.

        One cancel scope serves the worker's requests one after the other, each
        request's ``ctx.scope`` while it runs (entering a scope per request cost
        about a third of a call): a cancellation cancels that scope, and the worker
        goes on in a new one.  At most :data:`_IDLE_WORKERS` stay parked; a parked
        worker is cancelled with the session.
        """
        me = trio.lowlevel.current_task()
        while True:
            with trio.CancelScope() as scope:
                while True:
                    if ctx is None:
                        if len(self.idle) >= _IDLE_WORKERS:
                            return
                        self.idle.append(me)
                        unpark = partial(self._unpark, me)
                        ctx = await trio.lowlevel.wait_task_rescheduled(unpark)
                    running, ctx = ctx, None
                    await running._run_in(scope, partial(self._handle, running))

    def _unpark(self, me: trio.lowlevel.Task, _: Any) -> trio.lowlevel.Abort:
        self.idle.remove(me)  # cancelled while parked: nobody may hand it a request now
        return trio.lowlevel.Abort.SUCCEEDED

    async def _handle(self, ctx: Context) -> None:
        try:
            if self.running < self.server.max_concurrency:  # no trip through the scheduler
                self.running += 1
            else:
                await self.slot_queue.park()  # woken holding the slot a handler handed on
            try:
                await run_handler(
                    self.server, ctx, self._answer, self.conn.cache_hints, scoped=False
                )
            finally:
                if self.slot_queue:
                    self.slot_queue.unpark()  # hand the slot on to the first waiter
                else:
                    self.running -= 1
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the client went away while we answered: the reader sees the end
        finally:
            self.contexts.pop(ctx.request.id, None)
            if self.slot_freed:
                self.slot_freed.unpark_all()
