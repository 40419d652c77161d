"""Change notifications under subscribers that stop reading (issue 24), each adapter's server.

* the outbox policy: order, the bound, what an overflow drops, the warning it logs;
* HTTP on 127.0.0.1: listens that never read (a small ``SO_RCVBUF``) beside an honest one.
  A tool call sending enough notifications to fill their socket buffers and their outboxes
  returns at once, the honest listener gets every notification in order, and the server
  closes the stalled connections after ``fanout_timeout``, with a warning for each;
* a listen that fell behind and then reads again: the notifications up to the overflow,
  in order, then the listen's result (SUB-12), then the close;
* stdio, two streams of one server: the stalled one costs the other nothing, and once it
  reads it gets its listen's result and stays served (a new listen gets changes again).

Bounded: every wait has a deadline; the servers run on a thread of their own and stop
when their clients close (stdio) or are stopped (HTTP) at the end of each test.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from queue import Queue
from typing import Any

import h11
import pytest
import trio

import mcp_proto as m
import mcp_proto_asyncio
import mcp_proto_sync
import mcp_proto_trio
from mcp_proto import types as t
from mcp_proto_runtime import FANOUT_QUEUE, Offer, Outbox, listen_end

ADAPTERS = ["sync", "asyncio", "trio", "trio-raw"]  # trio-raw: Server(io="raw")
VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
}
SUB_ID = "io.modelcontextprotocol/subscriptionId"
UPDATED = "notifications/resources/updated"
PREFIX = "file:///fanout/"
LISTEN = {"notifications": {"resourceSubscriptions": [PREFIX]}}
CAPS = t.ServerCapabilities(
    tools=t.ServerCapabilitiesTools(), resources=t.ServerCapabilitiesResources(subscribe=True)
)
SIZE = 16 * 1024  # bytes of padding per HTTP notification: fewer of them fill a buffer


# -- the outbox policy -----------------------------------------------------------------


def test_outbox_keeps_order_up_to_its_bound() -> None:
    box = Outbox[int](limit=3)
    assert [box.offer(i) for i in range(3)] == [Offer.QUEUED] * 3
    assert [box.pop(), box.pop()] == [0, 1]
    assert box.offer(3) is Offer.QUEUED and len(box) == 2
    assert [box.pop(), box.pop(), box.pop()] == [2, 3, None]
    assert not box.ending


def test_an_overflow_ends_the_subscriber_drops_what_waited_and_warns_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    box = Outbox[int](limit=2, who="listen 7 of 127.0.0.1:1")
    with caplog.at_level(logging.WARNING, logger="mcp_proto.server"):
        offers = [box.offer(i) for i in range(5)]
    assert offers == [Offer.QUEUED, Offer.QUEUED, Offer.OVERFLOW, Offer.DROPPED, Offer.DROPPED]
    assert box.ending and len(box) == 0 and box.pop() is None
    (record,) = caplog.records
    assert record.name == "mcp_proto.server" and record.levelno == logging.WARNING
    assert "listen 7 of 127.0.0.1:1" in record.getMessage()
    box.reopen()  # the writer ended the subscriptions: new ones get notifications again
    assert box.offer(9) is Offer.QUEUED and box.pop() == 9 and not box.ending


def test_an_outbox_holds_one_notification_at_least() -> None:
    with pytest.raises(ValueError):
        Outbox[int](limit=0)
    assert Outbox[int]().limit == FANOUT_QUEUE


def test_a_connection_names_its_open_listens_for_their_graceful_end() -> None:
    tools = t.ServerCapabilitiesTools(list_changed=True)
    conn = m.ServerConnection(capabilities=t.ServerCapabilities(tools=tools))
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    listen = {"notifications": {"toolsListChanged": True}, "_meta": meta}
    for id, method, params in (
        (1, "subscriptions/listen", listen),
        (2, "tools/list", {"_meta": meta}),
        (3, "subscriptions/listen", listen),
    ):
        conn.receive_message({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        assert isinstance(conn.next_event(), m.Request)
    assert conn.subscriptions() == (1, 3)
    conn.send(listen_end(3))  # the graceful end (SUB-12) closes it
    assert conn.subscriptions() == (1,)


# -- servers on a thread of their own ---------------------------------------------------


def updates(arguments: dict[str, Any]) -> Iterator[t.ResourceUpdatedNotificationParams]:
    pad = "x" * arguments["size"]
    for i in range(arguments["count"]):
        yield t.ResourceUpdatedNotificationParams(uri=f"{PREFIX}{i:06d}/{pad}")


def flood_blocking(ctx: mcp_proto_sync.Context, params: t.CallToolRequestParams) -> Any:
    for update in updates(params.arguments or {}):
        ctx.notify_changed(UPDATED, update)
    return t.CallToolResult(content=[t.TextContent(text="sent")])


async def flood(ctx: Any, params: t.CallToolRequestParams) -> Any:
    for update in updates(params.arguments or {}):
        await ctx.notify_changed(UPDATED, update)
    return t.CallToolResult(content=[t.TextContent(text="sent")])


def make_server(adapter: str, **options: Any) -> Any:
    options = {"capabilities": CAPS, "keepalive_interval": 60, **options}
    if adapter == "sync":
        return mcp_proto_sync.Server({"tools/call": flood_blocking}, **options)
    if adapter == "asyncio":
        return mcp_proto_asyncio.Server({"tools/call": flood}, **options)
    io = "raw" if adapter == "trio-raw" else "streams"
    return mcp_proto_trio.Server({"tools/call": flood}, io=io, **options)


@contextlib.contextmanager
def http_server(adapter: str, **options: Any) -> Iterator[tuple[str, int]]:
    """The adapter's HTTP server on 127.0.0.1 (a free port), stopped on exit."""
    server = make_server(adapter, **options)
    bound: Queue[tuple[str, int]] = Queue()
    stopping: list[Callable[[], None]] = []
    if adapter == "sync":
        stop = threading.Event()
        kwargs = {"ready": bound.put, "stop": stop}
        thread = threading.Thread(
            target=server.serve_http, args=("127.0.0.1", 0), kwargs=kwargs, daemon=True
        )
        stopping.append(stop.set)
    elif adapter == "asyncio":

        async def serve_asyncio() -> None:
            task = asyncio.create_task(server.serve_http("127.0.0.1", 0, ready=bound.put))
            loop = asyncio.get_running_loop()
            stopping.append(lambda: loop.call_soon_threadsafe(task.cancel))
            with contextlib.suppress(asyncio.CancelledError):
                await task

        thread = threading.Thread(target=asyncio.run, args=(serve_asyncio(),), daemon=True)
    else:

        async def serve_trio() -> None:
            with trio.CancelScope() as scope:
                token = trio.lowlevel.current_trio_token()
                stopping.append(lambda: trio.from_thread.run_sync(scope.cancel, trio_token=token))
                async with trio.open_nursery() as nursery:
                    bound.put(await nursery.start(server.serve_http, "127.0.0.1", 0))

        thread = threading.Thread(target=trio.run, args=(serve_trio,), daemon=True)
    thread.start()
    try:
        yield bound.get(timeout=10)
    finally:
        stopping[0]()
        thread.join(10)
        assert not thread.is_alive()


