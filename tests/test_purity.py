"""The core never imports an I/O or concurrency module (pitfall 12 of the aesthetics note)."""

from __future__ import annotations

import ast
from pathlib import Path

FORBIDDEN = {"socket", "asyncio", "trio", "threading", "subprocess", "selectors", "time"}
CORE = Path(__file__).resolve().parent.parent / "mcp_proto"


def imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_core_imports_no_io_module() -> None:
    offenders = {
        str(p.relative_to(CORE)): sorted(imported_modules(p) & FORBIDDEN)
        for p in CORE.rglob("*.py")
        if imported_modules(p) & FORBIDDEN
    }
    assert offenders == {}


def test_the_check_sees_every_import_form(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text("import os, socket\nfrom time import monotonic\nfrom . import asyncio\n")
    assert imported_modules(sample) & FORBIDDEN == {"socket", "time"}
