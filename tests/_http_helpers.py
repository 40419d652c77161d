"""Shared helpers of the HTTP binding tests (not collected: no ``test_`` prefix)."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from typing import Any

import orjson

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.http import (
    HTTPServer,
    Reply,
    ResponseData,
    ResponseEnd,
    ResponsePart,
    ResponseStart,
    ServerExchange,
)

VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}
SQL_TOOL = t.Tool(
    name="execute_sql",
    input_schema={
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "limit": {"type": "integer", "x-mcp-header": "Limit"},
            "dry": {"type": "boolean", "x-mcp-header": "Dry"},
            "query": {"type": "string"},
        },
    },
)
CAPS = t.ServerCapabilities(
    tools=t.ServerCapabilitiesTools(list_changed=True),
    prompts=t.ServerCapabilitiesPrompts(),
    resources=t.ServerCapabilitiesResources(),
)


def make_server(**kwargs: Any) -> HTTPServer:
    kwargs.setdefault("connection", lambda: m.ServerConnection(capabilities=CAPS))
    kwargs.setdefault("tools", {"execute_sql": SQL_TOOL})
    return HTTPServer(**kwargs)


def body(method: str, params: dict[str, Any] | None = None, id: Any = 1, **meta: Any) -> bytes:
    p = dict(params or {})
    p["_meta"] = {**META, **meta}
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": p}
    if id is not None:
        message = {"jsonrpc": "2.0", "id": id, "method": method, "params": p}
    return orjson.dumps(message)


def headers(method: str, name: str | None = None, **extra: str) -> list[tuple[str, str]]:
    out = [
        ("host", "localhost:8000"),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", VERSION),
        ("mcp-method", method),
    ]
    if name is not None:
        out.append(("mcp-name", name))
    out += [(k.replace("_", "-"), v) for k, v in extra.items()]
    return out


def post(
    server: HTTPServer,
    data: bytes,
    hdrs: list[tuple[str, str]],
    *,
    method: str = "POST",
    target: str = "/mcp",
) -> tuple[ServerExchange, Any]:
    ex = server.handle(method, target, hdrs, data)
    return ex, ex.next_event()


def parts_of(ex: ServerExchange, event: Any) -> tuple[int, dict[str, str], bytes, bool]:
    """Send ``event``; return status, headers, body and whether the response ended."""
    return flatten(ex.send(event))


def flatten(parts: list[ResponsePart]) -> tuple[int, dict[str, str], bytes, bool]:
    status, hdrs, data, ended = 0, {}, b"", False
    for part in parts:
        if isinstance(part, ResponseStart):
            status, hdrs = part.status, dict(part.headers)
        elif isinstance(part, ResponseData):
            data += part.data
        elif isinstance(part, ResponseEnd):
            ended = True
    return status, hdrs, data, ended


def reply_of(ex: ServerExchange, event: Any) -> tuple[int, dict[str, str], Any]:
    """The status, headers and JSON body (or None) of a :class:`Reply`."""
    assert isinstance(event, Reply), event
    status, hdrs, data, ended = flatten(ex.send(event))
    assert ended
    return status, hdrs, orjson.loads(data) if data else None


def wait_for_port(port: int, alive: Callable[[], bool] = lambda: True, within: float = 20) -> None:
    """Until 127.0.0.1:``port`` accepts a connection; fails once ``alive()`` is false or
    ``within`` seconds have passed (a server started in a subprocess)."""
    deadline = time.monotonic() + within
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert alive(), "the server exited before it listened"
            assert time.monotonic() < deadline, "the server never answered"
            time.sleep(0.1)
