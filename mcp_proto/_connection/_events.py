"""The event vocabulary of the connections.

Events are frozen, keyword-only attrs classes.  The same class is sent by one
side and received by the other where that makes sense (``Request``,
``Notification``, ``Result``, ``ErrorResponse``); the others are what a
connection reports about the exchange (``InputRequired``, ``Cancelled``,
``SubscriptionEnded``...).  Method-specific typing lives in ``params`` and
``result``, chosen through the method registry, not in one class per method.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs
from attrs import frozen

from .. import types as t
from .._errors import INVALID_PARAMS, LEGACY_RESOURCE_NOT_FOUND
from .._util import NEED_DATA, PAUSED

__all__ = [
    "NEED_DATA",
    "PAUSED",
    "AnsweredRequest",
    "Cancelled",
    "ConnectionClosed",
    "ErrorResponse",
    "Event",
    "InputRequired",
    "InvalidMessage",
    "InvalidResponse",
    "Notification",
    "Request",
    "Result",
    "ServerRequest",
    "SubscriptionAcknowledged",
    "SubscriptionEnded",
    "VersionNotSupported",
]


@frozen(kw_only=True)
class Request:
    """A JSON-RPC request, client to server.

    ``params`` is the method's params class (``CallToolRequestParams`` for
    ``tools/call``), or a plain dict for a method the registry does not know.
    When a client sends it, ``params.meta`` may be left ``None``: the client
    connection stamps the per-request ``_meta`` from its settings.
    """

    id: t.RequestId
    method: str
    params: Any
    #: MRTR round: 0 for a first request, n for the n-th retry (set by ``InputRequired.retry``)
    round: int = 0

    @property
    def meta(self) -> t.RequestMetaObject | None:
        """The request's ``_meta`` (always set on a request a server received)."""
        return getattr(self.params, "meta", None)


@frozen(kw_only=True)
class Notification:
    """A JSON-RPC notification, either direction.

    ``request_id`` ties it to a request: when a server sends progress or a log
    message, the request it belongs to (the core checks the rules against that
    request); on a ``subscriptions/listen`` stream, the listen request's id
    (the core stamps ``io.modelcontextprotocol/subscriptionId``).  A server
    sending a change notification (``notifications/tools/list_changed``...)
    with ``request_id=None`` fans it out to every open subscription that asked
    for it.  A client receives progress with ``request_id`` set from the
    token, and stream notifications with the subscription's id.
    """

    method: str
    params: Any = None
    request_id: t.RequestId | None = None


@frozen(kw_only=True)
class Result:
    """A result response.

    ``result`` is the method's result class (``CallToolResult``...); a server
    may also send ``InputRequiredResult`` on the three methods that allow it.
    A client receives ``input_required`` results as :class:`InputRequired`.
    """

    id: t.RequestId
    result: Any


@frozen(kw_only=True)
class ErrorResponse:
    """An error response (``id`` is ``None`` when the request id was unreadable)."""

    id: t.RequestId | None
    error: t.Error

    @property
    def code(self) -> int:
        return self.error.code

    def is_resource_not_found(self) -> bool:
        """True for ``-32602`` and for ``-32002`` from servers of older revisions (ERR-04)."""
        return self.error.code in (INVALID_PARAMS, LEGACY_RESOURCE_NOT_FOUND)


@frozen(kw_only=True)
class InputRequired:
    """Client side: the server needs input before it can answer (MRTR).

    ``request`` is the request this result ended; ``round`` counts the
    ``input_required`` results seen so far in this chain (1 for the first).
    Build the retry with :meth:`retry`, then send it like any request.
    """

    id: t.RequestId
    result: t.InputRequiredResult
    request: Request
    round: int

    @property
    def input_requests(self) -> Mapping[str, Any]:
        return self.result.input_requests or {}

    def retry(
        self, *, id: t.RequestId, input_responses: Mapping[str, Any] | None = None
    ) -> Request:
        """The retry: same method and params, a new ``id``, the answers, the state echoed.

        ``input_responses`` maps each key of ``input_requests`` to its answer
        (``ElicitResult``, ``CreateMessageResult``, ``ListRootsResult``).
        ``requestState`` is copied exactly, or left out when the server sent
        none (MRTR-13).  Raises ``ValueError`` for a reused id (MRTR-14) or
        answers that omit a key the server asked for (MRTR-16).
        """
        if id in (self.id, self.request.id):
            raise ValueError("the retry needs a new id (MRTR-14)")
        answers = dict(input_responses or {})
        missing = [k for k in self.input_requests if k not in answers]
        if missing:
            raise ValueError(f"no answer for input request(s) {missing} (MRTR-16)")
        params = self.request.params
        if not hasattr(params, "input_responses"):
            raise ValueError(f"{self.request.method} does not take input responses (MRTR-03)")
        params = attrs.evolve(
            params,
            input_responses=answers or None,
            request_state=self.result.request_state,
        )
        return Request(id=id, method=self.request.method, params=params, round=self.round)


