"""Seed corpora, generated at run time from the spec's examples (never copied into the repo).

``seeds(kind)`` gives byte strings for one harness:

* ``messages``: each example that is a whole JSON-RPC message, and each ``*RequestParams``
  example wrapped into a request of its method, one compact line each;
* ``server``: client-side messages joined into short NDJSON streams, with CRLF, blank lines,
  junk lines and a cancellation mixed in;
* ``client``: server-side messages re-addressed to the ids a fuzzed client has in flight;
* ``http_server``, ``http1``, ``http_client``, ``sse``, ``schema``: see ``fuzz/corpus_http.py``.

Without ``../shared`` the corpora fall back to a few hand-written lines.

    uv run python fuzz/corpus.py DIR [KIND]   # write one file per seed
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import orjson

import mcp_proto as m

from .invariants import SPEC

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}
FALLBACK = [
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x", "_meta": META}},
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
    {"jsonrpc": "2.0", "id": 1, "result": {"content": [], "resultType": "complete"}},
]


def _line(obj: Any) -> bytes:
    return orjson.dumps(obj) + b"\n"


def example_messages() -> list[Any]:
    """Every spec example usable as a message, as JSON values."""
    folder = SPEC / "examples"
    if not folder.is_dir():
        return list(FALLBACK)
    by_params = {
        info.params_type.__name__: method
        for method, info in m.METHODS.items()
        if info.kind is m.Kind.REQUEST and info.params_type is not None
    }
    out: list[Any] = []
    for path in sorted(folder.glob("*/*.json")):
        value = json.loads(path.read_text())
        kind = path.parent.name
        if type(value) is dict and value.get("jsonrpc") == "2.0":
            out.append(value)
        elif kind in by_params and type(value) is dict:
            params = {**value, "_meta": value.get("_meta", META)}
            out.append(
                {"jsonrpc": "2.0", "id": len(out), "method": by_params[kind], "params": params}
            )
    return out


def legacy_seeds() -> list[bytes]:
    """``initialize``-era streams for the dual-era server (issue 15)."""
    init = _line({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {"sampling": {}},
                   "clientInfo": {"name": "fuzz", "version": "1"}},
    })  # fmt: skip
    initialized = _line({"jsonrpc": "2.0", "method": "notifications/initialized"})
    calls = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
         "params": {"name": "x", "_meta": {"progressToken": 1}}},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        {"jsonrpc": "2.0", "id": 3, "method": "logging/setLevel", "params": {"level": "error"}},
        {"jsonrpc": "2.0", "id": 4, "method": "resources/subscribe", "params": {"uri": "a://b"}},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/list"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        {"jsonrpc": "2.0", "id": 0, "result": {"action": "accept"}},
        {"jsonrpc": "2.0", "id": 6, "method": "initialize", "params": {}},
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
         "params": {"name": "y", "_meta": META}},
    ]  # fmt: skip
    body = b"".join(_line(c) for c in calls)
    return [
        init + initialized + body,
        _line(calls[1]) + init + body,  # ping before initialize (LEG-04)
        body + init,  # requests before initialize
        init + init,
    ]


def seeds(kind: str) -> list[bytes]:
    messages = example_messages()
    if kind == "messages":
        return [_line(v)[:-1] for v in messages]
    if kind == "server":
        to_server = [v for v in messages if "method" in v]
        out = [_line(v) for v in to_server]
        for i in range(0, len(to_server), 4):
            out.append(b"".join(_line(v) for v in to_server[i : i + 4]))
        out.append(out[0].replace(b"\n", b"\r\n") + b"\n{bad json\n" + out[-1])
        cancel = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": to_server[0].get("id", 0)},
        }
        out.append(out[0] + _line(cancel) + out[0])
        return out + legacy_seeds()

    if kind == "client":
        out = []
        for v in messages:
            if "method" in v and "id" in v:
                continue  # servers do not send requests
            if "id" in v:
                for id in (1, 2, 3, 4):
                    out.append(_line({**v, "id": id}))
            elif "params" in v and isinstance(v["params"], dict):
                params = {**v["params"], "_meta": {"io.modelcontextprotocol/subscriptionId": 3}}
                out.append(_line({**v, "params": params}) + _line(v))
            else:
                out.append(_line(v))
        return out
    if kind in ("legacy_client", "legacy_http_client"):
        from . import invariants_legacy_client as legacy

        return (
            legacy.legacy_client_seeds()
            if kind == "legacy_client"
            else (legacy.legacy_http_client_seeds())
        )
    from . import corpus_http

    if kind in corpus_http.KINDS:
        return corpus_http.KINDS[kind](messages)
    raise ValueError(f"unknown corpus kind {kind!r}")


def write(folder: Path, kind: str) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    items = seeds(kind)
    for item in items:
        (folder / hashlib.sha1(item).hexdigest()).write_bytes(item)
    return len(items)


if __name__ == "__main__":
    target = Path(sys.argv[1])
    print(write(target, sys.argv[2] if len(sys.argv) > 2 else "messages"), "seeds written")
