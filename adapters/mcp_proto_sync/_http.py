"""Streamable HTTP for the blocking server: a thread per TCP connection, HTTP/1.1 in the core.

Each connection thread reads the socket and feeds :class:`mcp_proto.http.HTTPServerConnection`
(one exchange at a time, keep-alive between them).  A request's handler runs on
a pool thread while the connection thread keeps reading, so a client that closes
the response is seen at once and cancels the handler (CANCEL-04, HTTP-SSE-5).  A
listen with no handler is acknowledged and stays open on its connection, which
sends a keep-alive comment when it has been quiet for ``keepalive_interval``
seconds; change notifications reach it through :meth:`Server.notify_changed`, which
writes what the socket takes at once and leaves the rest to a thread of the listen's
own; that thread closes the connection when a write takes over ``fanout_timeout``
seconds or the listen falls ``fanout_queue`` notifications behind (after its result).

The listen and body budgets (:mod:`mcp_proto.http.limits`) are shared by the connection
threads, so they are used here through subclasses that take a lock.  A connection that
closes after its last response closes lingeringly (``LINGER_TIME``, ``LINGER_BYTES``),
once its listen has ended and nothing more of it is written.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
import time
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.http import HTTPServer, Reply
from mcp_proto.http.limits import BodyBudget, ListenBudget
from mcp_proto_runtime import (
    LINGER_BYTES,
    LINGER_TIME,
    CancelHandler,
    Close,
    EndListen,
    HTTPServerSession,
    OpenListen,
    Outbox,
    ReadWithin,
    RequestContext,
    RunHandler,
    Write,
    listen_end,
    peer_of,
    server_log,
    write_timed_out,
)

from ._handlers import Context, Handler, _Workers, call

if TYPE_CHECKING:
    from ._server import Server

__all__ = ["serve_http"]

_CHUNK = 65536


def serve_http(
    server: Server,
    host: str,
    port: int,
    *,
    ready: Callable[[tuple[str, int]], None] | None,
    stop: threading.Event | None,
    http_options: dict[str, Any],
) -> None:
    http, template = server.http_binding(http_options)
    budgets = server.budgets(_LockedListens, _LockedBodies)
    core = threading.RLock()  # the legacy sessions the connection threads share
    listener = socket.create_server((host, port))
    pool = _Workers(server.max_concurrency)
    with listener:
        if ready is not None:
            ready(listener.getsockname()[:2])
        listener.settimeout(0.25)  # to notice ``stop``
        slots = threading.BoundedSemaphore(server.max_connections)
        links: set[_Link] = set()
        try:
            while stop is None or not stop.is_set():
                if not slots.acquire(timeout=0.25):
                    continue  # at capacity: leave new connections in the backlog
                try:
                    sock, peer = listener.accept()
                except OSError:  # a timeout to look at ``stop``, or EMFILE, ECONNABORTED...
                    slots.release()
                    continue
                link = _Link(
                    server, http, template, sock, pool, budgets=budgets, peer=peer[0], core=core
                )
                links.add(link)
                threading.Thread(target=link.run, args=(slots, links), daemon=True).start()
        finally:  # stopping the server ends its connections too, as on trio
            for link in list(links):
                link.close()
            pool.close()  # the handlers of those connections were cancelled: they end


class _LockedListens(ListenBudget):
    def __init__(self, total: int, per_client: int) -> None:
        super().__init__(total, per_client)
        self._lock = threading.Lock()

    def admit(self, id: m.types.RequestId, client: Hashable) -> Reply | None:
        with self._lock:
            return super().admit(id, client)

    def release(self, client: Hashable) -> None:
        with self._lock:
            super().release(client)


class _LockedBodies(BodyBudget):
    def __init__(self, total: int, allowance: int) -> None:
        super().__init__(total, allowance)
        self._lock = threading.Lock()

    def reserve(self, n: int) -> bool:
        with self._lock:
            return super().reserve(n)

    def release(self, n: int) -> None:
        with self._lock:
            super().release(n)


class _LockedSession(HTTPServerSession[Handler, Context]):
    """An :class:`HTTPServerSession` whose calls into the core hold the server's ``core`` lock.

    A legacy session spans TCP connections, so threads here: one connection's request
    waits for the client's answers to its input requests, which another connection
    delivers, and every connection's ``next_action`` may end idle sessions.  One
    re-entrant lock for all of them makes each call atomic; it is held for the core's
    work only, never across a socket's I/O (the link's own lock orders its writes).
    """

    def __init__(self, *args: Any, core: threading.RLock, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._core_lock = core

    def receive_data(self, data: bytes) -> None:
        with self._core_lock:
            super().receive_data(data)

    def next_action(
        self, now: float
    ) -> (
        ReadWithin
        | Write
        | RunHandler[Handler, Context]
        | CancelHandler[Handler, Context]
        | OpenListen
        | EndListen
        | Close
    ):
        with self._core_lock:
            return super().next_action(now)

    def read_timed_out(self) -> bytes:
        with self._core_lock:
            return super().read_timed_out()

    def handler_done(
        self,
        run: RunHandler[Handler, Context],
        value: Any = None,
        error: BaseException | None = None,
    ) -> bytes:
        with self._core_lock:
            return super().handler_done(run, value, error)

    def handler_cancelled(self, run: RunHandler[Handler, Context]) -> None:
        with self._core_lock:
            super().handler_cancelled(run)

    def send(self, event: m.Notification | m.Result) -> bytes:
        with self._core_lock:
            return super().send(event)

    def close_stream(self) -> bytes:
        with self._core_lock:
            return super().close_stream()

    def end_listen(self) -> None:
        with self._core_lock:
            super().end_listen()

    def close(self) -> None:
        with self._core_lock:
            super().close()


class _Link:
    """One TCP connection: its HTTP state, its socket, the request it is running."""

    def __init__(
        self,
        server: Server,
        http: HTTPServer,
        template: m.ServerConnection,
        sock: socket.socket,
        pool: _Workers,
        *,
        budgets: tuple[ListenBudget, BodyBudget],
        peer: str,
        core: threading.RLock,
    ) -> None:
        self.server = server
        self.session: HTTPServerSession[Handler, Context] = _LockedSession(
            server,
            http,
            template,
            budgets,
            peer=peer,
            make_context=self._context,
            now=time.monotonic(),
            core=core,
        )
        self.sock = sock
        self.pool = pool
        self.lock = threading.Lock()  # guards the session and orders the writes
        self.listen: t.RequestId | None = None
        self.outbox: Outbox[m.Notification] | None = None  # while a listen is open
        self.pending = b""  # what the socket has not taken yet of the message being written
        # the listen's writes: a non-blocking twin of sock, since a send on sock (in timeout
        # mode for the reader) retries a full buffer until that timeout
        self.out: socket.socket | None = None
        self.flushing = False  # a flusher thread owns the socket's output

    def _context(self, core: RequestContext) -> Context:
        return Context(core, self)

    def emit(self, event: m.Notification | m.Result) -> None:
        """Write a handler's notification (progress, log) on its response."""
        with self.lock:
            data = self.session.send(event)
            if data:
                self.sock.sendall(data)

    def close_stream(self) -> bool:
        """End the handler's response before its answer, if it can (a legacy request)."""
        with self.lock:
            data = self.session.close_stream()
            if data:
                self.sock.sendall(data)
        return bool(data)

    def _open_listen(self, listen: OpenListen) -> None:
        """Under ``lock``: the listen joins the fan-out, then its acknowledgement is written.

        Joined before its bytes are written, since the client may cause a change the
        moment it reads them (this thread may not run again before that change is fanned
        out); ``offer`` waits for ``lock``, so the acknowledgement is still the first thing
        on the listen (SUB-04).  It is written as the listen's notifications are: what the
        socket takes now, the rest by the flusher thread within ``fanout_timeout``, so that
        ``lock`` is never held across a wait for the client.
        """
        self.listen = listen.id
        self.out = self.sock.dup()
        self.out.setblocking(False)
        who = f"listen {listen.id!r} of {self.peer_name()}"
        self.outbox = Outbox(self.server.fanout_queue, who)
        with self.server._lock:
            self.server._sessions.add(self)
        self._send_now(listen.ack)

    def peer_name(self) -> str:
        return peer_of(self.sock)

    def offer(self, event: m.Notification, *, own: bool = False) -> None:
        """A change notification for the open listen: written now, or queued; never waits."""
        with self.lock:
            if self.outbox is None:
                return
            if self.flushing:  # the flusher thread writes it after what waits before it
                self.outbox.offer(event)
            elif not self.outbox.ending:
                self._send_now(self.session.send(event))

    def _send_now(self, data: bytes) -> None:
        """Write what the socket takes of ``data`` now (under ``lock``); the rest to a flusher."""
        try:
            sent = self.out.send(data) if data and self.out is not None else 0
        except BlockingIOError:
            sent = 0
        except (OSError, ValueError):
            return  # gone: the connection thread cleans up
        if sent < len(data):
            self.pending = data[sent:]
            self.flushing = True
            threading.Thread(target=self._flush, daemon=True).start()

    def _flush(self) -> None:
        """Writes what the socket did not take, then the listen's queued notifications.

        Each message gets ``fanout_timeout`` seconds; when one takes longer, or once the
        listen fell behind and was ended with its result (SUB-12), the connection is closed.
        """
        timeout = self.server.fanout_timeout
        deadline = time.monotonic() + timeout
        ended = False
        while True:
            with self.lock:
                if self.outbox is None:  # the listen ended: whoever ended it closes
                    self.flushing = False
                    return
                if not self.pending:
                    if ended:
                        break
                    event: m.Notification | m.Result | None = self.outbox.pop()
                    if event is None and not self.outbox.ending:
                        self.flushing = False  # back to writing at once
                        return
                    if event is None:
                        ended = True
                        assert self.listen is not None
                        event = listen_end(self.listen)
                    self.pending = self.session.send(event)
                    deadline = time.monotonic() + timeout
                    continue
                data = self.pending
            try:
                left = deadline - time.monotonic()
                assert self.out is not None
                if left <= 0 or not _writable(self.out, left):
                    write_timed_out(self.peer_name(), timeout)
                    break
                sent = self.out.send(data)
            except BlockingIOError:
                sent = 0
            except (OSError, ValueError):
                sent = -1  # gone, or the write side shut by a lingering close
            with self.lock:
                if sent < 0 and self.outbox is not None:
                    break
                self.pending = self.pending[max(sent, 0) :]
        self.close()

    def run(self, slots: threading.BoundedSemaphore, links: set[_Link]) -> None:
        try:
            self._carry_out()
        except (OSError, RuntimeError) as e:  # RuntimeError: the pool was shut down (server stop)
            server_log.debug("%s: connection lost: %r", self.peer_name(), e)
        finally:
            self.close()
            links.discard(self)
            slots.release()

    def _carry_out(self) -> None:
        session, sock = self.session, self.sock
        while True:
            with self.lock:
                action = session.next_action(time.monotonic())
                if isinstance(action, Write):
                    sock.sendall(action.data)
                    continue
                if isinstance(action, OpenListen):
                    self._open_listen(action)
                    continue
            if isinstance(action, ReadWithin):
                sock.settimeout(action.seconds)
                try:
                    data = sock.recv(_CHUNK)
                except TimeoutError:  # quiet: a keep-alive, if a stream is open
                    with self.lock:
                        keepalive = session.read_timed_out()
                        if not session.listening:
                            sock.sendall(keepalive)
                        elif not self.flushing:  # else the stream is not quiet: bytes wait
                            self._send_now(keepalive)
                    continue
                with self.lock:
                    session.receive_data(data)
            elif isinstance(action, RunHandler):
                self.pool.submit(self._handle, action)
            elif isinstance(action, CancelHandler):
                action.run.context._cancel()
            elif isinstance(action, EndListen):
                self._end_listen()
            else:
                self._end_listen()  # no notification may follow the write side's shutdown
                if action.linger:  # the last response is written: let the client read it
                    self._linger()
                return

    def close(self) -> None:
        """End this connection: its handler is cancelled and its socket closed."""
        self._end_listen()
        with self.lock:
            run = self.session.run
        if run is not None:
            run.context._cancel()
        with contextlib.suppress(OSError):  # ENOTCONN: the client reset it first
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in recv
        self.sock.close()
        if self.out is not None:
            self.out.close()
        with self.lock:
            self.session.close()  # gives back its budgets

    def _linger(self) -> None:
        """Shut the write side, then read and drop what the client still sends (bounded)."""
        self.sock.shutdown(socket.SHUT_WR)
        deadline = time.monotonic() + LINGER_TIME
        left = LINGER_BYTES
        while left > 0 and (wait := deadline - time.monotonic()) > 0:
            self.sock.settimeout(wait)
            data = self.sock.recv(min(_CHUNK, left))  # a timeout ends it as OSError
            if not data:
                return
            left -= len(data)

    def _handle(self, run: RunHandler[Handler, Context]) -> None:
        try:
            if run.context.cancelled:  # cancelled (or the connection ended) before it started
                with self.lock:
                    self.session.handler_cancelled(run)
                return
            value, error = call(run)
            with self.lock:
                data = self.session.handler_done(run, value, error)
                if data:
                    self.sock.sendall(data)
        except OSError as e:  # the client went away while we answered: the reader sees it
            server_log.debug("%s: the answer was not written: %r", self.peer_name(), e)
        except Exception as e:  # a pool thread must not fail silently
            server_log.exception("%s: the handler runner failed: %r", run.request.method, e)

    def _end_listen(self) -> None:
        """The listen is over, however it ended: out of the fan-out, its budget given back
        (once), its writer stopped.  Idempotent."""
        with self.server._lock:
            self.server._sessions.discard(self)
        with self.lock:
            self.outbox = None  # offer drops from now on, and the flusher thread stops
            self.session.end_listen()


def _writable(sock: socket.socket, timeout: float) -> bool:
    """Whether ``sock`` takes bytes within ``timeout`` seconds (``0``: now, without waiting)."""
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(sock, select.POLLOUT)
        return bool(poller.poll(timeout * 1000))
    return bool(select.select([], [sock], [], timeout)[1])