@contextlib.contextmanager
def stdio_server(adapter: str, count: int, small: int = 0) -> Iterator[list[socket.socket]]:
    """One server serving ``count`` streams (JSON lines): yields their client ends.

    A socket pair each; the first ``small`` have small buffers, so that a client that
    does not read stalls its stream soon.  Closing the client ends on exit ends them.
    """
    pairs = [socket.socketpair() for _ in range(count)]
    streams = [ours for ours, _ in pairs]
    for ours, theirs in pairs[:small]:
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        theirs.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    server = make_server(adapter)
    threads: list[threading.Thread] = []
    if adapter == "sync":
        for sock in streams:
            files = (sock.makefile("rb"), sock.makefile("wb"))
            threads.append(threading.Thread(target=server.serve, args=files, daemon=True))
    elif adapter == "asyncio":

        async def serve_asyncio() -> None:
            opened = [await asyncio.open_connection(sock=sock) for sock in streams]
            await asyncio.gather(*(server.serve(reader, writer) for reader, writer in opened))

        threads.append(threading.Thread(target=asyncio.run, args=(serve_asyncio(),), daemon=True))
    else:

        async def serve_trio() -> None:
            async with trio.open_nursery() as nursery:
                for sock in streams:
                    stream = trio.SocketStream(trio.socket.from_stdlib_socket(sock))
                    nursery.start_soon(server.serve, stream)

        threads.append(threading.Thread(target=trio.run, args=(serve_trio,), daemon=True))
    for thread in threads:
        thread.start()
    try:
        yield [theirs for _, theirs in pairs]
    finally:
        for _, theirs in pairs:
            theirs.close()  # the input ends, and a write still waiting fails
        for thread in threads:
            thread.join(10)
        for ours, _ in pairs:
            ours.close()
    assert not any(thread.is_alive() for thread in threads)


