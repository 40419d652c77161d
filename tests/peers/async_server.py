"""A stdio server on the asyncio or the trio adapter, for the adapter tests.

    python tests/peers/async_server.py asyncio|trio

Tools: ``echo`` (text, with progress), ``sleep`` (seconds; notes cancellation on stderr),
``touch`` (sends ``notifications/tools/list_changed`` to the open listens), ``ask`` (an
MRTR elicitation round).
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import trio

import mcp_proto_asyncio
import mcp_proto_trio
from mcp_proto import types as t
from mcp_proto_asyncio import Context, McpError

ADAPTER = sys.argv[1] if len(sys.argv) > 1 else "asyncio"
sleep = trio.sleep if ADAPTER == "trio" else asyncio.sleep
CANCELLED = trio.Cancelled if ADAPTER == "trio" else asyncio.CancelledError


TOOLS = [
    t.Tool(name=name, input_schema={"type": "object"})
    for name in ("echo", "sleep", "touch", "ask")
]


async def list_tools(ctx: Context, params: t.PaginatedRequestParams) -> t.ListToolsResult:
    return t.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: Context, params: t.CallToolRequestParams) -> Any:
    args = params.arguments or {}
    if params.name == "echo":
        await ctx.progress(1, total=1)
        return t.CallToolResult(content=[t.TextContent(text=str(args.get("text", "")))])
    if params.name == "sleep":
        try:  # the progress too: the client may cancel as soon as it reads it
            await ctx.progress(0, message="started")
            await sleep(float(args.get("seconds", 1)))
        except CANCELLED:
            print(f"cancelled {ctx.request.id}", file=sys.stderr, flush=True)
            raise
        return t.CallToolResult(content=[t.TextContent(text="slept")])
    if params.name == "bad_result":  # a result that cannot be encoded (a set)
        return t.CallToolResult(content=[], structured_content={"s": {1, 2}})
    if params.name == "inner_cancel" and ADAPTER == "asyncio":  # the handler's own subtask
        inner = asyncio.get_running_loop().create_task(asyncio.sleep(10))
        inner.cancel()
        await inner
    if params.name == "touch":
        await ctx.notify_changed("notifications/tools/list_changed")
        return t.CallToolResult(content=[t.TextContent(text="touched")])
    if params.name == "ask":
        answers = params.input_responses or {}
        if "name" not in answers:
            form = t.ElicitRequestFormParams(
                message="Your name?",
                requested_schema={"type": "object", "properties": {"name": {"type": "string"}}},
            )
            return ctx.input_required({"name": t.ElicitRequest(params=form)}, request_state="s1")
        content = answers["name"].content or {}
        return t.CallToolResult(content=[t.TextContent(text=f"hello {content.get('name')}")])
    raise McpError(-32602, f"Unknown tool: {params.name}")


CAPS = t.ServerCapabilities(tools=t.ServerCapabilitiesTools(list_changed=True))
GRACE = float(os.environ.get("PEER_SHUTDOWN_GRACE", "5"))
LIMIT = int(os.environ.get("PEER_MAX_IN_FLIGHT", "1024"))

if __name__ == "__main__":
    if ADAPTER == "trio":
        handlers: Any = {"tools/call": call_tool, "tools/list": list_tools}
        trio.run(
            mcp_proto_trio.Server(
                handlers, capabilities=CAPS, shutdown_grace=GRACE, max_in_flight=LIMIT
            ).serve_stdio
        )
    else:
        server = mcp_proto_asyncio.Server(
            {"tools/call": call_tool, "tools/list": list_tools},
            capabilities=CAPS,
            shutdown_grace=GRACE,
            max_in_flight=LIMIT,
        )
        asyncio.run(server.serve_stdio())
