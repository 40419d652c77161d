"""Schema validation micro-benchmark: a typical tools/call argument object, schema compiled once.

Run::

    uv run --group bench python bench/schema.py [--quick] [--json]

The tool is an ordinary weather tool (a string, an enum, a bounded integer, a boolean and a
bounded array of strings). Its inputSchema is the one the official SDK (``mcp`` 2.3.0)
generates from the Python function, so every row validates against the same schema:

* ``mcp_proto is_valid`` / ``failures``: a ``Validator`` compiled once (``compile_schema``);
* ``mcp_proto validate_tool_arguments``: the server helper, through the schema cache (size
  walk + cache key + validation + building nothing when valid);
* ``sdk server (pydantic)``: what the SDK's ``MCPServer`` does before a tool runs
  (``Tool.run`` calls ``FuncMetadata.validate_arguments``: ``pre_parse_json``, the argument
  model's ``model_validate``, ``model_dump_one_level``; server/mcpserver/tools/base.py);
* ``jsonschema iter_errors+best_match``: what the SDK's client does with ``structuredContent``
  (a ``jsonschema`` validator compiled once, ``iter_errors`` + ``best_match``;
  client/session.py), run here on the arguments.

Each figure is the best of several repeats, microseconds per call, GC off; the invalid rows
use an object with two errors. Reported, never asserted.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field  # the bench group's; annotations below are evaluated by the SDK

from mcp_proto import types as t
from mcp_proto.schema import compile_schema, validate_tool_arguments

VALID = {
    "location": "Paris",
    "units": "metric",
    "days": 3,
    "include_hourly": False,
    "tags": ["wind", "rain"],
}
INVALID = {"location": "Paris", "units": "kelvin", "days": 30}


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


def sdk_tool() -> tuple[dict[str, Any], Callable[[dict[str, Any]], Any]]:
    """The SDK's schema for the weather function, and its argument-validation call."""
    from mcp.server.mcpserver.utilities.func_metadata import func_metadata

    def get_weather(
        location: str,
        units: Literal["metric", "imperial"] = "metric",
        days: Annotated[int, Field(ge=1, le=14)] = 1,
        include_hourly: bool = False,
        tags: Annotated[list[str], Field(max_length=10)] = [],  # noqa: B006 (the SDK's idiom)
    ) -> str:
        return location

    meta = func_metadata(get_weather)
    schema = meta.arg_model.model_json_schema(by_alias=True)
    return schema, meta.validate_arguments


def sdk_invalid(call: Callable[[dict[str, Any]], Any]) -> Callable[[], Any]:
    from pydantic import ValidationError

    def run() -> Any:
        try:
            return call(INVALID)
        except ValidationError as e:
            return e

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args()
    number, repeat = (2_000, 3) if args.quick else (20_000, 7)

    import jsonschema

    schema, sdk_validate = sdk_tool()
    tool = t.Tool(name="get_weather", input_schema=schema)
    ours = compile_schema(schema)
    js = jsonschema.Draft202012Validator(schema)
    assert ours.is_valid(VALID) and not ours.is_valid(INVALID)
    assert js.is_valid(VALID) and not js.is_valid(INVALID)
    assert validate_tool_arguments(tool, VALID) is None

    def js_path(instance: dict[str, Any]) -> Callable[[], Any]:
        return lambda: jsonschema.exceptions.best_match(js.iter_errors(instance))

    rows = {
        "mcp_proto is_valid (valid)": lambda: ours.is_valid(VALID),
        "mcp_proto failures (valid)": lambda: ours.failures(VALID),
        "mcp_proto validate_tool_arguments (valid)": lambda: validate_tool_arguments(tool, VALID),
        "sdk server pydantic (valid)": lambda: sdk_validate(VALID),
        "jsonschema iter_errors+best_match (valid)": js_path(VALID),
        "mcp_proto failures (invalid)": lambda: ours.failures(INVALID),
        "mcp_proto validate_tool_arguments (invalid)": lambda: validate_tool_arguments(
            tool, INVALID
        ),
        "sdk server pydantic (invalid)": sdk_invalid(sdk_validate),
        "jsonschema iter_errors+best_match (invalid)": js_path(INVALID),
        "mcp_proto compile (cache off)": lambda: compile_schema(schema, cache=None),
        "jsonschema compile": lambda: jsonschema.Draft202012Validator(schema),
    }
    figures = {
        name: best(fn, number // 10 if "compile" in name else number, repeat)
        for name, fn in rows.items()
    }
    if args.json:
        print(json.dumps({"unit": "us/call", "figures": figures}))
        return
    print(f"inputSchema ({len(json.dumps(schema))} bytes of JSON); best of {repeat}")
    for name, us in figures.items():
        print(f"  {name:46s} {us:8.2f} us")
    ratio = (
        figures["sdk server pydantic (valid)"]
        / figures["mcp_proto validate_tool_arguments (valid)"]
    )
    print(f"  sdk server / mcp_proto helper (valid): {ratio:.2f}x")


if __name__ == "__main__":
    main()