@frozen(kw_only=True)
class VersionNotSupported:
    """Client side: ``-32022``; retry with one of ``supported`` (VER-02, STDIO-18)."""

    id: t.RequestId
    request: Request
    requested: str
    supported: tuple[str, ...]
    error: t.Error

    def choose(self, ours: Iterable[str]) -> str | None:
        """The newest version both sides support, or ``None`` (dates sort as strings)."""
        common = set(self.supported) & set(ours)
        return max(common) if common else None


@frozen(kw_only=True)
class InvalidResponse:
    """Client side: the response to ``id`` broke the protocol; the request is over.

    For instance an unknown ``resultType`` (BASE-14), ``input_required`` on a
    method that does not allow it (MRTR-03) or without any input (MRTR-09),
    input requests the client did not declare (MRTR-10), or more rounds than
    the configured cap.  ``error`` is the value of what was wrong (``code``
    ``-32602`` or ``-32600``, ``message``, ``data``); nothing is sent for it.
    """

    id: t.RequestId
    request: Request
    error: t.Error


@frozen(kw_only=True)
class Cancelled:
    """Server side: the client cancelled the in-flight request ``id``.

    From now on anything sent for ``id`` is dropped (STDIO-13).  Client side, in a
    legacy session: the server gave up its request ``id`` (a :class:`ServerRequest`):
    its answer is not sent.
    """

    id: t.RequestId
    reason: str | None = None


@frozen(kw_only=True)
class SubscriptionAcknowledged:
    """Client side: the server acknowledged listen ``id`` with the filter it honours."""

    id: t.RequestId
    notifications: t.SubscriptionFilter


@frozen(kw_only=True)
class SubscriptionEnded:
    """A ``subscriptions/listen`` stream ended.

    ``graceful`` is True when the server ended it with a result or with
    ``notifications/cancelled`` naming the listen id (SUB-12, CANCEL-02), or
    the client cancelled it; abrupt loss shows up as :class:`ConnectionClosed`.
    """

    id: t.RequestId
    graceful: bool = True
    result: t.SubscriptionsListenResult | None = None


@frozen(kw_only=True)
class InvalidMessage:
    """A message that was not valid but kept the framing intact.

    ``error`` says what was wrong: the JSON-RPC error value (the ``error`` of
    ``reply`` when there is one).  ``reply`` is the error response to send
    back, or ``None`` when the protocol forbids answering (a notification, a
    response, anything a client receives).  ``conn.send(event)`` gives the
    reply's bytes (``b""`` if none).  ``http_status`` is the status an HTTP
    binding answers the refused POST with: ``404`` for ``-32601``, ``500``
    when a server limit refused the request, else ``400``.
    """

    error: t.Error
    reply: t.JSONRPCErrorResponse | None = None
    http_status: int = 400


@frozen(kw_only=True)
class AnsweredRequest:
    """Server side, legacy era: a request the connection answered itself.

    ``initialize``, ``ping``, ``logging/setLevel``, ``resources/subscribe`` and
    ``resources/unsubscribe`` of an ``initialize``-era session change only the
    connection's state, so the connection answers them; the application may look
    (``method``, ``params``: the 2025-11-25 params class) and must pass the event to
    ``send`` for the bytes of ``reply``, the response.
    """

    id: t.RequestId
    method: str
    params: Any
    reply: Mapping[str, Any]


@frozen(kw_only=True)
class ServerRequest:
    """Client side, legacy era: the server asks the client (LEG-07; 2025-11-25 only).

    ``request`` is an ``ElicitRequest``, ``CreateMessageRequest`` or
    ``ListRootsRequest``: the same types as an MRTR round's input requests
    (:attr:`InputRequired.input_requests`), so one callback answers both eras.  Answer
    with ``send(event.answer(result))`` (or an :class:`ErrorResponse` with this ``id``).
    """

    id: t.RequestId
    request: Any

    @property
    def method(self) -> str:
        return self.request.method  # type: ignore[no-any-return]

    def answer(self, result: Any) -> Result:
        """The :class:`Result` that answers this request."""
        return Result(id=self.id, result=result)


@frozen(kw_only=True)
class ConnectionClosed:
    """The peer closed its side cleanly.

    ``in_flight`` lists requests that got no response and ``subscriptions``
    listen streams that had not ended: they were lost, not completed
    (SUB-13, STDIO-17).
    """

    in_flight: tuple[t.RequestId, ...] = ()
    subscriptions: tuple[t.RequestId, ...] = ()


#: what a server's connection hands over (the requests and notifications of its client)
ServerEvent = (
    Request | Notification | Cancelled | InvalidMessage | AnsweredRequest | ConnectionClosed
)
#: what a client's connection hands over (the endings of its requests, and notifications)
ClientEvent = (
    Result
    | ErrorResponse
    | InputRequired
    | VersionNotSupported
    | InvalidResponse
    | SubscriptionAcknowledged
    | SubscriptionEnded
    | Notification
    | InvalidMessage
    | ConnectionClosed
    | ServerRequest
    | AnsweredRequest
    | Cancelled
)

Event = (
    Request
    | Notification
    | Result
    | ErrorResponse
    | InputRequired
    | VersionNotSupported
    | InvalidResponse
    | Cancelled
    | AnsweredRequest
    | ServerRequest
    | SubscriptionAcknowledged
    | SubscriptionEnded
    | InvalidMessage
    | ConnectionClosed
)
