"""How an HTTP client reaches its endpoint: TLS for ``https://``, and an HTTP proxy.

:class:`Endpoint` is what the URL says; :func:`route_for` adds how to get there: the TCP
address to connect to (the server's, or the proxy's), the ``CONNECT`` target through a
proxy (:class:`mcp_proto.http.ProxyTunnel` is the handshake), and the
:class:`ssl.SSLContext` that TLS runs with, inside the tunnel if there is one.

What was decided (issue 17):

* ``https://`` uses ``ssl.create_default_context()`` unless the caller hands in an
  ``ssl_context``: the system's trust store, hostname checks and SNI, ALPN
  ``http/1.1``.  TLS is the standard library's; nothing of it is written here.
* ``proxy="auto"`` (the default) takes the proxy the environment names for the URL's
  scheme (``HTTPS_PROXY`` for ``https://``, ``HTTP_PROXY`` for ``http://``; either
  case) unless ``NO_PROXY`` lists the host, as ``urllib`` reads them, and never for a
  loopback host (a local server is no proxy's to reach).  ``proxy=None``
  connects directly; ``proxy="http://[user:password@]host:port"`` names one.
  Credentials go in ``Proxy-Authorization: Basic``.
* A proxy is always a ``CONNECT`` tunnel, for ``http://`` endpoints too (the requests
  stay origin-form, as on a direct connection).  Only ``http://`` proxies: TLS to the
  proxy itself is not supported.
"""

from __future__ import annotations

import base64
import ipaddress
import ssl
import urllib.request
from collections.abc import Awaitable, Callable
from typing import Literal
from urllib.parse import unquote, urlsplit

from attrs import frozen

from mcp_proto import RemoteProtocolError
from mcp_proto.http import ProxyTunnel, TunnelOpen, TunnelRefused

