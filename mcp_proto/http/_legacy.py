"""The ``initialize``-era half of a dual-era HTTP endpoint (LEG-10..17, LEG-19).

:class:`~mcp_proto.http.HTTPServer` with ``sessions=SessionTable(...)`` routes each
request by shape before its modern checks:

=========================================================  =======================
request                                                    answer
=========================================================  =======================
POST ``initialize`` (no modern ``_meta``), no session id   a new session: the
                                                           ``InitializeResult``
                                                           with ``Mcp-Session-Id``
POST with an ``Mcp-Session-Id`` the table does not hold    404 (LEG-16)
POST with a session, ``MCP-Protocol-Version`` another      400 (LEG-17): -32602
version than the session's                                 with ``data.supported``
                                                           and ``requested`` (LEG-06)
POST of a JSON-RPC response or notification, in a session  202 (LEG-11)
POST of a request in a session                             the session's events;
                                                           a refusal is a JSON-RPC
                                                           error with status 200
DELETE with a session id                                   200, the session ends;
                                                           404 if unknown
GET or DELETE without a session id                         405, as when modern
GET with a session id, ``Accept: text/event-stream``      the session's standalone
                                                           stream (LEG-13): 200
                                                           SSE, open until the
                                                           client closes it or the
                                                           session ends; 409 while
                                                           one is open; 406 without
                                                           that ``Accept``
GET with a session id and ``Last-Event-ID: <s>.<n>`` of a  the events of stream s
stream the session keeps (closed mid-call, LEG-12/15)      after n, then the rest
                                                           as they come, ending
                                                           after the response; 409
                                                           while another GET
                                                           resumes it; an id of no
                                                           kept stream: a fresh
                                                           standalone stream
a request or notification with modern ``_meta``, with any  the modern path,
``Mcp-Session-Id`` or none; anything else                  unchanged (it ignores
                                                           ``Mcp-Session-Id``)
=========================================================  =======================

A response that completes a round of input requests (the MRTR bridge, see
``docs/dual-era.md``) gives the next round of the original request, or the error
that ends it, to the exchange still streaming that request: its ``next_event``
returns it, and the ``202`` :class:`Reply` names that exchange in ``resumed`` so the
host wakes whoever serves it.  A client's ``notifications/cancelled`` reaches the
exchange of that request the same way, running or waiting: its ``next_event`` gives
the :class:`~mcp_proto.Cancelled`, and ``send``-ing it ends the response unanswered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from .. import types as t
from .._codec import loads
from .._connection import (
    AnsweredRequest,
    Cancelled,
    InvalidMessage,
    Request,
    is_modern,
)
from .._errors import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, DecodeError
from ._replay import parse_event_id
from ._replies import _JSON, _SSE_HEADERS, Reply, _error_reply
from ._validate import admits

if TYPE_CHECKING:
    from ._server import ServerExchange
    from ._sessions import HTTPSession, SessionTable

__all__ = ["route_legacy"]

_SESSION_HEADER = "mcp-session-id"


def route_legacy(
    ex: ServerExchange, sessions: SessionTable, body: bytes
) -> Reply | Request | None:
    """What the legacy half makes of this request; ``None``: the modern path takes it."""
    sid = ex.headers.get(_SESSION_HEADER)
    if ex.method in ("GET", "DELETE"):
        return _get_or_delete(ex, sessions, sid)
    if sid is None:
        return _maybe_initialize(ex, sessions, body)
    error: DecodeError | None = None
    try:
        obj = loads(body, ex.server.max_depth)
    except DecodeError as e:
        obj, error = None, e
    else:
        if type(obj) is dict and is_modern(obj):
            return None  # a modern request ignores Mcp-Session-Id, whatever it says (LEG-19)
    session = sessions.get(sid)
    if session is None:
        return _error(404, INVALID_REQUEST, f"session {sid!r} not found (LEG-16)")
    version = ex.headers.get("mcp-protocol-version")
    if version is not None and version != session.version:  # 400 (LEG-17), as LEG-06 words it
        message = (
            f"Unsupported protocol version: MCP-Protocol-Version {version!r} is not "
            f"the session's {session.version!r} (LEG-17)"
        )
        data = {"supported": [session.version], "requested": version}
        return _error_reply(400, t.Error(code=INVALID_PARAMS, message=message, data=data))
    if error is not None:
        return _error(error.http_status, error.code, error.message)
    return _in_session(ex, session, obj)


def _get_or_delete(ex: ServerExchange, sessions: SessionTable, sid: str | None) -> Reply:
    if sid is None:  # not a session's: as on a modern endpoint (HTTP-44, LEG-19)
        return Reply(status=405, headers=(("allow", "POST"),))
    if ex.method == "DELETE":
        if sessions.end(sid):
            return Reply(status=200)
        return _error(404, INVALID_REQUEST, f"session {sid!r} not found (LEG-16)")
    session = sessions.get(sid)
    if session is None:
        return _error(404, INVALID_REQUEST, f"session {sid!r} not found (LEG-16)")
    if not admits(ex.headers.get("accept"), "text/event-stream"):
        return Reply(status=406)  # a GET asks for an event stream (LEG-13)
    last = parse_event_id(ex.headers.get("last-event-id"))
    kept = session.replay.get(last[0]) if last is not None and session.replay else None
    if kept is not None:  # the resume of a stream closed mid-call (LEG-15): its events
        if kept.follower is not None:
            message = f"stream {kept.stream} is being resumed already (one GET at a time)"
            return _error(409, INVALID_REQUEST, message)
        assert last is not None
        ex._follow(session, kept, last[1])
        return Reply(status=200, headers=_SSE_HEADERS, stream=True)
    if session.stream is not None:
        message = "the session's standalone stream is open already (one per session, LEG-14)"
        return _error(409, INVALID_REQUEST, message)
    ex._open_standalone(session)
    return Reply(status=200, headers=_SSE_HEADERS, stream=True)


def _maybe_initialize(ex: ServerExchange, sessions: SessionTable, body: bytes) -> Reply | None:
    try:
        obj = loads(body, ex.server.max_depth)
    except DecodeError:
        return None  # the modern path words the refusal
    if type(obj) is not dict or obj.get("method") != "initialize" or is_modern(obj):
        return None
    if "id" not in obj:  # a notification of that name (found by fuzzing): not a handshake
        return None
    conn = (sessions.connection or ex.server.connection)()
    if not conn.legacy_versions:
        return None  # modern only: -32601 naming the versions (LEG-22)
    conn.receive_message(obj)
    event = conn.next_event()
    if isinstance(event, InvalidMessage):
        assert event.reply is not None
        return _error(event.http_status, event.error.code, event.error.message, event.reply.id)
    assert isinstance(event, AnsweredRequest) and conn.legacy is not None
    session = sessions.open(conn, conn.legacy.version)
    if session is None:
        message = f"too many open sessions (limit {sessions.max_sessions})"
        return _error(503, INTERNAL_ERROR, message, event.id)
    body = orjson.dumps(event.reply)
    return Reply(status=200, headers=(_JSON, (_SESSION_HEADER, session.id)), body=body)


def _in_session(ex: ServerExchange, session: HTTPSession, obj: Any) -> Reply | Request:
    conn = session.conn
    is_call = type(obj) is dict and "method" in obj and "id" in obj
    conn.receive_message(obj)
    event = conn.next_event()
    if not is_call:  # a response or a notification (LEG-11)
        owner: Any = None
        if isinstance(event, InvalidMessage):
            if event.reply is None:  # a notification (or no object) it could not take
                return _error(event.http_status, event.error.code, event.error.message)
            owner = event.reply.id  # a client's answer that ended its request
        elif isinstance(event, Request | Cancelled):
            owner = event.id  # the next round, or a cancel, of a request waiting for input
        resumed = session.running.get(owner)  # (the core gives a round only when it waited)
        if resumed is not None:
            resumed._waiting = False
            assert isinstance(event, Request | InvalidMessage | Cancelled)  # owner is set
            resumed._resume(event)
        return Reply(status=202, resumed=resumed)
    if isinstance(event, AnsweredRequest):  # ping, logging/setLevel, subscribe...
        return Reply(status=200, headers=(_JSON,), body=orjson.dumps(event.reply))
    if isinstance(event, InvalidMessage):  # a request the session refused: answered 200
        assert event.reply is not None  # (a 404 would tell the client its session is gone)
        return _error(200, event.error.code, event.error.message, event.reply.id)
    assert isinstance(event, Request), event
    ex._attach(conn, event, session)
    return event


def _error(status: int, code: int, message: str, id: t.RequestId | None = None) -> Reply:
    return _error_reply(status, t.Error(code=code, message=message), id)
