"""The everything server over Streamable HTTP on 127.0.0.1, for tests that kill it.

    python tests/peers/http_server.py sync|asyncio|trio

Prints ``http://127.0.0.1:PORT/mcp`` once it listens (port chosen by the system).
``prompts/get`` is replaced by a handler that waits 30 s, so a call stays in flight.
"""

from __future__ import annotations

import asyncio
import functools
import sys
from typing import Any

import trio

import mcp_proto_asyncio
import mcp_proto_sync
import mcp_proto_trio
from mcp_proto_cli import everything

ADAPTER = sys.argv[1] if len(sys.argv) > 1 else "sync"


def ready(at: tuple[str, int]) -> None:
    print(f"http://{at[0]}:{at[1]}/mcp", flush=True)


def blocking_slow(ctx: Any, params: Any) -> Any:
    ctx.wait_cancelled(30)
    return {"messages": []}


async def async_slow(ctx: Any, params: Any) -> Any:
    await (trio.sleep(30) if ADAPTER == "trio" else asyncio.sleep(30))
    return {"messages": []}


def main() -> None:
    options: dict[str, Any] = {**everything.OPTIONS, "keepalive_interval": 0.5}
    where = ("127.0.0.1", 0)
    if ADAPTER == "sync":
        handlers = {k: everything.run_sync(f) for k, f in everything.HANDLERS.items()}
        handlers["prompts/get"] = blocking_slow
        server = mcp_proto_sync.Server(handlers, **options)
        server.serve_http(*where, ready=ready, tools=everything.tool_lookup)
    elif ADAPTER == "asyncio":
        handlers_a = {**everything.HANDLERS, "prompts/get": async_slow}
        server_a = mcp_proto_asyncio.Server(handlers_a, **options)
        asyncio.run(server_a.serve_http(*where, ready=ready, tools=everything.tool_lookup))
    else:
        handlers_t = {**everything.HANDLERS, "prompts/get": async_slow}
        server_t = mcp_proto_trio.Server(handlers_t, **options)

        async def serve() -> None:
            async with trio.open_nursery() as nursery:
                start = functools.partial(server_t.serve_http, tools=everything.tool_lookup)
                ready(await nursery.start(start, *where))

        trio.run(serve)


if __name__ == "__main__":
    main()
