"""The client half of the Streamable HTTP binding, with no HTTP library behind it.

:meth:`HTTPClient.send` turns a request into an :class:`HTTPPost` (target,
headers, body) and :meth:`HTTPClient.response` reads what came back, as an
:class:`ClientExchange` that yields the same events as the stream connection
(``Result``, ``InputRequired``, ``Notification``, ``SubscriptionAcknowledged``,
``ErrorResponse``...) plus the HTTP ones defined here.  One
:class:`ClientConnection` serves every POST, so ids are allocated once and MRTR
rounds and subscriptions are tracked as on stdio.

Headers of each POST (HTTP-06/07/15/20/29/30): ``Content-Type``, ``Accept:
application/json, text/event-stream``, ``MCP-Protocol-Version``, ``Mcp-Method``,
``Mcp-Name`` (Base64 sentinel when needed) and ``Mcp-Param-{Name}`` for each
``x-mcp-header`` argument of the tool, taken from the last ``tools/list``.
Tools whose annotations are invalid are removed from ``tools/list`` results,
each with a :class:`ToolRejected` warning event (HTTP-27).

Cancellation over HTTP is closing the response: :meth:`ClientExchange.close`
retires the id; no ``notifications/cancelled`` is posted (HTTP-12).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from typing import Any, Final

import attrs
import orjson
from attrs import frozen

from .. import types as t
from .._codec import METHODS
from .._connection import (
    DEFAULT_MAX_MESSAGE_SIZE,
    MODERN_ERRORS,
    NEED_DATA,
    AnsweredRequest,
    Cancelled,
    ClientConnection,
    ErrorResponse,
    Event,
    Notification,
    Request,
    Result,
    ServerRequest,
)
from .._errors import METHOD_NOT_FOUND, LocalProtocolError
from ._auth import AuthChallenge, parse_www_authenticate
from ._client_legacy import SessionExpired, StreamInterrupted, legacy_headers, valid_session_id
from ._headers import (
    Headers,
    InvalidToolHeaders,
    RawHeaders,
    encode_header_value,
    header_params,
    param_header_text,
    value_at,
)
from ._sse import SSEParser

__all__ = [
    "ACCEPT",
    "AuthenticationRequired",
    "ClientExchange",
    "Era",
    "HTTPClient",
    "HTTPPost",
    "RequestLost",
    "ResponseEvent",
    "ToolRejected",
    "UnexpectedResponse",
    "detect_era",
]

ACCEPT: Final = "application/json, text/event-stream"


@frozen(kw_only=True)
class HTTPPost:
    """An HTTP request to make: ``POST target`` with these headers and body.

    ``request`` is the MCP request it carries (``None`` for a notification).
    """

    target: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    request: Request | None = None
    method: str = "POST"


@frozen(kw_only=True)
class RequestLost:
    """The response ended before the final message (HTTP-SSE-3): re-issue with a new id."""

    id: t.RequestId
    request: Request
    reason: str


@frozen(kw_only=True)
class UnexpectedResponse:
    """The server answered in a way the binding cannot read (HTTP-11, edge 104/105).

    ``era`` says whether the answer still came from a modern server.  ``error`` is the
    JSON-RPC error of a ``4xx`` body that is no modern one, to a modern request (HTTP-42:
    a legacy server's refusal, such as the official SDKs' ``-32600`` "Missing session
    ID"); it is ``None`` for the other answers.
    """

    id: t.RequestId | None
    status: int
    reason: str
    era: Era
    error: t.Error | None = None


@frozen(kw_only=True)
class AuthenticationRequired:
    """``401``/``403``: the challenges of ``WWW-Authenticate``, for an OAuth layer (AUTH)."""

    id: t.RequestId | None
    status: int
    challenges: tuple[AuthChallenge, ...]

    @property
    def bearer(self) -> AuthChallenge | None:
        """The ``Bearer`` challenge (``resource_metadata``, ``scope``, ``error``), if any."""
        return next((c for c in self.challenges if c.scheme == "bearer"), None)


@frozen(kw_only=True)
class ToolRejected:
    """A tool from ``tools/list`` was removed: its ``x-mcp-header`` annotations are invalid."""

    name: str
    reason: str


#: what one response hands over: the core's events for the request (its ending, progress,
#: stream notifications), or how the exchange ended outside JSON-RPC
ResponseEvent = (
    Event
    | RequestLost
    | UnexpectedResponse
    | AuthenticationRequired
    | ToolRejected
    | StreamInterrupted
    | SessionExpired
)


class Era(Enum):
    """What an error answer to a modern request says about the server (HTTP-42, HTTP-46)."""

    MODERN = "modern"  #: a 2026-07-28 server: fix the request or retry with a supported version
    LEGACY = "legacy"  #: not a modern server: fall back to ``initialize`` (dual-era clients)
    AUTH = "auth"  #: ``401``/``403``: authorize first; never a reason to fall back


def detect_era(status: int, body: bytes) -> Era:
    """Classify a 4xx answer to a modern request from its status and body (HTTP-42).

    A JSON-RPC error with ``-32020``, ``-32021`` or ``-32022``, or ``404`` with
    ``-32601``, is a modern server; ``401``/``403`` are authorization; anything
    else (an empty body, HTML, another error) is not a modern server.
    """
    if status in (401, 403):
        return Era.AUTH
    try:
        message = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        return Era.LEGACY
    return _era_of(status, message)


def _era_of(status: int, message: Any) -> Era:
    """:func:`detect_era` of a parsed body (``401``/``403`` aside)."""
    error = message.get("error") if isinstance(message, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    if code in MODERN_ERRORS or (status == 404 and code == METHOD_NOT_FOUND):
        return Era.MODERN
    return Era.LEGACY


def _announced_over(headers: Headers, limit: int) -> str | None:
    """The ``Content-Length`` if it announces more than ``limit`` bytes, else None.

    An absent or malformed value is None (the HTTP layer refuses a malformed one;
    the running count bounds the body anyway).  Never converts more digits than
    ``limit`` has, so a value of thousands of digits costs nothing.
    """
    value = (headers.get("content-length") or "").lstrip("0")
    if not (value.isascii() and value.isdigit()):
        return None
    over = len(value) > len(str(limit)) or int(value) > limit
    return value if over else None


class HTTPClient:
    """The client side of an MCP endpoint: builds POSTs and reads responses.

    ``target`` is the endpoint's path (with query, if any); ``headers`` are
    added to every POST (``Authorization``, ``Host``...).  ``tools`` holds the
    tools known from ``tools/list`` (valid ones only), used for
    ``Mcp-Param-*`` headers.

    ``max_message_size`` bounds one message from the server, however it comes:
    the data of one SSE event, or a whole response body that is not an event
    stream (``application/json``, an error page).  Past it the request fails
    and the response is abandoned (see :class:`ClientExchange`); the default
    is the stream connections' 16 MiB (``DEFAULT_MAX_MESSAGE_SIZE``).
    """

    def __init__(
        self,
        connection: ClientConnection | None = None,
        *,
        target: str = "/mcp",
        headers: Iterable[tuple[str, str]] = (),
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    ) -> None:
        self.connection = connection if connection is not None else ClientConnection()
        self.max_message_size = max_message_size
        self.target = target
        self.headers = tuple(headers)
        self.tools: dict[str, t.Tool] = {}
        #: the legacy session's ``Mcp-Session-Id``, from its ``initialize`` (LEG-16)
        self.session_id: str | None = None

    def send(self, event: Request | Notification, *, tool: t.Tool | None = None) -> HTTPPost:
        """The POST carrying ``event``; ``tool`` overrides the cached tool of a ``tools/call``.

        Raises :class:`LocalProtocolError` for what the connection refuses, for a
        ``notifications/cancelled`` (close the response instead, HTTP-12) and
        for an argument that cannot be mirrored into a header (HTTP-24).
        """
        legacy = self.connection.legacy is not None
        if legacy or (isinstance(event, Request) and event.method == "initialize"):
            post = self.answer(event)  # the 2025-11-25 shape (LEG-10..17)
            assert post is not None  # (a request or a notification is always one message)
            return post
        if isinstance(event, Notification) and event.method == "notifications/cancelled":
            raise LocalProtocolError(
                "over HTTP a request is cancelled by closing its response", rule="HTTP-12"
            )
        extra = self._mirrored(event, tool) if isinstance(event, Request) else []
        (message,) = self.connection.send_message(event)
        meta = (message.get("params") or {}).get("_meta") or {}
        version = meta.get("io.modelcontextprotocol/protocolVersion")
        headers = [
            ("content-type", "application/json"),
            ("accept", ACCEPT),
            ("mcp-protocol-version", version or self.connection.protocol_version),
            ("mcp-method", event.method),
            *extra,
            *self.headers,
        ]
        return HTTPPost(
            target=self.target,
            headers=tuple(headers),
            body=orjson.dumps(message),
            request=event if isinstance(event, Request) else None,
        )

    def answer(self, event: Event) -> HTTPPost | None:
        """A legacy session's POST of ``event``: a request, a notification, or the client's
        answer to a server's request (a ``Result``, ``ErrorResponse``, the
        ``AnsweredRequest`` of its ``ping``, or the ``InvalidMessage`` refusing it);
        ``None`` when there is nothing to send.  See :mod:`mcp_proto.http._client_legacy`.
        """
        messages = self.connection.send_message(event)
        if not messages:
            return None
        headers = [
            ("content-type", "application/json"),
            ("accept", ACCEPT),
            *legacy_headers(self),
            *self.headers,
        ]
        request = event if isinstance(event, Request) else None
        body = orjson.dumps(messages[0])
        return HTTPPost(target=self.target, headers=tuple(headers), body=body, request=request)

    def open_stream(self) -> HTTPPost:
        """The ``GET`` of a legacy session's standalone stream (LEG-13): the server's
        requests and notifications come on it (``405``: the server offers none)."""
        return self._get(None, None)

    def resume(self, interrupted: StreamInterrupted) -> HTTPPost:
        """The ``GET`` that resumes a stream the server closed mid-call (LEG-15): what came
        after ``interrupted.last_event_id``, then the rest, ending with the answer."""
        return self._get(interrupted.last_event_id, interrupted.request)

    def cancel(self, id: t.RequestId, reason: str | None = None) -> HTTPPost | None:
        """What cancels in-flight request ``id`` beside closing its response: in a legacy
        session the POST of ``notifications/cancelled`` (LEG-09: in 2025-11-25 a closed
        stream is not a cancellation), which retires the id; ``None`` when closing is the
        cancellation (a modern request, HTTP-12) or ``id`` is not in flight."""
        connection = self.connection
        if connection.legacy is None or id not in connection.in_flight():
            return None
        params = t.CancelledNotificationParams(request_id=id, reason=reason)
        return self.send(Notification(method="notifications/cancelled", params=params))

    def end_session(self) -> HTTPPost | None:
        """The ``DELETE`` that ends the legacy session (LEG-16), or ``None`` with none open."""
        if self.session_id is None:
            return None
        headers = (*legacy_headers(self), *self.headers)
        self.session_id = None
        return HTTPPost(target=self.target, headers=headers, body=b"", method="DELETE")

    def _get(self, last_event_id: str | None, request: Request | None) -> HTTPPost:
        if self.connection.legacy is None or self.session_id is None:
            raise LocalProtocolError("a GET needs a legacy session with an id (LEG-13)")
        headers = [("accept", "text/event-stream"), *legacy_headers(self), *self.headers]
        if last_event_id is not None:
            headers.append(("last-event-id", last_event_id))
        return HTTPPost(
            target=self.target, headers=tuple(headers), body=b"", request=request, method="GET"
        )

    def _mirrored(self, event: Request, tool: t.Tool | None) -> list[tuple[str, str]]:
        info = METHODS.get(event.method)
        out: list[tuple[str, str]] = []
        if info is None or info.name_field is None:
            return out
        name = getattr(event.params, info.name_field, None)
        if isinstance(name, str):
            out.append(("mcp-name", encode_header_value(name)))
        if event.method != "tools/call" or not isinstance(name, str):
            return out
        tool = tool if tool is not None else self.tools.get(name)
        if tool is None:
            return out
        try:
            specs = header_params(tool.input_schema)
        except InvalidToolHeaders as e:
            raise LocalProtocolError(f"tool {name!r}: {e}", rule="HTTP-27") from None
        arguments = event.params.arguments
        for spec in specs:
            try:
                text = param_header_text(value_at(arguments, spec.path))
            except ValueError as e:
                raise LocalProtocolError(f"argument {'/'.join(spec.path)}: {e}") from None
            if text is not None:
                out.append((spec.header.lower(), encode_header_value(text)))
        return out

    def response(self, post: HTTPPost, status: int, headers: RawHeaders) -> ClientExchange:
        """Start reading the response to ``post`` once its status and headers arrived."""
        return ClientExchange(self, post, status, Headers(headers))

    def filter_tools(self, result: t.ListToolsResult) -> tuple[t.ListToolsResult, list[Event]]:
        """Drop tools with invalid ``x-mcp-header`` annotations (HTTP-27), remember the rest."""
        kept: list[t.Tool] = []
        warnings: list[Any] = []
        for tool in result.tools:
            try:
                header_params(tool.input_schema)
            except InvalidToolHeaders as e:
                warnings.append(ToolRejected(name=tool.name, reason=str(e)))
                self.tools.pop(tool.name, None)
                continue
            kept.append(tool)
            self.tools[tool.name] = tool
        if not warnings:
            return result, []
        return attrs.evolve(result, tools=kept), warnings


class ClientExchange:
    """The response to one POST: feed the body, read events.

    ``receive_data(b"")`` marks the end of the response body.  The final
    message ends the request; anything after it is ignored (edge 108), and
    :attr:`complete` tells the adapter it may close the stream.

    A body that is not an event stream is kept until its end, and never more
    than the client's ``max_message_size`` of it: a ``Content-Length`` over
    the bound is refused with the head, before any of the body is read, and a
    body that grows past it (chunked, or delimited by the connection's close)
    is refused by the :meth:`receive_data` call that would pass it, its bytes
    dropped.  Either way the request ends with :class:`UnexpectedResponse`
    naming the limit, and :attr:`must_close` is set: the rest of the body is
    never read, so the connection cannot carry another exchange.
    """

    def __init__(self, client: HTTPClient, post: HTTPPost, status: int, headers: Headers) -> None:
        self.client = client
        self.post = post
        self.status = status
        self.headers = headers
        self._id = post.request.id if post.request is not None else None
        self._events: list[ResponseEvent] = []
        self._body = bytearray()
        self._eof = False
        self._sse: SSEParser | None = None
        #: whether the request got its final answer (or was declared lost)
        self.complete = False
        #: whether the body was abandoned before its end (over the size bound)
        self.must_close = False
        kind = (headers.get("content-type") or "").split(";")[0].strip().lower()
        self._kind = kind
        #: a 4xx JSON-RPC error that is no modern one, to a modern request (HTTP-42)
        self._refused = False
        #: a legacy session's standalone GET stream: no request of its own ends it
        self._standalone = post.method == "GET" and post.request is None
        request = post.request
        if request is not None and request.method == "initialize" and status == 200:
            sid = headers.get("mcp-session-id")
            if sid is not None and not valid_session_id(sid):
                self._unexpected("the server's Mcp-Session-Id is not visible ASCII (LEG-16)")
                return
            client.session_id = sid
        if status == 404 and client.session_id is not None and post.method != "DELETE":
            client.session_id = None  # the server ended the session (LEG-16)
            self._finish(SessionExpired(id=self._id, request=request))
            return
        if status in (401, 403):
            value = ", ".join(headers.get_all("www-authenticate"))
            challenges = tuple(parse_www_authenticate(value))
            self._finish(AuthenticationRequired(id=self._id, status=status, challenges=challenges))
        elif status == 202 and self._id is None:
            self.complete = True
        elif (
            status == 200
            and kind == "text/event-stream"
            and (self._id is not None or self._standalone)
        ):
            self._sse = SSEParser(client.max_message_size)
        if not self.complete and self._sse is None:
            announced = _announced_over(self.headers, client.max_message_size)
            if announced is not None:
                self._too_large(f"Content-Length {announced} is over")

    def _finish(self, event: Any) -> None:
        """End the request with ``event``, retiring its id in the connection."""
        if self.complete:
            return
        self.complete = True
        if self._id is not None and self._id in self.client.connection.in_flight():
            self.client.connection.cancel(self._id)  # closing the stream is the cancel
        self._events.append(event)

    def receive_data(self, data: bytes) -> None:
        """Bytes of the response body; ``b""`` when it ended."""
        if self._eof:
            raise RuntimeError("received data after the end of the response")
        if not data:
            self._eof = True
        if self.complete and data:
            return
        if self._sse is not None:
            for sse in self._sse.feed(data):
                # (empty data: a priming event, which only sets the last event id)
                if sse.event == "message" and not self.complete and sse.data:
                    self._deliver(sse.data)
            if self._eof:
                self._stream_ended()
            return
        if not data:
            self._end()
        elif len(self._body) + len(data) > self.client.max_message_size:
            self._too_large("the body grew past")
        else:
            self._body += data

    def close(self) -> RequestLost | None:
        """The client closes the response early: the request is cancelled (HTTP-SSE-5).

        Returns the :class:`RequestLost` that ends it, or ``None`` if it was over.
        """
        if self.complete or self.post.request is None or self._id is None:
            return None
        self.complete = True
        if self._id in self.client.connection.in_flight():
            self.client.connection.cancel(self._id)
        return RequestLost(
            id=self._id, request=self.post.request, reason="cancelled by the client"
        )

    def connection_lost(self, reason: str) -> None:
        """The connection broke before the response ended: the request is lost."""
        self._eof = True
        self._lost(reason)

    def next_event(self) -> ResponseEvent | type[NEED_DATA]:
        """The next event of this response, or :data:`NEED_DATA`."""
        if self._events:
            return self._events.pop(0)
        return NEED_DATA

    def _stream_ended(self) -> None:
        """The event stream ended: a standalone stream is over; a request's ends it, unless
        a legacy server closed the connection after an event id (LEG-12): then resume."""
        sse = self._sse
        assert sse is not None
        request = self.post.request
        if self._standalone or self.complete:
            self.complete = True
            return
        last = sse.last_id
        if self.client.connection.legacy is not None and last and request is not None:
            self.complete = True  # this response is over; the request is not (no cancel)
            self._events.append(StreamInterrupted(
                id=request.id, request=request, last_event_id=last, retry_ms=sse.retry
            ))  # fmt: skip
            return
        self._lost("the event stream ended before the response")

    def _lost(self, reason: str) -> None:
        """End the request with :class:`RequestLost` (nothing if it ended already)."""
        request = self.post.request
        if request is not None:  # a notification has no request to lose
            self._finish(RequestLost(id=request.id, request=request, reason=reason))

    def _too_large(self, what: str) -> None:
        """Abandon a body over the bound: drop what was kept, end the request, close."""
        self._body = bytearray()
        self.must_close = True
        limit = self.client.max_message_size
        self._unexpected(f"{what} the {limit}-byte limit (max_message_size)")

    def _unexpected(self, reason: str) -> None:
        era = detect_era(self.status, bytes(self._body)) if self.status >= 400 else Era.MODERN
        self._finish(UnexpectedResponse(id=self._id, status=self.status, reason=reason, era=era))

    def _end(self) -> None:
        if self.complete:
            return
        if self._id is None:
            if self.status >= 300:
                self._unexpected(f"the notification was refused with status {self.status}")
            self.complete = True
            return
        message = self._json_body()
        self._body = bytearray()  # parsed: the exchange may outlive it by a whole call
        if message is not None:
            self._deliver(message)
            self._lost("the JSON body was not the response to the request")

    def _json_body(self) -> Any:
        """The JSON-RPC message of a non-streamed response, or None (after reporting why)."""
        if self.status == 202:
            self._unexpected("202 Accepted for a request (HTTP-11)")
            return None
        if self._kind != "application/json" or not self._body:
            self._unexpected(f"status {self.status} with no JSON-RPC body")
            return None
        try:
            message = orjson.loads(self._body)  # no copy of a body that may be 16 MiB
        except orjson.JSONDecodeError:
            self._unexpected("the JSON body does not parse")
            return None
        if self.status >= 400 and isinstance(message, dict) and "error" in message:
            request = self.post.request
            self._refused = (
                self.status < 500  # a 5xx is a server's failure, whatever its era
                and self.client.connection.legacy is None
                and request is not None
                and request.method != "initialize"  # its refusal is the caller's to read
                and _era_of(self.status, message) is Era.LEGACY
            )
            if message.get("id") != self._id:
                # One request per POST: the error is ours, whatever id the server wrote (null,
                # or a placeholder such as "server-error" from a legacy server's transport).
                message = {**message, "id": self._id}
        elif self.status != 200:
            self._unexpected(f"status {self.status} with a JSON body")
            return None
        return message

    def _deliver(self, message: Any) -> None:
        conn = self.client.connection
        conn.receive_message(message)
        while True:
            event: ResponseEvent | type[NEED_DATA] = conn.next_event()
            if isinstance(event, type):  # NEED_DATA: all of it is read (a client never pauses)
                break
            if isinstance(event, Result) and isinstance(event.result, t.ListToolsResult):
                result, warnings = self.client.filter_tools(event.result)
                self._events.extend(warnings)
                event = Result(id=event.id, result=result)
            if isinstance(event, ErrorResponse) and self._refused and event.id == self._id:
                event = UnexpectedResponse(
                    id=event.id,
                    status=self.status,
                    reason=f"error {event.error.code}: {event.error.message[:200]!r}",
                    era=Era.LEGACY,
                    error=event.error,
                )  # the answer of a server that is not modern after all (HTTP-42)
            self._events.append(event)
            if isinstance(event, ServerRequest | AnsweredRequest | Cancelled):
                continue  # the server's own requests: their ids are not ours
            if getattr(event, "id", None) == self._id and not isinstance(event, Notification):
                ending = not hasattr(event, "notifications")  # an ack does not end a listen
                self.complete = self.complete or ending
