"""The server side of Streamable HTTP over one TCP connection: bytes in, events out, bytes out.

:class:`HTTPServerConnection` puts the HTTP/1.1 framing of
:class:`~mcp_proto.http.wire.ServerWire` around the binding of
:mod:`mcp_proto.http._server`: one exchange at a time, keep-alive between them,
and end of input.  HTTP/1.1 has one exchange in flight per connection, so
concurrent requests -- a long ``subscriptions/listen`` beside a ``tools/call``
-- use one connection each; that is the adapter's job.

End of input from the client while a request is running is the client
closing the response: the connection reports :class:`~mcp_proto.Cancelled`
for it, as on stdio (HTTP-SSE-5), then :class:`~mcp_proto.ConnectionClosed`.
A legacy request whose response was ended early
(:meth:`~mcp_proto.http.ServerExchange.detach`) keeps the connection until it is
over: the next request is read only then (a client that sent its resuming ``GET`` on
this connection gets all of it at once), and end of input cancels it still.

With a ``budget`` (one :class:`~mcp_proto.http.limits.BodyBudget` shared by a server's
connections) body bytes past its allowance draw on it; a request whose body does not fit
is answered ``503`` with ``Retry-After`` and the connection closed.  What a request drew
is given back when its exchange ends, or at :meth:`HTTPServerConnection.close`, which the
host calls once the socket is closed, on every path.  A ``subscriptions/listen`` never
draws on it: its exchange lasts as long as the listen, so its body must fit the
allowance, or it is answered ``413`` and the connection closed.
"""

from __future__ import annotations

from collections.abc import Hashable

from .._connection import NEED_DATA, Cancelled, ConnectionClosed, Event, InvalidMessage, Request
from .._errors import LocalProtocolError
from ._headers import Headers
from ._server import (
    HTTPServer,
    Reply,
    ResponseData,
    ResponsePart,
    ResponseStart,
    ServerExchange,
    reply_parts,
)
from .limits import BODY_REFUSAL, BodyAccount, BodyBudget, client_key
from .wire import END, PAUSED, RequestHead, ServerWire, WireError

__all__ = ["DEFAULT_MAX_HEADERS", "DEFAULT_MAX_HEAD", "HTTPServerConnection"]

#: the largest request head, in bytes (HTTPServerConnection ``max_incomplete_event_size``)
DEFAULT_MAX_HEAD = 64 * 1024
#: the most header fields a request may have (HTTPServerConnection ``max_headers``)
DEFAULT_MAX_HEADERS = 128
_CLOSE = (("connection", "close"),)
#: a ``subscriptions/listen`` body over the per-connection allowance
LISTEN_BODY_REFUSAL = Reply(status=413, headers=_CLOSE)


def _is_listen(ex: ServerExchange) -> bool:
    return ex.headers.get("mcp-method") == "subscriptions/listen"


