"""``mcp-proto demo``: a scripted session against the everything server, as a wire trace.

Both sides run in this process on the asyncio adapter, over a socket pair: the
everything server (``mcp_proto_cli.everything``) and a client that discovers, lists,
calls a tool with progress, answers an MRTR elicitation round, listens for a change
notification, and makes one call that fails.  Every line written on either side is
recorded (``mcp_proto.testing.Trace``) and printed.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import orjson

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.testing import Trace
from mcp_proto_asyncio import Client, McpError, Server

from . import everything

WIDTH = 150


class _Tap:
    """A StreamWriter that records what it writes."""

    def __init__(self, writer: asyncio.StreamWriter, trace: Trace, sender: Any) -> None:
        self._writer, self._trace, self._sender = writer, trace, sender

    def write(self, data: bytes) -> None:
        self._trace.record(self._sender, data)
        self._writer.write(data)

    async def drain(self) -> None:
        await self._writer.drain()

    def close(self) -> None:
        self._writer.close()

    async def wait_closed(self) -> None:
        await self._writer.wait_closed()


def _name(event: Any) -> dict[str, Any]:
    return {"user_name": t.ElicitResult(action="accept", content={"name": "Ada"})}


async def session(trace: Trace) -> list[str]:
    """Run the scripted session; return what the client saw, one line per step."""
    server_sock, client_sock = socket.socketpair()
    s_reader, s_writer = await asyncio.open_connection(sock=server_sock)
    c_reader, c_writer = await asyncio.open_connection(sock=client_sock)
    server = Server(everything.HANDLERS, **everything.OPTIONS)
    serving = asyncio.create_task(server.serve(s_reader, _Tap(s_writer, trace, "server")))  # type: ignore[arg-type]
    caps = t.ClientCapabilities(elicitation=t.ClientCapabilitiesElicitation())
    client = Client(c_reader, _Tap(c_writer, trace, "client"), capabilities=caps, timeout=10)  # type: ignore[arg-type]
    seen: list[str] = []
    async with client:
        found = await client.connect()  # the era probe: server/discover (issue 16)
        assert isinstance(found, m.Modern) and found.discover is not None
        seen.append(f"discovered {', '.join(found.discover.supported_versions)}")
        seen.append(f"{len(await client.list_tools())} tools")
        steps: list[float] = []
        await client.call_tool(
            "test_tool_with_progress", on_progress=lambda p: steps.append(p.progress)
        )
        seen.append(f"progress {steps}")
        hello = await client.call_tool("test_input_required_result_elicitation", on_input=_name)
        answered = hello.content[0]
        assert isinstance(answered, t.TextContent), answered
        seen.append(f"MRTR answered: {answered.text}")
        flt = t.SubscriptionFilter(tools_list_changed=True)
        async with await client.listen(flt) as sub:
            await client.call_tool("test_trigger_tool_change")
            note = await asyncio.wait_for(sub.__anext__(), 5)
            seen.append(f"listen {sub.id} got {note.method}")
        try:
            await client.call_tool("no_such_tool")
        except McpError as e:
            seen.append(f"error {e.code}: {e.message}")
    await serving
    return seen


def render(trace: Trace) -> list[str]:
    lines = []
    for number, entry in enumerate(trace, 1):
        text = orjson.dumps(entry.message).decode() if entry.raw is None else repr(entry.raw)
        if len(text) > WIDTH:
            text = text[: WIDTH - 1] + "…"
        lines.append(f"{number:>2} {entry.sender} -> {entry.summary()}")
        lines.append(f"   {text}")
    return lines


def demo() -> list[str]:
    """The trace and the client's view of the session, as lines to print."""
    trace = Trace()
    seen = asyncio.run(asyncio.wait_for(session(trace), 30))
    return [*render(trace), "", *(f"client saw: {line}" for line in seen)]
