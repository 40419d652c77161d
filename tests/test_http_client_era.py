"""The HTTP clients' era probe, its cache per origin and the re-probe (issue 16; VER-13,
HTTP-42, LEG-13, LEG-16), on each adapter, against a recording legacy peer.

The peer is a small ``initialize``-era Streamable HTTP server made of the standard
library's ``http.server``: a request without a session gets ``400`` with a plain body
(as the official SDKs answer a ``server/discover``), ``initialize`` opens a session, the
GET stream is refused (``405``), ``tools/list`` answers one tool, ``DELETE`` ends the
session.  It records each request's method, so what a client sent is the test's to read.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

import mcp_proto as m
from mcp_proto import types as t

from .test_interop_legacy_client import drive

SESSION = "s-0123456789abcdef"


#: how the official Python SDK's transport refuses a request with no session (its body)
SDK_REFUSAL = b'{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,' \
    b'"message":"Bad Request: Missing session ID"}}'  # fmt: skip
DISCOVERED = {"resultType": "complete", "supportedVersions": ["2026-07-28"],
              "capabilities": {"tools": {}}}  # fmt: skip


class LegacyPeer(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: list[str]
    #: the body of a request's refusal without a session: plain text or the SDK's error
    refusal = b"Bad Request: No valid session ID provided"
    #: a modern server instead, that answers server/discover and refuses the rest with a
    #: 400 and an error no modern one (what a proxy or a stricter server may send)
    modern = False

    def log_message(self, *args: Any) -> None:
        pass  # quiet

    def _reply(self, status: int, body: bytes = b"", *headers: tuple[str, str]) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers["content-length"])))
        method = message.get("method", "(answer)")
        self.seen.append(method)
        session = self.headers.get("mcp-session-id")
        if self.modern:
            reply = {"result": DISCOVERED} if method == "server/discover" else {
                "error": {"code": -32602, "message": "no such argument"}}  # fmt: skip
            body = json.dumps({"jsonrpc": "2.0", "id": message["id"], **reply}).encode()
            status = 200 if "result" in reply else 400
            self._reply(status, body, ("content-type", "application/json"))
        elif method == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "recording-peer", "version": "1"}}  # fmt: skip
            body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
            self._reply(200, body.encode(), ("content-type", "application/json"),
                        ("mcp-session-id", SESSION))  # fmt: skip
        elif session != SESSION:
            kind = "application/json" if self.refusal.startswith(b"{") else "text/plain"
            self._reply(400, self.refusal, ("content-type", kind))
        elif "id" not in message:
            self._reply(202)
        elif method == "tools/call":  # slow: the client gives up first
            time.sleep(1.5)
            with contextlib.suppress(OSError):
                self._reply(
                    200, b'{"jsonrpc":"2.0","id":%d,"result":{"content":[]}}' % message["id"]
                )
        else:
            tools = [{"name": "only", "inputSchema": {"type": "object"}}]
            body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": tools}})
            self._reply(200, body.encode(), ("content-type", "application/json"))

    def do_GET(self) -> None:
        self.seen.append("GET")
        self._reply(405)

    def do_DELETE(self) -> None:
        self.seen.append("DELETE")
        self._reply(200)


@pytest.fixture
def peer(request: pytest.FixtureRequest) -> Iterator[tuple[str, list[str]]]:
    """The peer's URL and its record; ``indirect`` parametrization sets its class
    attributes (``refusal``, ``modern``)."""
    seen: list[str] = []
    handler = type("Recording", (LegacyPeer,), {"seen": seen, **getattr(request, "param", {})})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


async def listed(client: Any, call: Any) -> Any:
    tools = await call(client.list_tools)
    return [tool.name for tool in tools], client.era, client.protocol_version


SESSION_OPENING = ["initialize", "notifications/initialized"]


def sent(seen: list[str]) -> list[str]:
    """The POSTs and the DELETE in order; the one GET (the session's stream, on a
    connection of its own, so its place among later requests is the scheduler's) after
    ``notifications/initialized``."""
    assert seen.count("GET") == 1 and seen.index("GET") > seen.index("notifications/initialized")
    return [method for method in seen if method != "GET"]


@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
def test_ver13_http42_the_probe_runs_once_per_origin(
    adapter: str, peer: tuple[str, list[str]]
) -> None:
    """The first client probes (``server/discover``, refused as a legacy server refuses)
    and opens a session; a second client of the origin, sharing the cache, opens its
    session at once.  Each asks for the GET stream (refused: 405) and DELETEs at close."""
    url, seen = peer
    cache = m.EraCache()
    assert drive(adapter, url, listed, era_cache=cache, timeout=10) == (
        ["only"], "legacy", "2025-11-25")  # fmt: skip
    assert sent(seen) == ["server/discover", *SESSION_OPENING, "tools/list", "DELETE"]
    assert isinstance(cache.get(url.rsplit("/", 1)[0]), m.Legacy)
    seen.clear()
    assert drive(adapter, url, listed, era_cache=cache, timeout=10)[1] == "legacy"
    assert sent(seen) == [*SESSION_OPENING, "tools/list", "DELETE"]  # no probe this time


@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
@pytest.mark.parametrize(
    "peer", [{}, {"refusal": SDK_REFUSAL}], indirect=True, ids=["plain", "sdk-json"]
)
def test_ver13_a_cached_modern_era_that_fails_is_probed_again(
    adapter: str, peer: tuple[str, list[str]]
) -> None:
    """The cache says modern (the server was, once): the call goes out modern, comes back
    as a legacy server's 400 (a plain body, or the SDK's JSON-RPC ``-32600``: no modern
    error either way, HTTP-42), and the client drops the entry, probes, opens a session
    and sends the call again, within the call."""
    url, seen = peer
    cache = m.EraCache()
    origin = url.rsplit("/", 1)[0]
    cache.put(origin, m.Modern(version="2026-07-28"))
    assert drive(adapter, url, listed, era_cache=cache, timeout=10)[:2] == (["only"], "legacy")
    assert sent(seen) == ["tools/list", "server/discover", *SESSION_OPENING, "tools/list",
                          "DELETE"]  # fmt: skip
    assert isinstance(cache.get(origin), m.Legacy)


@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
def test_era_modern_never_falls_back(adapter: str, peer: tuple[str, list[str]]) -> None:
    """``era="modern"`` (a modern-only client) against a legacy server: the 400 is an
    error naming the era, and no ``initialize`` is sent (the matrix's Modern/Legacy row)."""
    url, seen = peer
    with pytest.raises(m.RemoteProtocolError, match=r"HTTP 400.*era='auto' or 'legacy'"):
        drive(adapter, url, listed, era="modern", era_cache=m.EraCache(), timeout=10)
    assert seen == ["tools/list"]


@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
@pytest.mark.parametrize("peer", [{"refusal": SDK_REFUSAL}], indirect=True)
def test_era_modern_keeps_the_code_of_a_json_rpc_refusal(
    adapter: str, peer: tuple[str, list[str]]
) -> None:
    """A legacy server's 400 with a JSON-RPC error body, to ``era="modern"``: the error
    keeps its code, and its message says the status and what to do."""
    url, seen = peer
    with pytest.raises(m.McpError, match=r"Missing session ID \(HTTP 400\)$") as caught:
        drive(adapter, url, listed, era="modern", era_cache=m.EraCache(), timeout=10)
    assert caught.value.code == -32600 and seen == ["tools/list"]


@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
@pytest.mark.parametrize("peer", [{"modern": True}], indirect=True)
@pytest.mark.parametrize("cached", [False, True], ids=["probed", "cached"])
def test_ver15_an_era_the_client_found_is_trusted(
    adapter: str, peer: tuple[str, list[str]], cached: bool
) -> None:
    """A modern server refuses a call with a 400 and an error no modern one.  When this
    client's own probe found the server modern, that is the call's error (no re-probe);
    when the era came from the cache, the client checks it once (a probe, the call again)
    and then reports the error: never a loop, never a fall-back to ``initialize``."""
    url, seen = peer
    cache = m.EraCache()
    if cached:
        cache.put(url.rsplit("/", 1)[0], m.Modern(version="2026-07-28"))
    with pytest.raises(m.McpError, match="no such argument") as caught:
        drive(adapter, url, listed, era_cache=cache, timeout=10)
    assert caught.value.code == -32602
    again = ["tools/list", "server/discover"] if cached else ["server/discover"]
    assert seen == [*again, "tools/list"]
    assert isinstance(cache.get(url.rsplit("/", 1)[0]), m.Modern)


@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
def test_leg09_a_call_given_up_in_a_session_is_cancelled_by_a_post(
    adapter: str, peer: tuple[str, list[str]]
) -> None:
    """In 2025-11-25 a closed stream is no cancellation: a call that times out is followed
    by a ``notifications/cancelled`` POST (on the async adapters in the background)."""
    url, seen = peer

    async def slow(client: Any, call: Any) -> Any:
        with pytest.raises(TimeoutError):
            await call(client.call_tool, "slow", timeout=0.3)
        await call(client.list_tools)  # the session goes on
        return None

    drive(adapter, url, slow, era="legacy", era_cache=m.EraCache(), timeout=10)
    assert "notifications/cancelled" in seen
    assert seen.index("notifications/cancelled") > seen.index("tools/call")


async def listen_first(client: Any, call: Any) -> Any:
    sub = await call(client.listen, t.SubscriptionFilter(tools_list_changed=True))
    tools = await call(client.list_tools)
    return client.era, sub.honoured, [tool.name for tool in tools]


@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
@pytest.mark.parametrize("peer", [{"refusal": SDK_REFUSAL}], indirect=True)
def test_ver15_a_cached_modern_era_that_a_listen_contradicts_is_found_again(
    adapter: str, peer: tuple[str, list[str]]
) -> None:
    """The first operation is a listen, on a cached modern era the server (legacy now)
    contradicts: the era is found again and the listen made in the legacy session (where
    this server offers nothing to listen to), and the client works on."""
    url, seen = peer
    cache = m.EraCache()
    cache.put(url.rsplit("/", 1)[0], m.Modern(version="2026-07-28"))
    era, honoured, tools = drive(adapter, url, listen_first, era_cache=cache, timeout=10)
    assert (era, tools) == ("legacy", ["only"])
    assert honoured == t.SubscriptionFilter()
    assert sent(seen)[:4] == ["subscriptions/listen", "server/discover", *SESSION_OPENING]


async def discovered_then_listed(client: Any, call: Any) -> Any:
    await call(client.discover)  # a modern answer: the cached era is borne out
    return await call(client.list_tools)


@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
@pytest.mark.parametrize("peer", [{"modern": True}], indirect=True)
def test_ver15_a_cached_era_borne_out_is_not_probed_again(
    adapter: str, peer: tuple[str, list[str]]
) -> None:
    """Once a modern answer bore the cached era out, a later 4xx error that is no modern
    one is that call's error: no probe, no second send."""
    url, seen = peer
    cache = m.EraCache()
    cache.put(url.rsplit("/", 1)[0], m.Modern(version="2026-07-28"))
    with pytest.raises(m.McpError, match="no such argument"):
        drive(adapter, url, discovered_then_listed, era_cache=cache, timeout=10)
    assert seen == ["server/discover", "tools/list"]
