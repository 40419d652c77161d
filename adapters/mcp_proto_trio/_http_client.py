"""The trio Streamable HTTP client: one POST per call, each on its own connection.

The core builds each POST (``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*`` for the
tools it listed) and reads each response, JSON or SSE, into the same events as on
stdio (:class:`mcp_proto.http.HTTPClientConnection`).  HTTP/1.1 carries one
exchange at a time, so every call in flight and every open listen holds a TCP
connection of its own, and reads it in the caller's task: there is no reader task.
Finished connections go back to a small pool of idle keep-alive ones.  A call
that times out or is cancelled closes its connection, which is the cancellation
(HTTP-12, HTTP-SSE-5).
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio

import mcp_proto as m
from mcp_proto._async_http import AsyncHTTPSession
from mcp_proto.http import HTTPClientConnection

__all__ = ["HTTPClientSession"]

_CHUNK = 65536


_GONE = (trio.BrokenResourceError, trio.ClosedResourceError)


class _Link:
    """One TCP connection and its h11 state."""

    def __init__(self, stream: trio.SocketStream, conn: HTTPClientConnection) -> None:
        self.stream = stream
        self.conn = conn

    async def send(self, request: m.Request) -> None:
        await self.stream.send_all(self.conn.send(request))

    async def next_event(self) -> Any:
        """The next event of the response being read, reading the socket as needed."""
        while (event := self.conn.next_event()) is m.NEED_DATA:
            try:
                data = await self.stream.receive_some(_CHUNK)
            except _GONE:
                data = b""
            self.conn.receive_data(bytes(data))
        return event

    def stale(self) -> bool:
        """An idle connection with something to read: the server closed it (or broke it)."""
        return self.stream.socket.fileno() == -1 or self.stream.socket.is_readable()

    def close(self) -> None:
        """Close the socket; a response still running is cancelled (HTTP-SSE-5)."""
        self.conn.close()
        self.stream.socket.close()  # synchronous, and wakes a task reading it


class HTTPClientSession(AsyncHTTPSession):
    """An MCP client for a Streamable HTTP endpoint (``http://host:port/path``).

    Same calls, errors and :class:`Subscription` as the stdio :class:`Client`,
    any number of them concurrently; in addition ``401``/``403`` raises
    ``PermissionError`` carrying the parsed challenge (``.args[1]``), and a status
    the binding cannot read raises ``RemoteProtocolError``.  Tools whose
    ``x-mcp-header`` annotations are invalid are left out of ``tools/list``
    results and listed in :attr:`rejected_tools` (HTTP-27).  ``headers`` go on
    every POST; at most ``pool_size`` idle connections are kept.  The pool, the
    calls and the listens are :class:`mcp_proto._async_http.AsyncHTTPSession`'s.
    """

    _GONE = _GONE

    async def _connect(self) -> _Link:
        if self._closed:
            raise ConnectionError("the client is closed")
        try:
            stream = await trio.open_tcp_stream(*self.address)
        except OSError as e:
            raise ConnectionError(f"cannot connect to {self.address}: {e}") from e
        link = _Link(stream, HTTPClientConnection(self.http, host=self._host))
        self._open.add(link)
        return link

    @asynccontextmanager
    async def _time_limit(self, limit: float | None) -> AsyncIterator[None]:
        try:
            with trio.fail_after(math.inf if limit is None else limit):
                yield
        except trio.TooSlowError:
            raise TimeoutError from None

    async def __aenter__(self) -> HTTPClientSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