# -- HTTP clients ----------------------------------------------------------------------


def post(conn: h11.Connection, id: int, method: str, params: dict[str, Any]) -> bytes:
    """The bytes of one POST, through ``conn`` so that it can read the response."""
    message = {"jsonrpc": "2.0", "id": id, "method": method, "params": {**params, "_meta": META}}
    body = json.dumps(message).encode()
    headers = [
        ("host", "127.0.0.1"),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("content-length", str(len(body))),
        ("mcp-protocol-version", VERSION),
        ("mcp-method", method),
    ]
    if "name" in params:
        headers.append(("mcp-name", params["name"]))
    request = h11.Request(method="POST", target="/mcp", headers=headers)
    return conn.send(request) + conn.send(h11.Data(data=body)) + conn.send(h11.EndOfMessage())


class Exchange:
    """One POST on a connection of its own, its response read on demand (JSON or SSE)."""

    def __init__(
        self, at: tuple[str, int], id: int, method: str, params: dict[str, Any], rcvbuf: int = 0
    ):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:  # before connecting: a window shrunk later stalls the sender for seconds
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(10)
        self.sock.connect(at)
        self.conn = h11.Connection(h11.CLIENT)
        self.sock.sendall(post(self.conn, id, method, params))
        self.messages: list[Any] = []
        self.arrived: list[float] = []
        self.body = b""
        self.ended = self.closed = False

    def read(self, until: Callable[[Exchange], bool], seconds: float) -> None:
        """Read until ``until(self)``, the end of the connection, or ``seconds``."""
        deadline = time.monotonic() + seconds
        while not until(self) and not self.closed:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(1 << 20)
            except TimeoutError:
                return
            except ConnectionResetError:
                data = b""
            self.closed = not data
            self.conn.receive_data(data)
            while (event := self.conn.next_event()) not in (h11.NEED_DATA, h11.PAUSED):
                if isinstance(event, h11.Data):
                    self._frames(event.data)
                elif isinstance(event, h11.EndOfMessage):
                    self.ended = True
                    if self.body.startswith(b"{"):  # a JSON response
                        self._message(self.body)
                elif isinstance(event, h11.ConnectionClosed):
                    break

    def _frames(self, data: bytes) -> None:
        self.body += data
        if self.body.startswith(b"{"):
            return
        *frames, self.body = self.body.split(b"\n\n")
        for frame in frames:
            for line in frame.split(b"\n"):
                if line.startswith(b"data:"):
                    self._message(line[5:])

    def _message(self, raw: bytes) -> None:
        self.messages.append(json.loads(raw))
        self.arrived.append(time.monotonic())

    def notes(self) -> list[int]:
        """The indices of the updates received, in the order received."""
        return [int(m["params"]["uri"][len(PREFIX) :][:6]) for m in self.messages if is_note(m)]

    def close(self) -> None:
        self.sock.close()


def is_note(message: Any) -> bool:
    return bool(message.get("method") == UPDATED)


