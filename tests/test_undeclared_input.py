"""A handler that asks for input the request's client did not declare (MRTR-10): the
server answers ``-32021`` whose ``requiredCapabilities`` names what it needs (META-10; on
HTTP with ``400``), on every adapter, instead of ``-32603`` (issue 17)."""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest

import mcp_proto as m
import mcp_proto_sync
from mcp_proto import types as t

from .test_adapter_http import call, running

ASK = {"method": "elicitation/create",
       "params": {"message": "Name?", "requestedSchema": {"type": "object"}}}  # fmt: skip
SAMPLE = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}}


def handlers(adapter: str) -> dict[str, Any]:
    def ask(ctx: Any, params: Any) -> Any:
        wanted = {"name": ASK, "model": SAMPLE} if params.name == "both" else {"name": ASK}
        return ctx.input_required(wanted)

    if adapter == "sync":
        return {"tools/call": ask}

    async def aask(ctx: Any, params: Any) -> Any:
        return ask(ctx, params)

    return {"tools/call": aask}


def refusal(client: Any) -> m.McpError:
    with pytest.raises(m.McpError) as refused:
        client.call_tool("both")
    return refused.value


@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
def test_mrtr10_meta10_undeclared_input_is_32021_naming_what_is_needed(adapter: str) -> None:
    sampling_only = t.ClientCapabilities(sampling=t.ClientCapabilitiesSampling())
    with running(adapter, handlers=handlers(adapter)) as (host, port):
        url = f"http://{host}:{port}/mcp"
        with mcp_proto_sync.Client.http(url, era="modern", timeout=10) as bare:
            none = refusal(bare)
        with mcp_proto_sync.Client.http(url, era="modern", timeout=10,
                                        capabilities=sampling_only) as some:  # fmt: skip
            part = refusal(some)
    assert none.code == -32021
    assert none.data == {"requiredCapabilities": {"elicitation": {"form": {}}, "sampling": {}}}
    assert part.data == {"requiredCapabilities": {"elicitation": {"form": {}}}}  # what it lacks


@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
def test_meta10_over_http_the_32021_comes_with_400(adapter: str) -> None:
    """On HTTP the ``-32021`` response's status MUST be ``400 Bad Request`` (META-10)."""
    with running(adapter, handlers=handlers(adapter)) as address:
        conn = http.client.HTTPConnection(*address, timeout=10)
        reply = call(conn, "tools/call", {"name": "both"})
        status, body = reply.status, json.loads(reply.read())
        conn.close()
    assert status == 400 and body["error"]["code"] == -32021


def test_input_capabilities_for_each_kind_of_input_request() -> None:
    url = t.ElicitRequest(params=t.ElicitRequestURLParams(message="m", url="https://x.example/"))
    roots = t.ListRootsRequest()
    form = m.structure(ASK, t.ElicitRequest)
    asks = {"url": url, "roots": roots, "form": form}
    assert m.unstructure(m.input_capabilities(asks)) == {
        "elicitation": {"url": {}, "form": {}}, "roots": {}}  # fmt: skip
    assert m.unstructure(m.input_capabilities(asks, ["form"])) == {"elicitation": {"form": {}}}
    assert m.input_capabilities({"odd": {"method": "x/y"}}) == t.ClientCapabilities()  # MRTR-05
