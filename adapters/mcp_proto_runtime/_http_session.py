"""One HTTP connection's server side with no I/O: bytes, times and outcomes in, actions out.

:class:`HTTPServerSession` is :class:`~mcp_proto_runtime.ServerSession`'s twin for a
TCP connection of a Streamable HTTP server.  It holds what the three adapters' HTTP
links used to write for themselves: the dispatch of the binding's events, how long to
wait for the client (the slowloris clock, :class:`~mcp_proto_runtime.ClientClock`), the
listen budget and the listen's opening and end, the answer to a request no handler
takes, the answer to what a handler returned or raised, the keep-alive on a quiet
stream, and when to close (lingeringly or not).

The loop of an adapter's connection::

    while True:
        action = session.next_action(now())
        if ReadWithin:   read for action.seconds at most; bytes: session.receive_data,
                         none in time: write session.read_timed_out() (a keep-alive)
        elif Write:      write action.data whole (within the client's timeout)
        elif RunHandler: run the handler on a task/thread; write session.handler_done(...)
        elif CancelHandler: cancel that handler
        elif OpenListen: join the fan-out, start the listen's writer, write action.ack
        elif EndListen:  leave the fan-out and stop the listen's writer
        elif Close:      as EndListen; then, if action.linger, shut the write side and
                         read and drop (LINGER_TIME, LINGER_BYTES); close the socket

HTTP/1.1 runs one exchange at a time, so at most one handler runs per connection.
Not thread-safe: the blocking adapter calls it under the connection's lock.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

import attrs

from mcp_proto import (
    NEED_DATA,
    Cancelled,
    ConnectionClosed,
    Event,
    InvalidMessage,
    Notification,
    Request,
    Result,
)
from mcp_proto import ServerConnection as _ServerConnection
from mcp_proto.http import Headers, HTTPServer, HTTPServerConnection, Reply
from mcp_proto.http.limits import BodyBudget, ListenBudget

from ._server import ClientClock, HandlerContext, RequestContext, ServerSettings, default_answer
from ._session import CancelHandler, RunHandler, Write, respond
from ._transport import http_transport

__all__ = [
    "END_LISTEN",
    "INPUT_POLL",
    "Close",
    "EndListen",
    "HTTPServerSession",
    "OpenListen",
    "ReadWithin",
]

#: seconds between looks at a legacy request waiting for a client's answers, which
#: arrive on another connection (a wake-up from that connection is the next step)
INPUT_POLL = 0.05

H = TypeVar("H")
C = TypeVar("C", bound=HandlerContext[Any])


@attrs.frozen(slots=True)
class ReadWithin:
    """Read the client's next bytes, waiting ``seconds`` at most.

    Bytes go to :meth:`HTTPServerSession.receive_data`; a wait that ran out calls
    :meth:`HTTPServerSession.read_timed_out` and writes what it returns.
    """

    seconds: float


@attrs.frozen(slots=True)
class OpenListen:
    """A listen was admitted: join the fan-out and start its writer, then write ``ack``.

    In that order: a change the client causes on reading the acknowledgement is then
    never missed.  ``id`` is the listen's request id (its writer ends it with
    :func:`~mcp_proto_runtime.listen_end` when it falls behind).
    """

    id: Any
    ack: bytes


@attrs.frozen(slots=True)
class EndListen:
    """The listen is over: leave the fan-out, stop its writer (one value, :data:`END_LISTEN`).

    Its place in the listen budget is already given back.
    """


END_LISTEN = EndListen()


@attrs.frozen(slots=True)
class Close:
    """Close the connection; first end the listen as :class:`EndListen` says.

    ``linger``: the last response asked to close (``Connection: close``, a refusal, a
    broken request): shut the write side, then read and drop what the client still
    sends, for ``LINGER_TIME`` seconds and ``LINGER_BYTES`` bytes at most, so that it
    reads the response rather than a reset.  ``reason`` is for a log line.
    """

    reason: str
    linger: bool


class HTTPServerSession(Generic[H, C]):
    """The server side of one TCP connection of a Streamable HTTP server.

    ``http`` is the binding every connection of the server shares, ``template`` the
    configured :class:`~mcp_proto.ServerConnection` whose answers need no handler
    (``server/discover``, a listen's acknowledgement); ``budgets`` the server's listen
    and body budgets; ``peer`` the client's address (per-client listen budget, when no
    bearer token names it); ``now`` the adapter's clock at the connection's start.
    """

    def __init__(
        self,
        settings: ServerSettings[Any],
        http: HTTPServer,
        template: _ServerConnection,
        budgets: tuple[ListenBudget, BodyBudget],
        *,
        peer: str,
        make_context: Callable[[RequestContext], C],
        now: float,
    ) -> None:
        self._settings = settings
        self._sessions = http.sessions
        self._find: Callable[[str], H | None] = settings.handlers.find
        self._template = template
        self._listens, bodies = budgets
        self.conn = HTTPServerConnection(http, budget=bodies)
        self._peer = peer
        self._make_context = make_context
        self._clock = ClientClock(now)
        #: the handler of the current exchange, until its answer is made
        self.run: RunHandler[H, C] | None = None
        self._client: Hashable = None  # who holds the open listen, once there is one
        self.listening = False
        self._pending: list[CancelHandler[H, C] | EndListen] = []
        self._close: Close | None = None
        self._closing = False  # a reply asked to close: once it is written
        self._keepalive_at: float | None = None  # while polling: when a keep-alive is due
        self._poll_only = False  # the current wait is a poll, not a keep-alive's

    @property
    def busy(self) -> bool:
        """A handler runs, a listen is open, a legacy request waits for the client's
        answers to its input requests, or a GET resumes a stream: the client may stay
        quiet."""
        return self.run is not None or self.listening or self._polling

    @property
    def _polling(self) -> bool:
        """Whether the exchange gets news from other connections (a legacy request's
        answers and cancel, a resumed stream's events), looked at every
        :data:`INPUT_POLL` seconds."""
        ex = self.conn.exchange
        return ex is not None and ex.expects_news

    def receive_data(self, data: bytes) -> None:
        """Bytes read from the client; ``b""`` when it closed its side."""
        self.conn.receive_data(data)

    def next_action(
        self, now: float
    ) -> (
        ReadWithin
        | Write
        | RunHandler[H, C]
        | CancelHandler[H, C]
        | OpenListen
        | EndListen
        | Close
    ):
        """What to do next, at time ``now`` of the adapter's clock.

        Once a :class:`Close` is returned, every call returns it again.
        """
        if self._sessions is not None:
            self._sessions.advance(now)  # idle legacy sessions end (cheap: scans rarely)
        if self._pending:
            return self._pending.pop(0)
        if self._close is not None:
            return self._close
        if self._closing:
            return self._closed("the response asked to close")
        conn = self.conn
        event = conn.next_event()
        if event is NEED_DATA:
            wait = self._clock.wait(busy=self.busy, now=now, settings=self._settings)
            if wait is None:  # the client took too long to send a request (slowloris)
                return self._closed("the client was too slow to send a request")
            if not self._polling:
                self._keepalive_at = None
                self._poll_only = False
                return ReadWithin(wait)
            # look for news every INPUT_POLL seconds; a keep-alive only every ``wait``
            if self._keepalive_at is None:
                self._keepalive_at = now + wait
            left = self._keepalive_at - now
            self._poll_only = left > INPUT_POLL
            return ReadWithin(INPUT_POLL if self._poll_only else max(left, 0.0))
        if isinstance(event, Request):
            self._clock.request_arrived()
            return self._dispatch(event)
        if isinstance(event, Reply):
            self._clock.request_arrived()  # a whole exchange, as a request is (idle clock)
            ex = conn.exchange
            if event.stream and not (ex is not None and ex.following):
                return self._open(None, event)  # a legacy session's GET stream: a listen
            self._closing = conn.must_close
            return Write(conn.send(event))
        if isinstance(event, InvalidMessage):  # a legacy request ended by its client's answer
            return Write(conn.send(event))
        if isinstance(event, Cancelled):  # closed the response (HTTP-SSE-5), or cancelled
            if self.run is not None:
                self.run.context._core.cancelled = True
                self._pending.append(CancelHandler(self.run))
            if self.listening:
                self.end_listen()
                self._pending.append(END_LISTEN)
            ex = conn.exchange
            if ex is not None and not ex.done:  # a legacy client's notifications/cancelled
                return Write(conn.send(event))  # the response ends unanswered (LEG-09)
            return self.next_action(now)
        assert isinstance(event, ConnectionClosed), event
        return self._closed("the client closed the connection")

    def _closed(self, reason: str) -> Close:
        self.end_listen()
        self._close = Close(reason=reason, linger=self.conn.must_close)
        return self._close

    def _dispatch(self, request: Request) -> Write | RunHandler[H, C] | OpenListen:
        handler = self._find(request.method)
        if handler is not None:
            ex = self.conn.exchange
            headers = ex.headers if ex is not None else Headers()
            authenticated = self.conn.server.auth is not None
            transport = http_transport(headers, self._peer, authenticated=authenticated)
            context = self._make_context(RequestContext(request, transport=transport))
            self.run = RunHandler(request=request, handler=handler, context=context)
            return self.run
        if request.method != "subscriptions/listen":
            return Write(self.conn.send(default_answer(self._template, request)))
        return self._open(request.id, default_answer(self._template, request))

    def _open(self, id: Any, ack: Reply | Event) -> Write | OpenListen:
        """Admit listen ``id`` (``None``: a legacy GET stream) to the listen budget."""
        client = self.conn.client(self._peer)
        refusal = self._listens.admit(id, client)
        if refusal is not None:  # over the client's budget (429) or the server's (503)
            return Write(self.conn.send(refusal))
        self.listening, self._client = True, client  # given back by end_listen
        return OpenListen(id=id, ack=self.conn.send(ack))

    def read_timed_out(self) -> bytes:
        """No bytes came within the wait: the keep-alive comment to write (``b""``: none).

        Only an open stream (a running handler's SSE response, a listen) gets one; a
        wait that was a poll (:data:`INPUT_POLL`) gives what came from other connections
        instead (a resumed stream's events), often nothing.
        """
        if self._poll_only:
            return self.conn.poll()
        self._keepalive_at = None
        return self.conn.keepalive()

    def handler_done(
        self, run: RunHandler[H, C], value: Any = None, error: BaseException | None = None
    ) -> bytes:
        """``run``'s handler returned ``value`` or raised ``error``: the answer's bytes.

        ``b""`` for a cancelled request (the client closed the response); a refused
        answer is logged and replaced by ``-32603``, as on stdio.
        """
        if self.run is run:
            self.run = None
        if run.context.cancelled:
            return b""
        return respond(self.conn.send, run.request, value, error, self._template.cache_hints)

    def handler_cancelled(self, run: RunHandler[H, C]) -> None:
        """``run``'s handler ended by cancellation: nothing is sent for it."""
        run.context._core.cancelled = True
        if self.run is run:
            self.run = None

    def send(self, event: Notification | Result) -> bytes:
        """The bytes of what the adapter sends itself (a handler's progress, a change)."""
        return self.conn.send(event)

    def close_stream(self) -> bytes:
        """A handler ends its response before its answer (``test_reconnection``): the bytes.

        Only a legacy request on an event stream can (LEG-12: the client resumes with a
        ``GET`` and ``Last-Event-ID``, see :mod:`mcp_proto.http._replay`); otherwise
        ``b""`` and nothing changes.  What the handler sends afterwards is kept for the
        resume; the connection serves its next request once the handler is done.
        """
        return self.conn.detach()

    def end_listen(self) -> None:
        """The listen is over, however it ended: its budget is given back, once.

        Idempotent; the adapter calls it too when its connection ends by an error.
        """
        if self.listening:
            self.listening = False
            self._listens.release(self._client)

    def close(self) -> None:
        """The socket is closed: the listen's and the body's budgets are given back."""
        self.end_listen()
        self.conn.close()
