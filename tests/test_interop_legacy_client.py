"""Our client against real legacy servers (issue 16; LEG-21, VER-13..17).

The official Python SDK's last 1.x release (``mcp`` 1.30.0), in its own environment made
by ``uv`` (skipped when it cannot be installed), serves ``tests/peers/legacy_sdk_server.py``
over stdio: our blocking client finds it legacy by its ``server/discover`` probe, opens an
``initialize`` session, and calls with progress; the server's elicitation and roots
requests are answered by the call's ``on_input``, the callback an MRTR round uses.  Our
own dual-era server, probed the same way, stays modern (the matrix's Dual-era/Modern row).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto_sync import Client

PEERS = Path(__file__).parent / "peers"
LEGACY_SDK = "mcp==1.30.0"
UV = shutil.which("uv")
CAPS = t.ClientCapabilities(
    elicitation=t.ClientCapabilitiesElicitation(), roots=t.ClientCapabilitiesRoots()
)


@pytest.fixture(scope="module")
def legacy_server() -> list[str]:
    """The command of the legacy SDK server, its environment made once."""
    if UV is None:
        pytest.skip("uv is needed to make the legacy SDK's own environment")
    command = [UV, "run", "--isolated", "--no-project", "--quiet", "--with", LEGACY_SDK,
               "python", str(PEERS / "legacy_sdk_server.py")]  # fmt: skip
    warm = [*command[:-2], "python", "-c", "import mcp"]
    done = subprocess.run(warm, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        pytest.skip(f"{LEGACY_SDK} could not be installed: {done.stderr[-300:]}")
    return command


def answer(event: m.InputRequired) -> dict[str, Any]:
    """One callback for both eras: each input request of the round, answered."""
    out: dict[str, Any] = {}
    for key, request in event.input_requests.items():
        if isinstance(request, t.ElicitRequest):
            out[key] = t.ElicitResult(action="accept", content={"name": "Ada"})
        elif isinstance(request, t.ListRootsRequest):
            out[key] = t.ListRootsResult(roots=[t.Root(uri="file:///work", name="work")])
    return out


def test_leg21_our_client_finds_a_legacy_server_and_works_with_it(
    legacy_server: list[str],
) -> None:
    with Client.stdio(legacy_server, capabilities=CAPS, stderr=subprocess.DEVNULL) as client:
        assert client.era == "legacy" and client.protocol_version == "2025-11-25"
        assert isinstance(client.outcome, m.Legacy)
        assert client.outcome.server_info.name == "legacy-sdk-peer"
        tools = sorted(tool.name for tool in client.list_tools())
        assert tools == ["ask", "echo", "roots"]
        seen: list[float] = []
        echoed = client.call_tool(
            "echo", {"text": "hi"}, on_progress=lambda p: seen.append(p.progress)
        )
        assert echoed.content[0].text == "hi" and seen == [1]
        asked = client.call_tool("ask", on_input=answer)  # elicitation/create, answered
        assert asked.content[0].text == "hello Ada"
        rooted = client.call_tool("roots", on_input=answer)  # roots/list, answered
        assert rooted.content[0].text == "file:///work"
        failed = client.call_tool("ask")  # no handler: the server's request gets an error
        assert failed.is_error  # (which the SDK's tool turns into a tool error)


def test_leg21_an_explicit_legacy_era_skips_the_probe(legacy_server: list[str]) -> None:
    with Client.stdio(legacy_server, era="legacy", stderr=subprocess.DEVNULL) as client:
        assert client.call_tool("echo", {"text": "x"}).content[0].text == "x"
        assert client.era == "legacy" and client.conn.legacy is not None


def test_ver13_a_dual_era_server_is_found_modern_and_never_initialized() -> None:
    server = [sys.executable, "-m", "mcp_proto_cli", "serve-example", "--stdio",
              "--adapter", "sync"]  # fmt: skip
    with Client.stdio(server, stderr=subprocess.DEVNULL) as client:
        assert client.era == "modern" and client.conn.legacy is None
        assert isinstance(client.outcome, m.Modern) and client.outcome.discover is not None
        assert client.call_tool("test_simple_text").content


def test_an_era_outside_the_three_is_refused() -> None:
    with pytest.raises(ValueError, match="era"):
        Client(sys.stdin.buffer, sys.stdout.buffer, era="ancient")  # type: ignore[arg-type]
