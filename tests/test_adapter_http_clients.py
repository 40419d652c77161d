"""The asyncio and trio Streamable HTTP clients against each adapter's HTTP server.

Each async client (``mcp_proto_asyncio``, ``mcp_proto_trio``) against each server of
``tests/test_adapter_http.py`` (the everything handlers, ``prompts/get`` slow, and
``Mcp-Param-*`` headers checked against the tools): discover, list, progress, an MRTR
round, ``Mcp-Param-Region``, 20 concurrent calls, a listen that stays open across
change notifications, a timeout that cancels the handler, and a killed server
(``tests/peers/http_server.py``) failing what is in flight.  Then small raw servers: a
tool with bad ``x-mcp-header`` annotations, 401 / 500 / a lost request, ``Connection:
close`` answers, and a client that resets its connection.  127.0.0.1, bounded waits.
"""

from __future__ import annotations

import functools
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

import mcp_proto
import mcp_proto_asyncio
import mcp_proto_sync
import mcp_proto_trio
from mcp_proto import types as t
from mcp_proto_cli import everything

from .test_adapter_http import CANCELLED, raw_post, start_asyncio, start_sync, start_trio

PEER = Path(__file__).resolve().parent / "peers" / "http_server.py"
ELICIT = t.ClientCapabilities(elicitation=t.ClientCapabilitiesElicitation())
CLIENTS = ["asyncio", "trio"]
SERVERS = {"sync": start_sync, "asyncio": start_asyncio, "trio": start_trio}


