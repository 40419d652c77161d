"""The server half of the Streamable HTTP binding, with no HTTP library behind it.

A host that has already parsed an HTTP request (ASGI, WSGI, a serverless
handler, or :mod:`mcp_proto.http._server_connection`) gives :meth:`HTTPServer.exchange` the
method, target and headers, feeds the body with :meth:`ServerExchange.receive_body`,
and reads :meth:`ServerExchange.next_event`: a :class:`~mcp_proto.Request` for
the application, or a :class:`Reply` the binding wrote itself (an error, a
``202``, a ``405``...).  Everything sent back -- ``send(Result(...))``,
``send(Notification(...))``, ``send(reply)`` -- returns response parts
(:class:`ResponseStart`, :class:`ResponseData`, :class:`ResponseEnd`) that map
one to one onto ASGI messages, WSGI ``start_response`` plus an iterable, or the
writes of our HTTP/1.1 (:mod:`mcp_proto.http.wire`).

Checks, in order, before the application sees anything (each a :class:`Reply`):

====================================================  ======  =========
what                                                  status  JSON-RPC
====================================================  ======  =========
target not origin-form or http(s) absolute-form       400     -32600
``Host`` invalid, or not the absolute target's host   400     -32600
the host (target's or ``Host``) not on the allow-list 403     -32600
``Origin`` invalid, ``null`` or not allowed (HTTP-02) 403     -32600
path is the metadata document (AUTH)                  200     --
path is not the endpoint                              404     --
method other than POST (HTTP-44)                      405     --
``access_token`` in the query string (AUTH)          400     --
``verify`` refuses the bearer token (AUTH)            401/403 --
``Content-Type`` not ``application/json`` (HTTP-09)   415     --
``Accept`` admits neither JSON nor SSE (HTTP-06)      406     --
body over ``max_body_size`` (by length or as read)    413     --
body is not JSON                                      400     -32700
a response or a batch (HTTP-08)                       400     -32600
headers missing, malformed or not equal (HTTP-38/39)  400     -32020
the core's checks: ``_meta``, version, method         400/404 -32602/-32022/-32601
the core's limits: in flight, subscriptions           500     -32603
====================================================  ======  =========

The status of a JSON-RPC error is never looked up here: a refusal's comes
with it (``DecodeError.http_status``, ``InvalidMessage.http_status``), and an
error response the application sends gets :func:`transport_status` of its
code.  The other statuses (403, 404, 405, 406, 413, 415) are HTTP decisions,
made where the check is.

A notification is answered ``202`` whatever its headers (HTTP-10, HTTP-12);
``notifications/cancelled`` is ignored (ids are not unique across clients).
``Mcp-Session-Id`` and ``Last-Event-ID`` are ignored and never echoed (HTTP-44).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, TypeAlias

import orjson

from .. import types as t
from .._codec import DEFAULT_MAX_DEPTH, loads
from .._connection import (
    NEED_DATA,
    AnsweredRequest,
    Cancelled,
    ErrorResponse,
    Event,
    InvalidMessage,
    Notification,
    Request,
    ServerConnection,
)
from .._errors import (
    HEADER_MISMATCH,
    INVALID_REQUEST,
    DecodeError,
    LocalProtocolError,
    transport_status,
)
from ._auth import Challenge, ProtectedResource
from ._checks import head_verdict
from ._headers import Headers, RawHeaders
from ._legacy import route_legacy
from ._legacy_streams import (
    detach,
    drain,
    end_cancelled,
    framed,
    send_detached,
    send_standalone,
    start_stream,
)
from ._replay import Replay
from ._replies import (
    _JSON,
    Reply,
    ResponseData,
    ResponseEnd,
    ResponsePart,
    ResponseStart,
    _error_reply,
    _Mode,
    reply_parts,
)
from ._sessions import HTTPSession, SessionTable
from ._sse import KEEPALIVE, sse_message
from ._validate import admits, mirrored_header_problem
from .host import AllowList

__all__ = [
    "DEFAULT_ALLOWED_HOSTS",
    "DEFAULT_MAX_BODY_SIZE",
    "HTTPServer",
    "Reply",
    "ResponseData",
    "ResponseEnd",
    "ResponsePart",
    "ResponseStart",
    "ServerExchange",
    "reply_parts",
]

#: Loopback names: the default allow-list for ``Host`` and ``Origin`` (HTTP-02, HTTP-03).
DEFAULT_ALLOWED_HOSTS: Final = frozenset({"localhost", "127.0.0.1", "[::1]"})
#: Default bound on a POST body: 4 MiB.
DEFAULT_MAX_BODY_SIZE: Final = 4 * 1024 * 1024

ToolLookup: TypeAlias = Mapping[str, t.Tool] | Callable[[str], t.Tool | None]


def _mismatch(message: str, id: t.RequestId | None) -> Reply:
    status = transport_status(HEADER_MISMATCH)
    return _error_reply(status, t.Error(code=HEADER_MISMATCH, message=message), id)


class HTTPServer:
    """The configuration of an MCP endpoint; :meth:`exchange` starts one POST.

    ``connection`` builds the :class:`ServerConnection` of each exchange (its
    capabilities, versions, server info).  ``allowed_hosts`` and
    ``allowed_origins`` hold host names (any port), ``host:port`` pairs (that
    port only) and, for origins, ``scheme://host[:port]``; they become
    :class:`~mcp_proto.http.host.AllowList` values, and an entry outside that
    grammar raises ValueError.  ``None`` turns that allow-list off (a ``Host``
    that is not ``host[:port]`` is still ``400``).  ``tools`` gives the server's
    tools by name so ``Mcp-Param-*`` headers are checked against their
    ``x-mcp-header`` annotations.  ``auth`` protects the endpoint and serves
    the metadata document.  ``sessions`` makes the endpoint dual-era: the
    ``initialize``-era sessions live there (:mod:`mcp_proto.http._legacy` has the
    routing; ``docs/dual-era.md``); without it the endpoint is modern only.
    """

    def __init__(
        self,
        *,
        connection: Callable[[], ServerConnection] = ServerConnection,
        endpoint: str = "/mcp",
        allowed_hosts: Iterable[str] | None = DEFAULT_ALLOWED_HOSTS,
        allowed_origins: Iterable[str] | None = DEFAULT_ALLOWED_HOSTS,
        max_body_size: int = DEFAULT_MAX_BODY_SIZE,
        max_depth: int = DEFAULT_MAX_DEPTH,
        tools: ToolLookup | None = None,
        auth: ProtectedResource | None = None,
        sessions: SessionTable | None = None,
    ) -> None:
        self.connection = connection
        self.sessions = sessions
        self.endpoint = endpoint
        self.allowed_hosts = None if allowed_hosts is None else AllowList.of(allowed_hosts)
        self.allowed_origins = (
            None if allowed_origins is None else AllowList.of(allowed_origins, origins=True)
        )
        self.max_body_size = max_body_size
        self.max_depth = max_depth
        self.tools = tools
        self.auth = auth
        #: the verdicts of :meth:`ServerExchange._check_head` on heads seen before (no auth)
        self._verdicts: dict[tuple[Any, ...], Reply | None] = {}

    def exchange(
        self, method: str | bytes, target: str | bytes, headers: RawHeaders
    ) -> ServerExchange:
        """Start handling one HTTP request whose head has arrived."""
        if isinstance(method, bytes):
            method = method.decode("latin-1")
        if isinstance(target, bytes):
            target = target.decode("latin-1")
        return ServerExchange(self, method, target, Headers(headers))

    def handle(
        self, method: str | bytes, target: str | bytes, headers: RawHeaders, body: bytes = b""
    ) -> ServerExchange:
        """:meth:`exchange` for a host that has the whole body already."""
        ex = self.exchange(method, target, headers)
        if ex.wants_body:
            ex.receive_body(body)
            ex.end_of_body()
        return ex

    def tool(self, name: str) -> t.Tool | None:
        if self.tools is None:
            return None
        if isinstance(self.tools, Mapping):
            return self.tools.get(name)
        return self.tools(name)

    def challenge_reply(self, challenge: Challenge) -> Reply:
        """The ``401``/``403`` reply for ``challenge`` (needs ``auth``)."""
        if self.auth is None:
            raise LocalProtocolError("a challenge needs HTTPServer(auth=...)")
        header = ("www-authenticate", self.auth.www_authenticate(challenge))
        return Reply(status=challenge.status, headers=(header,))


class ServerExchange:
    """One POST (or any other request) at the MCP endpoint, from head to end of response."""

    def __init__(self, server: HTTPServer, method: str, target: str, headers: Headers) -> None:
        self.server = server
        self.method = method
        self.target = target
        self.headers = headers
        self._body = bytearray()
        self._conn: ServerConnection | None = None
        #: ready for next_event (READY); in STREAM mode, a legacy request's next event
        self._event: Request | Reply | InvalidMessage | Cancelled | None = None
        #: the id of the request the application is answering, once there is one
        self.request_id: t.RequestId | None = None
        self._json_ok = admits(headers.get("accept"), "application/json")
        self._sse_ok = admits(headers.get("accept"), "text/event-stream")
        #: notifications dropped because the client did not accept an event stream
        self.dropped_notifications = 0
        self._mode = _Mode.BODY
        #: the legacy session this exchange serves a request of (``_attach``), or
        #: whose standalone stream it is (``_open_standalone``)
        self._session: HTTPSession | None = None
        self.standalone = False  #: a legacy session's standalone GET stream (LEG-13)
        self._stream = self._seq = 0  # a legacy stream's number and its last event's
        #: a detached exchange's kept events (``detach``), or the kept events a ``GET``
        #: with ``Last-Event-ID`` resumes (``following``) from frame ``_at`` on
        self._kept: Replay | None = None
        self._following = False
        self._at = 0
        self._waiting = False  # a legacy request waits for its client's answers
        reply = self._check_head()
        if reply is not None:
            self._ready(reply)

    # -- input -------------------------------------------------------------

    @property
    def wants_body(self) -> bool:
        """Whether the body is still of use (False once the exchange was answered)."""
        return self._mode is _Mode.BODY

    @property
    def done(self) -> bool:
        """Whether the whole response has been produced (or the client went away)."""
        return self._mode is _Mode.DONE

    def receive_body(self, data: bytes) -> None:
        """Add body bytes; ignored once the exchange no longer wants them."""
        if self._mode is not _Mode.BODY:
            return
        if len(self._body) + len(data) > self.server.max_body_size:
            self._body = bytearray()
            self._ready(Reply(status=413, headers=(("connection", "close"),)))
            return
        self._body += data

    def refuse(self, reply: Reply) -> None:
        """Answer ``reply`` instead of reading on (the host cannot hold the body now)."""
        if self._mode is _Mode.BODY:
            self._body = bytearray()
            self._ready(reply)

    def end_of_body(self) -> None:
        """The body is complete: parse and check it, and make the event ready."""
        if self._mode is _Mode.BODY:
            body, self._body = bytes(self._body), bytearray()
            self._ready(self._process(body))

    def next_event(self) -> Request | Reply | InvalidMessage | Cancelled | type[NEED_DATA]:
        """The :class:`Request` for the application or a :class:`Reply`, once; else NEED_DATA.

        In a legacy session, an exchange streaming input requests later gives the next
        round of its request (a :class:`Request`), the error that ended it (an
        :class:`InvalidMessage`: ``send`` it) or its cancellation (a
        :class:`Cancelled`), once the client's answers arrived on other requests.
        """
        if self._mode in (_Mode.APP, _Mode.STREAM, _Mode.DETACHED) and self._event is not None:
            resumed, self._event = self._event, None
            return resumed
        if self._mode is not _Mode.READY:
            return NEED_DATA
        event, self._event = self._event, None
        assert event is not None  # READY is set only with the event (_ready)
        self._mode = _Mode.APP
        return event

    def client_closed(self) -> Cancelled | None:
        """The host saw the client close the response: the request is cancelled (HTTP-SSE-5).

        Returns the :class:`Cancelled` event the application gets on stdio, or
        ``None`` when no request was running.  Nothing more is sent for it.
        """
        running = self._conn is not None and self.request_id in self._conn.in_flight()
        self._finish()
        if not running or self._following:
            return None
        assert self._conn is not None and self.request_id is not None
        params = {"requestId": self.request_id, "reason": "the client closed the HTTP response"}
        self._conn.receive_message(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}
        )
        event = self._conn.next_event()
        assert isinstance(event, Cancelled)
        return event

    # -- output ------------------------------------------------------------

    @property
    def awaiting_input(self) -> bool:
        """A legacy request streamed its input requests and waits for the client's answers
        (they come on other HTTP requests; :attr:`Reply.resumed` names this exchange)."""
        session = self._session
        return self._waiting and session is not None

    @property
    def streaming(self) -> bool:
        """Whether the response has started as an event stream."""
        return self._mode is _Mode.STREAM

    @property
    def can_detach(self) -> bool:
        """Whether :meth:`detach` may end this response now: a legacy session's request,
        running, whose client accepts an event stream."""
        running = self._conn is not None and self.request_id in self._conn.in_flight()
        legacy = self._session is not None and not self.standalone and not self._following
        return legacy and running and self._sse_ok and self._mode in (_Mode.APP, _Mode.STREAM)

    @property
    def streams_on(self) -> bool:
        """An event stream with no request of its own: a session's GET stream, or a
        resume; the end of the client's input closes it."""
        return self.standalone or self._following

    @property
    def detached(self) -> bool:
        """:meth:`detach` ended the response; the request goes on (not :attr:`done`)."""
        return self._mode is _Mode.DETACHED

    @property
    def following(self) -> bool:
        """A ``GET`` with ``Last-Event-ID`` resuming a detached stream (LEG-15); its new
        frames come from :meth:`keepalive`, which the host calls as it polls."""
        return self._following and self._mode is not _Mode.DONE

    @property
    def expects_news(self) -> bool:
        """News for this exchange may come on other connections: a legacy session's
        request (its client's answers to its input requests, its cancel) or a resume
        (the resumed request's events).  The host then looks at :meth:`next_event` and
        :meth:`poll` often, or when a :attr:`Reply.resumed` names this exchange."""
        if self._mode is _Mode.DONE or self._session is None:
            return False
        return self._following or (self._conn is not None and not self.standalone)

    def poll(self) -> list[ResponsePart]:
        """What came for this exchange from elsewhere, to write now: a resume's new events
        (and its end after the answer); ``[]`` for any other exchange, or when none."""
        if self._following and self._mode is _Mode.STREAM:
            return drain(self, keepalive=False)
        return []

    def detach(self) -> list[ResponsePart]:
        """End the response now, the request going on: close the connection, not the stream.

        For a legacy request (:attr:`can_detach`; LEG-12: the server MAY close the
        connection once an event with an id was sent, and SHOULD send ``retry``
        first).  The parts are the stream's start if need be (with its priming event),
        a ``retry`` field and the end.  From then on ``send`` keeps each event for the
        client's resume (``GET`` with ``Last-Event-ID``, :mod:`mcp_proto.http._replay`)
        and returns no parts; the exchange is :attr:`done` once its answer is kept.
        Raises :class:`LocalProtocolError` when it cannot.
        """
        if not self.can_detach:
            raise LocalProtocolError("only a running legacy request on an event stream detaches")
        return detach(self)

    def send(self, event: Reply | Event) -> list[ResponsePart]:
        """The response parts for ``event``: a :class:`Reply`, or what the core lets through.

        ``Result``/``ErrorResponse`` end the response (``application/json``
        unless a stream started); a ``Notification`` starts or continues the
        event stream; the :class:`Cancelled` that :meth:`next_event` gave (a
        legacy client cancelled the request) ends it with no answer.  After
        :meth:`client_closed` everything is dropped (``[]``).  Raises
        :class:`LocalProtocolError` as the core does.
        """
        if isinstance(event, Reply):
            return self._send_reply(event)
        if isinstance(event, Cancelled) and event.id == self.request_id:
            return end_cancelled(self)
        if self.standalone:
            return self._send_standalone(event)
        if self._mode is _Mode.DETACHED:
            return send_detached(self, event)
        conn = self._conn
        if (
            self._mode is _Mode.DONE
            and conn is not None
            and self.request_id not in conn.in_flight()
        ):
            conn.send_message(event)  # let the core judge: dropped after a cancel, else raises
            return []
        if self._conn is None or self._mode not in (_Mode.APP, _Mode.STREAM):
            raise LocalProtocolError("this exchange has no request to answer")
        if isinstance(event, Notification) and not self._sse_ok:
            self._conn.send_message(event)  # checked by the core, then dropped
            self.dropped_notifications += 1
            return []
        messages = self._conn.send_message(event)
        final = any(self._is_final(m) for m in messages)
        if not messages:
            return []
        session = self._session
        if session is not None and not final and any("id" in m for m in messages):
            self._waiting = True  # input requests: the client's answers resume it
        response = not isinstance(event, Notification)
        if self._mode is _Mode.APP and final and response and (self._json_ok or not self._sse_ok):
            self._finish()
            body = orjson.dumps(messages[-1])
            status = 200
            if isinstance(event, ErrorResponse) and self._session is None:  # legacy: 200
                status = transport_status(event.error.code)
            headers = (_JSON, ("content-length", str(len(body))))
            return [
                ResponseStart(status=status, headers=headers),
                ResponseData(data=body),
                ResponseEnd(),
            ]
        parts = self._start_stream()
        parts.append(ResponseData(data=self._frames(messages)))
        if final:
            self._finish()
            parts.append(ResponseEnd())
        return parts

    def keepalive(self) -> list[ResponsePart]:
        """A comment frame for a quiet stream (HTTP-SSE-2); starts the stream if need be."""
        if self.standalone:
            return self._send_standalone(None)
        if self._following:
            return drain(self) if self._mode is _Mode.STREAM else []
        running = self._conn is not None and self.request_id in self._conn.in_flight()
        if not running or self._mode not in (_Mode.APP, _Mode.STREAM) or not self._sse_ok:
            return []
        parts = self._start_stream()
        parts.append(ResponseData(data=KEEPALIVE))
        return parts

    def _start_stream(self) -> list[ResponsePart]:
        return [] if self._mode is _Mode.STREAM else start_stream(self)

    def _frames(self, messages: list[dict[str, Any]]) -> bytes:
        """The SSE frames of ``messages``; in a legacy session, each with its event id."""
        if self._session is None:
            return b"".join(sse_message(orjson.dumps(m)) for m in messages)
        return b"".join(frame for _, frame in framed(self, messages))

    def _is_final(self, message: Mapping[str, Any]) -> bool:
        if "method" not in message:
            return message.get("id") == self.request_id
        if message["method"] == "notifications/cancelled":
            return bool(message.get("params", {}).get("requestId") == self.request_id)
        return False

    def _send_reply(self, reply: Reply) -> list[ResponsePart]:
        if self._mode not in (_Mode.READY, _Mode.APP):
            raise LocalProtocolError("a reply answers an exchange that has sent nothing yet")
        if self._conn is not None and self.request_id in self._conn.in_flight():
            self.client_closed()  # the request is over for the core too
        if reply.stream:
            self._mode = _Mode.STREAM
            if self._following:  # a resume: the kept frames follow the start at once
                return reply_parts(reply) + drain(self)
        else:
            self._finish()  # (a GET stream refused after all: the listen budget)
        return reply_parts(reply)

    def _send_standalone(self, event: Event | None) -> list[ResponsePart]:
        return send_standalone(self, event)

    def _finish(self) -> None:
        """The exchange is over: its session lets go of it (its stream, request, resume)."""
        self._mode = _Mode.DONE
        session = self._session
        if session is None:
            return
        if self.standalone and session.stream is self:
            session.stream = None
        kept = self._kept
        if self._following and kept is not None and kept.follower is self:
            kept.follower = None
        id = self.request_id
        self._waiting = False
        if session.running.get(id) is self:
            del session.running[id]

    # -- the checks --------------------------------------------------------

    def _ready(self, event: Request | Reply) -> None:
        self._event = event
        self._mode = _Mode.READY

    def _check_head(self) -> Reply | None:
        return head_verdict(self)

    def _attach(self, conn: ServerConnection, request: Request, session: HTTPSession) -> None:
        """Serve ``request`` of a legacy session (the routing found it)."""
        self._conn, self.request_id, self._session = conn, request.id, session
        session.running[request.id] = self  # its client's cancel may come on another POST

    def _follow(self, session: HTTPSession, kept: Replay, n: int) -> None:
        """Resume ``kept`` after its event ``n`` (the routing allowed it)."""
        self._session, self._kept, self._following = session, kept, True
        self._at, kept.follower = kept.after(n), self

    def _open_standalone(self, session: HTTPSession) -> None:
        """Become ``session``'s standalone GET stream (the routing allowed it)."""
        self._session, self.standalone, session.stream = session, True, self

    def _resume(self, event: Request | InvalidMessage | Cancelled) -> None:
        """The client answered this exchange's input requests (or cancelled): next event."""
        self._event = event

    def _process(self, body: bytes) -> Reply | Request:
        sessions = self.server.sessions
        if sessions is not None:
            routed = route_legacy(self, sessions, body)
            if routed is not None:
                return routed
        try:
            obj = loads(body, self.server.max_depth)
        except DecodeError as e:
            return _error_reply(e.http_status, e.error())
        if type(obj) is dict and "method" not in obj and ("result" in obj or "error" in obj):
            error = t.Error(
                code=INVALID_REQUEST, message="clients do not send responses (HTTP-08)"
            )
            return _error_reply(400, error)
        conn = self.server.connection()
        if type(obj) is dict and "method" in obj and "id" not in obj:
            conn.receive_message(obj)
            event = conn.next_event()
            if isinstance(event, InvalidMessage):
                return _error_reply(event.http_status, event.error)
            note = event if isinstance(event, Notification) else None
            return Reply(status=202, notification=note)
        if type(obj) is dict:
            raw_id = obj.get("id")
            id = raw_id if type(raw_id) is str or type(raw_id) is int else None
            params = obj.get("params")
            name = params.get("name") if type(params) is dict else None
            tool = self.server.tool(name) if type(name) is str else None
            problem = mirrored_header_problem(self.headers, obj, tool)
            if problem is not None:
                return _mismatch(problem, id)
        conn.receive_message(obj)
        event = conn.next_event()
        if isinstance(event, InvalidMessage):
            assert event.reply is not None
            return _error_reply(event.http_status, event.error, event.reply.id)
        if isinstance(event, AnsweredRequest):  # a dual-era ``connection``: ping and the like
            return Reply(status=200, headers=(_JSON,), body=orjson.dumps(event.reply))
        assert isinstance(event, Request)
        self._conn = conn
        self.request_id = event.id
        if event.method == "subscriptions/listen" and not self._sse_ok:
            self.client_closed()  # a listen needs an event stream (HTTP-14)
            return Reply(status=406)
        return event
