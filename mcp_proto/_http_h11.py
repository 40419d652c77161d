"""Streamable HTTP over one TCP connection, with h11: bytes in, events out, bytes out.

:class:`HTTPServerConnection` and :class:`HTTPClientConnection` wrap an
``h11.Connection`` around the h11-free binding (:mod:`mcp_proto._http_server`,
:mod:`mcp_proto._http_client`).  They add only HTTP/1.1 framing: one exchange
per h11 cycle, keep-alive between them (the next cycle starts by itself once
both sides are done), and end of input.  HTTP/1.1 has one exchange in flight
per connection, so concurrent requests -- a long ``subscriptions/listen``
beside a ``tools/call`` -- use one connection each; that is the adapter's job.

End of input from the client while a request is running is the client
closing the response: the server connection reports :class:`~mcp_proto.Cancelled`
for it, as on stdio (HTTP-SSE-5), then :class:`~mcp_proto.ConnectionClosed`.
"""

from __future__ import annotations

from typing import Any

import h11

from ._errors import LocalProtocolError
from ._events import NEED_DATA, ConnectionClosed, Notification, Request
from ._http_client import ClientExchange, HTTPClient, HTTPPost, RequestLost
from ._http_server import (
    HTTPServer,
    Reply,
    ResponseData,
    ResponseEnd,
    ResponsePart,
    ResponseStart,
    ServerExchange,
    reply_parts,
)

__all__ = ["DEFAULT_MAX_HEADERS", "HTTPClientConnection", "HTTPServerConnection"]

_DEFAULT_INCOMPLETE = 64 * 1024
#: the most header fields a request may have (HTTPServerConnection ``max_headers``)
DEFAULT_MAX_HEADERS = 128


class HTTPServerConnection:
    """The server side of one TCP connection carrying MCP POSTs.

    :meth:`next_event` returns a :class:`~mcp_proto.Request` for the
    application, a :class:`Reply` the binding prepared (send it as is), a
    :class:`~mcp_proto.Cancelled` when the client went away mid-request,
    :class:`~mcp_proto.ConnectionClosed` at the end, or :data:`NEED_DATA`.
    :meth:`send` returns the bytes to write.  After a response with
    ``Connection: close`` (or a broken request) :attr:`must_close` is true:
    write the bytes, then close.  A request head over ``max_incomplete_event_size``
    bytes or ``max_headers`` fields is answered ``431`` and the connection closed.
    """

    def __init__(
        self,
        server: HTTPServer,
        *,
        max_incomplete_event_size: int = _DEFAULT_INCOMPLETE,
        max_headers: int = DEFAULT_MAX_HEADERS,
    ) -> None:
        self.server = server
        self._h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=max_incomplete_event_size)
        self._max_head = max_incomplete_event_size
        self._max_headers = max_headers
        #: the exchange of the current cycle, if a request head has arrived
        self.exchange: ServerExchange | None = None
        self._eof = False
        self._error: Reply | None = None
        self._broken = False

    @property
    def must_close(self) -> bool:
        return self._h11.our_state in (h11.MUST_CLOSE, h11.CLOSED, h11.ERROR)

    def receive_data(self, data: bytes) -> None:
        """Bytes from the client; ``b""`` when it closed its side."""
        if not data:
            self._eof = True
        self._h11.receive_data(data)

    def next_event(self) -> Any:
        while True:
            ex = self.exchange
            if ex is not None:
                event = ex.next_event()
                if event is not NEED_DATA:
                    return event
                if self._eof and not ex.done and ex.request_id is not None:
                    cancelled = ex.client_closed()
                    if cancelled is not None:
                        return cancelled
                if ex.done and self._h11.states == {h11.CLIENT: h11.DONE, h11.SERVER: h11.DONE}:
                    self._h11.start_next_cycle()
                    self.exchange = None
                    continue
            try:
                h = self._h11.next_event()
            except h11.RemoteProtocolError as e:
                if self._broken or self._h11.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
                    return ConnectionClosed()
                self._broken = True  # answered once with a 400, then closed
                self._error = Reply(status=e.error_status_hint, headers=(("connection", "close"),))
                return self._error
            if h is h11.NEED_DATA or h is h11.PAUSED:
                if self._eof and (ex is None or ex.done):
                    return ConnectionClosed()
                return NEED_DATA
            if isinstance(h, h11.Request):
                size = len(h.target) + sum(len(n) + len(v) + 4 for n, v in h.headers)
                if size > self._max_head or len(h.headers) > self._max_headers:
                    # h11 bounds only a head that is still incomplete: a whole one read in
                    # one go is checked here (431, then the connection closes)
                    self._broken = True
                    self._error = Reply(status=431, headers=(("connection", "close"),))
                    return self._error
                self.exchange = self.server.exchange(h.method, h.target, h.headers)
            elif isinstance(h, h11.Data) and ex is not None:
                ex.receive_body(h.data)
            elif isinstance(h, h11.EndOfMessage) and ex is not None:
                ex.end_of_body()
            elif isinstance(h, h11.ConnectionClosed):
                return ConnectionClosed()  # a running request was cancelled above (_eof)

    def send(self, event: Any) -> bytes:
        """The bytes for ``event``: a :class:`Reply`, a ``Result``, ``ErrorResponse``..."""
        if isinstance(event, Reply) and event is self._error:
            self._error = None
            return self._write(reply_parts(event))
        if self.exchange is None:
            raise LocalProtocolError("no request is being answered on this connection")
        return self._write(self.exchange.send(event))

    def keepalive(self) -> bytes:
        """A keep-alive comment frame for the running stream (``b""`` if none is open)."""
        return self._write(self.exchange.keepalive()) if self.exchange is not None else b""

    def _write(self, parts: list[ResponsePart]) -> bytes:
        out = []
        for part in parts:
            if isinstance(part, ResponseStart):
                head = h11.Response(status_code=part.status, headers=list(part.headers))
                out.append(self._h11.send(head))
            elif isinstance(part, ResponseData):
                if self.exchange is not None and self.exchange.method == "HEAD":
                    continue  # a response to HEAD has headers only (RFC 9110, 9.3.2)
                out.append(self._h11.send(h11.Data(data=part.data)))
            elif isinstance(part, ResponseEnd):
                out.append(self._h11.send(h11.EndOfMessage()))
        return b"".join(b for b in out if b)


