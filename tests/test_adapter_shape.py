"""The three adapters have one shape, and their source hides no error.

Signatures: the public methods of each adapter's ``Client``, ``HTTPClientSession`` and
``Server`` have the same names and parameters. What may differ is what the I/O model
dictates: ``async`` or not, ``close`` (blocking) for ``aclose`` (async), the stream types of
``serve``, the readiness parameter of ``serve_http`` (trio's ``task_status``, ``ready`` for
the others, and the blocking ``stop``), and ``run`` (the async clients' reader; the blocking
client reads in the caller's thread).

Source: no ``print`` outside the CLI (errors go to the ``mcp_proto`` loggers), and every
``contextlib.suppress`` and every ``except ...: pass`` carries a comment on its line saying
which peer error it is.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import pytest

import mcp_proto_asyncio
import mcp_proto_sync
import mcp_proto_trio

ADAPTERS = Path(__file__).resolve().parent.parent / "adapters"
MODULES = {"sync": mcp_proto_sync, "asyncio": mcp_proto_asyncio, "trio": mcp_proto_trio}
#: parameters that only one I/O model has, by (class, method)
MODEL_ONLY = {
    ("Server", "serve_http"): {"ready", "stop", "task_status"},
    ("Client", "run"): {"task_status"},
}
#: methods whose parameters are the I/O model's own stream types
MODEL_STREAMS = {("Server", "serve")}


def public_methods(cls: type) -> dict[str, inspect.Signature]:
    methods = {}
    for name in dir(cls):
        if name.startswith("_") or not callable(getattr(cls, name)):
            continue
        methods["aclose" if name == "close" else name] = inspect.signature(getattr(cls, name))
    return methods


def parameters(signature: inspect.Signature, drop: set[str]) -> list[tuple[str, Any, Any]]:
    return [
        (p.name, p.kind, p.default)
        for p in signature.parameters.values()
        if p.name not in drop and p.name != "self"
    ]


@pytest.mark.parametrize("cls", ["Client", "HTTPClientSession", "Server"])
def test_every_adapter_offers_the_same_methods(cls: str) -> None:
    found = {name: public_methods(getattr(mod, cls)) for name, mod in MODULES.items()}
    names = {name: set(methods) - {"run"} for name, methods in found.items()}
    assert names["sync"] == names["asyncio"] == names["trio"], names
    for method in sorted(names["sync"]):
        if (cls, method) in MODEL_STREAMS:
            continue
        drop = MODEL_ONLY.get((cls, method), set())
        shapes = {name: parameters(found[name][method], drop) for name in MODULES}
        assert shapes["sync"] == shapes["asyncio"] == shapes["trio"], (method, shapes)


@pytest.mark.parametrize("adapter", ["asyncio", "trio"])
def test_async_clients_open_with_async_with_and_no_await(adapter: str) -> None:
    """``Client.stdio`` is an async context manager; ``Client.http`` returns the session
    itself, which is one (no ``await`` before ``async with``)."""
    client: Any = MODULES[adapter].Client
    assert not inspect.iscoroutinefunction(client.stdio)
    assert not inspect.iscoroutinefunction(client.http)
    session = client.http("http://127.0.0.1:9/mcp")
    assert isinstance(session, MODULES[adapter].HTTPClientSession)
    assert hasattr(session, "__aenter__") and hasattr(session, "__aexit__")
    assert inspect.iscoroutinefunction(client.probe)


def source_faults(path: Path) -> list[str]:
    """Each ``print(``, and each silent ``suppress(`` or ``except: pass``, as ``line: what``."""
    text = path.read_text()
    lines = text.splitlines()
    faults = []
    for node in ast.walk(ast.parse(text, str(path))):
        if isinstance(node, ast.Call):
            func = node.func
            name = getattr(func, "id", None) or getattr(func, "attr", None)
            if name == "print":
                faults.append(f"{node.lineno}: print")
            elif name == "suppress" and "#" not in lines[node.lineno - 1]:
                faults.append(f"{node.lineno}: suppress without a comment")
        elif isinstance(node, ast.ExceptHandler):
            silent = len(node.body) == 1 and isinstance(node.body[0], ast.Pass)
            if silent and "#" not in lines[node.lineno - 1]:
                faults.append(f"{node.lineno}: except ... pass without a comment")
    return faults


def test_adapters_print_nothing_and_swallow_nothing_silently() -> None:
    files = [p for p in ADAPTERS.rglob("*.py") if "mcp_proto_cli" not in p.parts]
    assert len(files) > 20  # a move would make the check vacuous
    offenders = {str(p.relative_to(ADAPTERS)): f for p in files if (f := source_faults(p))}
    assert offenders == {}


def test_the_source_check_sees_each_fault(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text(
        "import contextlib\n"
        "print('x')\n"
        "with contextlib.suppress(OSError):\n"
        "    pass\n"
        "with contextlib.suppress(OSError):  # EPIPE: the peer is gone\n"
        "    pass\n"
        "try:\n"
        "    pass\n"
        "except OSError:\n"
        "    pass\n"
        "try:\n"
        "    pass\n"
        "except OSError:  # a reset: the end of input\n"
        "    pass\n"
    )
    assert sorted(int(f.split(":")[0]) for f in source_faults(sample)) == [2, 3, 9]
