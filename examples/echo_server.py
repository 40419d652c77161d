"""A small stdio server on the blocking adapter: one ``echo`` tool, with progress and logs.

python examples/echo_server.py        # speaks MCP on stdin/stdout
"""

from __future__ import annotations

from typing import Any

from mcp_proto import types as t
from mcp_proto_sync import Context, McpError, Server

ECHO = t.Tool(
    name="echo",
    description="Repeat the text back.",
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
)


def list_tools(ctx: Context, params: t.PaginatedRequestParams) -> t.ListToolsResult:
    return t.ListToolsResult(tools=[ECHO])


def call_tool(ctx: Context, params: t.CallToolRequestParams) -> Any:
    if params.name != "echo":
        raise McpError(-32602, f"Unknown tool: {params.name}")
    text = str((params.arguments or {}).get("text", ""))
    ctx.progress(1, total=2, message="echoing")
    ctx.log("info", {"echo": text})
    ctx.progress(2, total=2)
    return t.CallToolResult(content=[t.TextContent(text=text)])


server = Server(
    {"tools/list": list_tools, "tools/call": call_tool},
    capabilities=t.ServerCapabilities(
        tools=t.ServerCapabilitiesTools(list_changed=True), logging={}
    ),
    server_info=t.Implementation(name="echo-server", version="1.0.0"),
)

if __name__ == "__main__":
    server.serve_stdio()
