"""The blocking server: one reader loop, handlers on a bounded thread pool.

All protocol decisions are the core's (:class:`mcp_proto.ServerConnection` and
:mod:`mcp_proto._app`); this module reads, writes and runs threads.  The
connection is not thread-safe, so every call into it holds one lock.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, BinaryIO

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto._app import (
    SATURATION_PAUSE,
    SEND_REFUSED,
    HandlerContext,
    Handlers,
    RequestContext,
    ServerSettings,
    answer,
    default_answer,
    internal_error,
)
from mcp_proto._fanout import Offer, Outbox, listen_end

__all__ = ["Context", "Handler", "Server"]

Handler = Callable[["Context", Any], Any]
_CHUNK = 65536
_DONE_LOCK = threading.Lock()  # makes a Context's event once: most handlers never wait
#: seconds a caller whose notification finds a stdio stream's outbox full gives that
#: stream's writer thread to take from it before the stream is deemed slow: the thread
#: may only be waiting for the GIL, which a caller that never blocks does not give up
_PICKUP_GRACE = 0.05


class Context(HandlerContext):
    """What a blocking handler gets: its request, and ways to talk about it.

    ``progress`` and ``log`` send only what the request asked for (a
    ``progressToken``; a ``logLevel`` at or below the level) and do nothing
    otherwise.  ``cancelled`` turns true when the client cancels or the
    connection ends; long handlers should look at it, or wait on
    :meth:`wait_cancelled`.
    """

    def __init__(self, core: RequestContext, session: Any) -> None:
        super().__init__(core, session)
        self._done: threading.Event | None = None  # made by the first wait_cancelled

    def wait_cancelled(self, timeout: float | None = None) -> bool:
        """Block until the request is cancelled (True) or ``timeout`` passes (False)."""
        with _DONE_LOCK:
            if self._done is None:
                self._done = threading.Event()
                if self.cancelled:  # cancelled before anyone waited
                    self._done.set()
        return self._done.wait(timeout)

    def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        event = self._core.progress_event(progress, total, message)
        if event is not None:
            self._session.emit(event)

    def log(self, level: t.LoggingLevel, data: Any, logger: str | None = None) -> None:
        event = self._core.log_event(level, data, logger)
        if event is not None:
            self._session.emit(event)

    def notify_changed(self, method: str, params: Any = None) -> None:
        """A change notification, to every open subscription that asked for it.

        See :meth:`Server.notify_changed`; to this request's own stdio stream it is
        written at once, in this thread, as its answer will be.
        """
        event = m.Notification(method=method, params=params or t.NotificationParams())
        self._session.server._fan_out(event, self._session)

    def _cancel(self) -> None:
        super()._cancel()  # first: a wait_cancelled that makes the event now sees it
        with _DONE_LOCK:
            done = self._done
        if done is not None:
            done.set()


class Server(ServerSettings[Handler]):
    """Blocking handlers ``fn(ctx, params) -> result``, and the settings of
    :class:`mcp_proto._app.ServerSettings`; serves any number of streams.

    ``max_workers`` bounds the handler threads of one stream; the connections of
    an HTTP server share them.
    """

    def __init__(
        self,
        handlers: Handlers[Handler] | Mapping[str, Handler] | None = None,
        *,
        max_workers: int = 16,
        **options: Any,
    ) -> None:
        super().__init__(handlers, **options)
        self.max_workers = max_workers
        self._lock = threading.Lock()

    def serve_stdio(self) -> None:
        """Serve the process's own stdin and stdout until stdin ends (STDIO-15).

        Anything else that writes to ``sys.stdout`` would corrupt the stream
        (STDIO-06), so ``sys.stdout`` points at stderr while serving.
        """
        real_stdout = sys.stdout
        sys.stdout = sys.stderr
        try:
            real_stdout.flush()  # what was printed before goes first; then straight to the fd
            try:
                write: Callable[[bytes], None] = _FdWriter(real_stdout.fileno())
            except (AttributeError, OSError, ValueError):  # no descriptor (a test's capture)
                write = _FileWriter(real_stdout.buffer)
            self._serve(sys.stdin.buffer, write)
        finally:
            sys.stdout = real_stdout

    def serve(self, rfile: BinaryIO, wfile: BinaryIO) -> None:
        """Serve one byte stream (a pipe pair, a socket's files) until its input ends."""
        self._serve(rfile, _FileWriter(wfile))

    def _serve(self, rfile: BinaryIO, write: Callable[[bytes], None]) -> None:
        session = _Session(self, write)
        with self._lock:
            self._sessions.add(session)
        try:
            session.run(rfile)
        finally:
            with self._lock:
                self._sessions.discard(session)

    def notify_changed(self, method: str, params: Any = None) -> None:
        """Fan a change notification out to every matching subscription of every stream.

        Never waits for a subscriber's I/O: it is handed to each stream's outbox,
        which a thread of that stream writes (an HTTP listen's is written at once when
        its socket takes it).  A stream ``fanout_queue`` notifications behind has its
        subscriptions ended (:mod:`mcp_proto._fanout`); a stdio stream's thread gets
        :data:`_PICKUP_GRACE` seconds to make room first, since it needs the GIL.
        """
        self._fan_out(m.Notification(method=method, params=params or t.NotificationParams()))

    def _fan_out(self, event: m.Notification, own: Any = None) -> None:
        """``notify_changed``; ``own``, a handler's stream, gets it from this thread if it can."""
        with self._lock:
            sessions = list(self._sessions)
        for session in sessions:
            if session is not own:
                session.offer(event)
        if own in sessions:  # last: the others need not wait for its write
            own.offer(event, own=True)

    def serve_http(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        ready: Callable[[tuple[str, int]], None] | None = None,
        stop: threading.Event | None = None,
        **http_options: Any,
    ) -> None:
        """Serve Streamable HTTP on ``host:port``; a thread per connection.

        ``http_options`` go to :class:`mcp_proto.http.HTTPServer` (``endpoint``,
        ``allowed_hosts``, ``tools``, ``auth``...).  ``ready`` is called with the
        bound address once the socket listens (port 0 picks a free one).  Returns
        once ``stop`` is set (connections already open finish on their own).
        """
        from ._http import serve_http

        serve_http(self, host, port, ready=ready, stop=stop, http_options=http_options)


def _read_some(rfile: BinaryIO) -> bytes:
    read1 = getattr(rfile, "read1", None)
    if read1 is not None:
        return read1(_CHUNK)  # type: ignore[no-any-return]
    return os.read(rfile.fileno(), _CHUNK)


class _FileWriter:
    """``write`` then ``flush`` on a binary file: each message leaves at once."""

    def __init__(self, wfile: BinaryIO) -> None:
        self.wfile = wfile

    def __call__(self, data: bytes) -> None:
        self.wfile.write(data)
        self.wfile.flush()


class _FdWriter:
    """``os.write`` on a file descriptor until all of ``data`` is out (no buffer to flush)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __call__(self, data: bytes) -> None:
        sent = os.write(self.fd, data)
        if sent < len(data):
            with memoryview(data) as view:
                while sent < len(data):
                    sent += os.write(self.fd, view[sent:])


class _Workers:
    """Threads that run ``fn(arg)`` jobs in order of submission, at most ``size`` of them.

    A thread is started when a job finds none idle (as ``ThreadPoolExecutor`` does),
    with less bookkeeping per job: a job is a queue entry, not a future.  Any thread
    may submit.  :meth:`close` lets the threads finish every job submitted, then joins
    them; a job submitted after it raises ``RuntimeError``.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.jobs: queue.SimpleQueue[tuple[Callable[[Any], None], Any] | None] = (
            queue.SimpleQueue()
        )
        self.threads: list[threading.Thread] = []
        self.idle = 0  # idle threads less queued jobs no thread has been counted for
        self.closed = False
        self.lock = threading.Lock()

    def submit(self, fn: Callable[[Any], None], arg: Any) -> None:
        with self.lock:
            if self.closed:
                raise RuntimeError("the worker threads are closed")
            self.jobs.put((fn, arg))  # first: a thread started now takes it before it returns
            thread = None
            if self.idle == 0 and len(self.threads) < self.size:
                thread = threading.Thread(
                    target=self._work, name=f"mcp_{len(self.threads)}", daemon=True
                )
                self.threads.append(thread)
            else:
                self.idle -= 1  # this job is that thread's: the next one may need a new thread
        if thread is not None:
            thread.start()

    def _work(self) -> None:
        while (job := self.jobs.get()) is not None:
            job[0](job[1])
            with self.lock:
                self.idle += 1

    def close(self) -> None:
        with self.lock:
            self.closed = True
            threads = list(self.threads)
        for _ in threads:
            self.jobs.put(None)
        for thread in threads:
            thread.join()


class _Session:
    def __init__(self, server: Server, write: Callable[[bytes], None]) -> None:
        self.server = server
        self.conn = server.connection()
        self.write = write
        self.lock = threading.Lock()
        self.slot_freed = threading.Condition(self.lock)
        self.waiting = False  # the reader waits on slot_freed: a handler's end must notify
        self.contexts: dict[t.RequestId, Context] = {}
        # change notifications: their outbox, under a lock of their own that no write holds
        self.changes = threading.Condition(threading.Lock())
        self.outbox = Outbox[m.Notification](server.fanout_queue, "a stdio stream")
        self.writer: threading.Thread | None = None  # started by the first notification
        self.writing = False  # the writer took one out and has not written it yet
        self.closed = False

    def emit(self, event: Any) -> None:
        with self.lock:
            data = self.conn.send(event)
            if data:
                self.write(data)

    def offer(self, event: m.Notification, *, own: bool = False) -> None:
        """Hand ``event`` to this stream's writer thread; never waits for the stream's I/O.

        When the outbox is full, the writer thread gets :data:`_PICKUP_GRACE` seconds
        to take one out; past that the stream is slow (:mod:`mcp_proto._fanout`).
        ``own``: the caller is a handler of this stream, and writes it itself when
        nothing is waiting before it (its own answer waits on the stream all the same).
        """
        changes, outbox = self.changes, self.outbox
        with changes:
            direct = own and not outbox and not self.writing and not outbox.ending
            if not direct:
                if len(outbox) >= outbox.limit and self.writer is not None:
                    changes.wait_for(self._room, _PICKUP_GRACE)
                if outbox.offer(event) is Offer.DROPPED:
                    return
                if self.writer is None:
                    self.writer = threading.Thread(target=self._write_changes, daemon=True)
                    self.writer.start()
                changes.notify_all()
        if direct:
            self.emit(event)

    def _room(self) -> bool:
        return len(self.outbox) < self.outbox.limit or self.closed

    def _write_changes(self) -> None:
        """The writer thread: this stream's notifications, as slowly as its reader takes them.

        A stream that fell behind has every open listen ended with its result (SUB-12),
        then gets the notifications of the listens it opens next.
        """
        changes, outbox = self.changes, self.outbox
        while True:
            with changes:
                event = outbox.pop()
                while event is None and not outbox.ending and not self.closed:
                    changes.wait()
                    event = outbox.pop()
                if self.closed:
                    return  # the stream is over: nothing more is written to it
                self.writing = True
                changes.notify_all()  # a caller may wait for room
            try:
                if event is not None:
                    self.emit(event)
                else:
                    with self.lock:
                        ended = self.conn.subscriptions()
                    for id in ended:
                        self.emit(listen_end(id))
                    with changes:
                        outbox.reopen()
            except OSError:
                return  # the client went away: the reader sees the end
            finally:
                with changes:
                    self.writing = False

    def run(self, rfile: BinaryIO) -> None:
        pool = _Workers(self.server.max_workers)
        try:
            try:
                while self._step(rfile, pool):
                    pass
                deadline = time.monotonic() + self.server.shutdown_grace
                with self.slot_freed:  # the input ended: let what was received finish
                    self.waiting = True
                    while self.contexts and (left := deadline - time.monotonic()) > 0:
                        self.slot_freed.wait(left)
            finally:
                for ctx in list(self.contexts.values()):
                    ctx._cancel()
        finally:
            with self.changes:
                self.closed = True  # the writer thread ends once it has nothing to write
                self.changes.notify_all()
            pool.close()

    def _step(self, rfile: BinaryIO, pool: _Workers) -> bool:
        with self.slot_freed:  # backpressure: read no more while requests end...
            if self.conn.saturated:
                self.waiting = True
                while self.conn.saturated:
                    if not self.slot_freed.wait(SATURATION_PAUSE):
                        break  # ...but none ended for a while: read on, a cancel may be waiting
                self.waiting = False
        chunk = _read_some(rfile)
        events = []
        with self.lock:
            self.conn.receive_data(chunk)
            try:
                while (event := self.conn.next_event()) is not m.NEED_DATA:
                    events.append(event)
                    if isinstance(event, m.ConnectionClosed):
                        break  # it would be returned again on every call
            except m.RemoteProtocolError as e:
                print(f"mcp-proto: input framing lost: {e}", file=sys.stderr)
                return False
        for event in events:
            if isinstance(event, m.Request):
                if self.server.handlers.find(event.method) is None:
                    self.emit(default_answer(self.conn, event))  # answered here, no thread needed
                    continue
                ctx = Context(RequestContext(event), self)
                self.contexts[event.id] = ctx
                pool.submit(self._handle, ctx)
            elif isinstance(event, m.Cancelled):
                cancelled = self.contexts.get(event.id)
                if cancelled is not None:
                    cancelled._cancel()
            elif isinstance(event, m.InvalidMessage):
                self.emit(event)
            elif isinstance(event, m.ConnectionClosed):
                return False
        return bool(chunk)

    def _handle(self, ctx: Context) -> None:
        try:
            run_handler(self.server, ctx, self.emit, self.conn.cache_hints)
        except OSError:
            pass  # the client went away while we answered: the reader sees the end
        except Exception as e:  # a pool thread must not fail silently
            print(f"mcp-proto: {ctx.request.method}: {e!r}", file=sys.stderr)
        finally:
            self.contexts.pop(ctx.request.id, None)
            if self.waiting:  # set under the lock before the reader looks at what it waits for
                with self.slot_freed:
                    self.slot_freed.notify_all()


def run_handler(
    server: Server, ctx: Context, emit: Callable[[Any], None], cache_hints: tuple[int, str]
) -> None:
    """Run ``ctx``'s handler and send its answer, unless the request was cancelled meanwhile."""
    request = ctx.request
    handler = server.handlers.find(request.method)
    assert handler is not None
    if ctx.cancelled:
        return  # cancelled (or the input ended) while it waited for a thread
    try:
        value = handler(ctx, request.params)
    except Exception as e:
        outcome: Any = answer(request, error=e)
    else:
        outcome = answer(request, value, cache_hints=cache_hints)
    if ctx.cancelled:
        return  # nothing is sent for a cancelled request (STDIO-13)
    try:
        emit(outcome)
    except SEND_REFUSED as e:  # the handler's answer broke a send rule or cannot be encoded
        print(f"mcp-proto: handler for {request.method}: {e}", file=sys.stderr)
        emit(internal_error(request))
