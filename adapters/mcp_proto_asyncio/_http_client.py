"""The asyncio Streamable HTTP client: one POST per call, each on its own connection.

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

import asyncio
from contextlib import AbstractAsyncContextManager
from typing import Any

import mcp_proto as m
from mcp_proto._async_http import AsyncHTTPSession
from mcp_proto.http import HTTPClientConnection

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

    async def send(self, request: m.Request) -> None:
        self.writer.write(self.conn.send(request))
        await self.writer.drain()

    async def next_event(self) -> Any:
        """The next event of the response being read, reading the socket as needed."""
        while (event := self.conn.next_event()) is m.NEED_DATA:
            try:
                data = await self.reader.read(_CHUNK)
            except OSError:
                data = b""
            self.conn.receive_data(data)
        return event

    def stale(self) -> bool:
        """An idle connection the server closed meanwhile (a keep-alive timeout)."""
        return self.reader.at_eof() or self.writer.is_closing()

    def close(self) -> None:
        """Close the socket; a response still running is cancelled (HTTP-SSE-5)."""
        self.conn.close()
        self.writer.close()


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

    async def _connect(self) -> _Link:
        if self._closed:
            raise ConnectionError("the client is closed")
        try:
            reader, writer = await asyncio.open_connection(*self.address, limit=_CHUNK)
        except OSError as e:
            raise ConnectionError(f"cannot connect to {self.address}: {e}") from e
        link = _Link(reader, writer, HTTPClientConnection(self.http, host=self._host))
        self._open.add(link)
        return link

    def _time_limit(self, limit: float | None) -> AbstractAsyncContextManager[Any]:
        return asyncio.timeout(limit)

    async def __aenter__(self) -> HTTPClientSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
