"""One ``get_weather`` tool over stdio, on one of our adapters or on the official SDK.

    python bench/servers/echo.py sync|asyncio|trio|sdk

Every server answers the same ``tools/call`` with the same text; the SDK one is a
lowlevel ``Server`` with an ``on_call_tool`` handler (its fastest path) run by
``stdio_server``.
"""

from __future__ import annotations

import sys
from typing import Any

TEXT = "Current weather in New York: 72F, partly cloudy"


def ours(adapter: str) -> None:
    from mcp_proto import types as t

    caps = t.ServerCapabilities(tools=t.ServerCapabilitiesTools())
    info = t.Implementation(name="bench-server", version="1.0.0")
    result = t.CallToolResult(content=[t.TextContent(text=TEXT)])
    if adapter == "sync":
        import mcp_proto_sync

        mcp_proto_sync.Server(
            {"tools/call": lambda ctx, params: result}, capabilities=caps, server_info=info
        ).serve_stdio()
        return

    async def call(ctx: Any, params: Any) -> Any:
        return result

    if adapter == "asyncio":
        import asyncio

        import mcp_proto_asyncio

        server = mcp_proto_asyncio.Server(
            {"tools/call": call}, capabilities=caps, server_info=info
        )
        asyncio.run(server.serve_stdio())
    else:
        import trio

        import mcp_proto_trio

        trio.run(
            mcp_proto_trio.Server(
                {"tools/call": call}, capabilities=caps, server_info=info
            ).serve_stdio
        )


def sdk() -> None:
    import anyio
    import mcp_types as st
    from mcp.server.lowlevel.server import Server
    from mcp.server.stdio import stdio_server

    async def call_tool(ctx: Any, params: Any) -> Any:
        return st.CallToolResult(content=[st.TextContent(type="text", text=TEXT)])

    server: Any = Server("bench-server", version="1.0.0", on_call_tool=call_tool)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


if __name__ == "__main__":
    kind = sys.argv[1]
    sdk() if kind == "sdk" else ours(kind)
