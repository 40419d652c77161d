"""The asyncio Streamable HTTP client: the connections of the core's ``AsyncHTTPSession``.

Everything but the I/O -- one POST per call on a connection of its own, the pool of
idle keep-alive connections, MRTR rounds, listens, closing a connection as the
cancellation (HTTP-12, HTTP-SSE-5) -- is :class:`mcp_proto_runtime.AsyncHTTPSession`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from typing import Any

import mcp_proto as m
from mcp_proto.http import HTTPClientConnection
from mcp_proto_runtime import AsyncHTTPSession, dig

__all__ = ["HTTPClientSession"]

_CHUNK = 65536


class _Link:
    """One TCP connection and its h11 state."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        conn: HTTPClientConnection,
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.conn = conn

    async def write(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def next_event(self) -> Any:
        """The next event of the response being read, reading the socket as needed."""
        while (event := self.conn.next_event()) is m.NEED_DATA:
            await self.receive()
        return event

    async def receive(self) -> None:
        """Read what the socket has (``b""`` at its end, or a reset) into the connection."""
        try:
            data = await self.reader.read(_CHUNK)
        except OSError:
            data = b""
        self.conn.receive_data(data)

    def stale(self) -> bool:
        """An idle connection the server closed meanwhile (a keep-alive timeout)."""
        return self.reader.at_eof() or self.writer.is_closing()

    def close(self) -> None:
        """Close the socket; a response still running is cancelled (HTTP-SSE-5)."""
        self.conn.close()
        self.writer.close()


def _writer(writer: asyncio.StreamWriter) -> Callable[[bytes], Coroutine[Any, Any, None]]:
    async def write(data: bytes) -> None:
        writer.write(data)
        await writer.drain()

    return write


class HTTPClientSession(AsyncHTTPSession):
    """An MCP client for a Streamable HTTP endpoint, over asyncio sockets.

    The calls, errors, listens and options are
    :class:`~mcp_proto_runtime.AsyncHTTPSession`'s.
    """

    async def _open_link(self) -> _Link:
        route = self.route
        if route.tunnel is None:  # TLS (for https://) with the connection
            name = route.server_hostname if route.tls is not None else None
            reader, writer = await asyncio.open_connection(
                *route.address, limit=_CHUNK, ssl=route.tls, server_hostname=name
            )
        else:  # the proxy's tunnel first, then TLS inside it
            reader, writer = await asyncio.open_connection(*route.address, limit=_CHUNK)
            try:
                await dig(route, _writer(writer), lambda: reader.read(_CHUNK))
                if route.tls is not None:
                    await writer.start_tls(route.tls, server_hostname=route.server_hostname)
            except BaseException:
                writer.close()
                raise
        return _Link(reader, writer, HTTPClientConnection(self.http, host=self._host))

    def _time_limit(self, limit: float | None) -> AbstractAsyncContextManager[Any]:
        return asyncio.timeout(limit)

    async def _sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    def _new_lock(self) -> asyncio.Lock:
        return asyncio.Lock()

    def __init__(self, url: str, **options: Any) -> None:
        super().__init__(url, **options)
        self._tasks: set[asyncio.Task[None]] = set()  # the GET stream's reader, while it runs

    def _spawn(self, work: Callable[[], Coroutine[Any, Any, None]]) -> None:
        task = asyncio.get_running_loop().create_task(work())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _reap(self) -> None:
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _new_mailbox(self) -> _Mailbox:
        return _Mailbox()


class _Mailbox:
    """A legacy listen's notifications, put by the GET stream's reader."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[Any] = asyncio.Queue()

    def put(self, item: Any) -> None:
        self._queue.put_nowait(item)

    async def get(self) -> Any:
        return await self._queue.get()
