"""One ``get_weather`` tool over stdio or HTTP, on one of our adapters or on the official SDK.

    python bench/servers/echo.py sync|asyncio|trio|trio-raw|sdk [--http PORT]
    python bench/servers/echo.py inline-floor|trio-floor

The two floors are not servers anyone should run: stdio loops on the core with nothing
around it, to show what an adapter costs.  ``inline-floor`` answers each request in the
reading loop (no concurrency at all); ``trio-floor`` is the least a trio server can do
(a task per request, raw non-blocking descriptors, no cancellation, no backpressure).

Every server answers the same ``tools/call`` with the same text; the SDK one is a
lowlevel ``Server`` with an ``on_call_tool`` handler (its fastest path) run by
``stdio_server``, or over HTTP by uvicorn on its ``streamable_http_app`` (stateless, JSON
responses: the cheapest settings it has for the same exchange).
"""

from __future__ import annotations

import sys
from typing import Any

TEXT = "Current weather in New York: 72F, partly cloudy"


def ours(adapter: str, http: int | None = None) -> None:
    from mcp_proto import types as t

    caps = t.ServerCapabilities(tools=t.ServerCapabilitiesTools())
    info = t.Implementation(name="bench-server", version="1.0.0")
    result = t.CallToolResult(content=[t.TextContent(text=TEXT)])
    if adapter == "sync":
        import mcp_proto_sync

        server_s = mcp_proto_sync.Server(
            {"tools/call": lambda ctx, params: result}, capabilities=caps, server_info=info
        )
        if http is not None:
            server_s.serve_http("127.0.0.1", http)
        else:
            server_s.serve_stdio()
        return

    async def call(ctx: Any, params: Any) -> Any:
        return result

    if adapter == "asyncio":
        import asyncio

        import mcp_proto_asyncio

        server = mcp_proto_asyncio.Server(
            {"tools/call": call}, capabilities=caps, server_info=info
        )
        if http is not None:
            asyncio.run(server.serve_http("127.0.0.1", http))
        else:
            asyncio.run(server.serve_stdio())
    else:
        import trio

        import mcp_proto_trio

        io: Any = "raw" if adapter == "trio-raw" else "streams"
        server_t = mcp_proto_trio.Server(
            {"tools/call": call}, capabilities=caps, server_info=info, io=io
        )
        if http is not None:
            trio.run(server_t.serve_http, "127.0.0.1", http)
        else:
            trio.run(server_t.serve_stdio)


def sdk(http: int | None = None) -> None:
    import anyio
    import mcp_types as st
    from mcp.server.lowlevel.server import Server
    from mcp.server.stdio import stdio_server

    async def call_tool(ctx: Any, params: Any) -> Any:
        return st.CallToolResult(content=[st.TextContent(type="text", text=TEXT)])

    server: Any = Server("bench-server", version="1.0.0", on_call_tool=call_tool)
    if http is not None:
        import uvicorn

        app = server.streamable_http_app(stateless_http=True, json_response=True)
        uvicorn.run(app, host="127.0.0.1", port=http, log_level="warning")
        return

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


def floor(kind: str) -> None:
    import os

    import mcp_proto as m
    from mcp_proto import types as t
    from mcp_proto_runtime import ServerSettings, answer

    caps = t.ServerCapabilities(tools=t.ServerCapabilitiesTools())
    info = t.Implementation(name="bench-server", version="1.0.0")
    result = t.CallToolResult(content=[t.TextContent(text=TEXT)])
    conn = ServerSettings({}, capabilities=caps, server_info=info).connection()
    if kind == "inline-floor":
        while chunk := os.read(0, 65536):
            conn.receive_data(chunk)
            while (event := conn.next_event()) is not m.NEED_DATA:
                if isinstance(event, m.Request):
                    os.write(1, conn.send(answer(event, result, cache_hints=conn.cache_hints)))
        return

    import trio

    async def handle(event: Any) -> None:
        os.write(1, conn.send(answer(event, result, cache_hints=conn.cache_hints)))

    async def main() -> None:
        os.set_blocking(0, False)
        async with trio.open_nursery() as nursery:
            while True:
                await trio.lowlevel.wait_readable(0)
                chunk = os.read(0, 65536)
                if not chunk:
                    return
                conn.receive_data(chunk)
                while (event := conn.next_event()) is not m.NEED_DATA:
                    if event is m.PAUSED:  # max_in_flight: let the started handlers answer
                        await trio.sleep(0)
                    elif isinstance(event, m.Request):
                        nursery.start_soon(handle, event)

    trio.run(main)


if __name__ == "__main__":
    kind = sys.argv[1]
    port = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--http" else None
    if kind.endswith("-floor"):
        floor(kind)
    else:
        sdk(port) if kind == "sdk" else ours(kind, port)
