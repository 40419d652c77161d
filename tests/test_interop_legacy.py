"""Interop with real ``initialize``-era clients: the official SDKs' 1.x lines.

``mcp`` 1.30.0 (Python) cannot live beside the project's modern ``mcp`` 2.3.0, so that
client runs in an environment of its own (``uv run --isolated --with mcp==1.30.0``, made
once and cached by uv); the TypeScript SDK's client (``@modelcontextprotocol/sdk``
1.32.2, the latest 1.x) is installed by the fixture below with ``npm ci`` from the lock
file in ``tests/peers/ts_legacy``.  Each reports what it saw as JSON.  Each
drives the everything example on each adapter, over stdio and over Streamable HTTP:
initialize (LEG-01/02/05), list, a call with progress, an elicitation and a sampling
round asked of it as real requests (the MRTR bridge), the cancellation of a call
waiting for input, logging/setLevel and a log message, ping, subscribe, a resource
update (over HTTP on the session's standalone GET stream, LEG-13), unsubscribe, read,
and a plain result with no ``resultType`` (LEG-02).  Over HTTP the modern SDK
(``mcp`` 2.3.0, this environment's) calls the same server process at the same time,
statelessly (VER-17).  Real subprocesses, bounded waits; servers are stopped by pid.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from ._http_helpers import wait_for_port

PEERS = Path(__file__).resolve().parent / "peers"
LEGACY_SDK = "mcp==1.30.0"
UV = shutil.which("uv")


@pytest.fixture(scope="session")
def ts_client(ts_sdk: tuple[str, Path]) -> list[str]:
    """The command of the TypeScript SDK's legacy client (``conftest.ts_sdk``)."""
    node, folder = ts_sdk
    return [node, str(folder / "client.mjs")]


def run_ts_client(command: list[str]) -> dict[str, Any]:
    done = subprocess.run(command, check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def legacy_client(server: list[str]) -> list[str]:
    if UV is None:
        pytest.skip("uv is needed to make the legacy SDK's own environment")
    return [UV, "run", "--isolated", "--no-project", "--quiet", "--with", LEGACY_SDK,
            "python", str(PEERS / "legacy_sdk_client.py"), *server]  # fmt: skip


def run_legacy_client(server: list[str]) -> dict[str, object]:
    command = legacy_client(server)
    done = subprocess.run(command, check=False, capture_output=True, text=True, timeout=180)
    return legacy_report(done.returncode, done.stdout, done.stderr)


def legacy_report(returncode: int, stdout: str, stderr: str) -> dict[str, Any]:
    done = subprocess.CompletedProcess([], returncode, stdout, stderr)
    if done.returncode != 0 and "legacy_sdk_client" not in done.stderr:
        # uv failed before the client ran: no registry to install the legacy SDK from
        pytest.skip(f"{LEGACY_SDK} could not be installed: {done.stderr[-300:]}")
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def stdio_server(adapter: str) -> list[str]:
    return [sys.executable, "-m", "mcp_proto_cli", "serve-example", "--stdio",
            "--adapter", adapter]  # fmt: skip


@pytest.mark.parametrize("adapter", ["trio", "asyncio", "sync"])
def test_legacy_sdk_client_against_the_everything_server_over_stdio(adapter: str) -> None:
    check(run_legacy_client(stdio_server(adapter)), http=False)


@pytest.mark.parametrize("adapter", ["trio", "asyncio", "sync"])
def test_typescript_sdk_client_against_the_everything_server_over_stdio(
    adapter: str, ts_client: list[str]
) -> None:
    check(run_ts_client([*ts_client, *stdio_server(adapter)]), sdk="typescript", http=False)


def test_typescript_sdk_client_against_the_everything_server_over_http(
    http_server: str, ts_client: list[str]
) -> None:
    check(run_ts_client([*ts_client, "--http", http_server]), sdk="typescript")


def check(report: dict[str, Any], sdk: str = "python", *, http: bool = True) -> None:
    assert report["version"] == "2025-11-25"
    assert report["server"] == "mcp-proto-everything"
    assert report["capabilities"] == ["completions", "logging", "prompts", "resources", "tools"]
    assert report["progress"] == [0, 50, 100]
    assert report["elicit_message"] == "What is your name?"
    assert report["elicited"] == "Hello, Ada!"
    assert report["sampled"] == "Sampling answered"
    # cancelled while it waited for input: never answered (Python: the call's own timeout)
    assert report["cancelled"] == ("timed out" if sdk == "python" else "aborted")
    assert report["logs"] == ["info"]
    assert report["updated"] == ["test://watched-resource"]  # once: before unsubscribe
    assert report["read"] == "test://watched-resource"
    # LEG-12/15: over HTTP the answer came on the GET that resumed the closed stream
    resumed = "Answered on the resumed stream" if http else "No stream to close"
    assert report["reconnected"] == resumed
    # no resultType, no _meta stamp (the Python SDK's model adds isError: false)
    assert report["result_keys"] == (["content", "isError"] if sdk == "python" else ["content"])


@pytest.fixture(params=["trio", "asyncio", "sync"])
def http_server(request: pytest.FixtureRequest) -> Iterator[str]:
    """The URL of the everything example served over HTTP by one adapter, in a subprocess."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "mcp_proto_cli", "serve-example", "--http",
               f"127.0.0.1:{port}", "--adapter", request.param]  # fmt: skip
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for_port(port, alive=lambda: server.poll() is None)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.kill()
        server.wait(10)


def test_legacy_and_modern_sdk_clients_against_one_http_server(http_server: str) -> None:
    """LEG-16/19, VER-17: a legacy session and modern stateless calls, one endpoint, at once."""
    mcp = pytest.importorskip("mcp", reason="the official SDK is a dev dependency")
    from mcp_types import ElicitResult

    legacy = subprocess.Popen(
        legacy_client(["--http", http_server]),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    async def elicit(context: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"name": "Grace"})

    async def modern() -> int:
        rounds = 0
        with anyio.fail_after(120):
            async with mcp.Client(http_server, elicitation_callback=elicit, cache=None) as client:
                assert client.protocol_version == "2026-07-28"
                while rounds < 3 or legacy.poll() is None:  # beside the whole legacy session
                    asked = await client.call_tool("test_input_required_result_elicitation")
                    assert asked.content[0].text == "Hello, Grace!"
                    plain = await client.call_tool("test_simple_text")
                    assert plain.content and not plain.is_error
                    rounds += 1
        return rounds

    try:
        rounds = anyio.run(modern)
        stdout, stderr = legacy.communicate(timeout=180)
    finally:
        if legacy.poll() is None:
            legacy.kill()
            legacy.wait(10)
    check(legacy_report(legacy.returncode, stdout, stderr))
    assert rounds >= 3
