"""A legacy call that closes its stream mid-call, resumed with ``Last-Event-ID``, on each
adapter over real sockets on 127.0.0.1 (LEG-12, LEG-15; the ``server-sse-polling``
scenario's steps, plus the cases it does not reach); and a legacy call cancelled by a
``notifications/cancelled`` POSTed on another connection (LEG-09).

The handler closes its stream, waits, sends progress, and answers: the client's ``GET``
on another connection follows the request while it still runs; the same ``GET``
pipelined on the call's own connection is served once the call is over.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
import time
from typing import Any

import pytest
import trio

from .test_adapter_http import CANCELLED, running
from .test_legacy_http import INIT

LATER = 1.0  # seconds the handler runs on after closing its stream
HEAD = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "late", "arguments": {}, "_meta": {"progressToken": "t"}},
}
ANSWER = {"content": [{"type": "text", "text": "late"}]}


def sync_call(ctx: Any, params: Any) -> Any:
    ctx.close_stream()
    time.sleep(LATER)
    ctx.progress(1)
    return ANSWER


def async_call(adapter: str) -> Any:
    async def call(ctx: Any, params: Any) -> Any:
        await ctx.close_stream()
        await (trio.sleep(LATER) if adapter == "trio" else asyncio.sleep(LATER))
        await ctx.progress(1)
        return ANSWER

    return call


def handlers(adapter: str) -> dict[str, Any]:
    return {"tools/call": sync_call if adapter == "sync" else async_call(adapter)}


def session(conn: http.client.HTTPConnection) -> dict[str, str]:
    """A legacy session on ``conn``: the headers of its later requests."""
    conn.request("POST", "/mcp", json.dumps(INIT), HEAD)
    reply = conn.getresponse()
    reply.read()
    headers = {**HEAD, "mcp-session-id": reply.headers["mcp-session-id"]}
    headers["mcp-protocol-version"] = "2025-11-25"
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    conn.request("POST", "/mcp", json.dumps(note), headers)
    ack = conn.getresponse()
    ack.read()
    assert ack.status == 202
    return headers


def events(raw: bytes) -> list[tuple[str, Any]]:
    """``(id, message)`` of each data-bearing event."""
    out = []
    for frame in raw.split(b"\n\n"):
        fields = dict(line.split(b": ", 1) for line in frame.split(b"\n") if b": " in line)
        if fields.get(b"data", b"").strip():
            out.append((fields.get(b"id", b"").decode(), json.loads(fields[b"data"])))
    return out


@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
def test_leg15_a_get_on_another_connection_follows_the_running_call(adapter: str) -> None:
    with running(adapter, handlers=handlers(adapter)) as at:
        caller = http.client.HTTPConnection(*at, timeout=10)
        headers = session(caller)
        caller.request("POST", "/mcp", json.dumps(CALL), headers)
        closed = caller.getresponse()
        assert closed.headers["content-type"] == "text/event-stream"
        started = time.monotonic()
        raw = closed.read()  # the stream ends with no answer (LEG-12): id, retry, close
        assert raw.startswith(b"id: 0.0\nretry: 1000\ndata: \n\n") and events(raw) == []
        assert raw.endswith(b"retry: 1000\n\n")
        resumer = http.client.HTTPConnection(*at, timeout=10)
        get = {"accept": "text/event-stream", "last-event-id": "0.0"}
        get["mcp-session-id"] = headers["mcp-session-id"]
        resumer.request("GET", "/mcp", headers=get)
        resumed = resumer.getresponse()
        assert resumed.status == 200 and time.monotonic() - started < LATER  # still running
        (pid, progress), (aid, answer) = events(resumed.read())
        assert progress["method"] == "notifications/progress" and pid == "0.1"
        assert (aid, answer) == ("0.2", {"jsonrpc": "2.0", "id": 1, "result": ANSWER})
        caller.request("POST", "/mcp", json.dumps({**CALL, "id": 2}), headers)
        assert caller.getresponse().status == 200  # the caller's connection serves on


@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
def test_leg15_a_get_pipelined_on_the_calls_connection_gets_it_all_once_over(
    adapter: str,
) -> None:
    with running(adapter, handlers=handlers(adapter)) as at:
        setup = http.client.HTTPConnection(*at, timeout=10)
        headers = session(setup)
        body = json.dumps(CALL).encode()
        post_head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        post = (
            f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: {len(body)}\r\n"
            f"{post_head}\r\n"
        ).encode() + body
        get = (
            "GET /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\n"
            f"mcp-session-id: {headers['mcp-session-id']}\r\nlast-event-id: 0.0\r\n\r\n"
        ).encode()
        with socket.create_connection(at, timeout=10) as sock:
            sock.sendall(post + get)
            raw = b""
            while raw.count(b"0\r\n\r\n") < 2:  # both chunked responses, in order
                data = sock.recv(65536)
                assert data, raw
                raw += data
        first, second = raw.split(b"HTTP/1.1 ", 2)[1:]
        assert b'"result"' not in first and b"retry: 1000" in first
        assert second.startswith(b"200 ") and b'"id":1,"result"' in second


@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
def test_leg09_a_cancel_on_another_connection_stops_the_call_and_ends_its_stream(
    adapter: str,
) -> None:
    CANCELLED.clear()
    with running(adapter) as at:  # its prompts/get waits until it is cancelled
        caller = http.client.HTTPConnection(*at, timeout=10)
        headers = session(caller)
        slow = {"jsonrpc": "2.0", "id": 5, "method": "prompts/get", "params": {"name": "x"}}
        caller.request("POST", "/mcp", json.dumps(slow), headers)
        other = http.client.HTTPConnection(*at, timeout=10)
        time.sleep(0.2)  # the handler is running
        note = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 5, "reason": "changed my mind"}}  # fmt: skip
        other.request("POST", "/mcp", json.dumps(note), headers)
        assert other.getresponse().status == 202
        started = time.monotonic()
        ended = caller.getresponse()
        assert ended.status == 200 and events(ended.read()) == []  # no answer (LEG-09)
        assert time.monotonic() - started < 2 and CANCELLED.wait(5)  # the handler stopped
        caller.request("POST", "/mcp", json.dumps({**slow, "id": 6, "method": "ping"}), headers)
        pong = caller.getresponse()
        assert pong.status == 200 and json.loads(pong.read())["id"] == 6  # serves on