__all__ = ["Endpoint", "Route", "default_tls", "dig", "route_for", "tunnel_open"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


@frozen
class Endpoint:
    """Where a Streamable HTTP client connects: from ``http(s)://host[:port]/path[?query]``."""

    host: str
    port: int
    target: str  #: the path and query, for the request line
    authority: str  #: the ``Host`` header
    scheme: str = "http"  #: ``"http"`` or ``"https"``

    @classmethod
    def parse(cls, url: str) -> Endpoint:
        """Raises ``ValueError`` for anything but an ``http://`` or ``https://`` URL with
        a host (and a port, if any, in range)."""
        parts = urlsplit(url)
        if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
            raise ValueError(f"not an http:// or https:// URL: {url!r}")
        try:
            port = parts.port or _DEFAULT_PORTS[parts.scheme]
        except ValueError:
            raise ValueError(f"the port of {url!r} is not a number from 0 to 65535") from None
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        authority = parts.netloc.rpartition("@")[2]
        host = parts.hostname
        if not host.isascii():  # an internationalized name: its IDNA form on the wire
            try:
                host = host.encode("idna").decode("ascii")
            except UnicodeError:
                raise ValueError(f"the host of {url!r} is not a valid name") from None
            authority = host + (f":{parts.port}" if parts.port is not None else "")
        return cls(
            host=host, port=port, target=target, authority=authority, scheme=parts.scheme,
        )  # fmt: skip

    @property
    def host_port(self) -> str:
        """``host:port`` (an IPv6 host in brackets), as ``CONNECT`` names it."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


@frozen
class Route:
    """How to reach an :class:`Endpoint`: connect to :attr:`address`; through a proxy,
    ``CONNECT`` :attr:`tunnel` with :attr:`proxy_headers` first; then, for
    ``https://``, TLS with :attr:`tls`, checking :attr:`server_hostname`."""

    address: tuple[str, int]
    server_hostname: str
    tls: ssl.SSLContext | None = None
    tunnel: str | None = None
    proxy_headers: tuple[tuple[str, str], ...] = ()

    def handshake(self) -> ProxyTunnel:
        """The ``CONNECT`` handshake of this route's proxy (a route with a tunnel)."""
        assert self.tunnel is not None
        return ProxyTunnel(self.tunnel, headers=self.proxy_headers)


def default_tls() -> ssl.SSLContext:
    """The context of an ``https://`` endpoint when the caller gives none."""
    context = ssl.create_default_context()
    context.set_alpn_protocols(["http/1.1"])
    return context


def route_for(
    endpoint: Endpoint,
    *,
    ssl_context: ssl.SSLContext | None = None,
    proxy: str | Literal["auto"] | None = "auto",
) -> Route:
    """The :class:`Route` to ``endpoint`` (see the module's docstring for the rules).

    Raises ``ValueError`` for an ``ssl_context`` with an ``http://`` endpoint, or a
    proxy URL that is not ``http://host[:port]``.
    """
    tls: ssl.SSLContext | None = None
    if endpoint.scheme == "https":
        tls = ssl_context if ssl_context is not None else default_tls()
    elif ssl_context is not None:
        raise ValueError("ssl_context= is for an https:// URL; this one is http://")
    if proxy == "auto":
        proxy = _from_environment(endpoint)
    direct = Route(address=(endpoint.host, endpoint.port), server_hostname=endpoint.host,
                   tls=tls)  # fmt: skip
    if not proxy:
        return direct
    parts = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(f"not an http:// proxy URL: {proxy!r} (TLS to a proxy is not supported)")
    try:
        address = (parts.hostname, parts.port or 80)
    except ValueError:
        raise ValueError(f"the port of the proxy {proxy!r} is not a number") from None
    headers: tuple[tuple[str, str], ...] = ()
    if parts.username is not None:
        secret = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        basic = base64.b64encode(secret.encode()).decode("ascii")
        headers = (("proxy-authorization", f"Basic {basic}"),)
    return Route(
        address=address, server_hostname=endpoint.host, tls=tls, tunnel=endpoint.host_port,
        proxy_headers=headers,
    )  # fmt: skip


def _from_environment(endpoint: Endpoint) -> str | None:
    """The proxy the environment names for ``endpoint``, or ``None``: never for a
    loopback host (``localhost``, ``127.0.0.0/8``, ``::1``), which no proxy can reach."""
    if _loopback(endpoint.host):
        return None
    proxies = urllib.request.getproxies_environment()
    found = proxies.get(endpoint.scheme)
    if not found or urllib.request.proxy_bypass(endpoint.host):  # NO_PROXY
        return None
    return found


def tunnel_open(route: Route, tunnel: ProxyTunnel) -> bool:
    """Whether ``tunnel`` (the handshake of ``route``'s proxy) is open: ``False`` while the
    answer is still to come (read more into it); a refusal, an answer that is not HTTP, or
    bytes of the proxy's own after it raise ``ConnectionError`` naming the proxy."""
    where = f"the proxy at {route.address[0]}:{route.address[1]}"
    try:
        event = tunnel.next_event()
    except RemoteProtocolError as e:
        raise ConnectionError(f"{where}: {e}") from None
    if isinstance(event, TunnelOpen):
        if event.extra:
            raise ConnectionError(f"{where} sent bytes of its own after opening the tunnel")
        return True
    if not isinstance(event, TunnelRefused):
        return False
    hint = ""
    if event.status == 407:
        hint = " (it wants credentials: proxy='http://user:password@host:port')"
    raise ConnectionError(
        f"{where} refused CONNECT {route.tunnel}: {event.status} {event.reason[:100]!r}{hint}"
    )


async def dig(
    route: Route, write: Callable[[bytes], Awaitable[None]], read: Callable[[], Awaitable[bytes]]
) -> None:
    """The ``CONNECT`` handshake of ``route`` over an async connection to its proxy:
    ``write`` sends bytes, ``read`` returns the next ones (``b""`` at the end).  Returns
    once the tunnel is open; raises as :func:`tunnel_open` does."""
    tunnel = route.handshake()
    await write(tunnel.request())
    while not tunnel_open(route, tunnel):
        tunnel.receive_data(bytes(await read()))


def _loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