class HonestListen:
    """A listen read in a process of its own (``tests/peers/listen_reader.py``), so that
    it keeps up with a flood however loaded the machine; :meth:`report` waits for what
    it got, :meth:`close` ends it (the client closes its listen)."""

    def __init__(self, at: tuple[str, int], id: int, count: int) -> None:
        command = [sys.executable, "-m", "tests.peers.listen_reader", *map(str, (*at, id, count))]
        root = Path(__file__).resolve().parent.parent
        self.process = subprocess.Popen(
            command, cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        self.acknowledged = json.loads(self.process.stdout.readline() or "{}").get("acknowledged")

    def report(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        return dict(json.loads(self.process.stdout.readline() or "{}"))

    def close(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def stalled_listen(at: tuple[str, int], id: int) -> socket.socket:
    """A listen that reads its acknowledgement, then nothing: its socket buffers fill."""
    listen = Exchange(at, id, "subscriptions/listen", LISTEN, rcvbuf=4096)
    seen = b""
    while b"acknowledged" not in seen:  # a little at a time: nothing after it is read
        chunk = listen.sock.recv(256)
        assert chunk, seen
        seen += chunk
    return listen.sock


def closed_by_server(sock: socket.socket, seconds: float) -> bool:
    """Read (and drop) what the server sent until it closed the connection, for ``seconds``."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            if not sock.recv(1 << 20):
                return True
        except TimeoutError:
            return False
        except ConnectionResetError:
            return True
    return False


def flood_count() -> int:
    """Updates of :data:`SIZE` that overflow a stalled listen whatever its socket buffers hold.

    Linux lets a socket's send buffer grow to ``tcp_wmem``'s maximum; past that, a margin,
    the outbox, and a few more.
    """
    try:
        most = int(Path("/proc/sys/net/ipv4/tcp_wmem").read_text().split()[2])
    except (OSError, ValueError, IndexError):
        most = 4 << 20
    return (most + (2 << 20)) // SIZE + FANOUT_QUEUE + 16


def timed_out(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The server's warnings of connections closed for a write that took too long."""
    found = [r.getMessage() for r in caplog.records if r.name == "mcp_proto.server"]
    return [w for w in found if "connection closed" in w]


def acknowledged(ex: Exchange) -> bool:
    return any(m.get("method") == "notifications/subscriptions/acknowledged" for m in ex.messages)


def call_flood(at: tuple[str, int], count: int, size: int = SIZE) -> float:
    """Call the flood tool on a connection of its own; seconds until its answer."""
    start = time.monotonic()
    arguments = {"count": count, "size": size}
    call = Exchange(at, 9000, "tools/call", {"name": "flood", "arguments": arguments})
    call.read(lambda ex: ex.ended, 15)
    took = time.monotonic() - start
    call.close()
    assert call.messages and call.messages[-1]["result"]["content"][0]["text"] == "sent"
    return took


# -- HTTP ------------------------------------------------------------------------------


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_stalled_listens_neither_block_the_call_nor_delay_the_others(
    adapter: str, caplog: pytest.LogCaptureFixture
) -> None:
    count = flood_count()
    with (
        caplog.at_level(logging.WARNING, logger="mcp_proto.server"),
        # a queue that holds the whole flood: the stalled listens end by their writes timing
        # out, and the honest one, whose writer may run seldom on a loaded machine, never
        # falls behind for that
        http_server(adapter, fanout_timeout=0.5, fanout_queue=2 * count) as at,
    ):
        stalled = [stalled_listen(at, 100 + k) for k in range(3)]
        honest = HonestListen(at, 200, count)
        assert honest.acknowledged
        took = call_flood(at, count)
        returned = time.monotonic()
        got = honest.report()
        # on main each notification past the stalled buffers waited 5 s per stalled listen
        assert took < 3.0, f"the call took {took:.2f} s"
        assert got["notes"] == list(range(count))
        assert got["sub_ids"] == [200]
        assert got["last"] - returned < 2.0  # delivered with the call, not seconds later
        # they read nothing: their writes time out and the server closes them (then they read)
        deadline = time.monotonic() + 10
        while len(timed_out(caplog)) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert all(closed_by_server(sock, 10) for sock in stalled)
        assert not got["closed"]  # still open: nothing ended it
        ports = [sock.getsockname()[1] for sock in stalled] + [got["port"]]
        for sock in stalled:
            sock.close()
        honest.close()
    warnings = [r.getMessage() for r in caplog.records if r.name == "mcp_proto.server"]
    closed = timed_out(caplog)
    assert len(closed) == 3, warnings  # each stalled listen, once
    assert all(any(f":{port}" in w for w in closed) for port in ports[:3])
    assert not any(f":{ports[3]}" in w for w in warnings)  # never the honest one


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_listen_that_fell_behind_gets_its_result_then_the_close(adapter: str) -> None:
    count = flood_count()
    with http_server(adapter, fanout_timeout=10) as at:
        late = Exchange(at, 300, "subscriptions/listen", LISTEN, rcvbuf=4096)
        late.read(acknowledged, 10)
        took = call_flood(at, count)  # the listen reads nothing meanwhile: it overflows
        assert took < 5.0, f"the call took {took:.2f} s"
        late.read(lambda ex: False, 15)  # now it reads everything, up to the close
        late.close()
    assert late.closed and late.ended
    got = late.notes()
    assert 0 < len(got) < count and got == list(range(len(got)))  # in order, none skipped
    end = late.messages[-1]
    assert end["id"] == 300 and end["result"]["_meta"][SUB_ID] == 300  # SUB-12
    assert end["result"]["resultType"] == "complete"


# -- stdio -----------------------------------------------------------------------------


def line(id: int, method: str, params: dict[str, Any]) -> bytes:
    message = {"jsonrpc": "2.0", "id": id, "method": method, "params": {**params, "_meta": META}}
    return json.dumps(message).encode() + b"\n"


class Lines:
    """The client end of a stdio stream: JSON lines, read on demand."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""
        self.messages: list[Any] = []

    def send(self, id: int, method: str, params: dict[str, Any]) -> None:
        self.sock.sendall(line(id, method, params))

    def read_until(self, done: Callable[[Any], bool], seconds: float = 10) -> Any:
        """Read messages until one passes ``done``; returns it."""
        deadline = time.monotonic() + seconds
        while True:
            while b"\n" in self.buffer:
                raw, self.buffer = self.buffer.split(b"\n", 1)
                message = json.loads(raw)
                self.messages.append(message)
                if done(message):
                    return message
            self.sock.settimeout(max(deadline - time.monotonic(), 0.001))
            data = self.sock.recv(1 << 20)
            assert data, "the server closed the stream"
            self.buffer += data

    def notes(self) -> list[int]:
        return [int(m["params"]["uri"][len(PREFIX) :][:6]) for m in self.messages if is_note(m)]


def answer_to(id: int) -> Callable[[Any], bool]:
    return lambda message: message.get("id") == id and "method" not in message


def acked(message: Any) -> bool:
    return bool(message.get("method") == "notifications/subscriptions/acknowledged")


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_stdio_a_stalled_stream_costs_the_others_nothing_and_stays_served(adapter: str) -> None:
    count = 400  # of 1 KiB: past the pair's buffers, the adapter's own, and the outbox
    with stdio_server(adapter, 2, small=1) as ends:
        stalled, honest = Lines(ends[0]), Lines(ends[1])
        for client in (stalled, honest):
            client.send(1, "subscriptions/listen", LISTEN)
            client.read_until(acked)
        start = time.monotonic()
        honest.send(
            2, "tools/call", {"name": "flood", "arguments": {"count": count, "size": 1024}}
        )
        honest.read_until(answer_to(2))
        assert time.monotonic() - start < 3.0
        assert honest.notes() == list(range(count))  # all of them, in order, before the answer
        # now the stalled stream reads: what it got before it fell behind, then its end
        end = stalled.read_until(answer_to(1))
        assert end["result"]["_meta"][SUB_ID] == 1  # SUB-12
        got = stalled.notes()
        assert len(got) < count and got == list(range(len(got)))
        # the stream is still served, and a new listen gets changes again
        stalled.send(3, "subscriptions/listen", LISTEN)
        stalled.read_until(acked)
        honest.send(4, "tools/call", {"name": "flood", "arguments": {"count": 1, "size": 8}})
        honest.read_until(answer_to(4))
        note = stalled.read_until(is_note)
        assert note["params"]["_meta"][SUB_ID] == 3


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_stdio_a_burst_reaches_every_stream_that_keeps_up(adapter: str) -> None:
    """A caller with no listen of its own: every other stream's writer does all the work."""
    # far past the outbox (64), yet within what the pair's buffers hold unread (~280 such
    # lines on Linux): the listener's pace, which a loaded machine sets, cannot end it
    count = 200
    with stdio_server(adapter, 2) as ends:
        listener, caller = Lines(ends[0]), Lines(ends[1])
        listener.send(1, "subscriptions/listen", LISTEN)
        listener.read_until(acked)
        last = f"{PREFIX}{count - 1:06d}/"
        done: list[Any] = []
        reading = threading.Thread(
            target=lambda: done.append(
                listener.read_until(
                    lambda m: answer_to(1)(m) or (is_note(m) and m["params"]["uri"] == last)
                )
            )
        )
        reading.start()
        start = time.monotonic()
        caller.send(2, "tools/call", {"name": "flood", "arguments": {"count": count, "size": 0}})
        caller.read_until(answer_to(2))
        assert time.monotonic() - start < 5.0
        reading.join(15)
        assert done and "id" not in done[0]  # the last notification, not the listen's end
        assert listener.notes() == list(range(count))
