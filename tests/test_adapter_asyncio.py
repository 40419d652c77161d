"""The asyncio adapter against real subprocesses (``tests/peers/``), both roles.

Our asyncio client drives our asyncio server; the blocking peer's hostile modes check
the client's failure paths.  Every wait is bounded by a timeout.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto_asyncio import Client, InputRequiredError, McpError

PEERS = Path(__file__).resolve().parent / "peers"
ELICIT = t.ClientCapabilities(elicitation=t.ClientCapabilitiesElicitation())


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


def spawn(
    peer: str = "async_server.py", *args: str, **kw: Any
) -> AbstractAsyncContextManager[Client]:
    args = args or (("asyncio",) if peer == "async_server.py" else ())
    kw.setdefault("timeout", 20)
    return Client.stdio([sys.executable, str(PEERS / peer), *args], stderr=subprocess.PIPE, **kw)


def test_concurrent_calls_progress_and_errors() -> None:
    async def main() -> None:
        seen: list[float] = []
        async with spawn() as client:
            texts = await asyncio.gather(
                *(client.call_tool("echo", {"text": str(i)}) for i in range(20)),
                client.call_tool("echo", {"text": "p"}, on_progress=lambda p: seen.append(1)),
            )
            assert [r.content[0].text for r in texts] == [*map(str, range(20)), "p"]
            assert seen == [1]
            assert (await client.discover()).supported_versions == ["2026-07-28"]
            with pytest.raises(McpError) as err:
                await client.call_tool("nope")
            assert err.value.code == m.INVALID_PARAMS
            assert client.conn.in_flight() == ()

    run(main())


def test_mrtr_round_through_the_callback() -> None:
    async def main() -> None:
        async with spawn(capabilities=ELICIT) as client:
            result = await client.call_tool(
                "ask",
                on_input=lambda ev: {
                    "name": t.ElicitResult(action="accept", content={"name": "Lin"})
                },
            )
            assert result.content[0].text == "hello Lin"
            with pytest.raises(InputRequiredError):
                await client.call_tool("ask")

    run(main())


def test_cancel05_timeout_and_task_cancellation_reach_the_server() -> None:
    async def main() -> bytes:
        async with spawn() as client:
            await client.call_tool("echo")  # the server is up: the next handler starts at once
            with pytest.raises(TimeoutError):  # 5 s: the handler starts first, even under load
                await client.call_tool("sleep", {"seconds": 30}, timeout=5)
            started = asyncio.Event()
            task = asyncio.create_task(
                client.call_tool("sleep", {"seconds": 30}, on_progress=lambda p: started.set())
            )
            await started.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert (await client.call_tool("echo", {"text": "after"})).content[0].text == "after"
            assert await client.aclose() == 0
            assert client.process is not None and client.process.stderr is not None
            return await client.process.stderr.read()

    assert run(main()).count(b"cancelled") == 2  # each handler saw its cancellation


def test_sub_listen_ack_notifications_and_cancel() -> None:
    async def main() -> None:
        async with spawn() as client:
            flt = t.SubscriptionFilter(tools_list_changed=True, prompts_list_changed=True)
            async with await client.listen(flt) as sub:
                assert sub.honoured == t.SubscriptionFilter(tools_list_changed=True)  # SUB-06
                await client.call_tool("touch")
                note = await asyncio.wait_for(sub.__anext__(), 10)
                assert note.method == "notifications/tools/list_changed"
                assert note.request_id == sub.id  # demultiplexed by subscriptionId (SUB-08)
            assert sub.id not in client.conn.in_flight()
            assert (await client.call_tool("echo", {"text": "x"})).content[0].text == "x"

    run(main())


@pytest.mark.parametrize("mode", ["junk", "crlf"])
def test_hostile_but_valid_peers(mode: str) -> None:
    async def main() -> None:
        async with spawn("stdio_server.py", mode) as client:
            assert (await client.call_tool("echo", {"text": mode})).content[0].text == mode

    run(main())


def test_stdio17_crash_fails_every_call_in_flight() -> None:
    async def main() -> None:
        async with spawn("stdio_server.py", "crash") as client:
            results = await asyncio.gather(
                client.call_tool("sleep", {"seconds": 5}),
                client.call_tool("echo", {"text": "x"}),
                return_exceptions=True,
            )
            assert all(isinstance(r, ConnectionError) for r in results), results
            with pytest.raises(ConnectionError):
                await client.call_tool("echo")
            assert await client.aclose() == 3

    run(main())


def test_stdio14_aclose_escalates_to_kill() -> None:
    async def main() -> int | None:
        async with spawn("stdio_server.py", "stubborn") as client:
            assert client.process is not None and client.process.stderr is not None
            assert await client.process.stderr.readline() == b"ready\n"
            return await client.aclose(grace=0.3)

    assert run(main()) == -9
