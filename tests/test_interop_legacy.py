"""Interop with a real ``initialize``-era client: the official Python SDK's last 1.x line.

``mcp`` 1.30.0 cannot live beside the project's modern ``mcp`` 2.3.0, so the client runs
in an environment of its own (``uv run --isolated --with mcp==1.30.0``, made once and
cached by uv) and reports what it saw as JSON (``tests/peers/legacy_sdk_client.py``).
It drives the everything example over stdio on each adapter: initialize (LEG-01/02/05),
list, a call with progress, an elicitation and a sampling round asked of it as real
requests (the MRTR bridge), logging/setLevel and a log message, ping, subscribe,
a resource update, unsubscribe, read, and a plain result with no ``resultType``
(LEG-02).  Real subprocesses, bounded waits.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PEERS = Path(__file__).resolve().parent / "peers"
LEGACY_SDK = "mcp==1.30.0"
UV = shutil.which("uv")


def run_legacy_client(server: list[str]) -> dict[str, object]:
    if UV is None:
        pytest.skip("uv is needed to make the legacy SDK's own environment")
    command = [UV, "run", "--isolated", "--no-project", "--quiet", "--with", LEGACY_SDK,
               "python", str(PEERS / "legacy_sdk_client.py"), *server]  # fmt: skip
    done = subprocess.run(command, check=False, capture_output=True, text=True, timeout=180)
    if done.returncode != 0 and "legacy_sdk_client" not in done.stderr:
        # uv failed before the client ran: no registry to install the legacy SDK from
        pytest.skip(f"{LEGACY_SDK} could not be installed: {done.stderr[-300:]}")
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.parametrize("adapter", ["trio", "asyncio", "sync"])
def test_legacy_sdk_client_against_the_everything_server_over_stdio(adapter: str) -> None:
    server = [sys.executable, "-m", "mcp_proto_cli", "serve-example", "--stdio",
              "--adapter", adapter]  # fmt: skip
    report = run_legacy_client(server)
    assert report["version"] == "2025-11-25"
    assert report["server"] == "mcp-proto-everything"
    assert report["capabilities"] == ["completions", "logging", "prompts", "resources", "tools"]
    assert report["progress"] == [0, 50, 100]
    assert report["elicit_message"] == "What is your name?"
    assert report["elicited"] == "Hello, Ada!"
    assert report["sampled"] == "Sampling answered"
    assert report["logs"] == ["info"]
    assert report["updated"] == ["test://watched-resource"]  # once: before unsubscribe
    assert report["read"] == "test://watched-resource"
    assert report["result_keys"] == ["content", "isError"]  # no resultType, no _meta stamp
