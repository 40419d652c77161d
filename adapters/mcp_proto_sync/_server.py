"""The blocking server: one reader loop, handlers on a bounded thread pool.

All protocol decisions are the core's (:class:`mcp_proto.ServerConnection` and
:mod:`mcp_proto._app`); this module reads, writes and runs threads.  The
connection is not thread-safe, so every call into it holds one lock.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
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

__all__ = ["Context", "Handler", "Server"]

Handler = Callable[["Context", Any], Any]
_CHUNK = 65536


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
        self._done = threading.Event()

    def wait_cancelled(self, timeout: float | None = None) -> bool:
        """Block until the request is cancelled (True) or ``timeout`` passes (False)."""
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
        """A change notification, to every open subscription that asked for it."""
        self._session.server.notify_changed(method, params)

    def _cancel(self) -> None:
        super()._cancel()
        self._done.set()


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
            self.serve(sys.stdin.buffer, real_stdout.buffer)
        finally:
            sys.stdout = real_stdout

    def serve(self, rfile: BinaryIO, wfile: BinaryIO) -> None:
        """Serve one byte stream (a pipe pair, a socket's files) until its input ends."""
        session = _Session(self, wfile)
        with self._lock:
            self._sessions.add(session)
        try:
            session.run(rfile)
        finally:
            with self._lock:
                self._sessions.discard(session)

    def notify_changed(self, method: str, params: Any = None) -> None:
        """Fan a change notification out to every matching subscription of every stream."""
        with self._lock:
            sessions = list(self._sessions)
        for session in sessions:
            with contextlib.suppress(OSError):  # gone: the others still get it
                session.notify_changed(method, params)

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


class _Session:
    def __init__(self, server: Server, wfile: BinaryIO) -> None:
        self.server = server
        self.conn = server.connection()
        self.wfile = wfile
        self.lock = threading.Lock()
        self.slot_freed = threading.Condition(self.lock)
        self.contexts: dict[t.RequestId, Context] = {}

    def emit(self, event: Any) -> None:
        with self.lock:
            data = self.conn.send(event)
            if data:
                self.wfile.write(data)
                self.wfile.flush()

    def notify_changed(self, method: str, params: Any) -> None:
        self.emit(m.Notification(method=method, params=params or t.NotificationParams()))

    def run(self, rfile: BinaryIO) -> None:
        with ThreadPoolExecutor(self.server.max_workers, thread_name_prefix="mcp") as pool:
            try:
                while self._step(rfile, pool):
                    pass
                deadline = time.monotonic() + self.server.shutdown_grace
                with self.slot_freed:  # the input ended: let what was received finish
                    while self.contexts and (left := deadline - time.monotonic()) > 0:
                        self.slot_freed.wait(left)
            finally:
                for ctx in list(self.contexts.values()):
                    ctx._cancel()

    def _step(self, rfile: BinaryIO, pool: ThreadPoolExecutor) -> bool:
        with self.slot_freed:  # backpressure: read no more while requests end...
            while self.conn.saturated:
                if not self.slot_freed.wait(SATURATION_PAUSE):
                    break  # ...but none ended for a while: read on, a cancel may be waiting
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
