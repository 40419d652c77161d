"""The ``CONNECT`` handshake that opens a tunnel through an HTTP proxy (RFC 9110 9.3.6).

A client behind a proxy connects to the proxy, not to the server, and asks it with
``CONNECT host:port`` to relay bytes.  Once the proxy answers ``2xx`` the connection is a
tunnel to the server: TLS starts inside it for an ``https://`` endpoint, and the MCP
requests follow as on a direct connection.  :class:`ProxyTunnel` is the handshake only,
without I/O: the bytes to write, then what the proxy's answer means.

>>> tunnel = ProxyTunnel("example.com:443")
>>> tunnel.request()
b'CONNECT example.com:443 HTTP/1.1\\r\\nhost: example.com:443\\r\\n\\r\\n'
>>> tunnel.receive_data(b"HTTP/1.1 200 Connection established\\r\\n\\r\\n")
>>> tunnel.next_event()
TunnelOpen(extra=b'')
"""

from __future__ import annotations

from collections.abc import Iterable

import h11
from attrs import frozen

from .._connection import NEED_DATA
from .._errors import LocalProtocolError, RemoteProtocolError

__all__ = ["ProxyTunnel", "TunnelOpen", "TunnelRefused"]

#: the most of the proxy's answer head kept before it is refused as too large
MAX_HEAD_SIZE = 16 * 1024


@frozen(kw_only=True)
class TunnelOpen:
    """The proxy answered ``2xx``: the connection now reaches the server.  ``extra`` is
    what came after the answer's head (the server's first bytes; normally none)."""

    extra: bytes


@frozen(kw_only=True)
class TunnelRefused:
    """The proxy answered another status: ``407`` asks for ``Proxy-Authorization`` (its
    ``Proxy-Authenticate`` challenge is in ``headers``), ``403`` or ``502`` refuse the
    target.  Close the connection: nothing more of it is read."""

    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]


class ProxyTunnel:
    """One ``CONNECT`` to ``authority`` (``host:port``, an IPv6 host in brackets).

    ``headers`` go on the request (``Proxy-Authorization``...).  :meth:`request` gives
    its bytes; :meth:`receive_data` takes the proxy's bytes (``b""`` at their end) and
    :meth:`next_event` says :class:`TunnelOpen`, :class:`TunnelRefused` or
    :data:`~mcp_proto.NEED_DATA`.  An answer that is not HTTP, a head over
    ``max_head_size`` or an end before the head raise :class:`RemoteProtocolError`.
    """

    def __init__(
        self,
        authority: str,
        *,
        headers: Iterable[tuple[str, str]] = (),
        max_head_size: int = MAX_HEAD_SIZE,
    ) -> None:
        host, sep, port = authority.rpartition(":")
        if not (sep and host and port.isascii() and port.isdigit()):
            raise LocalProtocolError(f"a CONNECT target is host:port, not {authority!r}")
        self.authority = authority
        self._headers = [("host", authority), *headers]
        self._h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=max_head_size)
        self._done: TunnelOpen | TunnelRefused | None = None
        self._limit = max_head_size
        self._eof = False

    def request(self) -> bytes:
        """The ``CONNECT`` request's bytes, to write once."""
        try:
            head = self._h11.send(
                h11.Request(method="CONNECT", target=self.authority, headers=self._headers)
            )
            end = self._h11.send(h11.EndOfMessage())
        except h11.LocalProtocolError as e:
            raise LocalProtocolError(f"the CONNECT request cannot be sent: {e}") from None
        return (head or b"") + (end or b"")

    def receive_data(self, data: bytes) -> None:
        """The proxy's bytes; ``b""`` when it closed the connection."""
        if self._done is None:
            self._eof = self._eof or not data
            self._h11.receive_data(data)

    def next_event(self) -> TunnelOpen | TunnelRefused | type[NEED_DATA]:
        """What the answer says, once its head is in (the same event after that)."""
        while self._done is None:
            try:
                event = self._h11.next_event()
            except h11.RemoteProtocolError as e:
                what = (
                    " closed the connection before answering"
                    if self._eof
                    else f"'s answer is not HTTP, or its head is over {self._limit} bytes"
                )
                raise RemoteProtocolError(f"the proxy{what}: {str(e)[:200]}") from None
            if event is h11.NEED_DATA:
                return NEED_DATA
            if isinstance(event, h11.Response) and not 200 <= event.status_code < 300:
                headers = tuple((k.decode(), v.decode("latin-1")) for k, v in event.headers)
                reason = event.reason.decode("latin-1")
                self._done = TunnelRefused(status=event.status_code, reason=reason,
                                           headers=headers)  # fmt: skip
            elif event is h11.PAUSED:  # a 2xx to CONNECT: h11 switched protocols
                extra, _ = self._h11.trailing_data
                self._done = TunnelOpen(extra=bytes(extra))
            # (a 2xx head comes before the pause; an informational 1xx answer is skipped)
        return self._done
