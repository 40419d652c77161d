"""Change notifications on demand over Streamable HTTP, for ``bench/attack_fanout.py``.

    python bench/servers/fanout.py sync|asyncio|trio

Serves 127.0.0.1 on a port the system picks and prints ``http://127.0.0.1:PORT/mcp``
once it listens; runs until killed.  Two tools: ``trigger`` sends one
``notifications/tools/list_changed`` (what the everything server's
``test_trigger_tool_change`` sends); ``flood`` sends ``count``
``notifications/resources/updated`` whose URIs (``file:///bench/N/...``) carry ``size``
bytes of padding, to fill a subscriber's socket buffers in few calls.  Default server
settings otherwise, as an attacker would find them.
"""

from __future__ import annotations

import sys
from typing import Any

from mcp_proto import types as t

CAPS = t.ServerCapabilities(
    tools=t.ServerCapabilitiesTools(list_changed=True),
    resources=t.ServerCapabilitiesResources(subscribe=True),
)
DONE = t.CallToolResult(content=[t.TextContent(text="done")])


def changes(params: t.CallToolRequestParams) -> list[tuple[str, Any]]:
    """The notifications a call asks for: (method, params) pairs."""
    if params.name == "trigger":
        return [("notifications/tools/list_changed", None)]
    arguments = params.arguments or {}
    pad = "x" * int(arguments.get("size", 0))
    return [
        ("notifications/resources/updated", t.ResourceUpdatedNotificationParams(uri=uri))
        for uri in (f"file:///bench/{i}/{pad}" for i in range(int(arguments.get("count", 1))))
    ]


def ready(at: tuple[str, int]) -> None:
    print(f"http://{at[0]}:{at[1]}/mcp", flush=True)


def main(adapter: str) -> None:
    if adapter == "sync":
        import mcp_proto_sync

        def blocking(ctx: Any, params: t.CallToolRequestParams) -> Any:
            for method, note in changes(params):
                ctx.notify_changed(method, note)
            return DONE

        mcp_proto_sync.Server({"tools/call": blocking}, capabilities=CAPS).serve_http(
            "127.0.0.1", 0, ready=ready
        )
        return

    async def call(ctx: Any, params: t.CallToolRequestParams) -> Any:
        for method, note in changes(params):
            await ctx.notify_changed(method, note)
        return DONE

    if adapter == "asyncio":
        import asyncio

        import mcp_proto_asyncio

        server = mcp_proto_asyncio.Server({"tools/call": call}, capabilities=CAPS)
        asyncio.run(server.serve_http("127.0.0.1", 0, ready=ready))
    else:
        import trio

        import mcp_proto_trio

        server_t = mcp_proto_trio.Server({"tools/call": call}, capabilities=CAPS)

        async def serve() -> None:
            async with trio.open_nursery() as nursery:
                ready(await nursery.start(server_t.serve_http, "127.0.0.1", 0))

        trio.run(serve)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "sync")
