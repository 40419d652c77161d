"""Streamable HTTP for the blocking server: a thread per TCP connection, HTTP/1.1 in the core.

Each connection thread reads the socket and feeds :class:`mcp_proto.http.HTTPServerConnection`
(one exchange at a time, keep-alive between them).  A request's handler runs on
a pool thread while the connection thread keeps reading, so a client that closes
the response is seen at once and cancels the handler (CANCEL-04, HTTP-SSE-5).  A
listen with no handler is acknowledged and stays open on its connection, which
sends a keep-alive comment when it has been quiet for ``keepalive_interval``
seconds; change notifications reach it through :meth:`Server.notify_changed`.

The listen and body budgets (:mod:`mcp_proto._http_limits`) are shared by the connection
threads, so they are used here through subclasses that take a lock.  A connection that
closes after its last response closes lingeringly (``LINGER_TIME``, ``LINGER_BYTES``).
"""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto._app import (
    LINGER_BYTES,
    LINGER_TIME,
    ClientClock,
    RequestContext,
    default_answer,
)
from mcp_proto._http_limits import BodyBudget, ListenBudget
from mcp_proto.http import HTTPServer, HTTPServerConnection, Reply

from ._server import Context, Server, _Workers, run_handler

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
    http = HTTPServer(connection=server.connection, **http_options)
    template = server.connection()
    budgets = server.budgets(_LockedListens, _LockedBodies)
    listener = socket.create_server((host, port))
    pool = _Workers(server.max_workers)
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
                link = _Link(server, http, template, sock, pool, budgets=budgets, peer=peer[0])
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
    ) -> None:
        self.server = server
        self.listens, bodies = budgets
        self.conn = HTTPServerConnection(http, budget=bodies)
        self.peer = peer
        self.client: Hashable = None  # who holds the open listen, once there is one
        self.template = template  # the configuration, for answers that need no handler
        self.sock = sock
        self.pool = pool
        self.lock = threading.Lock()
        self.ctx: Any = None
        self.listening = False
        self.clock = ClientClock(time.monotonic())  # slowloris: how long the client may take

    def emit(self, event: Any) -> None:
        with self.lock:
            data = self.conn.send(event)
            if data:
                self.sock.sendall(data)

    def notify_changed(self, method: str, params: Any) -> None:
        with contextlib.suppress(OSError):  # gone: the connection thread cleans up
            self.emit(m.Notification(method=method, params=params or t.NotificationParams()))

    def run(self, slots: threading.BoundedSemaphore, links: set[_Link]) -> None:
        try:
            while self._step():
                pass
            if self.conn.must_close:  # the last response is written: let the client read it
                self._linger()
        except (OSError, RuntimeError):  # RuntimeError: the pool was shut down (server stop)
            pass
        finally:
            self.close()
            links.discard(self)
            slots.release()

    def close(self) -> None:
        """End this connection: its handler is cancelled and its socket closed."""
        self._end_listen()
        if self.ctx is not None:
            self.ctx._cancel()
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in recv
        self.sock.close()
        with self.lock:
            self.conn.close()  # gives back its body budget

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

    def _step(self) -> bool:
        with self.lock:
            event = self.conn.next_event()
        if event is m.NEED_DATA:
            wait = self._wait()
            if wait is None:
                return False  # the client took too long to send a request: close (slowloris)
            self.sock.settimeout(wait)
            try:
                data = self.sock.recv(_CHUNK)
            except TimeoutError:
                with self.lock:
                    self.sock.sendall(self.conn.keepalive())  # b"" unless a stream is open
                return True
            with self.lock:
                self.conn.receive_data(data)
            return True
        if isinstance(event, Reply):
            self.clock.request_arrived()  # a whole exchange, as a request is (idle clock)
            self.emit(event)
            return not self.conn.must_close
        if isinstance(event, m.Request):
            self.clock.request_arrived()
            self._dispatch(event)
        elif isinstance(event, m.Cancelled):  # the client closed the response (HTTP-SSE-5)
            self._end_listen()
            if self.ctx is not None:
                self.ctx._cancel()
        elif isinstance(event, m.ConnectionClosed):
            return False
        return True

    def _wait(self) -> float | None:
        """How long to wait for the client's bytes; ``None`` once its time is up."""
        busy = self.ctx is not None or self.listening
        return self.clock.wait(busy=busy, now=time.monotonic(), settings=self.server)

    def _dispatch(self, request: m.Request) -> None:
        if self.server.handlers.find(request.method) is None:
            listen = request.method == "subscriptions/listen"
            if listen:
                client = self.conn.client(self.peer)
                refusal = self.listens.admit(request.id, client)
                if refusal is not None:
                    self.emit(refusal)  # over its budget (429) or the server's (503), closed
                    return
                self.listening, self.client = True, client  # given back by _end_listen
            self.emit(default_answer(self.template, request))
            if listen:
                with self.server._lock:
                    self.server._sessions.add(self)  # reached by notify_changed from now on
            return

        self.ctx = Context(RequestContext(request), self)
        self.pool.submit(self._handle, self.ctx)

    def _handle(self, ctx: Any) -> None:
        try:
            run_handler(self.server, ctx, self.emit, self.template.cache_hints)
        except OSError:
            pass  # the client went away while we answered
        except Exception as e:
            print(f"mcp-proto: {ctx.request.method}: {e!r}", file=sys.stderr)
        finally:
            if self.ctx is ctx:
                self.ctx = None

    def _end_listen(self) -> None:
        with self.server._lock:
            self.server._sessions.discard(self)
            listening, self.listening = self.listening, False
        if listening:
            self.listens.release(self.client)
