"""``mcp_proto.http.ProxyTunnel``: the ``CONNECT`` handshake through an HTTP proxy, without
I/O (issue 17).  Its answers are untrusted input: every outcome is an event or a
documented error, whatever the bytes and however they are split."""

from __future__ import annotations

import doctest
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

import mcp_proto as m
from mcp_proto.http import ProxyTunnel, TunnelOpen, TunnelRefused


def answer(data: bytes, *, size: int = 16 * 1024) -> object:
    tunnel = ProxyTunnel("mcp.example.com:443", max_head_size=size)
    tunnel.request()
    tunnel.receive_data(data)
    return tunnel.next_event()


def test_the_module_example_runs() -> None:
    assert doctest.testmod(sys.modules[ProxyTunnel.__module__]).failed == 0


def test_the_request_names_the_target_and_carries_the_headers() -> None:
    tunnel = ProxyTunnel("[::1]:8443", headers=[("proxy-authorization", "Basic eA==")])
    assert tunnel.request() == (
        b"CONNECT [::1]:8443 HTTP/1.1\r\nhost: [::1]:8443\r\n"
        b"proxy-authorization: Basic eA==\r\n\r\n"
    )
    with pytest.raises(m.LocalProtocolError, match="cannot be sent"):
        tunnel.request()  # once


@pytest.mark.parametrize("authority", ["example.com", "example.com:", ":443", "a:b", "a:4 3"])
def test_a_target_that_is_not_host_port_is_refused(authority: str) -> None:
    with pytest.raises(m.LocalProtocolError, match="host:port"):
        ProxyTunnel(authority)


def test_a_target_that_would_split_the_request_is_refused() -> None:
    with pytest.raises(m.LocalProtocolError, match="cannot be sent"):
        ProxyTunnel("a\r\nx-injected: 1\r\nb:443").request()


def test_an_open_tunnel_keeps_the_bytes_after_the_head() -> None:
    assert answer(b"HTTP/1.1 200 Connection established\r\n\r\n\x16\x03") == TunnelOpen(
        extra=b"\x16\x03"
    )
    assert answer(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 OK\r\n\r\n") == TunnelOpen(extra=b"")


def test_a_refusal_says_its_status_and_challenge() -> None:
    event = answer(
        b"HTTP/1.1 407 Proxy Authentication Required\r\n"
        b'Proxy-Authenticate: Basic realm="corp"\r\ncontent-length: 5\r\n\r\nnope!'
    )
    assert isinstance(event, TunnelRefused) and event.status == 407
    assert event.reason == "Proxy Authentication Required"
    assert ("proxy-authenticate", 'Basic realm="corp"') in event.headers


def test_the_outcome_stays_and_later_bytes_are_ignored() -> None:
    tunnel = ProxyTunnel("a:1")
    tunnel.request()
    tunnel.receive_data(b"HTTP/1.1 502 Bad Gateway\r\n\r\n")
    first = tunnel.next_event()
    tunnel.receive_data(b"anything")
    assert tunnel.next_event() == first


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"SSH-2.0-OpenSSH_9\r\n\r\n", "not HTTP"),
        (b"", "closed the connection before answering"),
        (b"HTTP/1.1 20", "closed the connection before answering"),  # then the end
        (b"HTTP/1.1 200 OK\r\nx: " + b"y" * 200, "head is over 128 bytes"),
    ],
)
def test_what_is_not_an_answer_raises_the_documented_error(data: bytes, says: str) -> None:
    tunnel = ProxyTunnel("a:1", max_head_size=128)
    tunnel.request()
    tunnel.receive_data(data)
    if data == b"HTTP/1.1 20":
        assert tunnel.next_event() is m.NEED_DATA
        tunnel.receive_data(b"")
    with pytest.raises(m.RemoteProtocolError, match=says):
        tunnel.next_event()


def _outcome(chunks: list[bytes]) -> object:
    tunnel = ProxyTunnel("a:1", max_head_size=256)
    tunnel.request()
    event: object = m.NEED_DATA
    try:
        for chunk in [*chunks, b""]:
            tunnel.receive_data(chunk)
            event = tunnel.next_event()
            if event is not m.NEED_DATA:
                break
    except m.RemoteProtocolError:
        return "error"
    return event


@given(st.binary(max_size=400), st.integers(min_value=1, max_value=50))
def test_any_answer_is_an_event_or_the_documented_error_whatever_the_split(
    data: bytes, step: int
) -> None:
    whole = _outcome([data])
    assert whole == _outcome([data[i : i + step] for i in range(0, len(data), step)])
    assert whole == "error" or isinstance(whole, TunnelOpen | TunnelRefused)
