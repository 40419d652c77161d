"""Shared fixtures: the spec data lives in ../shared and is read at run time, never copied."""

from __future__ import annotations

import json
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
