"""The events a legacy session keeps for a resume: streams closed mid-call (LEG-12, LEG-15).

A handler of a legacy request may end its POST's response before its answer
(:meth:`~mcp_proto.http.ServerExchange.detach`: the connection closes, the *stream* does
not).  Everything the request sends from then on -- notifications, input requests, and at
last its response -- is kept in that stream's :class:`Replay`, each frame with the id it
would have had on the wire (``<stream>.<n>``).  The client's ``GET`` with
``Last-Event-ID: <stream>.<n>`` gets the frames after ``n``, then the ones still to come,
and the stream ends after the response.  Only that stream's frames, never another's
(LEG-15 MUST NOT).

Bounded per session: at most ``limit`` bytes of frames (``SessionTable(replay_limit=)``,
default :data:`DEFAULT_REPLAY_LIMIT`) and :data:`MAX_KEPT_STREAMS` streams.  Past either,
the oldest streams whose response is kept already go first; a stream still running that
does not fit loses its frames, and its resume gets a JSON-RPC error for its request in
place of the answer (nothing is dropped in silence).  A stream is forgotten once a resume
delivered its response, or when its session ends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import orjson

from .._errors import INTERNAL_ERROR
from ._sse import sse_message

if TYPE_CHECKING:
    from ._sessions import HTTPSession

__all__ = ["DEFAULT_REPLAY_LIMIT", "MAX_KEPT_STREAMS", "Replay", "parse_event_id"]

#: bytes of kept frames per session, at most
DEFAULT_REPLAY_LIMIT: Final = 256 * 1024
#: closed streams kept per session, at most
MAX_KEPT_STREAMS: Final = 16
_DIGITS = 18  # per part of an event id: an int, never a huge one


def parse_event_id(value: str | None) -> tuple[int, int] | None:
    """``(stream, n)`` of an event id this server gave (``"3.7"``); else ``None``."""
    if value is None:
        return None
    stream, dot, n = value.strip().partition(".")
    for part in (stream, n):
        if not (0 < len(part) <= _DIGITS and part.isascii() and part.isdigit()):
            return None
    return (int(stream), int(n)) if dot else None


class Replay:
    """One closed stream of a legacy session whose request goes on: its frames since."""

    __slots__ = ("done", "follower", "frames", "lost", "request_id", "size", "stream")

    def __init__(self, stream: int, request_id: Any) -> None:
        self.stream = stream
        self.request_id = request_id
        #: ``(n, frame)``: the SSE frame of event ``<stream>.<n>``, in order
        self.frames: list[tuple[int, bytes]] = []
        self.size = 0  # bytes of ``frames``
        self.done = False  # the response is among the frames (or was lost)
        self.lost = False  # the frames outgrew the session's store: dropped
        #: the exchange of the ``GET`` that resumes this stream, while one does
        self.follower: Any = None

    def after(self, n: int) -> int:
        """The index of the first frame after event ``n``."""
        for i, (seq, _) in enumerate(self.frames):
            if seq > n:
                return i
        return len(self.frames)

    def lost_answer(self) -> bytes:
        """The frame that stands for a lost response: a JSON-RPC error for the request."""
        message = (
            "the request's events outgrew the session's store for resumed streams; "
            "its answer is lost"
        )
        error = {"code": INTERNAL_ERROR, "message": message}
        return sse_message(orjson.dumps({"jsonrpc": "2.0", "id": self.request_id, "error": error}))


def open_replay(session: HTTPSession, stream: int, request_id: Any) -> Replay:
    """A new kept stream for ``session`` (its oldest finished ones go past the count bound)."""
    kept = session.replay
    if kept is None:
        kept = session.replay = {}
    while len(kept) >= MAX_KEPT_STREAMS and _evict_finished(session, None):
        pass
    record = Replay(stream, request_id)
    kept[stream] = record
    return record


def keep(
    session: HTTPSession, record: Replay, frames: list[tuple[int, bytes]], limit: int
) -> None:
    """Add ``frames`` to ``record`` within the session's bound (see the module docs)."""
    if record.lost:
        return
    size = sum(len(frame) for _, frame in frames)
    while session.replay_size + size > limit and _evict_finished(session, record):
        pass
    if session.replay_size + size > limit:
        session.replay_size -= record.size
        record.frames, record.size, record.lost = [], 0, True
        return
    record.frames += frames
    record.size += size
    session.replay_size += size


def forget(session: HTTPSession, record: Replay) -> None:
    """Drop ``record``, which ``session`` keeps (its response was delivered, or it gives
    way): once only, since a record is found through the session, and then no more."""
    kept = session.replay
    assert kept is not None and kept.get(record.stream) is record
    del kept[record.stream]
    session.replay_size -= record.size
    if not kept:
        session.replay = None


def _evict_finished(session: HTTPSession, keep_: Replay | None) -> bool:
    """Forget the oldest finished stream other than ``keep_``; False when there is none."""
    for record in (session.replay or {}).values():  # oldest first: streams count up
        if record.done and record is not keep_ and record.follower is None:
            forget(session, record)
            return True
    return False
