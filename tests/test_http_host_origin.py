"""Host, Origin and request-target checks of the server binding (HTTP-02, RFC 9112 3.2).

Every case goes through the pure binding (``HTTPServer``) and asserts the status and the
JSON-RPC error; a few go over the wire through ``HTTPServerConnection``.  The parser itself is
checked by properties: total on any text, and an accepted authority serialises to itself.
"""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.http import HTTPServer, HTTPServerConnection, ProtectedResource
from mcp_proto.http.host import (
    AllowList,
    Refusal,
    check_head,
    parse_authority,
    parse_origin,
    parse_target,
)

from ._http_helpers import body, headers, make_server, post, reply_of

OK = 0  # the request reaches the application
LISTED = t.ListToolsResult(tools=[], ttl_ms=0, cache_scope="private")


def run(
    server: HTTPServer,
    host: str | None = "localhost:8000",
    origin: str | None = None,
    target: str = "/mcp",
    extra: list[tuple[str, str]] | None = None,
) -> int:
    """Send a tools/list POST; OK if the application gets it, else the refusal's status
    (after checking that it carries a -32600 error without an id)."""
    hdrs = [(k, v) for k, v in headers("tools/list") if k != "host"]
    if host is not None:
        hdrs.append(("host", host))
    if origin is not None:
        hdrs.append(("origin", origin))
    hdrs += extra or []
    ex, event = post(server, body("tools/list"), hdrs, target=target)
    if isinstance(event, m.Request):
        return OK
    status, _, message = reply_of(ex, event)
    assert message is not None, status
    assert message["error"]["code"] == m.INVALID_REQUEST and "id" not in message
    return status


# -- Host --------------------------------------------------------------------------------------

HOSTS = [
    # the ordinary good ones
    ("localhost", OK),
    ("localhost:3000", OK),
    ("127.0.0.1:8000", OK),
    ("[::1]:8000", OK),
    ("[::1]", OK),
    ("LocalHost:8000", OK),  # names compare case-insensitively
    ("[0:0:0:0:0:0:0:1]:8000", OK),  # IPv6 literals compare by address
    ("localhost:65535", OK),
    ("localhost:08000", OK),  # port = *DIGIT: leading zeros are digits
    # well formed, not on the allow-list: 403
    ("evil.com", 403),
    ("localhost.", 403),  # a trailing dot is a name of its own
    ("localhost.evil.com", 403),
    ("127.1", 403),  # a reg-name, not 127.0.0.1
    ("127.0.0.01", 403),
    ("[::2]", 403),
    ("[::ffff:127.0.0.1]", 403),
    ("[v1.x]", 403),  # IPvFuture: valid, never on a list of names
    # outside the grammar: 400 (RFC 9112 3.2)
    ("[::1]evil.com", 400),
    ("[::1].", 400),
    ("[::1]:80@evil.com", 400),
    ("localhost:80@evil.com", 400),
    ("user@localhost", 400),
    ("localhost:", 400),  # an empty port: refused
    ("localhost:abc", 400),
    ("localhost:+80", 400),
    ("localhost:\u0663", 400),  # a non-ASCII digit
    ("localhost:123456", 400),
    ("localhost:65536", 400),
    ("localhost:80:80", 400),
    ("[::1]:80:80", 400),
    ("::1", 400),
    ("[::1", 400),
    ("[fe80::1%25eth0]", 400),
    ("[vz.x]", 400),
    ("[127.0.0.1]", 400),
    ("local host", 400),
    ("localhost :8000", 400),
    ("local%68ost", 400),  # no percent-encoding
    ("localhost%2e", 400),
    ("evil.com,localhost", 400),  # no sub-delims
    ("localhost\\evil.com", 400),
    ("localhost/", 400),
    ("", 400),
    ("a" * 300, 403),  # long values are parsed too (and not remembered)
    ("a" * 300 + ":80@evil.com", 400),
]


@pytest.mark.parametrize(("host", "expected"), HOSTS)
def test_http02_host_header(host: str, expected: int) -> None:
    assert run(make_server(), host=host) == expected


