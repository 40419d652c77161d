"""The import graph, computed from the source: no cycle in ``mcp_proto/`` or ``adapters/``,
nothing outside a package imports its private modules, and the layers of
``docs/architecture.md`` hold.  ``if TYPE_CHECKING:`` blocks are skipped; imports inside
functions count (they run)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import ROOT

PACKAGES = [
    "mcp_proto",
    *sorted(p.name for p in (ROOT / "adapters").iterdir() if (p / "__init__.py").exists()),
]
OUTSIDE = ["tests", "fuzz", "bench", "examples", "tools"]


def _name(path: Path, base: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(base).with_suffix("").parts)
    is_pkg = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_pkg else parts), is_pkg


def _modules() -> dict[str, tuple[Path, bool]]:
    found = {}
    for pkg in PACKAGES:
        base = ROOT if pkg == "mcp_proto" else ROOT / "adapters"
        for path in (base / pkg).rglob("*.py"):
            name, is_pkg = _name(path, base)
            found[name] = (path, is_pkg)
    return found


MODULES = _modules()


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Imports(ast.NodeVisitor):
    """The import statements that run: all of them, except under ``if TYPE_CHECKING:``."""

    def __init__(self) -> None:
        self.found: list[ast.Import | ast.ImportFrom] = []

    def visit_If(self, node: ast.If) -> None:
        for stmt in node.orelse if _type_checking(node.test) else [*node.body, *node.orelse]:
            self.visit(stmt)

    def visit_Import(self, node: ast.Import) -> None:
        self.found.append(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.found.append(node)


def imports(path: Path, module: str, is_pkg: bool) -> Iterator[tuple[str, int]]:
    """``(imported module, line)`` for each import that runs; relative ones resolved."""
    finder = _Imports()
    finder.visit(ast.parse(path.read_text(), str(path)))
    for node in finder.found:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = module if is_pkg else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    package = package.rpartition(".")[0]
                base = f"{package}.{node.module}" if node.module else package
            else:
                base = node.module or ""
            targets = {f"{base}.{a.name}" for a in node.names} & MODULES.keys()
            yield from ((t, node.lineno) for t in sorted(targets or {base}))


def graph() -> dict[str, dict[str, int]]:
    edges: dict[str, dict[str, int]] = {}
    for name, (path, is_pkg) in MODULES.items():
        edges[name] = {}
        for target, line in imports(path, name, is_pkg):
            if target in MODULES and target != name:
                edges[name].setdefault(target, line)
    return edges


def cycles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative enough)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found)


def _hidden_from(target: str, importer: str) -> str | None:
    """The private part of ``target`` that ``importer`` may not import, if any.

    A module or package whose name starts with ``_`` is importable only from inside its
    parent package: ``mcp_proto._codec`` from ``mcp_proto.*``, ``mcp_proto._codec._unions``
    from ``mcp_proto._codec.*`` (others go through ``mcp_proto._codec/__init__``).
    """
    parts = target.split(".")
    if parts[0] not in PACKAGES:
        return None
    for i, part in enumerate(parts[1:], 1):
        parent = ".".join(parts[:i])
        private = part.startswith("_") and not part.startswith("__")
        if private and importer != parent and not importer.startswith(parent + "."):
            return ".".join(parts[: i + 1])
    return None


def test_no_import_cycle() -> None:
    edges = graph()
    shown = [
        [
            f"{a} -> {b} ({MODULES[a][0].relative_to(ROOT)}:{edges[a][b]})"
            for a in c
            for b in edges[a]
            if b in c
        ]
        for c in cycles(edges)
    ]
    assert shown == []


def _files() -> Iterator[tuple[Path, str, bool]]:
    for name, (path, is_pkg) in MODULES.items():
        yield path, name, is_pkg
    for folder in OUTSIDE:
        for path in (ROOT / folder).rglob("*.py"):
            yield path, *_name(path, ROOT)


def test_private_modules_are_imported_only_from_inside_their_package() -> None:
    offenders = set()
    for path, name, is_pkg in _files():
        where = path.relative_to(ROOT)
        for target, line in imports(path, name, is_pkg):
            hidden = _hidden_from(target, name)
            if hidden is not None:
                offenders.add(f"{where}:{line} {hidden}")
        tree = ast.parse(path.read_text())
        modules = {
            a.asname or a.name: a.name
            for n in ast.walk(tree)
            if isinstance(n, ast.Import)
            for a in n.names
            if a.name.split(".")[0] in PACKAGES
        }
        for n in ast.walk(tree):  # mcp_proto._codec.x, m._stream.y
            if (
                isinstance(n, ast.Attribute)
                and isinstance(n.value, ast.Name)
                and n.value.id in modules
            ):
                hidden = _hidden_from(f"{modules[n.value.id]}.{n.attr}", name)
                if hidden is not None:
                    offenders.add(f"{where}:{n.lineno} {hidden}")
    assert sorted(offenders) == []


#: (module prefix, layer); the longest matching prefix wins.  docs/architecture.md draws it.
LAYERS = [
    ("mcp_proto._model", "kernel"),
    ("mcp_proto._util", "kernel"),
    ("mcp_proto.metakeys", "metakeys"),
    ("mcp_proto.types", "types"),
    ("mcp_proto._errors", "errors"),
    ("mcp_proto.icons", "extras"),
    ("mcp_proto.schema", "extras"),
    ("mcp_proto.request_state", "extras"),
    ("mcp_proto._codec", "codec"),
    ("mcp_proto._connection", "connection"),
    ("mcp_proto.http", "http"),
    ("mcp_proto.testing", "testing"),
    ("mcp_proto", "api"),  # the root __init__ only
    ("mcp_proto_runtime", "runtime"),
    ("mcp_proto_sync", "adapter"),
    ("mcp_proto_asyncio", "adapter"),
    ("mcp_proto_trio", "adapter"),
    ("mcp_proto_cli", "cli"),
]
_CORE = {
    "kernel",
    "metakeys",
    "types",
    "errors",
    "extras",
    "codec",
    "connection",
    "http",
    "testing",
}
MAY_IMPORT = {
    "kernel": set(),
    "metakeys": set(),
    "types": {"kernel"},
    "errors": {"types"},
    "extras": {"types", "errors"},
    "codec": {"kernel", "types", "errors"},
    "connection": {"kernel", "metakeys", "types", "errors", "codec"},
    "http": {"kernel", "types", "errors", "codec", "connection"},
    "testing": {"types", "codec", "connection"},
    "api": _CORE,
    "runtime": {"api", "types", "http"},  # public names only: the privacy test sees to that
    "adapter": {"api", "types", "http", "runtime"},
    "cli": {"api", "types", "http", "testing", "runtime", "adapter"},
}


def layer_of(module: str) -> str:
    for prefix, layer in sorted(LAYERS, key=lambda pl: -len(pl[0])):
        if module == prefix or module.startswith(prefix + "."):
            return layer
    raise AssertionError(f"{module} is in no layer: add it to LAYERS")


def test_layers_import_only_downwards() -> None:
    edges = graph()
    wrong = sorted(
        f"{a} ({layer_of(a)}) -> {b} ({layer_of(b)}) at {MODULES[a][0].relative_to(ROOT)}:{line}"
        for a, targets in edges.items()
        for b, line in targets.items()
        if layer_of(a) != layer_of(b) and layer_of(b) not in MAY_IMPORT[layer_of(a)]
    )
    assert wrong == []


def reachable(edges: dict[str, dict[str, int]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or through others."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for target in edges[todo.pop()]:
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_the_client_role_never_imports_the_server_role() -> None:
    """Role-agnostic pieces live in ``_connection._requests`` and ``_codec._methods``."""
    server = {"mcp_proto._connection._server", "mcp_proto._connection._server_rules"}
    assert reachable(graph(), "mcp_proto._connection._client") & server == set()


def test_the_core_has_no_import_cycle() -> None:
    """The core's part of :func:`test_no_import_cycle`, enforced already."""
    core = [c for c in cycles(graph()) if any(m.partition(".")[0] == "mcp_proto" for m in c)]
    assert core == []


def test_the_graph_sees_every_import_form(tmp_path: Path) -> None:
    """The checker itself: lazy imports count, TYPE_CHECKING ones do not, relative ones resolve."""
    pkg = tmp_path / "p"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from . import b\n"
        "def f():\n    from .b import x\n"
        "from . import c as see\n"
    )
    found = {t for t, _ in imports(pkg / "a.py", "p.a", False)}
    assert found == {"typing", "p.b", "p"}  # "p.c" when p/c.py exists (MODULES decides)
