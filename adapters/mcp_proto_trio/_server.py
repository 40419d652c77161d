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

from ._handlers import Changes, Context, Handler, call
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
            with contextlib.suppress(OSError):  # EBADF: the peer's end is already closed
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
    """One stream: the I/O of its :class:`~mcp_proto_runtime.ServerSession`.

    The reader task carries out the session's actions; each handler runs on a worker
    task, which carries out what its end asks (its answer, the next queued request).
    """

    def __init__(self, server: Server, link: _StreamLink | _FdLink) -> None:
        self.server = server
        self.session: ServerSession[Handler, Context] = ServerSession(
            server, self._context, max_concurrency=server.max_concurrency
        )
        self.conn = self.session.conn
        self.link = link
        self.resumed = trio.lowlevel.ParkingLot()  # the reader, paused
        self.ended = trio.lowlevel.ParkingLot()  # the reader, waiting out the shutdown grace
        self.idle: list[trio.lowlevel.Task] = []  # workers parked for the next request
        self.changes = Changes(server, "a stdio stream")

    def _context(self, core: RequestContext) -> Context:
        return Context(core, self)

    async def emit(self, event: m.Notification | m.Result) -> None:
        """Send ``event``; a checkpoint (a handler's progress and log come here)."""
        data = self.session.send(event)
        if data:
            await self.link.send(data, checkpoint=True)
        else:
            await trio.lowlevel.checkpoint()

    async def _write(self, data: bytes) -> bool:
        """Write ``data`` from a task that ends or reads next; false if the client is gone."""
        try:
            await self.link.send(data, checkpoint=False)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
            self._gone(f"a write failed: {e!r}")
            return False
        return True

    def _gone(self, reason: str) -> None:
        for cancel in self.session.write_failed(reason):
            cancel.run.context._cancel()
        self.resumed.unpark_all()

    async def _write_changes(self) -> None:
        try:
            await self.changes.write_stream(self.conn, self.emit)  # until the client is gone
        except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
            self._gone(f"a change notification could not be written: {e!r}")

    async def run(self) -> None:
        session = self.session
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._write_changes)
            while True:
                action = session.next_action()
                if action is m.NEED_DATA:
                    session.receive_data(await self.link.receive())
                elif isinstance(action, RunHandler):
                    if self.idle:  # waking a parked worker costs less than starting a task
                        trio.lowlevel.reschedule(self.idle.pop(), outcome.Value(action))
                    else:
                        nursery.start_soon(self._worker, action)
                elif isinstance(action, Write):
                    await self._write(action.data)
                elif isinstance(action, CancelHandler):
                    action.run.context._cancel()
                elif action is m.PAUSED:  # backpressure: read no more until a request ends
                    await self.resumed.park()
                elif isinstance(action, Stop):
                    with trio.move_on_after(action.grace):
                        while not session.idle:  # let what was received finish
                            await self.ended.park()
                    session.stop_now()  # the nursery's cancellation reaches them all
                    break
            nursery.cancel_scope.cancel()

    async def _worker(self, run: RunHandler[Handler, Context] | None) -> None:
        """Runs ``run``'s handler, then, parked in between, those of the requests handed to it.

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
                    if run is None:
                        if len(self.idle) >= _IDLE_WORKERS:
                            return
                        self.idle.append(me)
                        run = await trio.lowlevel.wait_task_rescheduled(partial(self._unpark, me))
                    current, run = run, None
                    run = await self._run(current, scope)
            # only the cancellation of ``current``'s scope ends up here
            run = await self._carry_out(self.session.handler_cancelled(current))

    def _unpark(self, me: trio.lowlevel.Task, _: Any) -> trio.lowlevel.Abort:
        self.idle.remove(me)  # cancelled while parked: nobody may hand it a request now
        return trio.lowlevel.Abort.SUCCEEDED

    async def _run(
        self, run: RunHandler[Handler, Context], scope: trio.CancelScope
    ) -> RunHandler[Handler, Context] | None:
        """Run one handler in ``scope``, then what its end asks; the next request to run."""
        value, error = await call(run, scope)
        return await self._carry_out(self.session.handler_done(run, value, error))

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
                self.resumed.unpark_all()
        if self.ended:
            self.ended.unpark_all()
        return following
