"""Interop over stdio with the official Python SDK (``mcp`` 2.3.0), both directions.

Our clients drive an SDK server (``tests/peers/sdk_server.py``); the SDK's ``Client``
drives our servers on each adapter (``tests/peers/async_server.py``,
``tests/peers/stdio_server.py``): discover, list, call with progress, an MRTR round, a
listen with a change notification, and cancellation.  Real subprocesses, bounded waits.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

mcp = pytest.importorskip("mcp", reason="the official SDK is a dev dependency")
from mcp import Client as SdkClient  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from mcp_types import ElicitResult as SdkElicitResult  # noqa: E402

import mcp_proto_asyncio  # noqa: E402
import mcp_proto_sync  # noqa: E402
from mcp_proto import types as t  # noqa: E402

PEERS = Path(__file__).resolve().parent / "peers"
SDK_SERVER = [sys.executable, str(PEERS / "sdk_server.py")]
ELICIT = t.ClientCapabilities(elicitation=t.ClientCapabilitiesElicitation())
OURS = {
    "sync": [str(PEERS / "stdio_server.py")],
    "asyncio": [str(PEERS / "async_server.py"), "asyncio"],
    "trio": [str(PEERS / "async_server.py"), "trio"],
}


def name_please(event: Any) -> dict[str, Any]:
    return {"name": t.ElicitResult(action="accept", content={"name": "Ada"})}


# -- our clients, the SDK's server -----------------------------------------------


def test_sync_client_against_the_sdk_server() -> None:
    progress: list[float] = []
    client = mcp_proto_sync.Client.stdio(
        SDK_SERVER, capabilities=ELICIT, timeout=30, stderr=subprocess.PIPE
    )
    with client:
        assert client.discover().supported_versions == ["2026-07-28"]
        assert {tool.name for tool in client.list_tools()} == {"echo", "ask", "sleep", "touch"}
        echoed = client.call_tool(
            "echo", {"text": "hi"}, on_progress=lambda p: progress.append(p.progress)
        )
        assert echoed.content[0].text == "hi" and progress == [1]
        assert client.call_tool("ask", on_input=name_please).content[0].text == "hello Ada"
        client.call_tool("echo", {"text": "warm"})
        with pytest.raises(TimeoutError):
            client.call_tool("sleep", {"seconds": 30}, timeout=1.5)
        assert client.call_tool("echo", {"text": "after"}).content[0].text == "after"
    assert client.process is not None and client.process.stderr is not None
    assert b"cancelled" in client.process.stderr.read()  # the SDK handler was cancelled


def test_asyncio_client_listens_to_the_sdk_server() -> None:
    async def main() -> None:
        async with mcp_proto_asyncio.Client.stdio(
            SDK_SERVER, timeout=30, stderr=subprocess.DEVNULL
        ) as client:
            flt = t.SubscriptionFilter(tools_list_changed=True)
            async with await client.listen(flt) as sub:
                assert sub.honoured.tools_list_changed
                await client.call_tool("touch")
                note = await asyncio.wait_for(sub.__anext__(), 10)
                assert note.method == "notifications/tools/list_changed"

    asyncio.run(asyncio.wait_for(main(), 60))


# -- the SDK's client, our servers -------------------------------------------------


async def sdk_elicit(context: Any, params: Any) -> SdkElicitResult:
    return SdkElicitResult(action="accept", content={"name": "Grace"})


@pytest.mark.parametrize("adapter", list(OURS))
def test_sdk_client_against_our_server(adapter: str) -> None:
    async def main() -> None:
        params = StdioServerParameters(command=sys.executable, args=OURS[adapter])
        progress: list[float] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append(value)

        async with SdkClient(params, elicitation_callback=sdk_elicit, cache=None) as client:
            assert client.protocol_version == "2026-07-28"  # discovered, no initialize
            listed = await client.list_tools()
            assert "echo" in {tool.name for tool in listed.tools}
            result = await client.call_tool("echo", {"text": "hi"}, progress_callback=on_progress)
            assert result.content[0].text == "hi" and progress == [1]
            asked = await client.call_tool("ask")
            assert asked.content[0].text == "hello Grace"
            with anyio.move_on_after(1):  # cancels the call: the SDK sends notifications/cancelled
                await client.call_tool("sleep", {"seconds": 30})
            again = await client.call_tool("echo", {"text": "after"})
            assert again.content[0].text == "after"
            if adapter != "sync":  # the blocking peer has no touch tool
                async with client.listen(tools_list_changed=True) as sub:
                    await client.call_tool("touch")
                    with anyio.fail_after(10):
                        event = await sub.__anext__()
                    assert "tools" in repr(event).lower()

    anyio.run(main)
