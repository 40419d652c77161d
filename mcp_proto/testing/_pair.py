"""A client and a server connection wired back to back in memory, over bytes."""

from __future__ import annotations

from typing import Any, cast

from .._connection import (
    NEED_DATA,
    PAUSED,
    ClientConnection,
    ConnectionClosed,
    Event,
    Request,
    ServerConnection,
    StreamConnection,
)
from ._trace import Sender, Trace, other_side

__all__ = ["ConnectionPair", "drain"]


def drain(conn: StreamConnection[Any]) -> list[Event]:
    """Every event ``conn`` has ready, up to :data:`NEED_DATA`, :data:`PAUSED` or
    ``ConnectionClosed``.

    ``ConnectionClosed`` is included once, as the last event; ``PAUSED`` is not
    included (drain again once a request has ended).  A ``RemoteProtocolError``
    (lost framing) propagates.
    """
    out: list[Event] = []
    while (event := conn.next_event()) is not NEED_DATA and event is not PAUSED:
        out.append(cast(Event, event))
        if isinstance(event, ConnectionClosed):
            break
    return out


class ConnectionPair:
    """A :class:`ClientConnection` and a :class:`ServerConnection`, each writing to the other.

    Everything goes through bytes, so the framing is exercised: ``to_server``
    sends events from the client and returns the events the server then has;
    ``to_client`` is the reverse.  ``chunk_size`` delivers the bytes in pieces
    of that size (1: byte by byte).  ``trace`` records every message that
    crossed.  The connections are plain attributes: use them directly too.
    """

    def __init__(
        self,
        *,
        client: ClientConnection | None = None,
        server: ServerConnection | None = None,
        chunk_size: int | None = None,
    ) -> None:
        if chunk_size is not None and chunk_size < 1:
            raise ValueError("chunk_size must be at least 1")
        self.client = client if client is not None else ClientConnection()
        self.server = server if server is not None else ServerConnection()
        self.chunk_size = chunk_size
        self.trace = Trace()

    def _conn(self, side: Sender) -> StreamConnection[Any]:
        return self.client if side == "client" else self.server

    def request(self, method: str, params: Any) -> Request:
        """A :class:`Request` with a fresh id from the client (not sent yet)."""
        return Request(id=self.client.next_id(), method=method, params=params)

    def to_server(self, *events: Any) -> list[Event]:
        """Send ``events`` from the client; the events the server has afterwards."""
        return self.deliver("client", b"".join([self.client.send(e) for e in events]))

    def to_client(self, *events: Any) -> list[Event]:
        """Send ``events`` from the server; the events the client has afterwards."""
        return self.deliver("server", b"".join([self.server.send(e) for e in events]))

    def deliver(self, sender: Sender, data: bytes) -> list[Event]:
        """Hand bytes written by ``sender`` (any bytes, even broken ones) to the other side."""
        receiver = self._conn(other_side(sender))
        self.trace.record(sender, data)
        step = self.chunk_size or len(data) or 1
        for start in range(0, len(data), step):
            receiver.receive_data(data[start : start + step])
        return drain(receiver)

    def close(self, sender: Sender) -> list[Event]:
        """``sender`` closes its side: the other side's last events, then ``ConnectionClosed``."""
        receiver = self._conn(other_side(sender))
        receiver.receive_data(b"")
        return drain(receiver)
