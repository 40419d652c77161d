"""A stdio server on the asyncio adapter, for the adapter tests.

    python tests/peers/asyncio_server.py

Tools: ``echo`` (text, with progress), ``sleep`` (seconds; notes cancellation on stderr),
``touch`` (sends ``notifications/tools/list_changed`` to the open listens), ``ask`` (an
MRTR elicitation round).
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from mcp_proto import types as t
from mcp_proto_asyncio import Context, McpError, Server


async def call_tool(ctx: Context, params: t.CallToolRequestParams) -> Any:
    args = params.arguments or {}
    if params.name == "echo":
        await ctx.progress(1, total=1)
        return t.CallToolResult(content=[t.TextContent(text=str(args.get("text", "")))])
    if params.name == "sleep":
        await ctx.progress(0, message="started")
        try:
            await asyncio.sleep(float(args.get("seconds", 1)))
        except asyncio.CancelledError:
            print(f"cancelled {ctx.request.id}", file=sys.stderr, flush=True)
            raise
        return t.CallToolResult(content=[t.TextContent(text="slept")])
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


server = Server(
    {"tools/call": call_tool},
    capabilities=t.ServerCapabilities(tools=t.ServerCapabilitiesTools(list_changed=True)),
)

if __name__ == "__main__":
    asyncio.run(server.serve_stdio())
