"""The generated model is current with the spec's schema.json and covers all of it."""

from __future__ import annotations

import importlib.util
import json
import sys
import typing
from pathlib import Path
from typing import Any

import attrs
import pytest

from mcp_proto import types
from mcp_proto.types import legacy

from .conftest import ROOT, SHARED, SPEC, needs_spec

LEGACY_SPEC = SHARED / "spec" / "2025-11-25"
#: each generated revision: its schema folder, its package and its number of definitions
REVISIONS = [
    pytest.param(SPEC, types, 155, id="2026-07-28"),
    pytest.param(LEGACY_SPEC, legacy, 145, id="2025-11-25"),
]


def _generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("gen_types", ROOT / "tools" / "gen_types.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_types"] = module
    spec.loader.exec_module(module)
    return module


@needs_spec
@pytest.mark.parametrize(("spec", "package", "count"), REVISIONS)
def test_generated_files_are_current(spec: Path, package: object, count: int) -> None:
    files = _generator().generate(spec / "schema.json", spec.name)
    stale = [str(p.relative_to(ROOT)) for p, text in files.items() if p.read_text() != text]
    assert stale == [], "run: uv run python tools/gen_types.py"


@needs_spec
@pytest.mark.parametrize(("spec", "package", "count"), REVISIONS)
def test_every_schema_definition_has_its_name(spec: Path, package: Any, count: int) -> None:
    defs = json.loads((spec / "schema.json").read_text())["$defs"]
    assert len(defs) == count
    assert sorted(set(defs) - set(package.__all__)) == []


@needs_spec
@pytest.mark.parametrize(("spec", "package", "count"), REVISIONS)
def test_object_definitions_are_frozen_slotted_keyword_only_classes(
    spec: Path, package: Any, count: int
) -> None:
    defs = json.loads((spec / "schema.json").read_text())["$defs"]
    for name, schema in defs.items():
        obj = getattr(package, name)
        if (schema.get("type") == "object" and "properties" in schema) or "allOf" in schema:
            assert attrs.has(obj), name
            assert "__slots__" in obj.__dict__, name
            assert obj.__setattr__ is not object.__setattr__, name  # frozen
            assert all(f.kw_only for f in attrs.fields(obj)), name


@pytest.mark.parametrize("package", [types, legacy], ids=["2026-07-28", "2025-11-25"])
def test_every_field_has_a_wire_name_and_resolvable_type(package: Any) -> None:
    for name in package.__all__:
        obj = getattr(package, name)
        if attrs.has(obj):
            hints = typing.get_type_hints(obj)
            for f in attrs.fields(obj):
                assert f.name in hints
                assert f.name == "extra" or isinstance(f.metadata.get("wire"), str), (name, f)


@needs_spec
def test_generator_check_mode_reports_stale_files(tmp_path: Path) -> None:
    gen = _generator()
    assert gen.main(["--check"]) == 0
    broken = json.loads((SPEC / "schema.json").read_text())
    del broken["$defs"]["Role"]
    (tmp_path / "schema.json").write_text(json.dumps(broken))
    try:
        gen.main(
            ["--check", "--revision", "2026-07-28", "--schema", str(tmp_path / "schema.json")]
        )
    except SystemExit as e:
        assert "Role" in str(e)
    else:
        raise AssertionError("a schema missing a definition must be refused")
