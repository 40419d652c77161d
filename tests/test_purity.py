"""The core does no I/O and keeps no time (pitfall 12 of the aesthetics note).

Two checks on the source.  Neither ``mcp_proto`` nor the handler runtime the
adapters share (``mcp_proto_runtime``) imports an I/O, concurrency or clock
module: the event loop is the adapters'.  And ``mcp_proto`` holds no coroutine
(``async def``, ``await``, ``async for``, ``async with``) and catches no I/O error
(``OSError`` and its built-in subclasses: ``ConnectionError``, ``TimeoutError``...):
code that waits or handles a socket belongs to the runtime or an adapter.
"""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import pytest

FORBIDDEN = {"socket", "asyncio", "trio", "threading", "subprocess", "selectors", "time"}
ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "mcp_proto"
RUNTIME = ROOT / "adapters" / "mcp_proto_runtime"
#: OSError and every built-in exception class under it, aliases included (IOError...)
IO_ERRORS = frozenset(
    name for name, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, OSError)
)
_ASYNC = (ast.AsyncFunctionDef, ast.Await, ast.AsyncFor, ast.AsyncWith)


def imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def io_constructs(path: Path) -> list[str]:
    """Each coroutine construct, and each ``except`` naming an I/O error, as ``line: what``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, _ASYNC):
            found.append(f"{node.lineno}: {type(node).__name__}")
        elif isinstance(node, ast.comprehension) and node.is_async:
            found.append(f"{node.target.lineno}: async comprehension")
        elif isinstance(node, ast.ExceptHandler) and node.type is not None:
            for part in ast.walk(node.type):  # a name, a tuple of them, builtins.OSError
                name = getattr(part, "id", None) or getattr(part, "attr", None)
                if name in IO_ERRORS:
                    found.append(f"{node.lineno}: except {name}")
    return found


@pytest.mark.parametrize("package", [CORE, RUNTIME], ids=["mcp_proto", "mcp_proto_runtime"])
def test_imports_no_io_module(package: Path) -> None:
    offenders = {
        str(p.relative_to(package)): sorted(imported_modules(p) & FORBIDDEN)
        for p in package.rglob("*.py")
        if imported_modules(p) & FORBIDDEN
    }
    assert offenders == {}


def test_the_runtime_is_where_it_is_checked() -> None:
    assert (RUNTIME / "__init__.py").is_file()  # a move would make the check above vacuous


def test_core_holds_no_coroutine_and_catches_no_io_error() -> None:
    offenders = {
        str(p.relative_to(CORE)): found for p in CORE.rglob("*.py") if (found := io_constructs(p))
    }
    assert offenders == {}


def test_the_check_sees_every_import_form(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text("import os, socket\nfrom time import monotonic\nfrom . import asyncio\n")
    assert imported_modules(sample) & FORBIDDEN == {"socket", "time"}


def test_the_check_sees_every_coroutine_and_io_error_form(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text(
        "async def f(xs):\n"
        "    await g()\n"
        "    async for x in xs:\n"
        "        pass\n"
        "    async with h():\n"
        "        pass\n"
        "    return [x async for x in xs]\n"
        "try:\n    pass\nexcept OSError:\n    pass\n"
        "try:\n    pass\nexcept (ValueError, ConnectionResetError):\n    pass\n"
        "try:\n    pass\nexcept* builtins.TimeoutError:\n    pass\n"
    )
    assert sorted(io_constructs(sample), key=lambda s: int(s.split(":")[0])) == [
        "1: AsyncFunctionDef",
        "2: Await",
        "3: AsyncFor",
        "5: AsyncWith",
        "7: async comprehension",
        "10: except OSError",
        "14: except ConnectionResetError",
        "18: except TimeoutError",
    ]


def test_the_check_passes_what_is_not_io(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text(
        "def await_all(async_):\n"
        '    """async def, await, except OSError: words in a docstring."""\n'
        "    try:\n        return [x for x in async_]\n"
        "    except (ValueError, KeyError):\n        raise\n"
        "    except Exception:\n        raise\n"
    )
    assert io_constructs(sample) == []
