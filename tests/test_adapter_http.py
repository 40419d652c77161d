"""Each adapter's Streamable HTTP server on 127.0.0.1, driven by the stdlib's http.client.

Keep-alive, JSON and SSE responses, 405 for GET, a listen that receives a change
notification triggered from another connection, and a client that disconnects mid-request
cancelling its handler.  The server stops at the end of each test (bounded waits).
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import socket
import threading
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import h11
import pytest
import trio

import mcp_proto_asyncio
import mcp_proto_sync
import mcp_proto_trio
from mcp_proto import types as t
from mcp_proto_cli import everything

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
CANCELLED = threading.Event()


def slow(ctx: mcp_proto_sync.Context, params: Any) -> Any:
    if ctx.wait_cancelled(10):
        CANCELLED.set()
    return {"content": []}


def async_slow(adapter: str) -> Any:
    async def slow(ctx: Any, params: Any) -> Any:
        try:
            await (trio.sleep(10) if adapter == "trio" else asyncio.sleep(10))
        except BaseException:
            CANCELLED.set()
            raise
        return {"content": []}

    return slow


def settings(options: dict[str, Any]) -> dict[str, Any]:
    """The fixture servers' settings: short timeouts, the everything server's options."""
    return {"keepalive_interval": 0.5, "client_timeout": 2, **everything.OPTIONS, **options}


def start_sync(
    ready: Callable[[tuple[str, int]], None],
    http_options: dict[str, Any] | None = None,
    **options: Any,
) -> Callable[[], None]:
    handlers: dict[str, Any] = {m: everything.run_sync(f) for m, f in everything.HANDLERS.items()}
    handlers["prompts/get"] = slow  # a handler that waits for its cancellation
    handlers.update(options.pop("handlers", {}))
    server = mcp_proto_sync.Server(handlers, **settings(options))
    stop = threading.Event()
    thread = threading.Thread(
        target=server.serve_http,
        args=("127.0.0.1", 0),
        kwargs={"ready": ready, "stop": stop, **(http_options or {})},
    )
    thread.start()
    return lambda: (stop.set(), thread.join(10))  # type: ignore[func-returns-value]


def start_asyncio(
    ready: Callable[[tuple[str, int]], None],
    http_options: dict[str, Any] | None = None,
    **options: Any,
) -> Callable[[], None]:
    handlers = {**everything.HANDLERS, "prompts/get": async_slow("asyncio")}
    handlers.update(options.pop("handlers", {}))
    server = mcp_proto_asyncio.Server(handlers, **settings(options))
    started: list[tuple[asyncio.AbstractEventLoop, asyncio.Task[None]]] = []

    async def main() -> None:
        task = asyncio.create_task(
            server.serve_http("127.0.0.1", 0, ready=ready, **(http_options or {}))
        )
        started.append((asyncio.get_running_loop(), task))
        with contextlib.suppress(asyncio.CancelledError):
            await task

    thread = threading.Thread(target=asyncio.run, args=(main(),))
    thread.start()

    def stop() -> None:
        loop, task = started[0]
        loop.call_soon_threadsafe(task.cancel)
        thread.join(10)

    return stop


def start_trio(
    ready: Callable[[tuple[str, int]], None],
    http_options: dict[str, Any] | None = None,
    **options: Any,
) -> Callable[[], None]:
    handlers = {**everything.HANDLERS, "prompts/get": async_slow("trio")}
    handlers.update(options.pop("handlers", {}))
    server = mcp_proto_trio.Server(handlers, **settings(options))
    scope: list[Any] = []

    async def main() -> None:
        with trio.CancelScope() as cancel:
            scope.append((cancel, trio.lowlevel.current_trio_token()))
            async with trio.open_nursery() as nursery:
                serve = partial(server.serve_http, **(http_options or {}))
                ready(await nursery.start(serve, "127.0.0.1", 0))

    thread = threading.Thread(target=trio.run, args=(main,))
    thread.start()

    def stop() -> None:
        cancel, token = scope[0]
        trio.from_thread.run_sync(cancel.cancel, trio_token=token)
        thread.join(10)

    return stop


@contextlib.contextmanager
def running(
    adapter: str, http_options: dict[str, Any] | None = None, **options: Any
) -> Iterator[tuple[str, int]]:
    """An adapter's HTTP server on 127.0.0.1 with ``options`` over :func:`settings`
    (``handlers=``: more handlers, or other ones, over the everything example's)."""
    bound: list[tuple[str, int]] = []
    up = threading.Event()

    def ready(at: tuple[str, int]) -> None:
        bound.append(at)
        up.set()

    if adapter == "trio-raw":  # the trio server on its direct socket I/O
        adapter, options = "trio", {"io": "raw", **options}
    start = {"sync": start_sync, "asyncio": start_asyncio, "trio": start_trio}[adapter]
    stop = start(ready, http_options, **options)
    try:
        assert up.wait(10)
        yield bound[0]
    finally:
        stop()


@pytest.fixture(params=["sync", "asyncio", "trio", "trio-raw"])
def address(request: pytest.FixtureRequest) -> Iterator[tuple[str, int]]:
    with running(request.param) as at:
        yield at


def post(method: str, params: dict[str, Any], id: int = 1) -> tuple[bytes, dict[str, str]]:
    body = {"jsonrpc": "2.0", "id": id, "method": method, "params": {**params, "_meta": META}}
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
    }
    if "name" in params:
        headers["mcp-name"] = params["name"]
    return json.dumps(body).encode(), headers


