"""Codec micro-benchmark: decode a ``tools/call`` request, encode a ``CallToolResult`` response.

Run::

    uv run --group bench python bench/codec.py [--quick] [--json]

Paths compared in one process, on the same bytes:

* ``floor``: ``orjson.loads`` of the request + ``orjson.dumps`` of the response object;
* ``stdlib``: ``json.loads`` + ``json.dumps`` (what orjson buys us);
* ``mcp_proto``: ``decode_message`` + ``encode_message`` of the typed response;
* ``sdk``: the official SDK (``mcp`` 2.3.0) doing what its stdio server does per call:
  ``jsonrpc_message_adapter.validate_json`` (server/stdio.py), ``RequestParams.model_validate``
  for ``_meta`` and ``CallToolRequestParams.model_validate`` (server/runner.py), then
  ``model_dump`` of the result, ``serialize_server_result`` (mcp_types/methods.py), the
  ``serverInfo`` stamp, and ``JSONRPCResponse(...).model_dump_json`` (server/stdio.py).

Each figure is the best of several repeats, in microseconds per operation, with the GC off.
This is a benchmark, never a test: the figures are reported, not asserted.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from collections.abc import Callable
from typing import Any

import orjson

import mcp_proto
from mcp_proto import types as t

REQUEST = (
    b'{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"_meta":{'
    b'"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientInfo":{"name":"bench-client","version":"1.0.0"},'
    b'"io.modelcontextprotocol/clientCapabilities":{}},'
    b'"name":"get_weather","arguments":{"location":"New York","units":"metric"}}}'
)
TEXT = "Current weather in New York: 72F, partly cloudy"


def best(fn: Callable[[], Any], number: int, repeat: int) -> float:
    """Best per-call time in microseconds over ``repeat`` runs of ``number`` calls."""
    for _ in range(max(1, number // 10)):
        fn()
    times = []
    gc.disable()
    try:
        for _ in range(repeat):
            start = time.perf_counter_ns()
            for _ in range(number):
                fn()
            times.append((time.perf_counter_ns() - start) / number / 1000)
    finally:
        gc.enable()
    return min(times)


def ours() -> tuple[Callable[[], Any], Callable[[], Any]]:
    response = t.JSONRPCResultResponse(
        id=42,
        result=t.CallToolResult(
            content=[t.TextContent(text=TEXT)],
            meta=t.ResultMetaObject(
                server_info=t.Implementation(name="bench-server", version="1.0.0")
            ),
        ),
    )
    return (lambda: mcp_proto.decode_message(REQUEST)), (
        lambda: mcp_proto.encode_message(response)
    )


def _response() -> t.JSONRPCResultResponse:
    return t.JSONRPCResultResponse(
        id=42,
        result=t.CallToolResult(
            content=[t.TextContent(text=TEXT)],
            meta=t.ResultMetaObject(
                server_info=t.Implementation(name="bench-server", version="1.0.0")
            ),
        ),
    )


def sdk() -> tuple[Callable[[], Any], Callable[[], Any]] | None:
    try:
        from mcp import types as st
        from mcp_types import JSONRPCResponse, RequestParams
        from mcp_types import methods as sdk_methods
    except ImportError:
        return None
    info = {"name": "bench-server", "version": "1.0.0"}
    result = st.CallToolResult(content=[st.TextContent(type="text", text=TEXT)])

    def decode() -> Any:
        message = st.jsonrpc_message_adapter.validate_json(REQUEST, by_name=False)
        params = message.params
        meta = RequestParams.model_validate(params, by_name=False).meta
        typed = st.CallToolRequestParams.model_validate(params, by_name=False)
        return message, meta, typed

    def encode() -> bytes:
        dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        dumped = sdk_methods.serialize_server_result("tools/call", "2026-07-28", dumped)
        dumped.setdefault("_meta", {})["io.modelcontextprotocol/serverInfo"] = info
        wire = JSONRPCResponse(jsonrpc="2.0", id=42, result=dumped)
        return (wire.model_dump_json(by_alias=True, exclude_unset=True) + "\n").encode()

    decode()
    encode()
    return decode, encode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a short run")
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    args = ap.parse_args()
    number, repeat = (2_000, 3) if args.quick else (20_000, 7)
    response_obj = orjson.loads(mcp_proto.encode_message(_response()))
    paths: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {
        "floor": (lambda: orjson.loads(REQUEST), lambda: orjson.dumps(response_obj)),
        "stdlib": (lambda: json.loads(REQUEST), lambda: json.dumps(response_obj).encode()),
        "mcp_proto": ours(),
    }
    theirs = sdk()
    if theirs is not None:
        paths["sdk"] = theirs
    results: dict[str, dict[str, float]] = {}
    for name, (dec, enc) in paths.items():
        d, e = best(dec, number, repeat), best(enc, number, repeat)
        results[name] = {"decode_us": d, "encode_us": e, "total_us": d + e}
    total = {k: v["total_us"] for k, v in results.items()}
    ratios = {"mcp_proto/floor": total["mcp_proto"] / total["floor"]}
    ratios["stdlib/floor"] = total["stdlib"] / total["floor"]
    if "sdk" in total:
        ratios["sdk/mcp_proto"] = total["sdk"] / total["mcp_proto"]
    if args.json:
        print(json.dumps({"results": results, "ratios": ratios}, indent=2))
        return
    print(f"{'path':10} {'decode us':>10} {'encode us':>10} {'total us':>10}")
    for name, r in results.items():
        print(f"{name:10} {r['decode_us']:10.2f} {r['encode_us']:10.2f} {r['total_us']:10.2f}")
    for k, v in ratios.items():
        print(f"{k:16} {v:6.2f}x")
    if theirs is None:
        print("(the SDK is not installed: run with `uv run --group bench`)")


if __name__ == "__main__":
    main()
