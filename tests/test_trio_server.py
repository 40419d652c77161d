"""The trio stdio server in process, on trio's memory streams and ``MockClock``.

Both links of the server (the default ``StreamLink`` over any trio stream, and the
raw ``FdLink`` of ``io="raw"``, over a real pipe) are driven here with virtual time, so
that waits of seconds cost none: backpressure (the core's ``PAUSED``), a request
cancelled while it is held, the shutdown grace (STDIO-15), and a client that never
reads (the write gives up after ``client_timeout`` and ``serve`` returns).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
import pytest
import trio
import trio.testing

from mcp_proto import types as t
from mcp_proto_trio import Server

CAPS = t.ServerCapabilities(tools=t.ServerCapabilitiesTools())
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def call(id: int, name: str = "fast", **arguments: Any) -> bytes:
    params = {"_meta": META, "name": name, "arguments": arguments}
    return orjson.dumps({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})


def cancel(id: int) -> bytes:
    return orjson.dumps(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}}
    )


def lines(*messages: bytes) -> bytes:
    return b"".join(message + b"\n" for message in messages)


def virtual(fn: Callable[[], Awaitable[None]]) -> None:
    """Run ``fn`` on a clock that jumps ahead whenever every task waits."""

    async def bounded() -> None:
        with trio.fail_after(600):  # virtual seconds
            await fn()

    trio.run(bounded, clock=trio.testing.MockClock(autojump_threshold=0))


class Reader:
    """The client's side of the stream: whole JSON lines, in order."""

    def __init__(self, stream: trio.abc.ReceiveStream) -> None:
        self.stream = stream
        self.buffer = b""

    async def message(self) -> dict[str, Any]:
        while b"\n" not in self.buffer:
            data = await self.stream.receive_some(65536)
            assert data, "the server closed its output"
            self.buffer += data
        line, self.buffer = self.buffer.split(b"\n", 1)
        message: dict[str, Any] = orjson.loads(line)
        return message

    async def messages(self, count: int) -> list[dict[str, Any]]:
        return [await self.message() for _ in range(count)]


def make_server(gate: trio.Event, seen: list[str], **options: Any) -> Server:
    async def handler(ctx: Any, params: Any) -> t.CallToolResult:
        seen.append(f"start {ctx.request.id}")
        try:
            if params.name == "slow":
                await gate.wait()
            elif params.name == "sleep":
                await trio.sleep(float(params.arguments["seconds"]))
        except trio.Cancelled:
            seen.append(f"cancelled {ctx.request.id}")
            raise
        return t.CallToolResult(content=[t.TextContent(text=str(ctx.request.id))])

    return Server({"tools/call": handler}, capabilities=CAPS, **options)


def test_io_must_be_streams_or_raw() -> None:
    with pytest.raises(ValueError, match="io must be"):
        Server(io="fast")  # type: ignore[arg-type]


def gated(data: bytes, count: int, **options: Any) -> tuple[list[str], list[Any], list[str]]:
    """Serve ``data`` with ``options``; 5 s on, open the gate the slow calls wait on.

    What had started before the gate opened, the first ``count`` answers, and every
    line the handlers logged (``start N``, ``cancelled N``).
    """
    out: list[Any] = []

    async def main() -> None:
        gate, seen = trio.Event(), []
        server = make_server(gate, seen, **options)
        client, served = trio.testing.memory_stream_pair()
        reader = Reader(client)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.serve, served)
            await client.send_all(data)
            await trio.sleep(5)
            before = list(seen)
            gate.set()
            out.extend([before, await reader.messages(count), seen])
            await client.send_eof()

    virtual(main)
    before, answers, seen = out
    return before, answers, seen


def test_paused_past_max_in_flight_then_resumed_in_order() -> None:
    """Two slow calls fill ``max_in_flight``: the third is held, not run, until one ends."""
    data = lines(call(1, "slow"), call(2, "slow"), call(3))
    before, answers, seen = gated(data, 3, max_in_flight=2)
    assert sorted(before) == ["start 1", "start 2"]  # the third waits behind the pause
    assert sorted(a["id"] for a in answers) == [1, 2, 3]
    assert seen[2:] == ["start 3"]


def test_a_request_queued_behind_max_concurrency_and_cancelled_never_runs() -> None:
    """A request waiting for a handler slot, then cancelled, is dropped unanswered."""
    data = lines(call(1, "slow"), call(2), cancel(2), call(3))
    before, answers, seen = gated(data, 2, max_concurrency=1)
    assert before == ["start 1"]
    assert [a["id"] for a in answers] == [1, 3]
    assert "start 2" not in seen


def test_a_held_request_is_read_after_the_pause_even_if_its_cancel_came_behind() -> None:
    """Nothing behind a held request is read while paused: its cancellation is seen once
    it runs, and cancels it then (its handler sees ``trio.Cancelled``)."""
    data = lines(call(1, "slow"), call(2, "slow"), cancel(2), call(3))
    before, answers, seen = gated(data, 2, max_in_flight=1)
    assert before == ["start 1"]  # paused: 2 is held, nothing behind it read
    assert [a["id"] for a in answers] == [1, 3]
    assert "cancelled 2" in seen


