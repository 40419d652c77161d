"""``docs/requirements.md`` lists every requirement ID the repository cites, and is current.

The first test needs only the repository; the others read the digests and the spec in
``../shared`` (never copied) and are skipped without them.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from .conftest import ROOT, SHARED

INDEX = ROOT / "docs" / "requirements.md"
REGENERATE = "run: uv run python tools/gen_requirements.py"

needs_notes = pytest.mark.skipif(
    not (SHARED / "notes" / "spec-base.md").exists()
    or not (SHARED / "spec" / "2026-07-28" / "docs").is_dir(),
    reason="the digests (../shared/notes) and the spec (../shared/spec) are not beside the repo",
)


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "gen_requirements", ROOT / "tools" / "gen_requirements.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_requirements"] = module
    spec.loader.exec_module(module)
    return module


def _listed(text: str) -> set[str]:
    """The IDs of the index: first cells of its tables and items of its unresolved list."""
    rows = re.findall(r"^\| ([A-Z][A-Z0-9-]*-\d+)[ |]", text, re.MULTILINE)
    unresolved = re.findall(r"^- ([A-Z][A-Z0-9-]*-\d+):", text, re.MULTILINE)
    return set(rows) | set(unresolved)


def test_every_cited_id_is_in_the_index() -> None:
    listed = _listed(INDEX.read_text())
    cited = _generator().scan(ROOT, listed)
    assert len(cited) > 100  # the scan finds the repository's citations at all
    missing = sorted(set(cited) - listed)
    assert missing == [], f"{missing} are cited but not in docs/requirements.md; {REGENERATE}"


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_scan_expands_lists_and_ranges_and_skips_what_is_not_an_id(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "mcp_proto/a.py": "# HTTP-24/25 and SCHEMA-06..08, HTTP-SSE-1..2 (MRTR-07)\n",
            "tests/test_b.py": "def test_meta02_x(): ...  # UTF-8, SHA-256, HTTP-1.1, base64\n",
            "docs/requirements.md": "| SUB-99 |\n",
            "fuzz/.work/c.txt": "SUB-98\n",
            "bench/__pycache__/d.txt": "SUB-97\n",
            "examples/e.bin": "SUB-96\0",
        },
    )
    found = _generator().scan(root, {"META-02", "BASE-19"})
    assert sorted(found) == sorted(
        {
            "HTTP-24",
            "HTTP-25",
            "SCHEMA-06",
            "SCHEMA-07",
            "SCHEMA-08",
            "HTTP-SSE-1",
            "HTTP-SSE-2",
            "MRTR-07",
            "META-02",
        }
    )
    assert found["META-02"] == ["tests/test_b.py"]
    assert found["HTTP-24"] == ["mcp_proto/a.py"]


def test_snake_case_counts_only_for_a_defined_id(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"tests/test_a.py": "def test_sub04_and_stdio_15(): ...\n"})
    gen = _generator()
    assert gen.scan(root) == {}
    assert sorted(gen.scan(root, {"SUB-04", "STDIO-15"})) == ["STDIO-15", "SUB-04"]


def test_an_id_no_digest_defines_is_listed_as_unresolved() -> None:
    text = _generator().render([], {"ZZZ-01": ["mcp_proto/a.py", "tests/b.py"]})
    unresolved = text.split("## Unresolved", 1)[1]
    assert "- ZZZ-01: `mcp_proto/a.py`, `tests/b.py`" in unresolved
    assert _listed(text) == {"ZZZ-01"}


@needs_notes
def test_the_index_is_current() -> None:
    assert _generator().generate(SHARED) == INDEX.read_text(), REGENERATE


@needs_notes
def test_check_mode_fails_on_a_stale_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    gen = _generator()
    assert gen.main(["--check"]) == 0
    stale = tmp_path / "requirements.md"
    stale.write_text(INDEX.read_text().replace("| SUB-04 |", "| SUB-40 |"))
    monkeypatch.setattr(gen, "OUT", stale)
    before = stale.read_text()
    assert gen.main(["--check"]) == 1
    assert stale.read_text() == before  # --check never writes
    assert "stale" in capsys.readouterr().err


@needs_notes
def test_every_row_points_at_an_existing_page_of_the_spec() -> None:
    text = INDEX.read_text()
    rows = re.findall(
        r"^\| [A-Z][A-Z0-9-]*-\d+[^|]* \| `([^`]+)`(?: \(([\d-]+)\))? \|", text, re.MULTILINE
    )
    assert len(rows) > 100
    for page, revision in rows:
        if page == "schema.ts":
            continue
        assert (SHARED / "spec" / (revision or "2026-07-28") / "docs" / page).is_file(), page


@needs_notes
def test_the_index_quotes_no_sentence_of_the_digests() -> None:
    gen = _generator()

    def runs(text: str) -> set[tuple[str, ...]]:
        words = re.findall(r"[a-z0-9]+", text.lower())
        return {tuple(words[i : i + 7]) for i in range(len(words) - 6)}

    index = runs(INDEX.read_text())
    for digest in gen.DIGESTS:
        for entry in gen.parse_digest(SHARED / "notes" / digest):
            assert not runs(entry.text) & index, entry.ident
