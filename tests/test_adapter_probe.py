"""``probe()`` on all six clients: the era of a server, as a dual-era client decides it.

Over stdio (STDIO-18, STDIO-19, STDIO-21): a ``DiscoverResult`` is modern; an error (here the
``-32601`` an ``initialize``-era server gives) or no answer within the timeout is legacy, and
an unanswered probe is cancelled. Over Streamable HTTP (HTTP-42, HTTP-46): a ``400`` whose
body is not a modern JSON-RPC error is legacy, no answer in time is legacy, and ``401`` is
authorization, never a reason to fall back. Real subprocesses and sockets on 127.0.0.1.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

import mcp_proto_asyncio
import mcp_proto_sync
import mcp_proto_trio
from mcp_proto_runtime import ProbeOutcome

ROOT = Path(__file__).resolve().parent.parent
ECHO = [sys.executable, str(ROOT / "examples" / "echo_server.py")]
PEER = [sys.executable, str(ROOT / "tests" / "peers" / "stdio_server.py")]
ADAPTERS = ["sync", "asyncio", "trio"]
VERSION = "2026-07-28"


def probe_stdio(adapter: str, command: list[str], timeout: float) -> ProbeOutcome:
    options: dict[str, Any] = {"stderr": subprocess.DEVNULL, "timeout": 20}
    if adapter == "sync":
        with mcp_proto_sync.Client.stdio(command, **options) as client:
            outcome = client.probe(timeout)
            assert client.conn.in_flight() == ()  # STDIO-21: a timed-out probe is cancelled
            return outcome

    async def main() -> ProbeOutcome:
        module: Any = mcp_proto_asyncio if adapter == "asyncio" else mcp_proto_trio
        with anyio.fail_after(30):
            async with module.Client.stdio(command, **options) as client:
                outcome: ProbeOutcome = await client.probe(timeout)
                assert client.conn.in_flight() == ()
                return outcome

    return anyio.run(main, backend=adapter)  # type: ignore[no-any-return]


def probe_http(adapter: str, url: str, timeout: float) -> ProbeOutcome:
    if adapter == "sync":
        with mcp_proto_sync.Client.http(url, timeout=20) as client:
            return client.probe(timeout)

    async def main() -> ProbeOutcome:
        module: Any = mcp_proto_asyncio if adapter == "asyncio" else mcp_proto_trio
        with anyio.fail_after(30):
            async with module.Client.http(url, timeout=20) as client:
                outcome: ProbeOutcome = await client.probe(timeout)
                return outcome

    return anyio.run(main, backend=adapter)  # type: ignore[no-any-return]


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_stdio_probe_of_a_modern_server_stdio_18(adapter: str) -> None:
    outcome = probe_stdio(adapter, ECHO, 10)
    assert outcome.era == "modern" and outcome.version == VERSION
    assert outcome.result is not None and VERSION in outcome.result.supported_versions


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_stdio_probe_of_a_legacy_server_stdio_19(adapter: str) -> None:
    outcome = probe_stdio(adapter, [*PEER, "legacy"], 10)
    assert outcome == ProbeOutcome(era="legacy")


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_stdio_probe_without_an_answer_is_legacy_and_cancelled_stdio_21(adapter: str) -> None:
    assert probe_stdio(adapter, [*PEER, "silent"], 0.5) == ProbeOutcome(era="legacy")


@pytest.fixture
def modern_url(everything_url: str) -> str:
    return everything_url


_SESSION_REQUIRED = (
    b'{"jsonrpc":"2.0","id":"server-error",'
    b'"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}'
)
#: what an initialize-era server answers a POST without a session (the official SDKs' text)
LEGACY_400 = (
    b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\n"
    + f"content-length: {len(_SESSION_REQUIRED)}\r\n\r\n".encode()
    + _SESSION_REQUIRED
)
DENIED = (
    b"HTTP/1.1 401 Unauthorized\r\n"
    b'www-authenticate: Bearer resource_metadata="http://127.0.0.1/.well-known/x"\r\n'
    b"content-length: 0\r\n\r\n"
)


@pytest.fixture
def canned() -> Iterator[Any]:
    """Serve one connection with a canned answer (``None``: read the request, never answer)."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(10)
    threads: list[threading.Thread] = []
    release = threading.Event()

    def answer(response: bytes | None) -> None:
        sock, _ = listener.accept()
        with sock:
            sock.settimeout(10)
            data = b""
            while b"}" not in data:  # the JSON body's end: enough of the request
                data += sock.recv(65536)
            if response is None:
                release.wait(10)
            else:
                sock.sendall(response)

    def start(response: bytes | None) -> str:
        thread = threading.Thread(target=answer, args=(response,))
        thread.start()
        threads.append(thread)
        return f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"

    yield start
    release.set()
    for thread in threads:
        thread.join(10)
    listener.close()


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_http_probe_of_a_modern_server_http_42(adapter: str, modern_url: str) -> None:
    outcome = probe_http(adapter, modern_url, 10)
    assert outcome.era == "modern" and outcome.version == VERSION


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_http_probe_of_a_legacy_server_http_46(adapter: str, canned: Any) -> None:
    assert probe_http(adapter, canned(LEGACY_400), 10) == ProbeOutcome(era="legacy")


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_http_probe_without_an_answer_is_legacy(adapter: str, canned: Any) -> None:
    assert probe_http(adapter, canned(None), 0.5) == ProbeOutcome(era="legacy")


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_http_probe_answered_401_asks_for_authorization(adapter: str, canned: Any) -> None:
    with pytest.raises(PermissionError) as denied:
        probe_http(adapter, canned(DENIED), 10)
    assert denied.value.args[1].status == 401


def _children_running(marker: str) -> list[int]:
    """Our child processes whose command line holds ``marker`` (Linux ``/proc``)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue  # ended meanwhile
        if int(fields[1]) == os.getpid() and marker.encode() in cmdline:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_client_that_cannot_be_made_kills_its_server(adapter: str) -> None:
    marker = f"probe-kill-{adapter}-{os.getpid()}"
    command = [sys.executable, "-c", "import sys; sys.stdin.read()", marker]
    with pytest.raises(TypeError):
        if adapter == "sync":
            mcp_proto_sync.Client.stdio(command, no_such_option=1)
        else:

            async def main() -> None:
                module: Any = mcp_proto_asyncio if adapter == "asyncio" else mcp_proto_trio
                async with module.Client.stdio(command, no_such_option=1):
                    raise AssertionError("the client was made")

            anyio.run(main, backend=adapter)
    assert _children_running(marker) == []