@pytest.fixture(params=list(SERVERS))
def url(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A server of ``tests/test_adapter_http.py`` that also checks ``Mcp-Param-*``."""
    for cls in (mcp_proto_sync.Server, mcp_proto_asyncio.Server, mcp_proto_trio.Server):
        serve = functools.partialmethod(cls.serve_http, tools=everything.tool_lookup)
        monkeypatch.setattr(cls, "serve_http", serve)
    bound: list[tuple[str, int]] = []
    started = threading.Event()

    def ready(at: tuple[str, int]) -> None:
        bound.append(at)
        started.set()

    stop = SERVERS[request.param](ready)
    assert started.wait(10)
    yield f"http://{bound[0][0]}:{bound[0][1]}/mcp"
    stop()


@asynccontextmanager
async def open_client(kind: str, url: str, **options: Any) -> AsyncIterator[Any]:
    if kind == "asyncio":
        async with mcp_proto_asyncio.Client.http(url, **options) as client:
            yield client
    else:
        async with mcp_proto_trio.Client.http(url, **options) as client:
            yield client


def run(kind: str, main: Any) -> None:
    anyio.run(main, backend=kind)


def name_please(event: Any) -> dict[str, Any]:
    return {"user_name": t.ElicitResult(action="accept", content={"name": "Ada"})}


@pytest.mark.parametrize("kind", CLIENTS)
def test_calls(kind: str, url: str) -> None:
    async def main() -> None:
        seen: list[float] = []
        with anyio.fail_after(30):
            async with open_client(kind, url, capabilities=ELICIT, timeout=10) as client:
                assert (await client.discover()).supported_versions == ["2026-07-28"]
                names = {tool.name for tool in await client.list_tools()}
                assert "test_x_mcp_header" in names and not client.rejected_tools
                done = await client.call_tool(
                    "test_tool_with_progress", on_progress=lambda p: seen.append(p.progress)
                )
                assert done.content[0].text == "Progress test completed"
                assert seen == [0, 50, 100]
                asked = await client.call_tool(
                    "test_input_required_result_elicitation", on_input=name_please
                )
                assert asked.content[0].text == "Hello, Ada!"
                # Mcp-Param-Region (base64 here) is checked by the server against the tool.
                region = await client.call_tool("test_x_mcp_header", {"region": "Hello, 世界"})
                assert region.content[0].text == "region: Hello, 世界"
                client.http.tools.clear()  # forgets the annotation: no header, refused
                with pytest.raises(mcp_proto_asyncio.McpError) as refused:
                    await client.call_tool("test_x_mcp_header", {"region": "eu"})
                assert refused.value.code == -32020
                with pytest.raises(mcp_proto_asyncio.McpError):
                    await client.call_tool("no_such_tool")
                assert len(client._idle) == 1  # one call at a time: one connection, reused

    run(kind, main)


@pytest.mark.parametrize("kind", CLIENTS)
def test_twenty_concurrent_calls(kind: str, url: str) -> None:
    async def main() -> None:
        results: dict[int, Any] = {}
        progress: dict[int, int] = {}

        async def one(client: Any, i: int) -> None:
            progress[i] = 0

            def bump(p: Any) -> None:
                progress[i] += 1

            name = "test_tool_with_progress" if i % 2 else "test_x_mcp_header"
            results[i] = await client.call_tool(name, {"region": f"r{i}"}, on_progress=bump)

        with anyio.fail_after(30):
            async with open_client(kind, url, timeout=10, pool_size=3) as client:
                await client.list_tools()  # so that Mcp-Param-Region is sent
                async with anyio.create_task_group() as tg:
                    for i in range(20):
                        tg.start_soon(one, client, i)
                assert len(client._idle) <= 3 and not client._listens
        for i in range(20):
            expected = "Progress test completed" if i % 2 else f"region: r{i}"
            assert results[i].content[0].text == expected
            assert progress[i] == (3 if i % 2 else 0)

    run(kind, main)


@pytest.mark.parametrize("kind", CLIENTS)
def test_listen_stays_open_across_changes(kind: str, url: str) -> None:
    async def main() -> None:
        flt = t.SubscriptionFilter(tools_list_changed=True)
        with anyio.fail_after(30):
            async with open_client(kind, url, timeout=10) as client:
                async with await client.listen(flt) as sub:
                    assert sub.honoured.tools_list_changed
                    for _ in range(2):  # the stream stays open (keep-alive comments between)
                        await client.call_tool("test_trigger_tool_change")
                        note = await sub.__anext__()
                        assert note.method == "notifications/tools/list_changed"
                        assert note.request_id == sub.id
                    await anyio.sleep(0.7)  # a keep-alive comment goes by unseen
                    await client.call_tool("test_trigger_tool_change")
                    assert (await sub.__anext__()).method == "notifications/tools/list_changed"
                assert not client._listens
                with pytest.raises(StopAsyncIteration):
                    await sub.__anext__()

    run(kind, main)


@pytest.mark.parametrize("kind", CLIENTS)
def test_timeout_and_cancel_close_the_connection(kind: str, url: str) -> None:
    async def main() -> None:
        slow = t.GetPromptRequestParams(name="slow")
        with anyio.fail_after(30):
            async with open_client(kind, url, timeout=10) as client:
                CANCELLED.clear()
                with pytest.raises(TimeoutError):
                    await client.request("prompts/get", slow, timeout=0.5)
                assert await anyio.to_thread.run_sync(CANCELLED.wait, 5)
                assert not client.conn.in_flight()
                CANCELLED.clear()
                with anyio.move_on_after(0.5):  # the caller's own cancellation
                    await client.request("prompts/get", slow)
                assert await anyio.to_thread.run_sync(CANCELLED.wait, 5)
                assert (await client.call_tool("test_simple_text")).content  # the pool serves

    run(kind, main)


@pytest.mark.parametrize("adapter", list(SERVERS))
@pytest.mark.parametrize("kind", CLIENTS)
def test_killed_server_fails_what_is_in_flight(kind: str, adapter: str) -> None:
    peer = subprocess.Popen(
        [sys.executable, str(PEER), adapter], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        assert peer.stdout is not None
        address = peer.stdout.readline().decode().strip()
        assert address.startswith("http://127.0.0.1:"), address

        async def main() -> None:
            errors: list[BaseException] = []

            async def expect_lost(call: Any) -> None:
                try:
                    await call()
                except ConnectionError as e:
                    errors.append(e)

            with anyio.fail_after(30):
                async with open_client(kind, address, timeout=20) as client:
                    flt = t.SubscriptionFilter(tools_list_changed=True)
                    sub = await client.listen(flt)
                    slow = t.GetPromptRequestParams(name="slow")
                    async with anyio.create_task_group() as tg:
                        for _ in range(3):
                            tg.start_soon(
                                expect_lost, functools.partial(client.request, "prompts/get", slow)
                            )
                        tg.start_soon(expect_lost, sub.__anext__)
                        await anyio.sleep(0.5)  # all four are in flight
                        peer.kill()
                    assert len(errors) == 4, errors
                    with pytest.raises(ConnectionError):
                        await client.call_tool("test_simple_text")

        run(kind, main)
    finally:
        peer.kill()
        peer.wait(10)


def test_a_reset_connection_leaves_the_server_serving(url: str) -> None:
    """A client that resets its connection (RST) mid-listen: the server keeps serving."""
    host, port = url[len("http://") :].split("/", maxsplit=1)[0].split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    sock.sendall(raw_post("subscriptions/listen", {"notifications": {"toolsListChanged": True}}))
    assert b"text/event-stream" in sock.recv(65536)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()  # with SO_LINGER 0: a reset, not a FIN

    async def main() -> None:
        with anyio.fail_after(20):
            async with open_client("asyncio", url, timeout=10) as client:
                await anyio.sleep(0.3)
                assert (await client.call_tool("test_simple_text")).content

    run("asyncio", main)


@pytest.mark.parametrize("kind", CLIENTS)
def test_a_tool_with_bad_header_annotations_is_left_out(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    bad = {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "a b"}}}
    tools = [everything.tool("good", "fine"), everything.tool("bad", "broken", bad)]

    def list_tools(ctx: Any, params: Any) -> Any:
        return {"tools": tools}

    caps = t.ServerCapabilities(tools=t.ServerCapabilitiesTools())
    server = mcp_proto_sync.Server({"tools/list": list_tools}, capabilities=caps)
    bound: list[tuple[str, int]] = []
    up, stop = threading.Event(), threading.Event()
    thread = threading.Thread(
        target=server.serve_http,
        args=("127.0.0.1", 0),
        kwargs={"ready": lambda at: (bound.append(at), up.set()), "stop": stop},
    )
    thread.start()
    try:
        assert up.wait(10)

        async def main() -> None:
            url = f"http://127.0.0.1:{bound[0][1]}/mcp"
            with anyio.fail_after(20):
                async with open_client(kind, url, timeout=10) as client:
                    assert [tool.name for tool in await client.list_tools()] == ["good"]
                    assert [r.name for r in client.rejected_tools] == ["bad"]

        run(kind, main)
    finally:
        stop.set()
        thread.join(10)
    (record,) = [r for r in caplog.records if "left out" in r.getMessage()]
    assert record.name == "mcp_proto.client" and record.levelname == "WARNING"
    assert record.getMessage().startswith("tool 'bad' left out: ")


CANNED = [
    b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\nwww-authenticate: Bearer "
    b'resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp", '
    b'scope="files:read"\r\n\r\n',
    b"HTTP/1.1 500 Oops\r\ncontent-type: text/html\r\ncontent-length: 4\r\n\r\noops",
    b"",  # the request is read, then the connection closes with no response
]


def serve_canned(listener: socket.socket, responses: list[bytes] = CANNED) -> None:
    """Answer one POST per connection with the next canned response, then close."""
    for response in responses:
        sock, _ = listener.accept()
        with sock:
            sock.settimeout(10)
            data = b""
            while b"\r\n\r\n" not in data:
                data += sock.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            while len(body) < length:
                body += sock.recv(65536)
            sock.sendall(response)


@pytest.mark.parametrize("kind", CLIENTS)
def test_http_failures_become_exceptions(kind: str) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(10)
    thread = threading.Thread(target=serve_canned, args=(listener,))
    thread.start()

    async def main() -> None:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
        with anyio.fail_after(20):
            async with open_client(kind, url, timeout=10, era="modern") as client:
                with pytest.raises(PermissionError) as denied:
                    await client.discover()
                assert denied.value.args[1].status == 401
                assert denied.value.args[1].bearer.scope == "files:read"
                with pytest.raises(mcp_proto.RemoteProtocolError, match="HTTP 500"):
                    await client.discover()
                with pytest.raises(ConnectionError, match="lost"):
                    await client.discover()
                assert not client.conn.in_flight()

    try:
        run(kind, main)
    finally:
        thread.join(10)
        listener.close()


@pytest.mark.parametrize("kind", CLIENTS)
def test_a_connection_close_answer_is_not_reused(kind: str) -> None:
    body = b'{"jsonrpc":"2.0","id":%d,"result":{"content":[]}}'
    head = b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-type: application/json\r\n"
    # the ids are 1, 2, 3: one client, one call after the other
    answers = [head + b"content-length: %d\r\n\r\n" % len(body % i) + body % i for i in (1, 2, 3)]
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(10)
    thread = threading.Thread(target=serve_canned, args=(listener, answers))
    thread.start()

    async def main() -> None:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
        with anyio.fail_after(20):
            async with open_client(kind, url, timeout=10, era="modern") as client:
                for _ in range(3):  # each on a new connection, however soon
                    assert (await client.call_tool("x")).content == []

    try:
        run(kind, main)
    finally:
        thread.join(10)
        listener.close()
