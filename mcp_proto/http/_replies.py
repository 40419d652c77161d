"""What a server exchange hands the host: response parts, and the replies it wrote itself.

Shared by :mod:`mcp_proto.http._server` (the modern checks) and
:mod:`mcp_proto.http._legacy` (the legacy sessions), so neither imports the other's
internals.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Any, Final, TypeAlias

import orjson
from attrs import frozen

from .. import types as t
from .._connection import Notification

if TYPE_CHECKING:
    from ._server import ServerExchange

__all__ = [
    "Header",
    "Reply",
    "ResponseData",
    "ResponseEnd",
    "ResponsePart",
    "ResponseStart",
    "reply_parts",
]

Header: TypeAlias = tuple[str, str]
_JSON: Final = ("content-type", "application/json")
_SSE_HEADERS: Final = (
    ("content-type", "text/event-stream"),
    ("cache-control", "no-cache"),
    ("x-accel-buffering", "no"),
)
#: the ``retry`` a legacy session's event stream gives its client: milliseconds to wait
#: before it reconnects, should the connection end before the stream does (LEG-12)
SSE_RETRY_MS: Final = 1000


class _Mode(Enum):
    """Where a :class:`~mcp_proto.http.ServerExchange` is, from head to end of response."""

    BODY = "receiving the body"
    READY = "the event is ready"
    APP = "the application owns the request"
    STREAM = "streaming SSE"
    DETACHED = "the response ended, the request goes on: its events are kept for a resume"
    DONE = "done"


@frozen(kw_only=True)
class ResponseStart:
    """The status line and headers (lowercase names) of the response."""

    status: int
    headers: tuple[Header, ...]


@frozen(kw_only=True)
class ResponseData:
    """A piece of the response body: a whole JSON body or one or more SSE frames."""

    data: bytes


@frozen(kw_only=True)
class ResponseEnd:
    """The response is complete (for SSE: the stream ends)."""


ResponsePart: TypeAlias = ResponseStart | ResponseData | ResponseEnd


@frozen(kw_only=True)
class Reply:
    """The binding answered this HTTP request itself; ``exchange.send(reply)`` gives the parts.

    ``error`` is the JSON-RPC error in the body, if any; ``notification`` the
    notification a ``202`` accepted, when the core recognised one (an
    extension's).  ``resumed``: a legacy session's exchange that this request (a
    client's answer to an input request, or its cancellation) gave a new event to
    (its ``next_event``); the host wakes whoever serves that exchange.  ``stream``:
    the reply opens an event stream that stays open (a legacy session's standalone
    ``GET`` stream, LEG-13): ``send`` gives its start only, and the host treats it as
    a listen (a place in the listen budget, the fan-out, keep-alives) until it ends --
    unless the exchange is ``following`` (a ``GET`` with ``Last-Event-ID`` resuming a
    stream closed mid-call, LEG-15): ``send`` then gives the start and the kept events,
    and the host polls ``keepalive()`` for the rest, as it does while a request of the
    session waits for input.
    """

    status: int
    headers: tuple[Header, ...] = ()
    body: bytes = b""
    error: t.Error | None = None
    notification: Notification | None = None
    resumed: ServerExchange | None = None
    stream: bool = False


def reply_parts(reply: Reply) -> list[ResponsePart]:
    """The response parts of a :class:`Reply` (with its ``Content-Length``).

    A ``stream`` reply gives its start alone: the stream's events follow.
    """
    if reply.stream:
        return [ResponseStart(status=reply.status, headers=reply.headers)]
    headers = (*reply.headers, ("content-length", str(len(reply.body))))
    start = ResponseStart(status=reply.status, headers=headers)
    if reply.body:
        return [start, ResponseData(data=reply.body), ResponseEnd()]
    return [start, ResponseEnd()]


def _error_reply(status: int, error: t.Error, id: t.RequestId | None = None) -> Reply:
    message: dict[str, Any] = {"jsonrpc": "2.0"}
    if id is not None:
        message["id"] = id
    message["error"] = {"code": error.code, "message": error.message}
    if error.data is not None:
        message["error"]["data"] = error.data
    return Reply(status=status, headers=(_JSON,), body=orjson.dumps(message), error=error)