@pytest.mark.parametrize(("host", "expected"), HOSTS)
def test_invalid_host_is_400_even_without_an_allow_list(host: str, expected: int) -> None:
    """RFC 9112 3.2: an invalid Host is 400 whatever the policy; no list admits the rest."""
    open_server = make_server(allowed_hosts=None, allowed_origins=None)
    assert run(open_server, host=host) == (400 if expected == 400 else OK)


def test_refusals_quote_a_long_value_cut_short() -> None:
    hdrs = [*headers("tools/list"), ("origin", "http://" + "x" * 5000)]
    ex, event = post(make_server(), body("tools/list"), hdrs)
    status, _, message = reply_of(ex, event)
    assert status == 403 and 100 < len(message["error"]["message"]) < 200


def test_missing_host_is_403_under_an_allow_list_and_two_hosts_are_400() -> None:
    # an HTTP/1.0 request may name no host: the allow-list cannot vouch for it (HTTP-02)
    assert run(make_server(), host=None) == 403
    assert check_head("/mcp", None, None, AllowList.of(["localhost"]), None) == Refusal(
        403, "Forbidden: the request names no host (no Host header)"
    )
    assert run(make_server(allowed_hosts=None), host=None) == OK  # the check turned off
    assert run(make_server(), host=None, target="http://localhost:8000/mcp") == OK  # named
    twice = [("host", "localhost")]
    assert run(make_server(), host="localhost", extra=twice) == 400  # RFC 9112 3.2


# -- Origin ------------------------------------------------------------------------------------

ORIGINS = [
    ("http://localhost:3000", OK),
    ("https://127.0.0.1", OK),
    ("https://[::1]", OK),
    ("http://localhost", OK),
    ("HTTP://LOCALHOST:3000", OK),
    ("null", 403),  # the opaque origin: any sandboxed page can send it
    ("ws://localhost", 403),
    ("file://localhost", 403),
    ("http://localhost:abc", 403),
    ("http://localhost:", 403),
    ("http://localhost:99999", 403),
    ("http://localhost/", 403),  # no path
    ("http://localhost/mcp", 403),
    ("http://user@localhost", 403),  # no userinfo
    ("http://localhost:80@evil.com", 403),
    ("http://[::1]evil.com", 403),
    ("http://evil.com", 403),
    ("http://localhost.evil.com", 403),
    ("http://localhost.", 403),
    ("localhost", 403),  # no scheme
    ("//localhost", 403),
    ("http://localhost http://evil.com", 403),  # an origin list
    ("http://", 403),
    ("", 403),
]


@pytest.mark.parametrize(("origin", "expected"), ORIGINS)
def test_http02_origin_header(origin: str, expected: int) -> None:
    assert run(make_server(), origin=origin) == expected
    assert run(make_server(allowed_origins=None), origin=origin) == OK  # the check is off


def test_two_origins_are_refused() -> None:
    again = [("origin", "http://localhost")]
    assert run(make_server(), origin="http://localhost", extra=again) == 403


# -- the request target ------------------------------------------------------------------------

TARGETS = [
    # (target, Host or None, status)
    ("http://localhost:8000/mcp", "localhost:8000", OK),
    ("http://localhost/mcp", "localhost:80", OK),  # a default port is the default port
    ("https://localhost/mcp", "LOCALHOST:443", OK),
    ("https://localhost/mcp", None, OK),
    ("HTTP://[::1]:8000/mcp?x=1", "[::1]:8000", OK),
    # RFC 9112 3.2.2: the target's host is the one checked
    ("http://evil.com/mcp", None, 403),
    ("http://evil.com/mcp", "evil.com", 403),
    ("http://localhost.:8000/mcp", None, 403),
    # a Host that names another host or port than the target: 400
    ("http://evil.com/mcp", "localhost:8000", 400),
    ("http://localhost:8000/mcp", "evil.com", 400),
    ("http://localhost:8000/mcp", "localhost:8001", 400),
    ("https://localhost/mcp", "localhost:80", 400),
    # an absolute target outside the grammar, or another form: 400
    ("http://user@localhost/mcp", None, 400),
    ("http://localhost:80@evil.com/mcp", None, 400),
    ("http://[::1]evil.com/mcp", None, 400),
    ("http:///mcp", None, 400),
    ("http://localhost:/mcp", None, 400),
    ("http://localhost#/mcp", None, 400),
    ("ftp://localhost/mcp", None, 400),
    ("localhost:8000", "localhost:8000", 400),  # authority-form
    ("*", "localhost:8000", 400),  # asterisk-form
    ("mcp", "localhost:8000", 400),
    ("http:/mcp", "localhost:8000", 400),
    # origin-form paths are read as sent
    ("//evil.com/mcp", "localhost:8000", 404),
    ("/mcp#x", "localhost:8000", 404),
    ("http://localhost:8000", "localhost:8000", 404),  # the path is "/"
]


