"""The trio Streamable HTTP client: the connections of the core's ``AsyncHTTPSession``.

Everything but the I/O -- one POST per call on a connection of its own, the pool of
idle keep-alive connections, MRTR rounds, listens, closing a connection as the
cancellation (HTTP-12, HTTP-SSE-5) -- is :class:`mcp_proto_runtime.AsyncHTTPSession`.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import trio

import mcp_proto as m
from mcp_proto.http import HTTPClientConnection
from mcp_proto_runtime import AsyncHTTPSession, dig

__all__ = ["HTTPClientSession"]

_CHUNK = 65536


_GONE = (trio.BrokenResourceError, trio.ClosedResourceError)


class _Link:
    """One TCP connection and its h11 state."""

    def __init__(
        self, stream: trio.abc.Stream, tcp: trio.SocketStream, conn: HTTPClientConnection
    ) -> None:
        self.stream = stream  #: the TCP stream, or the TLS stream over it
        self.tcp = tcp
        self.conn = conn

    async def write(self, data: bytes) -> None:
        await self.stream.send_all(data)

    async def next_event(self) -> Any:
        """The next event of the response being read, reading the socket as needed."""
        while (event := self.conn.next_event()) is m.NEED_DATA:
            await self.receive()
        return event

    async def receive(self) -> None:
        """Read what the socket has (``b""`` at its end, or a reset) into the connection."""
        try:
            data = await self.stream.receive_some(_CHUNK)
        except _GONE:
            data = b""
        self.conn.receive_data(bytes(data))

    def stale(self) -> bool:
        """An idle connection with something to read: the server closed it (or broke it)."""
        return self.tcp.socket.fileno() == -1 or self.tcp.socket.is_readable()

    def close(self) -> None:
        """Close the socket; a response still running is cancelled (HTTP-SSE-5)."""
        self.conn.close()
        self.tcp.socket.close()  # synchronous, and wakes a task reading it


@asynccontextmanager
async def time_limit(limit: float | None) -> AsyncIterator[None]:
    """A block that raises ``TimeoutError`` (not ``trio.TooSlowError``) after ``limit`` s."""
    try:
        with trio.fail_after(math.inf if limit is None else limit):
            yield
    except trio.TooSlowError:
        raise TimeoutError from None


class HTTPClientSession(AsyncHTTPSession):
    """An MCP client for a Streamable HTTP endpoint, over trio sockets.

    The calls, errors, listens and options are
    :class:`~mcp_proto_runtime.AsyncHTTPSession`'s.
    """

    _GONE = _GONE

    async def _open_link(self) -> _Link:
        route = self.route
        tcp = await trio.open_tcp_stream(*route.address)
        stream: trio.abc.Stream = tcp
        try:
            if route.tunnel is not None:
                await dig(route, tcp.send_all, lambda: tcp.receive_some(_CHUNK))
            if route.tls is not None:
                stream = trio.SSLStream(tcp, route.tls, server_hostname=route.server_hostname,
                                        https_compatible=True)  # fmt: skip
                await stream.do_handshake()
        except BaseException as e:
            tcp.socket.close()
            if isinstance(e, trio.BrokenResourceError) and isinstance(e.__cause__, OSError):
                raise e.__cause__ from None  # a failed handshake: the ssl.SSLError
            raise
        return _Link(stream, tcp, HTTPClientConnection(self.http, host=self._host))

    def _time_limit(self, limit: float | None) -> AbstractAsyncContextManager[None]:
        return time_limit(limit)

    async def _sleep(self, seconds: float) -> None:
        await trio.sleep(seconds)

    def _new_lock(self) -> trio.Lock:
        return trio.Lock()

    def _spawn(self, work: Callable[[], Coroutine[Any, Any, None]]) -> None:
        trio.lowlevel.spawn_system_task(work)  # it ends when its socket is closed

    def _new_mailbox(self) -> _Mailbox:
        return _Mailbox()


class _Mailbox:
    """A legacy listen's notifications, put by the GET stream's reader."""

    def __init__(self) -> None:
        self._send, self._receive = trio.open_memory_channel[Any](math.inf)

    def put(self, item: Any) -> None:
        self._send.send_nowait(item)

    async def get(self) -> Any:
        return await self._receive.receive()