def raw_post(method: str, params: dict[str, Any]) -> bytes:
    body, headers = post(method, params)
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    start = f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: {len(body)}\r\n"
    return (start + head + "\r\n").encode() + body


def call(
    conn: http.client.HTTPConnection, method: str, params: dict[str, Any], id: int = 1
) -> Any:
    body, headers = post(method, params, id)
    conn.request("POST", "/mcp", body, headers)
    return conn.getresponse()


def sse_messages(raw: bytes) -> list[Any]:
    return [json.loads(line[5:]) for line in raw.split(b"\n") if line.startswith(b"data:")]


def test_keep_alive_json_and_sse(address: tuple[str, int]) -> None:
    conn = http.client.HTTPConnection(*address, timeout=10)
    first = call(conn, "server/discover", {})
    assert first.status == 200 and first.getheader("content-type") == "application/json"
    assert json.loads(first.read())["result"]["supportedVersions"] == ["2026-07-28"]
    meta = {**META, "progressToken": "p"}
    body = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "test_tool_with_progress", "_meta": meta},
    }
    _, headers = post("tools/call", {"name": "test_tool_with_progress"})
    conn.request("POST", "/mcp", json.dumps(body).encode(), headers)  # same TCP connection
    second = conn.getresponse()
    assert second.getheader("content-type") == "text/event-stream"
    messages = sse_messages(second.read())
    assert [m.get("method") for m in messages[:3]] == ["notifications/progress"] * 3
    assert messages[-1]["result"]["content"][0]["text"] == "Progress test completed"
    conn.close()


def test_http44_get_is_405(address: tuple[str, int]) -> None:
    conn = http.client.HTTPConnection(*address, timeout=10)
    conn.request("GET", "/mcp")
    response = conn.getresponse()
    assert response.status == 405 and response.getheader("allow") == "POST"
    conn.close()


