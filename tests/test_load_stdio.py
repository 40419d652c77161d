"""Load and fault tests over stdio with the real adapters (bounded in count and time).

* 10,000 pipelined ``tools/call`` requests on one stdio connection, to a server on each
  adapter: every response arrives exactly once, for the right request;
* a server killed with calls in flight: every one of them fails at once, none hangs.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson
import pytest

from mcp_proto_asyncio import Client

ROOT = Path(__file__).resolve().parent.parent
BENCH_SERVER = str(ROOT / "bench" / "servers" / "echo.py")
PEER = str(ROOT / "tests" / "peers" / "async_server.py")
SYNC_PEER = str(ROOT / "tests" / "peers" / "stdio_server.py")
N = 10_000


def request(id: int) -> bytes:
    return (
        orjson.dumps(
            {
                "jsonrpc": "2.0",
                "id": id,
                "method": "tools/call",
                "params": {
                    "name": "get_weather",
                    "arguments": {"n": id},
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {},
                    },
                },
            }
        )
        + b"\n"
    )


@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
def test_10000_pipelined_requests_every_response_accounted_for(adapter: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, BENCH_SERVER, adapter], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert proc.stdin is not None and proc.stdout is not None
    payload = b"".join(request(i) for i in range(N))

    def write() -> None:
        assert proc.stdin is not None
        proc.stdin.write(payload)
        proc.stdin.close()  # end of input after the last request: the server finishes them all

    writer = threading.Thread(target=write)
    writer.start()
    try:
        seen: dict[int, int] = {}
        for line in proc.stdout:  # ends when the server exits (bounded by the server's EOF)
            message = orjson.loads(line)
            assert "result" in message, message
            seen[message["id"]] = seen.get(message["id"], 0) + 1
        writer.join(30)
        assert proc.wait(30) == 0
    finally:
        proc.kill()
    missing = [i for i in range(N) if i not in seen]
    assert not missing, f"{len(missing)} requests got no response, e.g. {missing[:5]}"
    assert set(seen.values()) == {1}


def test_a_killed_server_fails_every_call_in_flight() -> None:
    async def main() -> list[BaseException]:
        async with Client.stdio(
            [sys.executable, PEER, "asyncio"], timeout=30, stderr=subprocess.DEVNULL
        ) as client:
            await client.call_tool("echo")
            calls = [
                asyncio.create_task(client.call_tool("sleep", {"seconds": 30})) for _ in range(50)
            ]
            await asyncio.sleep(0.5)
            assert client.process is not None
            client.process.kill()
            results = await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), 10)
        return [r for r in results if isinstance(r, BaseException)]

    failures = asyncio.run(main())
    assert len(failures) == 50 and all(isinstance(f, ConnectionError) for f in failures)


@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
def test_stdio15_end_of_input_drains_then_cancels_after_the_grace(adapter: str) -> None:
    """Requests already received finish; what outlives ``shutdown_grace`` is cancelled."""
    command = [PEER, adapter] if adapter != "sync" else [SYNC_PEER]
    proc = subprocess.Popen(
        [sys.executable, *command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PEER_SHUTDOWN_GRACE": "1"},
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    quick = request(1).replace(b"get_weather", b"echo")
    slow = request(2).replace(b"get_weather", b"sleep").replace(b'{"n":2}', b'{"seconds":60}')
    proc.stdin.write(quick + slow)
    proc.stdin.close()
    start = time.monotonic()
    try:
        assert proc.wait(20) == 0
    finally:
        proc.kill()
    assert time.monotonic() - start < 10
    answers = [orjson.loads(line) for line in proc.stdout]
    assert [a["id"] for a in answers] == [1]  # the quick one was answered, the slow one not
    assert b"cancelled 2" in proc.stderr.read()
