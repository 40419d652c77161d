"""The ``initialize``-era sessions of one Streamable HTTP endpoint (LEG-16), with no clock.

A :class:`SessionTable` maps each ``Mcp-Session-Id`` the server minted to its
:class:`HTTPSession`: one dual-era :class:`~mcp_proto.ServerConnection` holding the
legacy session, the exchanges serving its requests (which the client's answers and
cancels, POSTed apart, reach), its GET stream and its kept streams.  Ids come from the
injected ``token`` (the adapters pass ``secrets.token_bytes``: cryptographically random,
LEG-16) as 32 lowercase hex digits, visible ASCII.  The table is bounded: at most
``max_sessions`` open, and a session idle for ``idle_timeout`` seconds of the adapter's
clock (``advance(now)``) ends.  A session keeps at most ``replay_limit`` bytes of events
of streams closed mid-call, for their resume (:mod:`mcp_proto.http._replay`).
Not thread-safe: the blocking adapter guards it with a lock of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._connection import ServerConnection
from ._replay import DEFAULT_REPLAY_LIMIT

if TYPE_CHECKING:
    from ._replay import Replay
    from ._server import ServerExchange

__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_SESSIONS",
    "HTTPSession",
    "SessionTable",
]

#: open legacy sessions at most, per endpoint (3.6 KB each when idle: bench/memory.py)
DEFAULT_MAX_SESSIONS = 1024
#: seconds without a request after which a legacy session ends
DEFAULT_IDLE_TIMEOUT = 1800.0


class HTTPSession:
    """One legacy session: its connection, its version, and who waits for input."""

    __slots__ = (
        "conn",
        "id",
        "last_seen",
        "replay",
        "replay_size",
        "running",
        "stream",
        "streams",
        "version",
    )

    def __init__(self, id: str, conn: ServerConnection, version: str, now: float) -> None:
        self.id = id
        self.conn = conn
        #: the negotiated version: what ``MCP-Protocol-Version`` must say (LEG-17)
        self.version = version
        self.last_seen = now
        #: request id -> the exchange serving it, until it is over: the client's answers
        #: to its input requests, and its ``notifications/cancelled``, come on other
        #: POSTs and reach it there
        self.running: dict[Any, ServerExchange] = {}
        #: the open standalone ``GET`` stream (LEG-13): one at most, so that no
        #: notification is sent twice (LEG-14)
        self.stream: ServerExchange | None = None
        #: event streams opened on POSTs so far: the next one's number, in its event ids
        self.streams = 0
        #: stream number -> the events of a stream closed mid-call, kept for a resume
        #: (:mod:`mcp_proto.http._replay`); ``None`` while there is none
        self.replay: dict[int, Replay] | None = None
        self.replay_size = 0  #: bytes of the kept frames


class SessionTable:
    """The sessions of one endpoint; see the module docs."""

    def __init__(
        self,
        *,
        token: Callable[[int], bytes],
        connection: Callable[[], ServerConnection] | None = None,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        replay_limit: int = DEFAULT_REPLAY_LIMIT,
    ) -> None:
        if max_sessions < 1:
            raise ValueError(f"max_sessions must be at least 1, not {max_sessions}")
        self._token = token
        #: makes each session's (dual-era) connection; ``None``: the endpoint's own
        self.connection = connection
        self._next_scan = 0.0
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        #: bytes of events each session keeps for resumed streams (``_replay``)
        self.replay_limit = replay_limit
        #: the adapter's clock, as last told (:meth:`advance`)
        self.now = 0.0
        self._sessions: dict[str, HTTPSession] = {}

    def __len__(self) -> int:
        return len(self._sessions)

    def __contains__(self, id: object) -> bool:
        return id in self._sessions

    def advance(self, now: float) -> list[str]:
        """The adapter's clock says ``now``: end the sessions idle too long; their ids.

        Cheap to call often: the table is scanned at most every ``idle_timeout / 8``
        seconds (so a session may outlive its timeout by that much).
        """
        self.now = now
        if now < self._next_scan:
            return []
        self._next_scan = now + self.idle_timeout / 8
        limit = now - self.idle_timeout
        gone = [s.id for s in self._sessions.values() if s.last_seen <= limit]
        for id in gone:
            del self._sessions[id]
        return gone

    def open(self, conn: ServerConnection, version: str) -> HTTPSession | None:
        """A new session for ``conn`` (its ``initialize`` answered); ``None`` when full."""
        if len(self._sessions) >= self.max_sessions:
            self._next_scan = 0.0
            self.advance(self.now)
            if len(self._sessions) >= self.max_sessions:
                return None
        id = self._token(16).hex()
        if id in self._sessions or len(id) != 32:  # 128 random bits do not repeat
            raise RuntimeError("the session id source gave a repeated or short id")
        session = HTTPSession(id, conn, version, self.now)
        self._sessions[id] = session
        return session

    def get(self, id: str) -> HTTPSession | None:
        """The open session ``id`` (now seen again), or ``None`` (never issued, or ended)."""
        session = self._sessions.get(id)
        if session is not None:
            session.last_seen = self.now
        return session

    def end(self, id: str) -> bool:
        """End session ``id`` (``DELETE``); False when there was none."""
        return self._sessions.pop(id, None) is not None
