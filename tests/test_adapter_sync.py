"""The blocking adapter against real subprocesses (``tests/peers/stdio_server.py``).

Every test is bounded: calls carry timeouts, and ``close()`` ends the process by
closing stdin, then SIGTERM, then SIGKILL (STDIO-14).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto_sync import Client, InputRequiredError, McpError

PEER = str(Path(__file__).resolve().parent / "peers" / "stdio_server.py")


def spawn(mode: str = "normal", **kw: Any) -> Client:
    kw.setdefault("timeout", 20)
    return Client.stdio([sys.executable, PEER, mode], stderr=subprocess.PIPE, **kw)


def test_stdio01_call_progress_discover_and_errors() -> None:
    seen: list[float] = []
    with spawn() as client:
        result = client.call_tool(
            "echo", {"text": "hi"}, on_progress=lambda p: seen.append(p.progress)
        )
        assert result.content[0].text == "hi" and seen == [1]
        assert client.discover().supported_versions == ["2026-07-28"]
        with pytest.raises(McpError) as err:
            client.call_tool("nope")
        assert err.value.code == m.INVALID_PARAMS
        with pytest.raises(McpError) as err:
            client.request("prompts/list", t.PaginatedRequestParams())  # not offered: ERR-07
        assert err.value.code == m.METHOD_NOT_FOUND


def test_mrtr12_input_rounds_answered_by_a_callback() -> None:
    def answer(event: m.InputRequired) -> dict[str, Any]:
        assert list(event.input_requests) == ["name"]
        return {"name": t.ElicitResult(action="accept", content={"name": "Ada"})}

    caps = t.ClientCapabilities(elicitation=t.ClientCapabilitiesElicitation())
    with spawn(capabilities=caps) as client:
        result = client.call_tool("ask", on_input=answer)
        assert result.content[0].text == "hello Ada"
        with pytest.raises(InputRequiredError) as err:
            client.call_tool("ask")
        assert err.value.event.result.request_state == "s1"
    with spawn() as undeclared, pytest.raises(McpError) as refused:
        undeclared.call_tool("ask")  # the server may not ask what was not declared (MRTR-10)
    assert refused.value.code == m.MISSING_REQUIRED_CLIENT_CAPABILITY  # -32021 (META-10)
    assert refused.value.data == {"requiredCapabilities": {"elicitation": {"form": {}}}}


def test_cancel06_timeout_cancels_on_the_server_and_the_late_answer_is_dropped() -> None:
    client = spawn()
    try:
        assert client.era == "modern"  # the era probe first: it is part of the first call
        start = time.monotonic()
        with pytest.raises(TimeoutError):
            client.call_tool("sleep", {"seconds": 10}, timeout=0.3)
        assert time.monotonic() - start < 5
        assert client.call_tool("echo", {"text": "after"}).content[0].text == "after"
    finally:
        client.close()
    assert client.process is not None and client.process.stderr is not None
    assert b"cancelled" in client.process.stderr.read()  # the handler saw it (STDIO-13)


def test_stdio06_junk_on_stdout_is_dropped_not_fatal() -> None:
    with spawn("junk") as client:
        assert client.call_tool("echo", {"text": "ok"}).content[0].text == "ok"
        assert client.conn.statistics().in_flight == 0


def test_stdio03_crlf_lines_are_read() -> None:
    with spawn("crlf") as client:
        assert client.call_tool("echo", {"text": "crlf"}).content[0].text == "crlf"


def test_a_10_mib_result_arrives_whole() -> None:
    size = 10 * 1024 * 1024
    with spawn() as client:
        result = client.call_tool("big", {"size": size})
        assert len(result.content[0].text) == size


def test_stdio17_a_crash_mid_response_fails_the_call() -> None:
    client = spawn("crash")
    with pytest.raises((ConnectionError, m.RemoteProtocolError)):
        client.call_tool("echo", {"text": "x"})
    assert client.close() == 3


def test_a_silent_server_times_out_and_a_new_one_can_be_started() -> None:
    with spawn("silent") as client, pytest.raises(TimeoutError):
        client.call_tool("echo", timeout=0.3)
    with spawn() as again:
        assert again.call_tool("echo", {"text": "back"}).content[0].text == "back"


def test_stdio14_close_escalates_to_kill() -> None:
    client = spawn("stubborn")
    assert client.process is not None and client.process.stderr is not None
    assert client.process.stderr.readline() == b"ready\n"  # its SIGTERM handler is in place
    start = time.monotonic()
    code = client.close(grace=0.3)
    assert code == -9 and time.monotonic() - start < 5


def test_stdio15_server_exits_when_stdin_closes() -> None:
    client = spawn()
    assert client.call_tool("echo", {"text": "x"}).content[0].text == "x"
    assert client.close() == 0


def test_max_workers_is_the_old_name_of_max_concurrency() -> None:
    """The three servers take ``max_concurrency``; the blocking one's old keyword still works."""
    from mcp_proto_sync import Server

    assert Server().max_concurrency == 16 and Server(max_concurrency=3).max_concurrency == 3
    with pytest.warns(DeprecationWarning, match="max_concurrency"):
        assert Server(max_workers=5).max_concurrency == 5
