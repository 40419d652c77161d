"""The stdio servers' direct reads and writes (``serve_stdio``), at their edges.

Each adapter's ``serve_stdio`` reads and writes the process's pipes (trio: ``FdStream``,
or raw non-blocking descriptors with ``io="raw"``; asyncio: a pipe protocol; blocking:
``os.write``).  These runs
check what that must keep: whole messages in order when stdout fills up (partial writes,
a queue behind the writer), a regular file as stdin (trio, blocking: asyncio's pipe
transports refuse one), a client that stops reading, and stdin and stdout left in
blocking mode after the server returns (trio, blocking).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import orjson
import pytest

ADAPTERS = ["sync", "asyncio", "trio", "trio-raw"]

SERVER = textwrap.dedent(
    """
    import asyncio, os, sys
    from mcp_proto import types as t

    adapter = sys.argv[1]
    caps = t.ServerCapabilities(tools=t.ServerCapabilitiesTools())

    def result(params):
        size = int((params.arguments or {}).get("size", 1))
        return t.CallToolResult(content=[t.TextContent(text="x" * size)])

    async def call(ctx, params):
        if (params.arguments or {}).get("progress"):
            for i in range(3):
                await ctx.progress(i, total=3)
        return result(params)

    def sync_call(ctx, params):
        if (params.arguments or {}).get("progress"):
            for i in range(3):
                ctx.progress(i, total=3)
        return result(params)

    if adapter == "sync":
        import mcp_proto_sync

        mcp_proto_sync.Server({"tools/call": sync_call}, capabilities=caps).serve_stdio()
    elif adapter == "asyncio":
        import mcp_proto_asyncio

        server = mcp_proto_asyncio.Server({"tools/call": call}, capabilities=caps)
        asyncio.run(server.serve_stdio())
    else:
        import trio
        import mcp_proto_trio

        io = "raw" if adapter == "trio-raw" else "streams"
        server = mcp_proto_trio.Server({"tools/call": call}, capabilities=caps, io=io)
        trio.run(server.serve_stdio)
    print("blocking", os.get_blocking(0), os.get_blocking(1), file=sys.stderr, flush=True)
    """
)


def request(id: int, **arguments: object) -> bytes:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    params = {"_meta": meta, "name": "t", "arguments": arguments}
    if arguments.get("progress"):
        meta["progressToken"] = id
    message = {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}
    return orjson.dumps(message) + b"\n"


@pytest.fixture
def server(tmp_path: Path) -> str:
    path = tmp_path / "server.py"
    path.write_text(SERVER)
    return str(path)


def spawn(server: str, adapter: str, stdin: object = subprocess.PIPE) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, server, adapter],
        stdin=stdin,  # type: ignore[arg-type]
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def answers(lines: list[bytes]) -> dict[int, int]:
    """id -> size of the text of its result; every line must be one whole message."""
    sizes: dict[int, int] = {}
    for line in lines:
        message = orjson.loads(line)
        if "id" in message:
            assert message["id"] not in sizes, message["id"]
            sizes[message["id"]] = len(message["result"]["content"][0]["text"])
    return sizes


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_full_stdout_queues_whole_messages(adapter: str, server: str) -> None:
    """Big and small answers and progress, pipelined to a client that reads late."""
    proc = spawn(server, adapter)
    assert proc.stdin is not None and proc.stdout is not None
    sizes = {i: (300_000 if i % 7 == 0 else 10) for i in range(120)}
    payload = b"".join(request(i, size=n, progress=i % 3 == 0) for i, n in sizes.items())

    def write() -> None:
        assert proc.stdin is not None
        proc.stdin.write(payload)
        proc.stdin.flush()
        time.sleep(1.0)  # every answer is ready before the client reads any
        proc.stdin.close()

    writer = threading.Thread(target=write)
    writer.start()
    try:
        time.sleep(0.5)  # stdout fills up: writes go partial, the others queue
        out = proc.stdout.read()
        writer.join(30)
        assert proc.wait(30) == 0
    finally:
        proc.kill()
    lines = out.splitlines()
    assert answers(lines) == sizes
    progress = [orjson.loads(line) for line in lines if b'"notifications/progress"' in line]
    assert len(progress) == 3 * sum(1 for i in sizes if i % 3 == 0)


# asyncio's pipe transport refuses files
@pytest.mark.parametrize("adapter", ["sync", "trio", "trio-raw"])
def test_a_regular_file_as_stdin(adapter: str, server: str, tmp_path: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(b"".join(request(i, size=i) for i in range(50)))
    with requests.open("rb") as stdin:
        proc = spawn(server, adapter, stdin=stdin)
        try:
            out, err = proc.communicate(timeout=30)
        finally:
            proc.kill()
    assert proc.returncode == 0, err
    assert answers(out.splitlines()) == {i: i for i in range(50)}


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_client_that_stops_reading_does_not_hang_the_server(adapter: str, server: str) -> None:
    proc = spawn(server, adapter)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(request(0, size=5))
        proc.stdin.flush()
        assert answers([proc.stdout.readline()]) == {0: 5}
        proc.stdout.close()  # its answers now hit a closed pipe (EPIPE)
        for i in range(1, 20):
            proc.stdin.write(request(i, size=100_000))
        proc.stdin.close()
        proc.wait(30)  # it ends with its input; how (status) is the adapter's business
    finally:
        proc.kill()


@pytest.mark.parametrize("adapter", ["sync", "trio", "trio-raw"])
def test_stdin_and_stdout_stay_blocking(adapter: str, server: str) -> None:
    r, w = os.pipe()  # a pipe of ours, so the mode is the server's to restore
    proc = spawn(server, adapter, stdin=r)
    os.close(r)
    try:
        os.write(w, request(0, size=3))
        assert proc.stdout is not None
        assert answers([proc.stdout.readline()]) == {0: 3}
        os.close(w)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert b"blocking True True" in err, err
