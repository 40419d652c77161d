"""The blocking HTTP client's sockets: TCP, a proxy's ``CONNECT`` tunnel, TLS.

:func:`connect` follows a :class:`mcp_proto_runtime.Route`; :func:`readable` is
``select`` that also counts what TLS has already decrypted and buffered (bytes
``select`` cannot see).
"""

from __future__ import annotations

import select
import socket
import ssl

from mcp_proto_runtime import Route, tunnel_open

__all__ = ["connect", "readable"]

_CHUNK = 65536


def connect(route: Route, timeout: float | None) -> socket.socket:
    """A socket to the route's server: through the proxy's tunnel if there is one, in TLS
    for ``https://``.  Raises ``OSError``: ``ConnectionError`` for a proxy's refusal or a
    failed TLS handshake (a certificate refused: the ``ssl.SSLError`` is its cause)."""
    sock = socket.create_connection(route.address, timeout=timeout)
    try:
        if route.tunnel is not None:
            tunnel = route.handshake()
            sock.sendall(tunnel.request())
            while not tunnel_open(route, tunnel):
                tunnel.receive_data(sock.recv(_CHUNK))
        if route.tls is not None:
            return route.tls.wrap_socket(sock, server_hostname=route.server_hostname)
    except ssl.SSLError as e:  # a failed handshake, a certificate refused
        sock.close()
        raise ConnectionError(f"TLS with {route.server_hostname}: {e}") from e
    except BaseException:
        sock.close()
        raise
    return sock


def readable(socks: list[socket.socket], timeout: float | None) -> list[socket.socket]:
    """Those of ``socks`` with something to read within ``timeout`` s (at once for a TLS
    socket holding decrypted bytes)."""
    pending: list[socket.socket] = [
        s for s in socks if isinstance(s, ssl.SSLSocket) and s.pending()
    ]
    if pending:
        return pending
    return select.select(socks, [], [], timeout)[0]
