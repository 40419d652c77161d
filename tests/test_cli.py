"""The ``mcp-proto`` command line against a real stdio server (``examples/echo_server.py``)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from mcp_proto_cli import main
from mcp_proto_sync import Client

ECHO = shlex.join(
    [sys.executable, str(Path(__file__).resolve().parent.parent / "examples" / "echo_server.py")]
)
SILENT = shlex.join([sys.executable, "-c", "import sys; sys.stdin.read()"])


def test_call_prints_the_result_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["call", "--stdio", ECHO, "tools/call", '{"name":"echo","arguments":{"text":"hi"}}']
    )
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert result["content"] == [{"type": "text", "text": "hi"}]


def test_call_reports_errors_and_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["call", "--stdio", ECHO, "tools/call", '{"name":"nope"}']) == 1
    assert "Unknown tool: nope" in capsys.readouterr().err
    assert main(["call", "--stdio", ECHO, "notifications/cancelled", "{}"]) == 2
    assert main(["call", "--stdio", ECHO, "tools/call", "[]"]) == 2


def test_probe_modern_and_legacy(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "--stdio", ECHO]) == 0
    out = capsys.readouterr().out
    assert "era: modern" in out and "echo-server 1.0.0" in out and "tools" in out
    assert main(["probe", "--stdio", SILENT, "--timeout", "0.5"]) == 1  # STDIO-19: no answer
    assert "era: legacy" in capsys.readouterr().out


def test_unreachable_server(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "--stdio", "/nonexistent/server"]) == 3


def test_serve_example_is_the_everything_server() -> None:
    command = [
        sys.executable,
        "-m",
        "mcp_proto_cli",
        "serve-example",
        "--stdio",
        "--adapter",
        "trio",
    ]
    with Client.stdio(command, timeout=30) as client:
        assert "simple text" in client.call_tool("test_simple_text").content[0].text
