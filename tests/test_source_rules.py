"""Rules on the source text itself, which no behaviour test would catch.

The core is held at 100 % line and branch coverage by ``.ci/run``; that floor means nothing if a
line can opt out, so no module under ``mcp_proto`` may carry a coverage pragma.
"""

from __future__ import annotations

from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "mcp_proto"


def pragmas(path: Path) -> list[str]:
    """Each line of ``path`` that opts out of coverage, as ``line: text``."""
    return [
        f"{n}: {line.strip()}"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if "pragma:" in line and "no " in line.split("pragma:", 1)[1][:8]
    ]


def test_the_core_has_no_coverage_pragma() -> None:
    assert (CORE / "__init__.py").is_file()  # a move would make the check vacuous
    offenders = {str(p.relative_to(CORE)): f for p in CORE.rglob("*.py") if (f := pragmas(p))}
    assert offenders == {}


def test_the_check_sees_the_pragma_forms(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text(
        "x = 1  # pragma: no cover\nif y:  # pragma: no branch\n    pass\nz = 'pragma: yes'\n"
    )
    assert [line.split(":")[0] for line in pragmas(sample)] == ["1", "2"]
