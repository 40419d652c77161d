"""The event streams of a legacy session (LEG-12..15): ids, the GET stream, detach and resume.

Every event stream a legacy request opens starts with a priming event (an id, a
``retry`` delay, empty data: LEG-12), and every event on it has an id ``<stream>.<n>``,
unique in the session (LEG-15).  The session's standalone ``GET`` stream carries what
the session's gates let through.  A request's stream may be closed mid-call
(:meth:`~mcp_proto.http.ServerExchange.detach`); what the request sends after that is
kept (:mod:`mcp_proto.http._replay`) until a ``GET`` with ``Last-Event-ID`` resumes it.
These are the bodies of :class:`~mcp_proto.http.ServerExchange`'s legacy methods.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from .._connection import Event, Notification
from ._replay import DEFAULT_REPLAY_LIMIT, forget, keep, open_replay
from ._replies import (
    _SSE_HEADERS,
    SSE_RETRY_MS,
    Reply,
    ResponseData,
    ResponseEnd,
    ResponsePart,
    ResponseStart,
    _Mode,
    reply_parts,
)
from ._sse import KEEPALIVE, sse_message

if TYPE_CHECKING:
    from ._server import ServerExchange

__all__ = [
    "detach",
    "drain",
    "end_cancelled",
    "framed",
    "send_detached",
    "send_standalone",
    "start_stream",
]


def start_stream(ex: ServerExchange) -> list[ResponsePart]:
    """The start of ``ex``'s event stream; a legacy one's opens with its priming event."""
    ex._mode = _Mode.STREAM
    start = ResponseStart(status=200, headers=_SSE_HEADERS)
    session = ex._session
    if session is None:
        return [start]
    ex._stream, ex._seq = session.streams, 0
    session.streams += 1
    priming = b"id: %d.0\nretry: %d\ndata: \n\n" % (ex._stream, SSE_RETRY_MS)
    return [start, ResponseData(data=priming)]


def framed(ex: ServerExchange, messages: list[dict[str, Any]]) -> list[tuple[int, bytes]]:
    """``(n, frame)`` for each of ``messages``: its SSE frame with the id ``<stream>.<n>``."""
    out = []
    for message in messages:
        ex._seq += 1
        head = b"id: %d.%d\n" % (ex._stream, ex._seq)
        out.append((ex._seq, head + sse_message(orjson.dumps(message))))
    return out


def send_standalone(ex: ServerExchange, event: Event | None) -> list[ResponsePart]:
    """A change notification (``None``: a keep-alive) on a session's GET stream.

    The session's gates decide what it gets (its subscriptions, log level, the
    capabilities the server declared); anything else (a listen's end, from a writer
    that fell behind) ends the stream, as does the end of the session.
    """
    session = ex._session
    assert session is not None
    if ex._mode is not _Mode.STREAM:
        return []
    sessions = ex.server.sessions
    open_ = sessions is not None and session.id in sessions
    if open_ and isinstance(event, Notification | None):
        if event is None:
            return [ResponseData(data=KEEPALIVE)]
        messages = session.conn.send_message(event)
        data = b"".join(sse_message(orjson.dumps(m)) for m in messages)
        return [ResponseData(data=data)] if data else []
    ex._finish()
    return [ResponseEnd()]


def detach(ex: ServerExchange) -> list[ResponsePart]:
    """:meth:`ServerExchange.detach` once allowed: the parts, and the kept stream opened."""
    session = ex._session
    assert session is not None
    parts = start_stream(ex) if ex._mode is not _Mode.STREAM else []
    ex._kept = open_replay(session, ex._stream, ex.request_id)
    ex._mode = _Mode.DETACHED
    parts.append(ResponseData(data=b"retry: %d\n\n" % SSE_RETRY_MS))  # LEG-12: then close
    parts.append(ResponseEnd())
    return parts


def send_detached(ex: ServerExchange, event: Event) -> list[ResponsePart]:
    """What a detached request sends: checked by the core, kept for the resume; no parts."""
    conn, session, kept = ex._conn, ex._session, ex._kept
    assert conn is not None and session is not None and kept is not None
    messages = conn.send_message(event)  # (none when the core drops it)
    final = any(ex._is_final(m) for m in messages)
    if not final and any("id" in m for m in messages):
        ex._waiting = True  # input requests: the client's answers resume it
    sessions = ex.server.sessions
    limit = sessions.replay_limit if sessions is not None else DEFAULT_REPLAY_LIMIT
    keep(session, kept, framed(ex, messages), limit)
    if final:
        kept.done = True
        ex._finish()
    return []


def end_cancelled(ex: ServerExchange) -> list[ResponsePart]:
    """The client cancelled ``ex``'s request: its response ends with no answer (LEG-09, as
    on stdio).  An open stream just ends, as does a detached one's kept stream; a
    response not started is an empty event stream (``202`` for a client that takes
    JSON only, since there is no JSON-RPC message to send)."""
    mode = ex._mode
    ex._finish()
    if mode is _Mode.DETACHED:
        assert ex._kept is not None  # (set by detach)
        ex._kept.done = True
        return []
    if mode is _Mode.STREAM:
        return [ResponseEnd()]
    if mode is not _Mode.APP:
        return []  # over already
    if ex._sse_ok:
        return [ResponseStart(status=200, headers=_SSE_HEADERS), ResponseEnd()]
    return reply_parts(Reply(status=202))


def drain(ex: ServerExchange, *, keepalive: bool = True) -> list[ResponsePart]:
    """A resuming ``GET``'s new frames (if none, a keep-alive or nothing, as ``keepalive``
    says); its end after the answer.

    It ends, too, when the session ends; a stream whose frames were lost ends with the
    error that stands for its answer (:meth:`Replay.lost_answer`).
    """
    kept, session, sessions = ex._kept, ex._session, ex.server.sessions
    assert kept is not None and session is not None
    if sessions is None or session.id not in sessions:
        ex._finish()
        return [ResponseEnd()]
    frames, ex._at = kept.frames[ex._at :], len(kept.frames)
    data = b"".join(frame for _, frame in frames)
    if kept.lost:
        data += kept.lost_answer()
    if not (kept.done or kept.lost):
        if not data and not keepalive:
            return []
        return [ResponseData(data=data or KEEPALIVE)]
    forget(session, kept)
    ex._finish()
    return [ResponseData(data=data), ResponseEnd()] if data else [ResponseEnd()]
