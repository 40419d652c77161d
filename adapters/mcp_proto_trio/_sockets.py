"""How the trio HTTP server listens, reads and writes: two socket layers, one contract.

* :func:`listen_streams`, :class:`StreamSocket`, the default: ``trio.open_tcp_listeners``
  and ``trio.serve_listeners``; each connection is a ``trio.SocketStream``
  (``TCP_NODELAY`` set).
* :func:`listen_raw`, :class:`RawSocket`, ``Server(io="raw")``: a stdlib listening
  socket and non-blocking connected sockets, read and written directly, waiting for
  readiness (``trio.lowlevel``) only when one is not ready: a trio stream adds a trip
  through the scheduler to every receive and every send.

Each connection's :meth:`receive` waits for bytes on the caller's ``timer`` scope
(its deadline set for the wait only, so that one cancel scope serves every wait of a
connection) and returns ``b""`` at the client's end or on a reset.  :meth:`send`
writes a whole message, shielded from cancellation (a message is never cut short)
and bounded by ``timeout`` seconds: past it, :class:`TimedOut`.  :meth:`linger`
shuts the write side and drops what the client still sends, bounded in time and
bytes.  Beyond that, the connection is at capacity: it is closed at once, unread.
"""

from __future__ import annotations

import math
import socket
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import trio

from mcp_proto_runtime import LINGER_BYTES, LINGER_TIME, peer_of

from ._handlers import send_whole

__all__ = ["Conn", "RawSocket", "StreamSocket", "TimedOut", "listen_raw", "listen_streams"]

CHUNK = 65536


class TimedOut(trio.BrokenResourceError):
    """A write took longer than its timeout: the client stopped reading."""


class Conn(Protocol):
    @property
    def peer(self) -> str: ...

    async def receive(self, timer: trio.CancelScope, wait: float) -> bytes: ...

    async def send(self, data: bytes, timeout: float) -> None: ...

    async def linger(self) -> None: ...

    def close(self) -> None: ...


#: serves one connection; the ``str`` is the client's address (for per-client limits)
Serve = Callable[[Conn, str], Awaitable[None]]


def _admit(slots: trio.Semaphore, conn: Conn) -> bool:
    """Take a connection slot; at capacity, close ``conn`` unread rather than grow."""
    try:
        slots.acquire_nowait()
    except trio.WouldBlock:
        conn.close()
        return False
    return True


def _host(sock: Any) -> str:
    try:
        return str(sock.getpeername()[0])
    except OSError:  # gone already
        return ""


async def _drop_input(receive: Callable[[int], Awaitable[bytes]]) -> None:
    """Read and drop up to :data:`LINGER_BYTES`, for :data:`LINGER_TIME` at most."""
    left = LINGER_BYTES
    with trio.move_on_after(LINGER_TIME):
        while left > 0:
            data = await receive(min(CHUNK, left))
            if not data:
                return
            left -= len(data)


class StreamSocket:
    """A ``trio.SocketStream``; one ``send_all`` at a time, under a fair lock."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.lock = trio.Lock()
        self.peer = peer_of(stream.socket)

    async def receive(self, timer: trio.CancelScope, wait: float) -> bytes:
        timer.deadline = trio.current_time() + wait
        try:
            return await self.stream.receive_some(CHUNK)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return b""  # a reset: the end of the client's input
        finally:
            timer.deadline = math.inf

    async def send(self, data: bytes, timeout: float) -> None:
        if not await send_whole(self.stream, self.lock, data, timeout):
            raise TimedOut(f"a write took over {timeout} s")

    async def linger(self) -> None:
        try:
            await self.stream.send_eof()
            await _drop_input(self.stream.receive_some)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return  # reset: nothing left to read

    def close(self) -> None:
        self.stream.socket.close()


async def listen_streams(
    host: str, port: int, serve: Serve, slots: trio.Semaphore, task_status: Any
) -> None:
    listeners = await trio.open_tcp_listeners(port, host=host)
    task_status.started(listeners[0].socket.getsockname()[:2])

    async def one(stream: trio.SocketStream) -> None:
        conn = StreamSocket(stream)
        if not _admit(slots, conn):
            return
        try:
            await serve(conn, _host(stream.socket))
        finally:
            slots.release()

    await trio.serve_listeners(one, listeners)


class RawSocket:
    """A connected non-blocking stdlib socket, read and written directly.

    A write that the socket takes whole costs no await; one that it does not is
    flushed under :attr:`lock`, taken before any wait, so that the bytes of two
    tasks never interleave.
    """

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.lock = trio.Lock()  # held only by a send that has to wait for the socket
        self.peer = peer_of(sock)

    async def receive(self, timer: trio.CancelScope, wait: float) -> bytes:
        waited = False
        while True:
            try:
                data = self.sock.recv(CHUNK)
            except BlockingIOError:  # nothing to read yet: wait for readiness below
                pass
            except OSError:
                return b""  # a reset: the end of the client's input
            else:
                if not waited:  # bytes were waiting: let the other tasks run all the same
                    await trio.lowlevel.cancel_shielded_checkpoint()
                return data
            timer.deadline = trio.current_time() + wait
            try:
                await trio.lowlevel.wait_readable(self.sock)
            finally:
                timer.deadline = math.inf
            waited = True

    async def send(self, data: bytes, timeout: float) -> None:
        lock = self.lock
        try:
            if lock.locked():
                async with lock:
                    await self._flush(data, timeout)
                return
            try:
                sent = self.sock.send(data)
            except BlockingIOError:
                sent = 0
            if sent < len(data):
                lock.acquire_nowait()  # no await since the partial send: nobody got in between
                try:
                    await self._flush(memoryview(data)[sent:], timeout)
                finally:
                    lock.release()
        except OSError as e:
            raise trio.BrokenResourceError(f"the client went away: {e}") from e

    async def _flush(self, data: bytes | memoryview, timeout: float) -> None:
        view = memoryview(data)
        with trio.CancelScope(shield=True, deadline=trio.current_time() + timeout):
            while view:
                try:
                    view = view[self.sock.send(view) :]
                except BlockingIOError:
                    await trio.lowlevel.wait_writable(self.sock)
            return
        raise TimedOut(f"a write took over {timeout} s")

    async def linger(self) -> None:
        async def receive(size: int) -> bytes:
            while True:
                try:
                    return self.sock.recv(size)
                except BlockingIOError:
                    await trio.lowlevel.wait_readable(self.sock)

        try:
            self.sock.shutdown(socket.SHUT_WR)
            await _drop_input(receive)
        except OSError:
            return  # reset: nothing left to read

    def close(self) -> None:
        trio.lowlevel.notify_closing(self.sock)
        self.sock.close()


async def listen_raw(
    host: str, port: int, serve: Serve, slots: trio.Semaphore, task_status: Any
) -> None:
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    listener = socket.socket(family, kind, proto)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(address)
        listener.listen(128)
        listener.setblocking(False)
        async with trio.open_nursery() as nursery:
            task_status.started(listener.getsockname()[:2])
            while True:
                await trio.lowlevel.wait_readable(listener)
                try:
                    sock, address = listener.accept()
                except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                    continue
                sock.setblocking(False)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                conn = RawSocket(sock)
                if _admit(slots, conn):
                    nursery.start_soon(_serve_one, serve, conn, address[0], slots)
    finally:
        trio.lowlevel.notify_closing(listener)
        listener.close()


async def _serve_one(serve: Serve, conn: RawSocket, host: str, slots: trio.Semaphore) -> None:
    try:
        await serve(conn, host)
    finally:
        slots.release()
