"""Load and fault tests over Streamable HTTP on 127.0.0.1, each adapter's server.

* 200 concurrent clients, 150 calls whose answers name their own argument and 50 listens
  that each get exactly one change notification with their own subscription id: nothing
  lost, nothing cross-wired;
* clients that disconnect mid-header, mid-body and mid-SSE leave the server serving;
* a slowloris client is closed after ``client_timeout`` while others are served.

Bounded: every wait has a timeout, the servers stop at the end (fixtures of
``tests/test_adapter_http.py``).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import h11
import pytest

from tests.test_adapter_http import address, raw_post, running  # noqa: F401 - the fixture

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def post_bytes(id: int, method: str, params: dict[str, Any], headers: dict[str, str]) -> bytes:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": id, "method": method, "params": {**params, "_meta": META}}
    ).encode()
    head = {
        "host": "127.0.0.1",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "content-length": str(len(body)),
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
        **headers,
    }
    lines = "".join(f"{k}: {v}\r\n" for k, v in head.items())
    return f"POST /mcp HTTP/1.1\r\n{lines}\r\n".encode() + body


async def exchange(at: tuple[str, int], data: bytes, *, until_messages: int = 1) -> list[Any]:
    """Send one request; return the JSON-RPC messages of the response (JSON or SSE)."""
    reader, writer = await asyncio.open_connection(*at)
    conn = h11.Connection(h11.CLIENT)
    writer.write(data)
    await writer.drain()
    messages: list[Any] = []
    body = b""
    sse = False
    try:
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(await reader.read(65536))
                continue
            if isinstance(event, h11.Response):
                sse = dict(event.headers).get(b"content-type") == b"text/event-stream"
            elif isinstance(event, h11.Data):
                body += event.data
                if sse:
                    *frames, rest = body.split(b"\n\n")
                    body = rest
                    for frame in frames:
                        for line in frame.split(b"\n"):
                            if line.startswith(b"data:"):
                                messages.append(json.loads(line[5:]))
                    if len(messages) >= until_messages > 1:
                        return messages
            elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                if not sse and body:
                    messages.append(json.loads(body))
                return messages
    finally:
        writer.close()


@pytest.fixture(params=["sync", "asyncio", "trio"])
def many_listens(request: pytest.FixtureRequest) -> Iterator[tuple[str, int]]:
    """A server that lets one peer address hold 50 listens (these clients all share one)."""
    with running(request.param, max_listens_per_client=50) as at:
        yield at


def test_200_concurrent_clients_calls_and_listens(many_listens: tuple[str, int]) -> None:
    at = many_listens

    async def main() -> None:
        async def call(i: int) -> None:
            region = f"r-{i}"
            data = post_bytes(
                i,
                "tools/call",
                {"name": "test_x_mcp_header", "arguments": {"region": region}},
                {"mcp-name": "test_x_mcp_header", "mcp-param-region": region},
            )
            (answer,) = await exchange(at, data)
            assert answer["id"] == i, answer
            assert answer["result"]["content"][0]["text"] == f"region: {region}", answer

        async def listen(i: int, opened: asyncio.Event, ready: list[int]) -> None:
            flt = {"notifications": {"toolsListChanged": True}}
            task = asyncio.create_task(
                exchange(at, post_bytes(i, "subscriptions/listen", flt, {}), until_messages=2)
            )
            ready.append(i)
            if len(ready) == 50:
                opened.set()
            ack, note = await task
            assert ack["method"] == "notifications/subscriptions/acknowledged"
            assert note["method"] == "notifications/tools/list_changed"
            assert note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == i

        opened, ready = asyncio.Event(), []
        listens = [asyncio.create_task(listen(1000 + i, opened, ready)) for i in range(50)]
        await opened.wait()
        await asyncio.sleep(1.0)  # let every listen be acknowledged before the change
        await asyncio.gather(*(call(i) for i in range(150)))
        trigger = post_bytes(9999, "tools/call", {"name": "test_trigger_tool_change"}, {})
        trigger = trigger.replace(
            b"mcp-method: tools/call",
            b"mcp-method: tools/call\r\nmcp-name: test_trigger_tool_change",
        )
        (done,) = await exchange(at, trigger)
        assert "result" in done, done
        await asyncio.wait_for(asyncio.gather(*listens), 20)

    asyncio.run(asyncio.wait_for(main(), 60))


@pytest.mark.parametrize("cut", ["mid-header", "mid-body", "mid-sse"])
def test_clients_that_vanish_leave_the_server_serving(
    address: tuple[str, int],  # noqa: F811
    cut: str,
) -> None:
    async def main() -> None:
        full = raw_post("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        for _ in range(20):
            reader, writer = await asyncio.open_connection(*address)
            if cut == "mid-header":
                writer.write(full[:25])
            elif cut == "mid-body":
                writer.write(full[:-10])
            else:
                writer.write(full)
                await writer.drain()
                await asyncio.wait_for(reader.read(65536), 5)  # the stream opened: then vanish
            await writer.drain()
            writer.close()
        ok = post_bytes(
            1, "tools/call", {"name": "test_simple_text"}, {"mcp-name": "test_simple_text"}
        )
        (answer,) = await asyncio.wait_for(exchange(address, ok), 10)
        assert "simple text" in answer["result"]["content"][0]["text"]

    asyncio.run(main())


def test_slowloris_is_closed_while_others_are_served(address: tuple[str, int]) -> None:  # noqa: F811
    """``client_timeout`` is 2 s in the fixture's servers: the trickle is cut, others go on."""

    async def main() -> float:
        reader, writer = await asyncio.open_connection(*address)
        start = time.monotonic()
        data = raw_post("server/discover", {})
        closed_after = None
        for i in range(len(data)):
            writer.write(data[i : i + 1])
            try:
                await writer.drain()
                got = await asyncio.wait_for(reader.read(65536), 0.25)
            except TimeoutError:
                got = None
            except ConnectionError:
                got = b""
            if got == b"":
                closed_after = time.monotonic() - start
                break
            ok = post_bytes(1, "server/discover", {}, {})
            (answer,) = await asyncio.wait_for(exchange(address, ok), 5)  # others are served
            assert answer["result"]["supportedVersions"] == ["2026-07-28"]
        writer.close()
        assert closed_after is not None, "the trickling client was never cut off"
        return closed_after

    assert asyncio.run(asyncio.wait_for(main(), 60)) < 10
