"""A stdio server whose stdin or stdout is a regular file (issue 17): a recorded session
replayed, a golden file written.  asyncio's pipe transports refuse regular files; every
adapter now serves pipes and files alike, in a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}  # fmt: skip
REQUESTS = [
    {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
     "params": {"name": "test_simple_text", "_meta": META}},
]  # fmt: skip


@pytest.mark.parametrize("adapter", ["asyncio", "trio", "sync"])
@pytest.mark.parametrize(("stdin", "stdout"), [("file", "file"), ("file", "pipe"),
                                               ("pipe", "file")])  # fmt: skip
def test_stdio_serves_regular_files_and_pipes(
    adapter: str, stdin: str, stdout: str, tmp_path: Path
) -> None:
    recorded = tmp_path / "requests.jsonl"
    recorded.write_text("".join(json.dumps(r) + "\n" for r in REQUESTS))
    golden = tmp_path / "responses.jsonl"
    command = [sys.executable, "-m", "mcp_proto_cli", "serve-example", "--stdio",
               "--adapter", adapter]  # fmt: skip
    with recorded.open("rb") as source, golden.open("wb") as sink:
        done = subprocess.run(
            command,
            stdin=source if stdin == "file" else None,
            input=None if stdin == "file" else recorded.read_bytes(),
            stdout=sink if stdout == "file" else subprocess.PIPE,
            stderr=subprocess.PIPE,
            timeout=60,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    out = golden.read_bytes() if stdout == "file" else done.stdout
    answers = [json.loads(line) for line in out.splitlines()]
    assert [a["id"] for a in answers] == [1, 2]
    assert answers[1]["result"]["content"][0]["type"] == "text"