class HTTPClientConnection:
    """The client side of one TCP connection to an MCP endpoint: one POST at a time.

    :meth:`send` returns the bytes of the POST; :meth:`next_event` the events of
    its response (those of :class:`ClientExchange`), then :data:`NEED_DATA`
    until the next :meth:`send`; :class:`~mcp_proto.ConnectionClosed` once the
    server closed.  :meth:`close` cancels the running request: write nothing
    more and close the socket.
    """

    def __init__(
        self,
        client: HTTPClient | None = None,
        *,
        host: str = "localhost",
        max_incomplete_event_size: int = _DEFAULT_INCOMPLETE,
    ) -> None:
        self.client = client if client is not None else HTTPClient()
        self.host = host
        self._h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=max_incomplete_event_size)
        self._post: HTTPPost | None = None
        #: the response being read, once its head arrived
        self.exchange: ClientExchange | None = None
        self._closed = False
        self._eof = False

    @property
    def busy(self) -> bool:
        """Whether a POST is still waiting for the end of its response."""
        return self._post is not None

    def send(self, event: Request | Notification, **kwargs: Any) -> bytes:
        """The bytes of the POST carrying ``event`` (see :meth:`HTTPClient.send`)."""
        if self._post is not None:
            raise LocalProtocolError(
                "HTTP/1.1 carries one exchange at a time: use another connection"
            )
        if self._closed:
            raise LocalProtocolError("the connection is closed")
        if self._h11.states == {h11.CLIENT: h11.DONE, h11.SERVER: h11.DONE}:
            self._h11.start_next_cycle()
        elif self._h11.our_state is not h11.IDLE:  # "Connection: close" or HTTP/1.0 answered
            raise LocalProtocolError("the server closes this connection: use another")
        post = self.client.send(event, **kwargs)
        headers = [("host", self.host), *post.headers, ("content-length", str(len(post.body)))]
        data = self._h11.send(h11.Request(method="POST", target=post.target, headers=headers))
        data = (data or b"") + (self._h11.send(h11.Data(data=post.body)) or b"")
        data += self._h11.send(h11.EndOfMessage()) or b""
        self._post = post
        return data

    def receive_data(self, data: bytes) -> None:
        """Bytes from the server; ``b""`` when it closed."""
        self._eof = self._eof or not data
        self._h11.receive_data(data)

    def next_event(self) -> Any:
        while True:
            ex = self.exchange
            if ex is not None:
                event = ex.next_event()
                if event is not NEED_DATA:
                    return event
            try:
                h = self._h11.next_event()
            except h11.RemoteProtocolError as e:
                return self._broken(f"the response is not valid HTTP: {e}")
            if h is h11.PAUSED and self._eof and self._post is None:
                return self._broken("the server closed the connection")  # idle, kept alive
            if h is h11.NEED_DATA or h is h11.PAUSED:
                return NEED_DATA
            if isinstance(h, h11.Response) and self._post is not None:
                self.exchange = self.client.response(self._post, h.status_code, h.headers)
            elif isinstance(h, h11.Data) and ex is not None:
                ex.receive_data(h.data)
            elif isinstance(h, h11.EndOfMessage) and ex is not None:
                ex.receive_data(b"")
                self._post = None
            elif isinstance(h, h11.ConnectionClosed):
                return self._broken("the server closed the connection")

    def _broken(self, reason: str) -> Any:
        """The connection is gone: the running request is lost, then ConnectionClosed."""
        self._closed = True
        post, self._post = self._post, None
        if post is not None and post.request is not None:
            if self.exchange is None or self.exchange.post is not post:
                self.exchange = self.client.response(post, 0, ())
            self.exchange.connection_lost(reason)
            return self.next_event()
        return ConnectionClosed()

    def close(self) -> RequestLost | None:
        """Cancel the running request by closing the connection (HTTP-SSE-5)."""
        self._closed = True
        post, self._post = self._post, None
        if self.exchange is not None and self.exchange.post is post:
            return self.exchange.close()
        conn = self.client.connection
        if post is not None and post.request is not None:
            if post.request.id in conn.in_flight():
                conn.cancel(post.request.id)
            return RequestLost(id=post.request.id, request=post.request, reason="cancelled")
        return None