@pytest.mark.parametrize(("target", "host", "expected"), TARGETS)
def test_request_target_forms(target: str, host: str | None, expected: int) -> None:
    server = make_server()
    if expected == 404:
        ex, event = post(server, body("tools/list"), headers("tools/list"), target=target)
        assert reply_of(ex, event)[0] == 404
        return
    assert run(server, host=host, target=target) == expected


def test_absolute_target_with_the_allow_list_off() -> None:
    open_server = make_server(allowed_hosts=None)
    assert run(open_server, host="evil.com", target="http://evil.com/mcp") == OK
    assert run(open_server, host="localhost", target="http://evil.com/mcp") == 400


def test_query_of_an_absolute_target_is_read_for_tokens() -> None:
    """With auth on, an absolute target's query is checked for access tokens (edge 111)."""
    auth = ProtectedResource(
        resource="https://mcp.example.com/mcp",
        authorization_servers=["https://auth.example.com"],
        verify=lambda token, headers: None,
    )
    server = make_server(auth=auth)
    data, hdrs = body("tools/list"), [(k, v) for k, v in headers("tools/list") if k != "host"]
    for target, status in [
        ("http://localhost/mcp?access_token=x", 400),
        ("http://localhost/mcp?a=b", 0),
    ]:
        ex, event = post(server, data, hdrs, target=target)
        assert (isinstance(event, m.Request) and status == 0) or reply_of(ex, event)[0] == status


# -- allow-list entries ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hosts", "host", "expected"),
    [
        ({"localhost:3000"}, "localhost:3000", OK),
        ({"localhost:3000"}, "localhost:3001", 403),
        ({"localhost:3000"}, "localhost", 403),  # no port: 80 or 443
        ({"example.com:443"}, "example.com", OK),
        ({"example.com:443"}, "example.com:443", OK),
        ({"example.com:443"}, "example.com:8443", 403),
        ({"Example.COM"}, "example.com:1234", OK),  # a plain name: any port, as before
        ({"[0::1]"}, "[::1]:8000", OK),
        ({"localhost."}, "localhost.", OK),
        ({"localhost."}, "localhost", 403),
    ],
)
def test_allowed_hosts_entries(hosts: set[str], host: str, expected: int) -> None:
    assert run(make_server(allowed_hosts=hosts), host=host) == expected


@pytest.mark.parametrize(
    ("origins", "origin", "expected"),
    [
        ({"localhost"}, "https://localhost:1234", OK),
        ({"localhost:3000"}, "http://localhost:3000", OK),
        ({"localhost:3000"}, "https://localhost:3000", OK),
        ({"localhost:3000"}, "http://localhost:3001", 403),
        ({"localhost:80"}, "http://localhost", OK),
        ({"localhost:80"}, "https://localhost", 403),
        ({"https://app.example"}, "https://app.example", OK),
        ({"https://app.example"}, "https://app.example:443", OK),
        ({"https://app.example"}, "http://app.example", 403),
        ({"https://app.example"}, "https://app.example:8443", 403),
        ({"http://localhost:3000"}, "http://localhost:3000", OK),
        ({"http://localhost:3000"}, "http://localhost", 403),
    ],
)
def test_allowed_origins_entries(origins: set[str], origin: str, expected: int) -> None:
    assert run(make_server(allowed_origins=origins), origin=origin) == expected