class SSEReader:
    """Reads one response's SSE frames off a raw socket, HTTP framing (chunks) undone by h11."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.h11 = h11.Connection(h11.CLIENT)
        self.h11.send(h11.Request(method="POST", target="/mcp", headers=[("host", "x")]))
        self.head: h11.Response | None = None
        self.body = b""

    def _more(self) -> None:
        while True:
            event = self.h11.next_event()
            if event is h11.NEED_DATA:
                data = self.sock.recv(65536)
                assert data, "the stream ended"
                self.h11.receive_data(data)
            elif isinstance(event, h11.Response):
                self.head = event
            elif isinstance(event, h11.Data):
                self.body += event.data
                return
            else:
                raise AssertionError(f"unexpected {event!r}")

    def event(self) -> Any:
        """The next SSE message (``None`` for a keep-alive comment)."""
        while b"\n\n" not in self.body:
            self._more()
        frame, _, self.body = self.body.partition(b"\n\n")
        if frame.startswith(b":"):
            return None
        return sse_messages(frame)[0]


def test_listen_gets_a_change_from_another_connection(address: tuple[str, int]) -> None:
    listener = socket.create_connection(address, timeout=10)
    listener.sendall(
        raw_post("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    )
    reader = SSEReader(listener)
    ack = reader.event()
    assert reader.head is not None and reader.head.status_code == 200
    assert dict(reader.head.headers)[b"content-type"] == b"text/event-stream"
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    other = http.client.HTTPConnection(*address, timeout=10)
    assert call(other, "tools/call", {"name": "test_trigger_tool_change"}, id=9).status == 200
    for _ in range(40):  # keep-alive comments while waiting (keepalive_interval=0.5): 20 s
        if (note := reader.event()) is not None:
            break
    else:
        raise AssertionError("the change never reached the listen")
    assert note["method"] == "notifications/tools/list_changed"
    assert note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 1
    listener.close()
    other.close()


def test_cancel04_closing_the_connection_cancels_the_handler(address: tuple[str, int]) -> None:
    CANCELLED.clear()
    sock = socket.create_connection(address, timeout=10)
    sock.sendall(raw_post("prompts/get", {"name": "anything"}))
    sock.close()  # before any answer: the request is cancelled (HTTP-SSE-5)
    assert CANCELLED.wait(5)


def test_blocking_http_client_against_each_server(address: tuple[str, int]) -> None:
    caps = t.ClientCapabilities(elicitation=t.ClientCapabilitiesElicitation())
    url = f"http://{address[0]}:{address[1]}/mcp"
    seen: list[float] = []
    with mcp_proto_sync.Client.http(url, capabilities=caps, timeout=10) as client:
        assert client.discover().supported_versions == ["2026-07-28"]
        assert "test_x_mcp_header" in {tool.name for tool in client.list_tools()}
        done = client.call_tool("test_tool_with_progress", on_progress=lambda p: seen.append(1))
        assert done.content[0].text == "Progress test completed" and len(seen) == 3
        name = {"user_name": t.ElicitResult(action="accept", content={"name": "Ada"})}
        asked = client.call_tool("test_input_required_result_elicitation", on_input=lambda e: name)
        assert asked.content[0].text == "Hello, Ada!"
        # Mcp-Param-Region carries the argument (base64 for non-ASCII); the server checks it.
        region = client.call_tool("test_x_mcp_header", {"region": "Hello, 世界"})
        assert region.content[0].text == "region: Hello, 世界"
        with pytest.raises(mcp_proto_sync.McpError):
            client.call_tool("no_such_tool")
        CANCELLED.clear()
        with pytest.raises(TimeoutError):  # closing the response cancels the handler (HTTP-12)
            client.request("prompts/get", t.GetPromptRequestParams(name="x"), timeout=0.5)
        assert CANCELLED.wait(5)
        assert client.call_tool("test_simple_text").content  # the pool still serves


@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
def test_stopping_the_server_ends_its_open_connections(adapter: str) -> None:
    bound: list[tuple[str, int]] = []
    up = threading.Event()

    def ready(at: tuple[str, int]) -> None:
        bound.append(at)
        up.set()

    stop = {"sync": start_sync, "asyncio": start_asyncio, "trio": start_trio}[adapter](ready)
    assert up.wait(10)
    sock = socket.create_connection(bound[0], timeout=10)
    sock.sendall(raw_post("server/discover", {}))
    assert b" 200 " in sock.recv(65536)  # answered; the connection stays open (keep-alive)
    stop()
    sock.settimeout(5)
    try:
        assert sock.recv(65536) == b""  # closed by the server
    except ConnectionResetError:
        pass
    finally:
        sock.close()