class HTTPServerConnection:
    """The server side of one TCP connection carrying MCP POSTs.

    :meth:`next_event` returns a :class:`~mcp_proto.Request` for the
    application, a :class:`Reply` the binding prepared (send it as is), a
    :class:`~mcp_proto.Cancelled` when the client went away mid-request,
    :class:`~mcp_proto.ConnectionClosed` at the end, or :data:`NEED_DATA`.
    :meth:`send` returns the bytes to write.  After a response with
    ``Connection: close`` (or a broken request) :attr:`must_close` is true and
    :meth:`next_event` returns ``ConnectionClosed``: write the bytes, then
    close.  A request head over ``max_incomplete_event_size`` bytes or
    ``max_headers`` fields is answered ``431`` and the connection closed; HTTP
    it cannot read, ``400`` (``414``, ``501``, ``505``: see :mod:`mcp_proto.http.wire`).
    """

    def __init__(
        self,
        server: HTTPServer,
        *,
        max_incomplete_event_size: int = DEFAULT_MAX_HEAD,
        max_headers: int = DEFAULT_MAX_HEADERS,
        budget: BodyBudget | None = None,
    ) -> None:
        self.server = server
        self._account = BodyAccount(budget) if budget is not None else None
        self._wire = ServerWire(max_head=max_incomplete_event_size, max_headers=max_headers)
        #: the exchange of the current request, once its head has arrived
        self.exchange: ServerExchange | None = None
        self._error: Reply | None = None
        self._broken = False

    @property
    def must_close(self) -> bool:
        return self._wire.must_close

    def client(self, peer: str) -> Hashable:
        """Who sends the current request (peer ``peer``), for per-client budgets."""
        headers = self.exchange.headers if self.exchange is not None else Headers()
        return client_key(self.server, headers, peer)

    def close(self) -> None:
        """The socket is closed: give back what the current request drew on the budget."""
        self._settle()

    def _settle(self) -> None:
        if self._account is not None:
            self._account.settle()

    def receive_data(self, data: bytes) -> None:
        """Bytes from the client; ``b""`` when it closed its side."""
        self._wire.receive_data(data)

    def next_event(
        self,
    ) -> Request | Reply | InvalidMessage | Cancelled | ConnectionClosed | type[NEED_DATA]:
        wire = self._wire
        while True:
            ex = self.exchange
            if ex is not None:
                event = ex.next_event()
                if event is not NEED_DATA:
                    return event
                if wire.eof and not ex.done and (ex.request_id is not None or ex.streams_on):
                    cancelled = ex.client_closed()
                    if cancelled is not None:
                        return cancelled
                if ex.done:
                    wire.release()  # a detached request is over: the next one is read
                if ex.done and wire.must_close:
                    return ConnectionClosed()  # answered with "Connection: close": done
                if ex.done and wire.between_requests:
                    self.exchange = ex = None
                    self._settle()  # (already given back if this connection sent the end)
            w = wire.next_event()
            if w is NEED_DATA or w is PAUSED:
                if self._broken or (wire.eof and (ex is None or ex.done)):
                    return ConnectionClosed()
                return NEED_DATA
            # Body bytes and END come only after a RequestHead, and the exchange it made
            # is dropped only once the wire is back between requests, i.e. after END.
            if type(w) is bytes:
                assert ex is not None
                if self._fits(ex, len(w)):
                    ex.receive_body(w)
            elif w is END:
                assert ex is not None
                ex.end_of_body()
            elif isinstance(w, RequestHead):
                self._settle()
                self.exchange = ServerExchange(self.server, w.method, w.target, w.headers)
            else:  # a WireError, the wire's last kind of event: answered once, then closed
                assert isinstance(w, WireError)
                self._broken = True  # the wire gives nothing more: closed from now on
                if not wire.can_respond:  # a response was written already: just close
                    return ConnectionClosed()
                self._error = Reply(status=w.status, headers=_CLOSE)
                return self._error

    def _fits(self, ex: ServerExchange, n: int) -> bool:
        """Whether ``n`` more body bytes may be buffered; if not, ``ex`` is refused (503)."""
        account = self._account
        if account is None or not ex.wants_body:
            return True
        if account.held + n > self.server.max_body_size:
            return True  # the exchange answers 413, which says more than a 503
        if account.held + n > account.budget.allowance and _is_listen(ex):
            # a listen holds its request for as long as it stays open: its body never
            # draws on the shared budget, or open listens would pin it for everyone
            account.settle()
            ex.refuse(LISTEN_BODY_REFUSAL)
            return False
        if account.add(n):
            return True
        account.settle()
        ex.refuse(BODY_REFUSAL)
        return False

    def send(self, event: Reply | Event) -> bytes:
        """The bytes for ``event``: a :class:`Reply`, a ``Result``, ``ErrorResponse``..."""
        if isinstance(event, Reply) and event is self._error:
            self._error = None
            return self._write(reply_parts(event))
        if self.exchange is None:
            raise LocalProtocolError("no request is being answered on this connection")
        out = self._write(self.exchange.send(event))
        if self.exchange.done:
            self._settle()  # the response is written: the request's body budget is free
        return out

    def detach(self) -> bytes:
        """End the running legacy request's response now, the request going on
        (:meth:`~mcp_proto.http.ServerExchange.detach`); ``b""`` when it cannot
        (a modern request, a client that takes JSON only...)."""
        ex = self.exchange
        if ex is None or not ex.can_detach:
            return b""
        return self._write(ex.detach())

    def poll(self) -> bytes:
        """What came for the current exchange from other connections (``ServerExchange.poll``)."""
        return self._write(self.exchange.poll()) if self.exchange is not None else b""

    def keepalive(self) -> bytes:
        """A keep-alive comment frame for the running stream (``b""`` if none is open)."""
        return self._write(self.exchange.keepalive()) if self.exchange is not None else b""

    def _write(self, parts: list[ResponsePart]) -> bytes:
        wire = self._wire
        out = []
        for part in parts:
            if type(part) is ResponseData:
                out.append(wire.body(part.data))
            elif type(part) is ResponseStart:
                out.append(wire.respond(part.status, part.headers))
            else:  # a detached request holds the connection until it is over
                out.append(wire.end(hold=self.exchange is not None and self.exchange.detached))
        return b"".join(out)
