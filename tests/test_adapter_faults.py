"""Faults the review found, on every adapter's stdio server (real subprocesses, bounded).

* a handler whose result cannot be encoded gets -32603, and the server keeps serving;
* a client that vanishes while a handler runs: the server still exits cleanly;
* a request past ``max_in_flight`` is held and answered in turn; a cancellation is still read;
* (asyncio) a handler that cancels its own subtask is answered, not taken for cancelled.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

import mcp_proto as m
from mcp_proto_sync import Client, McpError

PEERS = Path(__file__).resolve().parent / "peers"
COMMANDS = {
    "sync": [str(PEERS / "stdio_server.py")],
    "asyncio": [str(PEERS / "async_server.py"), "asyncio"],
    "trio": [str(PEERS / "async_server.py"), "trio"],
}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def line(id: int, method: str, params: dict[str, object]) -> bytes:
    body = {"jsonrpc": "2.0", "id": id, "method": method, "params": {**params, "_meta": META}}
    return orjson.dumps(body) + b"\n"


@pytest.mark.parametrize("adapter", list(COMMANDS))
def test_an_unencodable_result_is_an_internal_error_and_serving_goes_on(adapter: str) -> None:
    command = [sys.executable, *COMMANDS[adapter]]
    with Client.stdio(command, timeout=10, stderr=subprocess.DEVNULL) as client:
        with pytest.raises(McpError) as err:
            client.call_tool("bad_result")
        assert err.value.code == m.INTERNAL_ERROR
        assert client.call_tool("echo", {"text": "still"}).content[0].text == "still"


@pytest.mark.parametrize("adapter", list(COMMANDS))
def test_a_client_that_vanishes_mid_call_leaves_a_clean_exit(adapter: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, *COMMANDS[adapter]],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(line(1, "tools/call", {"name": "sleep", "arguments": {"seconds": 1}}))
    proc.stdin.flush()
    time.sleep(0.5)
    proc.stdout.close()  # the client is gone: its answer has nowhere to go
    proc.stdin.close()
    try:
        assert proc.wait(20) == 0, proc.stderr.read().decode()[-2000:]
    finally:
        proc.kill()


@pytest.mark.parametrize("adapter", list(COMMANDS))
def test_a_request_past_max_in_flight_waits_its_turn_and_is_answered(adapter: str) -> None:
    """The core holds it (PAUSED); the adapter resumes when the running request ends."""
    env = {**os.environ, "PEER_MAX_IN_FLIGHT": "1"}
    proc = subprocess.Popen(
        [sys.executable, *COMMANDS[adapter]],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        sleep = line(1, "tools/call", {"name": "sleep", "arguments": {"seconds": 0.3}})
        echo = line(2, "tools/call", {"name": "echo", "arguments": {"text": "held"}})
        sent = sleep + echo + echo.replace(b'"id":2', b'"id":3')
        out, _ = proc.communicate(sent, timeout=20)  # the end of input waits for the held too
        answers = [orjson.loads(raw) for raw in out.splitlines()]
        assert [a["id"] for a in answers] == [1, 2, 3]  # in turn, none refused
        assert all("result" in a for a in answers), answers
        assert answers[1]["result"]["content"][0]["text"] == "held"
        assert proc.wait(20) == 0
    finally:
        proc.kill()


@pytest.mark.parametrize("adapter", list(COMMANDS))
def test_a_server_at_max_in_flight_still_reads_a_cancellation(adapter: str) -> None:
    env = {**os.environ, "PEER_MAX_IN_FLIGHT": "1"}  # at the limit with one request in flight
    command = [sys.executable, *COMMANDS[adapter]]
    with Client.stdio(command, timeout=10, env=env, stderr=subprocess.DEVNULL) as client:
        client.call_tool("echo")  # up
        with pytest.raises(TimeoutError):  # the handler waits for its cancellation...
            client.call_tool("sleep", {"seconds": 60}, timeout=0.5)
        start = time.monotonic()  # ...which the server reads although it is at its limit
        assert client.discover().supported_versions == ["2026-07-28"]
        assert time.monotonic() - start < 5


def test_asyncio_a_handler_cancelling_its_own_subtask_is_answered() -> None:
    command = [sys.executable, *COMMANDS["asyncio"]]
    with Client.stdio(command, timeout=10, stderr=subprocess.DEVNULL) as client:
        result = client.call_tool("inner_cancel")
        assert result.is_error  # the CancelledError was the handler's, reported as a tool error


def test_a_callback_that_raises_cancels_the_call_on_the_server() -> None:
    command = [sys.executable, *COMMANDS["asyncio"]]
    client = Client.stdio(command, timeout=10, stderr=subprocess.PIPE)
    try:
        client.call_tool("echo")

        def boom(params: object) -> None:
            raise KeyboardInterrupt  # the user gave up while it ran

        with pytest.raises(KeyboardInterrupt):
            client.call_tool("sleep", {"seconds": 30}, on_progress=boom)
        assert client.conn.in_flight() == ()
        assert client.call_tool("echo", {"text": "on"}).content[0].text == "on"
    finally:
        client.close()
    assert client.process is not None and client.process.stderr is not None
    assert b"cancelled" in client.process.stderr.read()
