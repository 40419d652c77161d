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
    out = capsys.readouterr().out  # silent to the probe, then to initialize: nobody to talk to
    assert "era: none" in out and "did not answer initialize" in out


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


def test_call_and_probe_over_http(capsys: pytest.CaptureFixture[str]) -> None:
    import threading

    import mcp_proto_sync
    from mcp_proto_cli import everything

    handlers = {m: everything.run_sync(f) for m, f in everything.HANDLERS.items()}
    server = mcp_proto_sync.Server(handlers, **everything.OPTIONS)
    bound: list[tuple[str, int]] = []
    up, stop = threading.Event(), threading.Event()
    ready = lambda at: (bound.append(at), up.set())  # noqa: E731
    thread = threading.Thread(
        target=server.serve_http, args=("127.0.0.1", 0), kwargs={"ready": ready, "stop": stop}
    )
    thread.start()
    try:
        assert up.wait(10)
        url = f"http://{bound[0][0]}:{bound[0][1]}/mcp"
        assert main(["probe", "--http", url]) == 0
        assert "era: modern" in capsys.readouterr().out
        params = '{"name":"test_x_mcp_header","arguments":{"region":"eu"}}'
        assert main(["call", "--http", url, "tools/call", params]) == 0
        assert json.loads(capsys.readouterr().out)["content"][0]["text"] == "region: eu"
        answers = '{"user_name":{"action":"accept","content":{"name":"Bo"}}}'
        tool = '{"name":"test_input_required_result_elicitation"}'
        assert main(["call", "--http", url, "tools/call", tool, "--input-responses", answers]) == 0
        assert "Hello, Bo!" in capsys.readouterr().out
    finally:
        stop.set()
        thread.join(10)


def test_bad_json_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["call", "--stdio", ECHO, "tools/call", "{not json"]) == 2
    assert "not valid" in capsys.readouterr().err
    assert main(["call", "--stdio", ECHO, "tools/call", "{}", "--input-responses", "["]) == 2


def test_probe_reports_a_legacy_servers_era_and_version(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 16: a legacy server is reported, not failed."""
    peer = f"{sys.executable} {Path(__file__).parent / 'peers' / 'stdio_server.py'} legacy-asks"
    assert main(["probe", "--stdio", peer]) == 0
    out = capsys.readouterr().out
    assert "era: legacy, version 2025-11-25" in out and "server: legacy-asks 1" in out
    assert "capabilities: tools" in out


def test_version_and_plain_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.startswith("mcp-proto ")
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "``" not in capsys.readouterr().out  # no RST markup in the help


def test_serve_example_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["serve-example", "--http", "localhost:notaport"])
    err = capsys.readouterr().err
    assert done.value.code == 2 and "'localhost:notaport' is not HOST:PORT" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
def test_serve_example_on_a_port_in_use_says_so(
    adapter: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        code = main(["serve-example", "--http", f"127.0.0.1:{port}", "--adapter", adapter])
    err = capsys.readouterr().err
    assert code == 3 and err.count("\n") == 1
    assert err.startswith(f"mcp-proto: cannot serve at 127.0.0.1:{port}: [Errno")
