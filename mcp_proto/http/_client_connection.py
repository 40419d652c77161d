"""The client side of Streamable HTTP over one TCP connection, with h11.

:class:`HTTPClientConnection` wraps an ``h11.Connection`` around the h11-free
client binding (:mod:`mcp_proto.http._client`).  It adds only HTTP/1.1 framing:
one exchange per h11 cycle, keep-alive between them, and end of input.  HTTP/1.1
has one exchange in flight per connection, so concurrent requests -- a long
``subscriptions/listen`` beside a ``tools/call`` -- use one connection each;
that is the adapter's job.  The server side is :mod:`mcp_proto.http._server_connection`.
"""

from __future__ import annotations

from typing import Any

import h11

from .._connection import NEED_DATA, ConnectionClosed, Notification, Request
from .._errors import LocalProtocolError
from ._client import ClientExchange, HTTPClient, HTTPPost, RequestLost, ResponseEvent

__all__ = ["HTTPClientConnection"]

_DEFAULT_INCOMPLETE = 64 * 1024


class HTTPClientConnection:
    """The client side of one TCP connection to an MCP endpoint: one POST at a time.

    :meth:`send` returns the bytes of the POST; :meth:`next_event` the events of
    its response (those of :class:`ClientExchange`), then :data:`NEED_DATA`
    until the next :meth:`send`; :class:`~mcp_proto.ConnectionClosed` once the
    server closed, or once a response body was abandoned (over the client's
    ``max_message_size``: the connection stays :attr:`busy`, refuses to
    :meth:`send` and reads nothing more; close the socket).  :meth:`close`
    cancels the running request: write nothing more and close the socket.
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
        self._check_free()  # before the client builds it: building commits the request
        return self._write(self.client.send(event, **kwargs))

    def send_post(self, post: HTTPPost) -> bytes:
        """The bytes of ``post``, an HTTP request the client built: a legacy session's
        answer (:meth:`HTTPClient.answer`), its ``GET`` stream or resume, its ``DELETE``."""
        self._check_free()
        return self._write(post)

    def _write(self, post: HTTPPost) -> bytes:
        headers = [("host", self.host), *post.headers]
        if post.method != "GET":
            headers.append(("content-length", str(len(post.body))))
        request = h11.Request(method=post.method, target=post.target, headers=headers)
        data = self._h11.send(request) or b""
        if post.body:
            data += self._h11.send(h11.Data(data=post.body)) or b""
        data += self._h11.send(h11.EndOfMessage()) or b""
        self._post = post
        return data

    def _check_free(self) -> None:
        if self._closed:
            raise LocalProtocolError("the connection is closed")
        if self._post is not None:
            raise LocalProtocolError(
                "HTTP/1.1 carries one exchange at a time: use another connection"
            )
        if self._h11.states == {h11.CLIENT: h11.DONE, h11.SERVER: h11.DONE}:
            self._h11.start_next_cycle()
        elif self._h11.our_state is not h11.IDLE:  # "Connection: close" or HTTP/1.0 answered
            raise LocalProtocolError("the server closes this connection: use another")

    def receive_data(self, data: bytes) -> None:
        """Bytes from the server; ``b""`` when it closed."""
        self._eof = self._eof or not data
        self._h11.receive_data(data)

    def next_event(self) -> ResponseEvent | type[NEED_DATA]:
        while True:
            ex = self.exchange
            if ex is not None:
                event = ex.next_event()
                if event is not NEED_DATA:
                    return event
                if ex.must_close:  # the rest of its body is never read
                    self._closed = True
                    return ConnectionClosed()
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

    def _broken(self, reason: str) -> ResponseEvent | type[NEED_DATA]:
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
