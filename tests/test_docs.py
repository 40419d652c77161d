"""The README's and docs' examples run (doctest), and the CLI demo works."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

from mcp_proto_cli import main

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_doc_examples_run(path: Path) -> None:
    result = doctest.testfile(str(path), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_demo_prints_a_trace(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == " 1 client -> request 1 server/discover"
    assert any("result 4 input_required" in line for line in out)
    assert any("notifications/tools/list_changed" in line for line in out)
    assert out[-1] == "client saw: error -32602: Unknown tool: no_such_tool"
