"""The blocking server: one reader loop, handlers on a bounded thread pool.

All protocol decisions are the core's (:class:`mcp_proto.ServerConnection`), the
handler runtime is :mod:`mcp_proto_runtime`; this module reads, writes and runs threads.  The
connection is not thread-safe, so every call into it holds one lock.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from typing import Any, BinaryIO

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto_runtime import (
    CancelHandler,
    Handlers,
    Offer,
    Outbox,
    RequestContext,
    ResumeReading,
    RunHandler,
    ServerSession,
    ServerSettings,
    Stop,
    Write,
    listen_end,
    server_log,
)

from ._handlers import Context, Handler, _Workers, call
from ._http import serve_http

__all__ = ["Server"]

_CHUNK = 65536
#: seconds a caller whose notification finds a stdio stream's outbox full gives that
#: stream's writer thread to take from it before the stream is deemed slow: the thread
#: may only be waiting for the GIL, which a caller that never blocks does not give up
_PICKUP_GRACE = 0.05


class Server(ServerSettings[Handler]):
    """Blocking handlers ``fn(ctx, params) -> result``, and the settings of
    :class:`mcp_proto_runtime.ServerSettings`; serves any number of streams.

    ``max_concurrency`` bounds the handlers running at once (each on a thread) on
    one stream; the connections of an HTTP server share that many threads.  The
    same keyword as the async adapters'; ``max_workers``, its old name, still works
    with a ``DeprecationWarning``.
    """

    _handler_kind = "sync"

    def __init__(
        self,
        handlers: Handlers[Handler] | Mapping[str, Handler] | None = None,
        *,
        max_concurrency: int = 16,
        max_workers: int | None = None,
        **options: Any,
    ) -> None:
        super().__init__(handlers, **options)
        if max_workers is not None:
            warnings.warn(
                "Server(max_workers=) is now Server(max_concurrency=)",
                DeprecationWarning,
                stacklevel=2,
            )
            max_concurrency = max_workers
        self.max_concurrency = max_concurrency
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
        subscriptions ended (:mod:`mcp_proto_runtime`); a stdio stream's thread gets
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
        serve_http(self, host, port, ready=ready, stop=stop, http_options=http_options)


def _read_some(rfile: BinaryIO) -> bytes:
    read1 = getattr(rfile, "read1", None)
    if read1 is not None:
        data: bytes = read1(_CHUNK)
        return data
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


class _Session:
    def __init__(self, server: Server, write: Callable[[bytes], None]) -> None:
        self.server = server
        self.session: ServerSession[Handler, Context] = ServerSession(
            server, self._context, max_concurrency=server.max_concurrency
        )
        self.conn = self.session.conn
        self.write = write
        self.lock = threading.Lock()  # guards the session and orders the writes
        self.handler_ended = threading.Condition(self.lock)
        self.waiting = False  # the reader waits on handler_ended: a handler's end must notify
        self.paused = False  # the reader waits for a ResumeReading
        # change notifications: their outbox, under a lock of their own that no write holds
        self.changes = threading.Condition(threading.Lock())
        self.outbox = Outbox[m.Notification](server.fanout_queue, "a stdio stream")
        self.writer: threading.Thread | None = None  # started by the first notification
        self.writing = False  # the writer took one out and has not written it yet
        self.closed = False

    def _context(self, core: RequestContext) -> Context:
        return Context(core, self)

    def emit(self, event: m.Notification | m.Result) -> None:
        with self.lock:
            data = self.session.send(event)
            if data:
                self.write(data)

    def close_stream(self) -> bool:
        """Nothing to close on stdio: the answer comes on this stream (False)."""
        return False

    def offer(self, event: m.Notification, *, own: bool = False) -> None:
        """Hand ``event`` to this stream's writer thread; never waits for the stream's I/O.

        When the outbox is full, the writer thread gets :data:`_PICKUP_GRACE` seconds
        to take one out; past that the stream is slow (:mod:`mcp_proto_runtime`).
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
            except OSError as e:  # the client went away
                with self.lock:
                    self._gone(f"a change notification could not be written: {e!r}")
                return
            finally:
                with changes:
                    self.writing = False

    def run(self, rfile: BinaryIO) -> None:
        pool = _Workers(self.server.max_concurrency)
        try:
            try:
                grace = self._read(rfile, pool)
                deadline = time.monotonic() + grace
                with self.handler_ended:  # the input ended: let what was received finish
                    self.waiting = True
                    while not self.session.idle and (left := deadline - time.monotonic()) > 0:
                        self.handler_ended.wait(left)
            finally:
                with self.lock:
                    for cancel in self.session.stop_now():
                        cancel.run.context._cancel()
        finally:
            with self.changes:
                self.closed = True  # the writer thread ends once it has nothing to write
                self.changes.notify_all()
            pool.close()

    def _read(self, rfile: BinaryIO, pool: _Workers) -> float:
        """Carry out the session's actions until it stops; the shutdown grace it gives."""
        session = self.session
        while True:
            with self.lock:  # one acquisition for every action the input gives
                while (action := session.next_action()) is not m.NEED_DATA:
                    if isinstance(action, RunHandler):
                        pool.submit(self._handle, action)
                    elif isinstance(action, Write):
                        self._write(action.data)
                    elif isinstance(action, CancelHandler):
                        action.run.context._cancel()
                    elif action is m.PAUSED:  # backpressure: read no more until a request ends
                        self.paused = self.waiting = True
                        while self.paused:
                            self.handler_ended.wait()
                        self.waiting = False
                    elif isinstance(action, Stop):
                        return action.grace
            data = _read_some(rfile)
            with self.lock:
                session.receive_data(data)

    def _write(self, data: bytes) -> None:
        """Write ``data`` (under :attr:`lock`); a client gone stops the session."""
        try:
            self.write(data)
        except OSError as e:  # the client went away (a closed pipe, a reset socket)
            self._gone(f"a write failed: {e!r}")

    def _gone(self, reason: str) -> None:
        """Under :attr:`lock`: the client is gone; cancel every handler, wake the reader."""
        for cancel in self.session.write_failed(reason):
            cancel.run.context._cancel()
        self.paused = False
        if self.waiting:
            self.handler_ended.notify_all()

    def _handle(self, run: RunHandler[Handler, Context] | None) -> None:
        """A pool thread: run ``run``'s handler, then the queued requests its end hands on."""
        session = self.session
        while run is not None:
            method = run.request.method
            try:
                if run.context.cancelled:  # cancelled before it started
                    with self.lock:
                        run = self._carry_out(session.handler_cancelled(run))
                    continue
                value, error = call(run)
                with self.lock:
                    run = self._carry_out(session.handler_done(run, value, error))
            except Exception as e:  # a pool thread must not fail silently
                server_log.exception("%s: the handler runner failed: %r", method, e)
                return

    def _carry_out(
        self, actions: list[Write | RunHandler[Handler, Context] | ResumeReading]
    ) -> RunHandler[Handler, Context] | None:
        """Under :attr:`lock`: write the answer, wake the reader; the request to run next."""
        following = None
        for action in actions:
            if isinstance(action, Write):
                self._write(action.data)
            elif isinstance(action, RunHandler):
                following = action
            else:
                self.paused = False
        if self.waiting:  # set under the lock before the reader looks at what it waits for
            self.handler_ended.notify_all()
        return following
