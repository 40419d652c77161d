"""Shared fixtures: the spec data lives in ../shared and is read at run time, never copied."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
SPEC = SHARED / "spec" / "2026-07-28"

needs_spec = pytest.mark.skipif(
    not (SPEC / "schema.json").exists(),
    reason="the spec data (../shared/spec/2026-07-28) is not present beside the checkout",
)


def spec_examples() -> list[tuple[str, Path]]:
    """(type name, path) of every example under the spec's examples/ folder."""
    folder = SPEC / "examples"
    if not folder.is_dir():
        return []
    return [(p.parent.name, p) for p in sorted(folder.glob("*/*.json"))]


def load_json(path: Path) -> Any:
    return json.loads(path.read_text())


@pytest.fixture(scope="session")
def ts_sdk() -> tuple[str, Path]:
    """``node`` and the folder of the TypeScript SDK 1.x test peers
    (``tests/peers/ts_legacy``: a client and a server), its package installed once with
    ``npm ci`` from the lock file; skipped without node and npm."""
    npm, node = shutil.which("npm"), shutil.which("node")
    folder = Path(__file__).parent / "peers" / "ts_legacy"
    if npm is None or node is None:
        pytest.skip("node and npm are needed for the TypeScript SDK's peers")
    if not (folder / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if done.returncode != 0:
            pytest.skip(f"the TypeScript SDK could not be installed: {done.stderr[-300:]}")
    return node, folder


@pytest.fixture(scope="module")
def everything_url() -> Iterator[str]:
    """Our everything server (the blocking adapter) over HTTP on 127.0.0.1, in this
    process, for the module: its endpoint's URL."""
    from .test_adapter_http import start_sync

    bound: list[tuple[str, int]] = []
    up = threading.Event()
    stop = start_sync(lambda at: (bound.append(at), up.set()))
    assert up.wait(10)
    yield f"http://{bound[0][0]}:{bound[0][1]}/mcp"
    stop()
