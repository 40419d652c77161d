"""The trio adapter against real subprocesses (``tests/peers/``), both roles.

Our trio client drives our trio server; the blocking peer's hostile modes check the
client's failure paths.  Every test runs under ``trio.fail_after``.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto_trio import Client, InputRequiredError, McpError

PEERS = Path(__file__).resolve().parent / "peers"
ELICIT = t.ClientCapabilities(elicitation=t.ClientCapabilitiesElicitation())


def run(fn: Callable[[], Awaitable[Any]]) -> Any:
    async def bounded() -> Any:
        with trio.fail_after(60):
            return await fn()

    return trio.run(bounded)


@asynccontextmanager
async def spawn(*args: str, **kw: Any) -> AsyncIterator[Client]:
    kw.setdefault("timeout", 20)
    command = [sys.executable, str(PEERS / "async_server.py"), "trio"]
    if args:
        command = [sys.executable, str(PEERS / "stdio_server.py"), *args]
    async with Client.stdio(command, stderr=subprocess.PIPE, **kw) as client:
        yield client


def test_concurrent_calls_progress_and_errors() -> None:
    async def main() -> None:
        seen: list[float] = []
        results: dict[int, str] = {}
        async with spawn() as client:

            async def one(i: int) -> None:
                results[i] = (await client.call_tool("echo", {"text": str(i)})).content[0].text

            async with trio.open_nursery() as nursery:
                for i in range(20):
                    nursery.start_soon(one, i)
            assert results == {i: str(i) for i in range(20)}
            await client.call_tool("echo", on_progress=lambda p: seen.append(p.progress))
            assert seen == [1]
            assert (await client.discover()).supported_versions == ["2026-07-28"]
            with pytest.raises(McpError) as err:
                await client.call_tool("nope")
            assert err.value.code == m.INVALID_PARAMS

    run(main)


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

    run(main)


def test_cancel05_timeout_and_cancel_scopes_reach_the_server() -> None:
    async def main() -> bytes:
        async with spawn() as client:
            await client.call_tool("echo")  # the server is up: the next handler starts at once
            with pytest.raises(TimeoutError):  # 5 s: the handler starts first, even under load
                await client.call_tool("sleep", {"seconds": 30}, timeout=5)
            started = trio.Event()
            with trio.CancelScope() as scope:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(
                        lambda: client.call_tool(
                            "sleep", {"seconds": 30}, on_progress=lambda p: started.set()
                        )
                    )
                    await started.wait()
                    scope.cancel()
            assert (await client.call_tool("echo", {"text": "after"})).content[0].text == "after"
        assert client.process is not None and client.process.stderr is not None
        assert client.process.returncode == 0
        err = b""
        while chunk := await client.process.stderr.receive_some(65536):
            err += chunk
        return err

    assert run(main).count(b"cancelled") == 2  # each handler saw its cancellation


def test_sub_listen_ack_notifications_and_cancel() -> None:
    async def main() -> None:
        async with spawn() as client:
            flt = t.SubscriptionFilter(tools_list_changed=True, prompts_list_changed=True)
            async with await client.listen(flt) as sub:
                assert sub.honoured == t.SubscriptionFilter(tools_list_changed=True)  # SUB-06
                await client.call_tool("touch")
                with trio.fail_after(10):
                    note = await sub.__anext__()
                assert note.method == "notifications/tools/list_changed"
                assert note.request_id == sub.id  # demultiplexed by subscriptionId (SUB-08)
            assert sub.id not in client.conn.in_flight()
            assert (await client.call_tool("echo", {"text": "x"})).content[0].text == "x"

    run(main)


@pytest.mark.parametrize("mode", ["junk", "crlf"])
def test_hostile_but_valid_peers(mode: str) -> None:
    async def main() -> None:
        async with spawn(mode) as client:
            assert (await client.call_tool("echo", {"text": mode})).content[0].text == mode

    run(main)


def test_stdio17_crash_fails_every_call_in_flight() -> None:
    async def main() -> None:
        failures: list[BaseException] = []
        async with spawn("crash") as client:

            async def one(name: str) -> None:
                try:
                    await client.call_tool(name, {"seconds": 5, "text": "x"})
                except ConnectionError as e:
                    failures.append(e)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(one, "sleep")
                nursery.start_soon(one, "echo")
            assert len(failures) == 2
            with pytest.raises(ConnectionError):
                await client.call_tool("echo")
        assert client.process is not None and client.process.returncode == 3

    run(main)


def test_stdio14_aclose_escalates_to_kill() -> None:
    async def main() -> int | None:
        process = await trio.lowlevel.open_process(
            [sys.executable, str(PEERS / "stdio_server.py"), "stubborn"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert process.stdin and process.stdout and process.stderr
        client = Client(process.stdout, process.stdin, process=process)
        assert (await process.stderr.receive_some(6)).startswith(b"ready")
        return await client.aclose(grace=0.3)

    assert run(main) == -9


def test_cancel_in_the_same_chunk_as_its_request_reaches_a_reused_worker() -> None:
    """A request and its cancellation read together: the handler, handed to a parked
    worker that has not run yet, starts cancelled (and sees it) instead of running."""
    import mcp_proto_trio

    seen: list[str] = []

    async def call(ctx: Any, params: Any) -> Any:
        if params.name == "slow":
            try:
                await trio.sleep(10)
            except trio.Cancelled:
                seen.append("cancelled")
                raise
        return t.CallToolResult(content=[])

    def line(id: int, name: str) -> bytes:
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        params = {"_meta": meta, "name": name, "arguments": {}}
        message = {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}
        return _dumps(message)

    async def main() -> None:
        server = mcp_proto_trio.Server(
            {"tools/call": call},
            capabilities=t.ServerCapabilities(tools=t.ServerCapabilitiesTools()),
        )
        client, served = trio.testing.memory_stream_pair()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.serve, served)
            await client.send_all(line(1, "fast"))  # leaves a parked worker behind
            assert b'"id":1' in await client.receive_some(65536)
            cancel = (
                b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}\n'
            )
            await client.send_all(line(2, "slow") + cancel)
            with trio.fail_after(5):
                while not seen:
                    await trio.sleep(0.01)
            await client.send_eof()
        assert seen == ["cancelled"]

    run(main)


def _dumps(message: Any) -> bytes:
    import orjson

    return orjson.dumps(message) + b"\n"