def test_stdio15_input_end_gives_running_handlers_the_grace_then_cancels() -> None:
    async def main() -> None:
        gate, seen = trio.Event(), []
        server = make_server(gate, seen, shutdown_grace=5.0)
        client, served = trio.testing.memory_stream_pair()
        reader = Reader(client)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.serve, served)
            await client.send_all(lines(call(1, "sleep", seconds=2), call(2, "sleep", seconds=60)))
            await trio.sleep(0.5)
            started = trio.current_time()
            await client.send_eof()
            answer = await reader.message()  # the short one finishes within the grace
            assert answer["id"] == 1
        assert trio.current_time() - started == pytest.approx(5.0, abs=0.01)
        assert seen[-1] == "cancelled 2"  # the long one was cancelled at the grace's end

    virtual(main)


def test_a_client_that_never_reads_ends_the_stream_after_client_timeout() -> None:
    """The answer's write is shielded, but not forever: ``serve`` returns by itself."""

    async def main() -> None:
        gate, seen = trio.Event(), []
        server = make_server(gate, seen, client_timeout=7.0)
        client, served = trio.testing.lockstep_stream_pair()  # a send waits for a reader
        started = trio.current_time()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.serve, served)
            await client.send_all(lines(call(1)))
            # the client never reads and never ends its input
        assert trio.current_time() - started == pytest.approx(7.0, abs=0.01)

    virtual(main)


class _Pipe:
    """Stands for ``sys.stdin`` / ``sys.stdout``: all ``serve_stdio`` takes is the fd."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def fileno(self) -> int:
        return self.fd


@pytest.mark.parametrize("io", ["streams", "raw"])
def test_serve_stdio_gives_up_on_a_full_stdout_after_client_timeout(
    io: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client that never reads its pipe: the answer (larger than the pipe holds) is
    written, shielded, until ``client_timeout`` passes with no byte taken; then
    ``serve_stdio`` returns by itself, though stdin is still open, and leaves both
    descriptors in blocking mode."""
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    monkeypatch.setattr("sys.stdin", _Pipe(in_r))
    monkeypatch.setattr("sys.stdout", _Pipe(out_w))

    async def big(ctx: Any, params: Any) -> t.CallToolResult:
        return t.CallToolResult(content=[t.TextContent(text="x" * (1 << 20))])

    server = Server({"tools/call": big}, capabilities=CAPS, client_timeout=3.0, io=io)  # type: ignore[arg-type]

    async def main() -> None:
        os.write(in_w, lines(call(1)))
        started = trio.current_time()
        await server.serve_stdio()
        assert trio.current_time() - started == pytest.approx(3.0, abs=0.01)

    try:
        virtual(main)
        assert os.get_blocking(in_r) and os.get_blocking(out_w)
        assert b'"jsonrpc"' in os.read(out_r, 65536)  # a message began: it was not dropped
    finally:
        for fd in (in_r, in_w, out_r, out_w):
            os.close(fd)


# -- the trio client's writes ------------------------------------------------------------


def test_client_write_to_a_server_that_never_reads_fails_the_connection() -> None:
    """A request the server never reads: ``ConnectionError`` after ``timeout`` seconds,
    and every later call fails at once (part of a message is out: nothing can follow)."""
    from mcp_proto_trio import Client

    async def main() -> None:
        ours, theirs = trio.testing.lockstep_stream_pair()  # a send waits for a reader
        client = Client(ours, ours, timeout=4.0)
        async with trio.open_nursery() as nursery:
            await nursery.start(client.run)
            started = trio.current_time()
            with pytest.raises(ConnectionError, match=r"read nothing for 4\.0 s"):
                await client.call_tool("t", {"text": "x" * 1000})
            assert trio.current_time() - started == pytest.approx(4.0, abs=0.01)
            with pytest.raises(ConnectionError):
                await client.call_tool("t")
        del theirs

    virtual(main)


def test_client_call_cancelled_mid_write_still_writes_the_whole_message() -> None:
    """The stream is shared: a request cut in half would corrupt every message after it."""
    from mcp_proto_trio import Client

    async def main() -> None:
        ours, theirs = trio.testing.lockstep_stream_pair()
        client = Client(ours, ours, timeout=30.0, era="modern")  # no era probe: raw peer
        reader = Reader(theirs)
        got: list[dict[str, Any]] = []

        async def read(count: int) -> None:
            await trio.sleep(2)  # the call is cancelled (at 1 s) while its write waits
            got.extend(await reader.messages(count))

        async with trio.open_nursery() as nursery:
            await nursery.start(client.run)
            with trio.CancelScope() as scope:
                scope.deadline = trio.current_time() + 1.0
                nursery.start_soon(read, 2)
                await client.call_tool("t", {"text": "x" * 100_000})
            assert scope.cancelled_caught
            with trio.fail_after(5):
                while len(got) < 2:
                    await trio.sleep(0.1)
            nursery.cancel_scope.cancel()
        request, cancel = got  # whole, then the cancellation of its id
        assert request["params"]["arguments"]["text"] == "x" * 100_000
        assert cancel["method"] == "notifications/cancelled"
        assert cancel["params"]["requestId"] == request["id"]

    virtual(main)
