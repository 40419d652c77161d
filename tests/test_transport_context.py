"""Handlers see the transport their request came on (issue 17): over HTTP the request's
headers, the principal the server's ``auth`` hook let in and the client's address; over
stdio the process that started the server.  Every adapter, on real sockets and pipes."""

from __future__ import annotations

import io
import json
import os
from typing import Any

import pytest

import mcp_proto_sync
from mcp_proto import types as t
from mcp_proto.http import Challenge, ProtectedResource

from .test_adapter_http import running

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}  # fmt: skip


def seen(ctx: Any) -> t.CallToolResult:
    transport = ctx.transport
    headers = transport.headers
    report = {"kind": transport.kind, "principal": transport.principal,
              "peer": transport.peer,
              "tenant": headers.get("x-tenant") if headers is not None else None}  # fmt: skip
    return t.CallToolResult(content=[t.TextContent(text=json.dumps(report))])


def handlers(adapter: str) -> dict[str, Any]:
    if adapter == "sync":
        return {"tools/call": lambda ctx, params: seen(ctx)}

    async def call(ctx: Any, params: Any) -> Any:
        return seen(ctx)

    return {"tools/call": call}


def verify(token: str | None, headers: Any) -> Challenge | None:
    return None if token == "t-ada" else Challenge.invalid_token("unknown token")


AUTH = ProtectedResource(resource="http://127.0.0.1/mcp", authorization_servers=[],
                         verify=verify)  # fmt: skip


@pytest.mark.parametrize("auth", [False, True], ids=["open", "auth"])
@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
def test_an_http_handler_sees_headers_principal_and_peer(adapter: str, auth: bool) -> None:
    options = {"auth": AUTH, "allowed_hosts": None} if auth else {}
    headers = [("x-tenant", "acme"), *([("authorization", "Bearer t-ada")] if auth else [])]
    with running(adapter, options, handlers=handlers(adapter)) as (host, port):
        url = f"http://{host}:{port}/mcp"
        with mcp_proto_sync.Client.http(url, era="modern", headers=headers, timeout=10) as c:
            report = json.loads(c.call_tool("who").content[0].text)
    assert report["kind"] == "http" and report["tenant"] == "acme"
    assert report["principal"] == ("t-ada" if auth else None)
    assert report["peer"] == "127.0.0.1"  # the client's address


def test_a_stdio_handler_sees_the_process_that_started_the_server() -> None:
    server = mcp_proto_sync.Server(
        handlers("sync"), capabilities=t.ServerCapabilities(tools=t.ServerCapabilitiesTools())
    )
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "who", "_meta": META}}  # fmt: skip
    out = io.BytesIO()
    server.serve(io.BytesIO(json.dumps(request).encode() + b"\n"), out)
    answer = json.loads(out.getvalue().splitlines()[0])
    report = json.loads(answer["result"]["content"][0]["text"])
    assert report == {"kind": "stdio", "principal": None, "peer": os.getppid(), "tenant": None}
