"""The client's half of a 2025-11-25 Streamable HTTP session (LEG-10..17; issue 16).

Once :class:`~mcp_proto.http.HTTPClient`'s connection is in a legacy session (its
``initialize`` was answered), every request it builds is the 2025-11-25 shape:

* the ``initialize`` POST carries no session id and no ``MCP-Protocol-Version``; the
  ``Mcp-Session-Id`` its response gives (visible ASCII, at most
  :data:`MAX_SESSION_ID` characters: anything else is refused, LEG-16) goes on every
  later request, with ``MCP-Protocol-Version`` at the negotiated version (LEG-17);
* the modern per-request headers (``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``) are not
  sent; ``notifications/cancelled`` is POSTed (LEG-09: on every transport);
* the client's answers to the server's requests are POSTed too
  (:meth:`~mcp_proto.http.HTTPClient.answer`); the server accepts them with ``202``;
* ``GET`` opens the session's standalone stream (:meth:`~HTTPClient.open_stream`), or
  resumes a request's stream after a :class:`StreamInterrupted`
  (:meth:`~HTTPClient.resume`, with ``Last-Event-ID``); ``DELETE`` ends the session
  (:meth:`~HTTPClient.end_session`);
* a ``404`` in a session is :class:`SessionExpired` (LEG-16): start a new session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from attrs import frozen

from .. import types as t
from .._connection import Request

if TYPE_CHECKING:
    from ._client import HTTPClient

__all__ = [
    "MAX_SESSION_ID",
    "SessionExpired",
    "StreamInterrupted",
    "legacy_headers",
    "valid_session_id",
]

#: the longest ``Mcp-Session-Id`` a client keeps
MAX_SESSION_ID: Final = 256


@frozen(kw_only=True)
class StreamInterrupted:
    """A legacy server ended request ``id``'s event stream before its answer, after an
    event with an id: the connection closed, not the stream (LEG-12).  Wait ``retry_ms``
    (the server's ``retry``, ``None`` when it gave none) and resume:
    ``HTTPClient.resume(event)`` is the ``GET`` with ``Last-Event-ID``."""

    id: t.RequestId
    request: Request
    last_event_id: str
    retry_ms: int | None


@frozen(kw_only=True)
class SessionExpired:
    """``404`` for a request of a legacy session (LEG-16): the server ended the session.
    Open a new one (``initialize``) and send ``request`` again (``None``: a notification
    or an answer, which is lost with the session)."""

    id: t.RequestId | None
    request: Request | None


def valid_session_id(value: str) -> bool:
    """Whether ``value`` is a session id a client may keep: visible ASCII (LEG-16)."""
    return 0 < len(value) <= MAX_SESSION_ID and all(0x21 <= ord(c) <= 0x7E for c in value)


def legacy_headers(client: HTTPClient) -> list[tuple[str, str]]:
    """The session's headers: its id and the negotiated version, once there is a session."""
    legacy = client.connection.legacy
    headers: list[tuple[str, str]] = []
    if legacy is not None:
        headers.append(("mcp-protocol-version", legacy.version))
    if client.session_id is not None:
        headers.append(("mcp-session-id", client.session_id))
    return headers
