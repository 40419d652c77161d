"""Interop over Streamable HTTP with the official Python SDK (``mcp`` 2.3.0), both directions.

Our clients (blocking, asyncio, trio) drive the SDK's ``MCPServer`` served by uvicorn in a
subprocess on 127.0.0.1 (``tests/peers/sdk_http_server.py``, the tools of
``sdk_server.py``); the SDK's ``Client(url)`` drives our HTTP server on each adapter (the
everything handlers, with ``prompts/get`` slow): list, a call with progress, an MRTR round,
a listen with a change notification, and cancellation.  Bounded waits; the subprocess is
killed by its pid at the end.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

mcp = pytest.importorskip("mcp", reason="the official SDK is a dev dependency")
from mcp import Client as SdkClient  # noqa: E402
from mcp_types import ElicitResult as SdkElicitResult  # noqa: E402

import mcp_proto_sync  # noqa: E402
from mcp_proto import types as t  # noqa: E402
from mcp_proto_asyncio import McpError  # noqa: E402

from . import test_adapter_http_clients as clients  # noqa: E402
from ._http_helpers import wait_for_port  # noqa: E402
from .test_adapter_http import CANCELLED  # noqa: E402

PEER = Path(__file__).resolve().parent / "peers" / "sdk_http_server.py"
ELICIT = t.ClientCapabilities(elicitation=t.ClientCapabilitiesElicitation())
our_server = clients.url  # the ``url`` fixture: each adapter's server, Mcp-Param-* checked


@pytest.fixture(scope="module")
def sdk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """(URL, stderr log) of the SDK server, once it accepts connections."""
    log = tmp_path_factory.mktemp("sdk") / "stderr.txt"
    with log.open("wb") as err:
        peer = subprocess.Popen([sys.executable, str(PEER)], stdout=subprocess.PIPE, stderr=err)
    try:
        assert peer.stdout is not None
        url = peer.stdout.readline().decode().strip()
        assert url.startswith("http://127.0.0.1:"), url
        wait_for_port(int(url.rsplit(":", 1)[1].split("/")[0]))
        yield url, log
    finally:
        peer.kill()
        peer.wait(10)


def saw_cancellation(log: Path, before: int) -> bool:
    """Whether the SDK's ``sleep`` tool noted a cancellation after ``before`` (within 5 s)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if log.read_bytes().count(b"cancelled") > before:
            return True
        time.sleep(0.05)
    return False


def name_please(event: Any) -> dict[str, Any]:
    return {"name": t.ElicitResult(action="accept", content={"name": "Ada"})}


# -- our clients, the SDK's server -----------------------------------------------


def test_blocking_http_client_against_the_sdk_server(sdk: tuple[str, Path]) -> None:
    url, log = sdk
    progress: list[float] = []
    with mcp_proto_sync.Client.http(url, capabilities=ELICIT, timeout=20) as client:
        assert client.discover().supported_versions == ["2026-07-28"]
        assert {tool.name for tool in client.list_tools()} == {"echo", "ask", "sleep", "touch"}
        echoed = client.call_tool(
            "echo", {"text": "hi"}, on_progress=lambda p: progress.append(p.progress)
        )
        assert echoed.content[0].text == "hi" and progress == [1]
        assert client.call_tool("ask", on_input=name_please).content[0].text == "hello Ada"
        before = log.read_bytes().count(b"cancelled")
        with pytest.raises(TimeoutError):  # closes the response: the SDK cancels the handler
            client.call_tool("sleep", {"seconds": 30}, timeout=1.0)
        assert saw_cancellation(log, before)
        assert client.call_tool("echo", {"text": "after"}).content[0].text == "after"
        time.sleep(1.5)  # the SDK's uvicorn closes the idle pooled connection (after 1 s here)
        assert client.call_tool("echo", {"text": "later"}).content[0].text == "later"


@pytest.mark.parametrize("kind", clients.CLIENTS)
def test_async_http_client_against_the_sdk_server(kind: str, sdk: tuple[str, Path]) -> None:
    url, log = sdk

    async def main() -> None:
        progress: list[float] = []
        with anyio.fail_after(40):
            async with clients.open_client(kind, url, capabilities=ELICIT, timeout=20) as client:
                assert len(await client.list_tools()) == 4
                echoed = await client.call_tool(
                    "echo", {"text": "hi"}, on_progress=lambda p: progress.append(p.progress)
                )
                assert echoed.content[0].text == "hi" and progress == [1]
                asked = await client.call_tool("ask", on_input=name_please)
                assert asked.content[0].text == "hello Ada"
                # The SDK answers -32602 with HTTP 400 (our servers: 200); both read the same.
                with pytest.raises(McpError) as unknown:
                    await client.request("resources/read", t.ReadResourceRequestParams(uri="x:y"))
                assert unknown.value.code == -32602
                flt = t.SubscriptionFilter(tools_list_changed=True)
                async with await client.listen(flt) as sub:
                    assert sub.honoured.tools_list_changed
                    await client.call_tool("touch")
                    note = await sub.__anext__()
                    assert note.method == "notifications/tools/list_changed"
                    assert (await client.call_tool("echo", {"text": "open"})).content
                before = log.read_bytes().count(b"cancelled")
                with anyio.move_on_after(1.0):  # the caller's cancellation closes the response
                    await client.call_tool("sleep", {"seconds": 30})
                assert await anyio.to_thread.run_sync(saw_cancellation, log, before)
                assert (await client.call_tool("echo", {"text": "after"})).content
                await anyio.sleep(1.5)  # uvicorn closes the idle pooled connections meanwhile
                assert (await client.call_tool("echo", {"text": "later"})).content

    anyio.run(main, backend=kind)


# -- the SDK's client, our servers -------------------------------------------------


async def sdk_elicit(context: Any, params: Any) -> SdkElicitResult:
    return SdkElicitResult(action="accept", content={"name": "Grace"})


def test_sdk_client_against_our_http_server(our_server: str) -> None:
    url = our_server

    async def main() -> None:
        progress: list[float] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append(value)

        with anyio.fail_after(40):
            async with SdkClient(url, elicitation_callback=sdk_elicit, cache=None) as client:
                assert client.protocol_version == "2026-07-28"  # discovered, no initialize
                listed = await client.list_tools()
                assert "test_x_mcp_header" in {tool.name for tool in listed.tools}
                done = await client.call_tool(
                    "test_tool_with_progress", progress_callback=on_progress
                )
                assert done.content[0].text == "Progress test completed"
                assert progress == [0, 50, 100]
                asked = await client.call_tool("test_input_required_result_elicitation")
                assert asked.content[0].text == "Hello, Grace!"
                # The SDK mirrors the argument into Mcp-Param-Region; our server checks it.
                region = await client.call_tool("test_x_mcp_header", {"region": "Hello, 世界"})
                assert region.content[0].text == "region: Hello, 世界"
                CANCELLED.clear()
                with anyio.move_on_after(1.0):  # the SDK closes the response stream
                    await client.get_prompt("slow")
                assert await anyio.to_thread.run_sync(CANCELLED.wait, 5)
                async with client.listen(tools_list_changed=True) as sub:
                    await client.call_tool("test_trigger_tool_change")
                    event = await sub.__anext__()
                    assert type(event).__name__ == "ToolsListChanged"

    anyio.run(main)