@pytest.mark.parametrize(
    ("kwargs"),
    [
        {"allowed_hosts": ["*"]},
        {"allowed_hosts": ["localhost:99999"]},
        {"allowed_hosts": ["http://localhost"]},  # a scheme is for origins
        {"allowed_hosts": ["user@localhost"]},
        {"allowed_origins": ["null"]},
        {"allowed_origins": ["ws://localhost"]},
        {"allowed_origins": ["https://app.example/"]},
    ],
)
def test_allow_list_entries_outside_the_grammar_raise(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        HTTPServer(**kwargs)


def test_one_string_is_not_an_allow_list() -> None:
    with pytest.raises(TypeError):
        HTTPServer(allowed_hosts="localhost")


# -- over the wire -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "host", "status"),
    [
        (b"POST /mcp HTTP/1.1", b"localhost:8000", 200),
        (b"POST http://localhost:8000/mcp HTTP/1.1", b"localhost:8000", 200),
        (b"POST http://evil.com/mcp HTTP/1.1", b"localhost", 400),
        (b"POST http://evil.com/mcp HTTP/1.1", b"evil.com", 403),
        (b"POST /mcp HTTP/1.1", b"[::1]evil.com", 400),
        (b"POST /mcp HTTP/1.1", b"[::1]:80@evil.com", 400),
        (b"POST * HTTP/1.1", b"localhost", 400),
    ],
)
def test_over_the_wire(line: bytes, host: bytes, status: int) -> None:
    data = body("tools/list")
    head = [line, b"host: " + host]
    head += [f"{k}: {v}".encode() for k, v in headers("tools/list") if k != "host"]
    head.append(b"content-length: %d" % len(data))
    conn = HTTPServerConnection(make_server())
    conn.receive_data(b"\r\n".join(head) + b"\r\n\r\n" + data)
    event = conn.next_event()
    if isinstance(event, m.Request):
        out = conn.send(m.Result(id=event.id, result=LISTED))
    else:
        out = conn.send(event)
    assert out.startswith(b"HTTP/1.1 %d " % status)


# -- the parser --------------------------------------------------------------------------------

_NEAR = st.text(alphabet="[]:@.%/v0123456789abcfLOCALHOSTlocalhst-_~ ", max_size=24)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), _NEAR))
def test_parsers_are_total_and_an_accepted_authority_serialises_to_itself(text: str) -> None:
    authority = parse_authority(text)
    if authority is not None:
        assert str(authority) == text
        assert authority.port is None or 0 <= authority.port <= 65535
        assert authority.name == authority.name.lower() or authority.name.startswith("[")
    parse_origin(text)
    parse_target(text)
    hosts = AllowList.of(["localhost"])
    check_head(text, text, text, hosts, AllowList.of(["localhost"], origins=True))


_LABEL = st.from_regex(r"[A-Za-z0-9_~-][A-Za-z0-9._~-]{0,20}", fullmatch=True)
_HOST = st.one_of(
    _LABEL,
    st.ip_addresses(v=4).map(str),
    st.ip_addresses(v=6).map(lambda a: f"[{a}]"),
    st.ip_addresses(v=6).map(lambda a: f"[{a.exploded.upper()}]"),
)


@settings(max_examples=200, deadline=None)
@given(_HOST, st.one_of(st.none(), st.integers(0, 65535)))
def test_every_host_and_port_of_the_grammar_is_accepted(host: str, port: int | None) -> None:
    text = host if port is None else f"{host}:{port}"
    authority = parse_authority(text)
    assert authority is not None and str(authority) == text and authority.port == port
    if host.startswith("["):
        assert authority.name == f"[{ipaddress.IPv6Address(host[1:-1]).compressed}]"
    else:
        assert authority.name == host.lower()
    origin = parse_origin(f"https://{text}")
    assert origin is not None and origin.port == (443 if port is None else port)
