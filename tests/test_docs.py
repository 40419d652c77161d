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
    assert out[0].startswith('client -> {"jsonrpc":"2.0","id":1,"method":"tools/call"')
    assert '"code":-32602' in out[-1]
