"""HTTPS and HTTP proxies on every HTTP client (issue 17), on 127.0.0.1.

Our everything server runs plain HTTP; a TLS front (``tests/_relays.py``) holds a
certificate from a test CA that ``trustme`` makes for each run, and a ``CONNECT`` proxy
relays tunnels.  Each adapter's client does a TLS round trip with the CA trusted, refuses
an untrusted or mismatched certificate, sends SNI, and goes through the proxy named by
``HTTPS_PROXY`` (or not, with ``NO_PROXY``) or by ``proxy=``, credentials included.
"""

from __future__ import annotations

import base64
import ssl
from typing import Any

import pytest

from mcp_proto_runtime import Endpoint, route_for

from ._relays import connect_proxy, tls_front
from .test_adapter_http import running
from .test_interop_legacy_client import drive

trustme = pytest.importorskip("trustme")
ADAPTERS = ["sync", "asyncio", "trio"]


@pytest.fixture(scope="module")
def backend(everything_url: str) -> int:
    """Our everything server over plain HTTP, for the module: its port."""
    return int(everything_url.rsplit(":", 1)[1].split("/", maxsplit=1)[0])


@pytest.fixture(scope="module")
def ca() -> Any:
    return trustme.CA()


def server_context(ca: Any, *names: str) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert(*names).configure_cert(context)
    return context


def trusting(ca: Any) -> ssl.SSLContext:
    context = ssl.create_default_context()
    ca.configure_trust(context)
    return context


async def listed(client: Any, call: Any) -> Any:
    outcome = await call(client.connect)
    text = (await call(client.call_tool, "test_simple_text")).content[0].text
    return client.era, type(outcome).__name__, text


