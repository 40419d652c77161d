"""The conformance client: does what each (non-auth) client scenario asks, then exits 0.

    python examples/everything_client.py URL

The official harness runs it with ``MCP_CONFORMANCE_SCENARIO`` (and sometimes
``MCP_CONFORMANCE_CONTEXT``, JSON) set, against a mock server at URL: a 2026-07-28 one,
or (``--spec-version 2025-11-25``) an ``initialize``-era one.  Built on the blocking
adapter's HTTP client (``Client.http``), dual-era by default: against a modern server
every request carries its ``_meta`` and the standard headers, tools with malformed
``x-mcp-header`` annotations are left out of ``tools/list``, and ``Mcp-Param-*`` headers
mirror the annotated arguments; against a legacy one it opens a session, answers the
server's requests with the same callback, and resumes a stream closed mid-call.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto_sync import Client, HTTPClientSession, McpError

CAPABILITIES = t.ClientCapabilities(
    elicitation=t.ClientCapabilitiesElicitation(),
    sampling=t.ClientCapabilitiesSampling(),
    roots=t.ClientCapabilitiesRoots(),
)


def defaults(request: t.ElicitRequest) -> dict[str, Any]:
    """What a user who accepts a form without typing sends: each field's ``default``
    (SEP-1034: a client fills the form with them)."""
    schema = m.unstructure(request.params).get("requestedSchema") or {}
    fields = schema.get("properties") or {}
    return {name: field["default"] for name, field in fields.items() if "default" in field}


def answers(event: m.InputRequired) -> dict[str, Any]:
    """Answer every input request of an MRTR round (or, from a legacy server, the one
    request it stands for) with something plausible."""
    out: dict[str, Any] = {}
    for key, request in event.input_requests.items():
        if isinstance(request, t.ElicitRequest):
            out[key] = t.ElicitResult(action="accept", content=defaults(request))
        elif isinstance(request, t.CreateMessageRequest):
            text = t.TextContent(text="Paris")
            out[key] = t.CreateMessageResult(role="assistant", content=text, model="example")
        else:
            out[key] = t.ListRootsResult(roots=[t.Root(uri="file:///tmp", name="tmp")])
    return out


def discover(client: HTTPClientSession) -> None:
    """``server/discover``; after a -32022, again with a version both sides speak (VER-03)."""
    try:
        client.discover()
    except McpError as e:
        if e.code != m.UNSUPPORTED_PROTOCOL_VERSION:
            raise
        supported = (e.data or {}).get("supported", [])
        if client.conn.protocol_version not in supported:
            raise
        client.discover()


def call_all(client: HTTPClientSession, calls: list[dict[str, Any]]) -> None:
    for call in calls:
        arguments = call.get("arguments", call.get("args")) or {}
        client.call_tool(call["name"], arguments, on_input=answers)


def run(scenario: str, client: HTTPClientSession, context: dict[str, Any]) -> None:
    client.connect()  # the era: a modern server, or a legacy one (initialize)
    if client.era == "modern":
        discover(client)
    tools = {tool.name: tool for tool in client.list_tools()}
    if scenario in ("tools_call", "request-metadata"):
        client.call_tool("add_numbers", {"a": 5, "b": 3})
    elif scenario in (
        "sep-2322-client-request-state",
        "elicitation-sep1034-client-defaults",
        "sse-retry",
    ):
        for name in tools:
            client.call_tool(name, on_input=answers)
    elif scenario == "http-standard-headers":
        for name in tools:
            client.call_tool(name, on_input=answers)
        listed = client.request("resources/list", t.PaginatedRequestParams())
        for resource in listed.resources:
            client.request("resources/read", t.ReadResourceRequestParams(uri=resource.uri))
        prompts = client.request("prompts/list", t.PaginatedRequestParams())
        for prompt in prompts.prompts:
            client.request("prompts/get", t.GetPromptRequestParams(name=prompt.name))
    elif scenario == "http-custom-headers":
        call_all(client, context.get("toolCalls", []))
    elif scenario == "http-invalid-tool-headers":
        if "valid_tool" in tools:
            client.call_tool("valid_tool", {})
    elif scenario == "json-schema-2020-12-preservation":
        schema = tools["json_schema_2020_12_tool"].input_schema
        client.call_tool("json_schema_echo", {"schema": schema})
    # json-schema-ref-no-deref and the rest: listing the tools is the whole task


def main() -> int:
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "tools_call")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    with Client.http(url, capabilities=CAPABILITIES, timeout=30) as client:
        run(scenario, client, context)
    return 0


if __name__ == "__main__":
    sys.exit(main())
