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
import sys
from typing import Any

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto._async_calls import AsyncCalls, Subscription
from mcp_proto._client_calls import HTTPClientSettings, build_request, http_failure, outcome_of
from mcp_proto.http import (
    HTTPClientConnection,
    ToolRejected,
)

from ._client import InputHandler, ProgressHandler

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

    def close(self) -> None:
        """Close the socket; a response still running is cancelled (HTTP-SSE-5)."""
        self.conn.close()
        self.writer.close()


class HTTPClientSession(HTTPClientSettings, AsyncCalls):
    """An MCP client for a Streamable HTTP endpoint (``http://host:port/path``).

    Same calls, errors and :class:`Subscription` as the stdio :class:`Client`,
    any number of them concurrently; in addition ``401``/``403`` raises
    ``PermissionError`` carrying the parsed challenge (``.args[1]``), and a status
    the binding cannot read raises ``RemoteProtocolError``.  Tools whose
    ``x-mcp-header`` annotations are invalid are left out of ``tools/list``
    results and listed in :attr:`rejected_tools` (HTTP-27).  ``headers`` go on
    every POST; at most ``pool_size`` idle connections are kept.
    """

    def __init__(self, url: str, **options: Any) -> None:
        super().__init__(url, **options)
        self._host = self.endpoint.authority
        self._idle: list[_Link] = []
        self._open: set[_Link] = set()
        self._listens: dict[t.RequestId, _Link] = {}
        self._closed = False

    # -- connections --------------------------------------------------------

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

    async def _post(self, request: m.Request) -> _Link:
        """Send ``request`` on an idle connection, or a new one; return the connection."""
        while self._idle:
            link = self._idle.pop()
            if link.reader.at_eof() or link.writer.is_closing():
                self._drop(link)  # closed by the server while idle (a keep-alive timeout)
                continue
            try:
                return await self._send_on(link, request)
            except (ConnectionError, m.LocalProtocolError):
                break  # closed by the server meanwhile ("Connection: close"): once more, afresh
        return await self._send_on(await self._connect(), request)

    async def _send_on(self, link: _Link, request: m.Request) -> _Link:
        try:
            await link.send(request)
        except OSError as e:
            self._drop(link)  # retires the id, so that it can be sent again
            raise ConnectionError(f"the request could not be sent: {e}") from e
        except BaseException:
            self._drop(link)  # cancelled, or refused by the core before anything was sent
            raise
        return link

    def _release(self, link: _Link) -> None:
        """A response ended: keep its connection for the next call if it is reusable."""
        while link.conn.busy and link.conn.next_event() is not m.NEED_DATA:
            pass  # the end of the body, already buffered
        if link.conn.busy or self._closed or len(self._idle) >= self.pool_size:
            self._drop(link)
        else:
            self._idle.append(link)

    def _drop(self, link: _Link) -> None:
        self._open.discard(link)
        link.close()

    # -- calls --------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressHandler | None = None,
        on_input: InputHandler | None = None,
    ) -> Any:
        """Send one request and return its result object, following MRTR rounds."""
        request = build_request(self.conn, method, params, progress=on_progress is not None)
        limit = self.timeout if timeout is None else timeout
        link: _Link | None = None
        try:
            async with asyncio.timeout(limit):
                link = await self._post(request)
                while True:
                    event = await self._ending(link, request.id, on_progress)
                    self._release(link)
                    link = None
                    if isinstance(event, m.InputRequired) and on_input is not None:
                        request = event.retry(
                            id=self.conn.next_id(), input_responses=on_input(event)
                        )
                        link = await self._post(request)
                        continue
                    return outcome_of(event)
        except TimeoutError:
            raise TimeoutError(f"{method} got no answer within {limit} s") from None
        finally:
            if link is not None:
                self._drop(link)  # closing the response cancels the request (HTTP-12)

    async def _ending(
        self, link: _Link, id: t.RequestId, on_progress: ProgressHandler | None = None
    ) -> Any:
        """The event that ends (or acknowledges) request ``id``; HTTP failures raise."""
        while True:
            event = await link.next_event()
            if isinstance(event, ToolRejected):
                self.rejected_tools.append(event)
                print(f"mcp-proto: tool {event.name!r} left out: {event.reason}", file=sys.stderr)
            elif isinstance(event, m.Notification):
                if event.method == "notifications/progress" and on_progress is not None:
                    on_progress(event.params)
            elif (error := http_failure(event)) is not None:
                raise error
            elif getattr(event, "id", None) == id:
                return event

    async def listen(self, notifications: t.SubscriptionFilter, **kw: Any) -> Subscription:
        """Open a ``subscriptions/listen`` stream on a connection of its own.

        Returns once the server acknowledged it; iterate the :class:`Subscription`
        for the notifications, ``aclose()`` it to close the stream (SUB-11).
        """
        params = t.SubscriptionsListenRequestParams(notifications=notifications)
        request = build_request(self.conn, "subscriptions/listen", params)
        limit = kw.get("timeout", self.timeout)
        link: _Link | None = None
        try:
            async with asyncio.timeout(limit):
                link = await self._post(request)
                first = await self._ending(link, request.id)
        except BaseException:
            if link is not None:
                self._drop(link)
            raise
        assert link is not None
        if not isinstance(first, m.SubscriptionAcknowledged):
            self._release(link)
            outcome_of(first)  # raises for an error; a result ends it at once
            raise ConnectionError("the subscription ended before it was acknowledged")
        self._listens[request.id] = link
        return Subscription(self, request.id, first.notifications, link)

    # -- what a Subscription needs ------------------------------------------

    def _listening(self, id: t.RequestId) -> bool:
        return id in self._listens

    async def _next(self, link: _Link) -> Any:
        """The next notification (or the ``SubscriptionEnded``) of a listen's stream."""
        while True:
            event = await link.next_event()
            if isinstance(event, (m.Notification, m.SubscriptionEnded)):
                return event
            if (error := http_failure(event)) is not None:
                raise error

    async def _end_listen(self, id: t.RequestId) -> None:
        link = self._listens.pop(id, None)
        if link is not None:
            self._release(link)  # still streaming: closed, which cancels it (SUB-11)

    # -- lifetime -----------------------------------------------------------

    async def aclose(self) -> None:
        """Close every connection; calls and listens in flight get ``ConnectionError``."""
        self._closed = True
        for link in list(self._open):
            self._drop(link)
        self._idle.clear()
        self._listens.clear()

    async def __aenter__(self) -> HTTPClientSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