@pytest.fixture(autouse=True)
def no_proxy_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's proxy settings stay out of these tests unless one sets its own."""
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_an_https_round_trip_with_sni(adapter: str, backend: int, ca: Any) -> None:
    with tls_front(server_context(ca, "localhost"), backend) as front:
        url = f"https://localhost:{front['port']}/mcp"
        era, _, text = drive(adapter, url, listed, ssl_context=trusting(ca), timeout=10)
    assert era == "modern" and text
    assert set(front["sni"]) == {"localhost"}  # the name went out in the handshake


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_an_untrusted_certificate_is_refused(adapter: str, backend: int, ca: Any) -> None:
    """The default context (the system's trust store) does not know the test CA."""
    with tls_front(server_context(ca, "localhost"), backend) as front:
        url = f"https://localhost:{front['port']}/mcp"
        with pytest.raises(ConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
            drive(adapter, url, listed, timeout=10)


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_certificate_for_another_name_is_refused(adapter: str, backend: int, ca: Any) -> None:
    with tls_front(server_context(ca, "example.org"), backend) as front:
        url = f"https://localhost:{front['port']}/mcp"
        with pytest.raises(ConnectionError, match=r"CERTIFICATE_VERIFY_FAILED|match"):
            drive(adapter, url, listed, ssl_context=trusting(ca), timeout=10)


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_https_proxy_from_the_environment(
    adapter: str, ca: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``HTTPS_PROXY`` names the proxy: the client tunnels with ``CONNECT host:port`` and
    runs TLS inside the tunnel (the certificate is still the server's)."""
    with (
        running("sync", {"allowed_hosts": None}) as (_, open_port),  # takes Host: mcp.test
        tls_front(server_context(ca, "mcp.test"), open_port) as front,
        connect_proxy() as proxy,
    ):
        monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{proxy['port']}")
        url = f"https://mcp.test:{front['port']}/mcp"  # a name only the proxy resolves
        assert drive(adapter, url, listed, ssl_context=trusting(ca), timeout=10)[2]
    heads, first = proxy["heads"], f"CONNECT mcp.test:{front['port']} HTTP/1.1\r\n"
    assert heads and all(h.startswith(first) for h in heads)
    assert all("proxy-authorization" not in h.lower() for h in heads)


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_loopback_server_is_never_proxied_from_the_environment(
    adapter: str, backend: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``HTTP_PROXY`` is set and ``NO_PROXY`` is not, but no proxy can reach this
    machine's loopback: the client connects directly (``NO_PROXY``: ``test_route_rules``)."""
    with connect_proxy() as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy['port']}")
        assert drive(adapter, f"http://127.0.0.1:{backend}/mcp", listed, timeout=10)[2]
        assert drive(adapter, f"http://localhost:{backend}/mcp", listed, timeout=10)[2]
    assert proxy["heads"] == []


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_an_explicit_proxy_with_credentials(adapter: str, backend: int) -> None:
    """``proxy=`` with ``user:password@``: ``Proxy-Authorization: Basic`` on ``CONNECT``;
    an ``http://`` endpoint is tunnelled too."""
    with connect_proxy() as proxy:
        url = f"http://127.0.0.1:{backend}/mcp"
        where = f"http://ada:s%40cret@127.0.0.1:{proxy['port']}"
        assert drive(adapter, url, listed, proxy=where, timeout=10)[2]
    basic = base64.b64encode(b"ada:s@cret").decode()
    assert proxy["heads"]
    assert all(f"proxy-authorization: Basic {basic}\r\n" in h for h in proxy["heads"])


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_proxy_that_wants_credentials(adapter: str, backend: int) -> None:
    refusal = b'HTTP/1.1 407 Proxy Authentication Required\r\nproxy-authenticate: Basic realm="x"\r\ncontent-length: 0\r\n\r\n'  # noqa: E501
    with connect_proxy(refuse=refusal) as proxy:
        where = f"http://127.0.0.1:{proxy['port']}"
        with pytest.raises(ConnectionError, match=r"407 .*user:password@"):
            drive(adapter, f"http://127.0.0.1:{backend}/mcp", listed, proxy=where, timeout=10)


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_proxy_that_is_not_http(adapter: str, backend: int) -> None:
    with connect_proxy(refuse=b"SSH-2.0-OpenSSH\r\n\r\n") as proxy:
        where = f"http://127.0.0.1:{proxy['port']}"
        with pytest.raises(ConnectionError, match=r"the proxy at 127\.0\.0\.1.*not HTTP"):
            drive(adapter, f"http://127.0.0.1:{backend}/mcp", listed, proxy=where, timeout=10)


# -- the route, without I/O ----------------------------------------------------


def test_endpoint_parse() -> None:
    https = Endpoint.parse("https://Example.com/mcp?x=1")
    assert (https.scheme, https.host, https.port, https.target) == (
        "https", "example.com", 443, "/mcp?x=1")  # fmt: skip
    assert Endpoint.parse("http://[::1]:8080/").host_port == "[::1]:8080"
    for bad, says in [("ftp://a/", "not an http"), ("https:///x", "not an http"),
                      ("http://a:99999/", "port")]:  # fmt: skip
        with pytest.raises(ValueError, match=says):
            Endpoint.parse(bad)


def test_route_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    https = Endpoint.parse("https://mcp.example.com/mcp")
    direct = route_for(https)
    assert direct.address == ("mcp.example.com", 443) and direct.tunnel is None
    assert direct.tls is not None and direct.tls.verify_mode is ssl.CERT_REQUIRED
    assert direct.tls.check_hostname
    mine = ssl.create_default_context()
    assert route_for(https, ssl_context=mine).tls is mine
    with pytest.raises(ValueError, match="ssl_context= is for an https"):
        route_for(Endpoint.parse("http://a/"), ssl_context=mine)
    via = route_for(https, proxy="proxy.local:3128")  # no scheme: http
    assert via.address == ("proxy.local", 3128) and via.tunnel == "mcp.example.com:443"
    assert via.server_hostname == "mcp.example.com" and via.proxy_headers == ()
    with pytest.raises(ValueError, match="TLS to a proxy is not supported"):
        route_for(https, proxy="https://proxy.local")
    with pytest.raises(ValueError, match="port of the proxy"):
        route_for(https, proxy="http://proxy.local:x")
    monkeypatch.setenv("HTTPS_PROXY", "http://p:1")
    assert route_for(https).tunnel == "mcp.example.com:443"
    assert route_for(https, proxy=None).tunnel is None
    monkeypatch.setenv("NO_PROXY", ".example.com")
    assert route_for(https).tunnel is None
    for loopback in ("http://localhost/", "http://127.0.0.7/", "http://[::1]:8/"):
        monkeypatch.setenv("HTTP_PROXY", "http://p:1")
        assert route_for(Endpoint.parse(loopback)).tunnel is None


def test_an_internationalized_host_goes_out_in_its_idna_form() -> None:
    at = Endpoint.parse("https://bücher.example:8443/mcp")
    assert (at.host, at.authority) == ("xn--bcher-kva.example", "xn--bcher-kva.example:8443")
    assert route_for(at, proxy="http://p:1").tunnel == "xn--bcher-kva.example:8443"
    with pytest.raises(ValueError, match="not a valid name"):
        Endpoint.parse("http://" + "ü" * 70 + ".example/")
