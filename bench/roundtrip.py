"""Server round trip: bytes of a ``tools/call`` in, request event out, result sent, bytes out.

Run::

    uv run --group bench python bench/roundtrip.py [--quick] [--json]

Both sides do the whole per-call work of a stdio server, minus the pipe itself, on the same
request lines, in one process and one run:

* ``mcp_proto``: ``ServerConnection.receive_data(line)``, ``next_event()`` (the typed
  ``Request``, with every ``_meta`` and capability check), then ``send(Result(...))`` (the send
  rules, the ``resultType`` and ``serverInfo`` stamps, and the encoded line).
* ``legacy``: the same calls from an ``initialize``-era client (no per-request ``_meta``) in
  the legacy session of a dual-era ``ServerConnection``: the session fills ``_meta`` in, the
  modern rules run, and the result goes out without ``resultType`` (issue 15: within 1.5x).
* ``sdk``: the official SDK (``mcp`` 2.3.0) kernel: a lowlevel ``Server`` with an
  ``on_call_tool`` handler, run by ``Server.run`` over the same in-memory context streams its
  ``stdio_server`` creates; the driver parses each line as ``stdio_server``'s reader does
  (``jsonrpc_message_adapter.validate_json``), sends it in, waits for the response and encodes
  it as the writer does (``model_dump_json`` plus newline).

Figures are microseconds of wall time and of process CPU per round trip, the best of several
repeats, sequential (one call in flight).  A benchmark, never a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from collections.abc import Callable
from typing import Any

import mcp_proto as m
from mcp_proto import types as t

TEXT = "Current weather in New York: 72F, partly cloudy"


def request_line(id: int) -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{'
        b'"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
        b'"io.modelcontextprotocol/clientInfo":{"name":"bench-client","version":"1.0.0"},'
        b'"io.modelcontextprotocol/clientCapabilities":{}},'
        b'"name":"get_weather","arguments":{"location":"New York","units":"metric"}}}\n' % id
    )


def timed(
    run: Callable[[list[bytes]], list[bytes]], lines: list[bytes], repeat: int
) -> dict[str, float]:
    """Best wall and CPU microseconds per round trip over ``repeat`` runs of all ``lines``."""
    run(lines[: max(1, len(lines) // 10)])  # warm-up
    walls, cpus = [], []
    gc.collect()
    for _ in range(repeat):
        w0, c0 = time.perf_counter_ns(), time.process_time_ns()
        out = run(lines)
        walls.append((time.perf_counter_ns() - w0) / len(lines) / 1000)
        cpus.append((time.process_time_ns() - c0) / len(lines) / 1000)
        assert len(out) == len(lines), "every request must be answered"
    return {"wall_us": min(walls), "cpu_us": min(cpus)}


def legacy_line(id: int) -> bytes:
    """The same call from an ``initialize``-era client: no per-request ``_meta``."""
    return (
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":'
        b'{"name":"get_weather","arguments":{"location":"New York","units":"metric"}}}\n' % id
    )


LEGACY_OPEN = (
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    b'"capabilities":{},"clientInfo":{"name":"bench-client","version":"1.0.0"}}}\n'
    b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
)


def serve(server: m.ServerConnection, lines: list[bytes]) -> list[bytes]:
    """Each line in, its request event out, its result's bytes back: the per-call work."""
    out: list[bytes] = []
    need_data = m.NEED_DATA
    for line in lines:
        server.receive_data(line)
        event = server.next_event()
        assert event is not need_data and type(event) is m.Request
        result = t.CallToolResult(content=[t.TextContent(text=TEXT)])
        out.append(server.send(m.Result(id=event.id, result=result)))
    return out


def ours_legacy(lines: list[bytes]) -> list[bytes]:
    """``ours`` in a legacy session of a dual-era connection (issue 15)."""
    caps = t.ServerCapabilities(tools=t.ServerCapabilitiesTools())
    server = m.ServerConnection(
        capabilities=caps,
        server_info=t.Implementation(name="bench-server", version="1.0.0"),
        legacy_versions=m.LEGACY_VERSIONS,
    )
    server.receive_data(LEGACY_OPEN)
    server.send(server.next_event())
    return serve(server, lines)


def ours(lines: list[bytes]) -> list[bytes]:
    caps = t.ServerCapabilities(tools=t.ServerCapabilitiesTools())
    server = m.ServerConnection(
        capabilities=caps, server_info=t.Implementation(name="bench-server", version="1.0.0")
    )
    return serve(server, lines)


def sdk_runner() -> Callable[[list[bytes]], list[bytes]] | None:
    try:
        import anyio
        import mcp_types as st
        from mcp.server.lowlevel.server import Server
        from mcp.shared._context_streams import create_context_streams
        from mcp.shared.message import SessionMessage
    except ImportError:
        return None

    async def call_tool(ctx: Any, params: Any) -> Any:
        return st.CallToolResult(content=[st.TextContent(type="text", text=TEXT)])

    server: Any = Server("bench-server", version="1.0.0", on_call_tool=call_tool)

    async def session(lines: list[bytes]) -> list[bytes]:
        in_send, in_recv = create_context_streams[Any](0)
        out_send, out_recv = create_context_streams[Any](0)
        out: list[bytes] = []
        async with anyio.create_task_group() as tg:
            options = server.create_initialization_options()
            tg.start_soon(server.run, in_recv, out_send, options)
            for line in lines:
                message = st.jsonrpc_message_adapter.validate_json(line, by_name=False)
                await in_send.send(SessionMessage(message))
                answer = await out_recv.receive()
                text = answer.message.model_dump_json(by_alias=True, exclude_unset=True)
                out.append((text + "\n").encode())
            await in_send.aclose()
        return out

    def run(lines: list[bytes]) -> list[bytes]:
        return anyio.run(session, lines)

    first = run([request_line(1)])[0]
    assert b'"result"' in first and b"partly cloudy" in first, first
    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a short run")
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    args = ap.parse_args()
    n, repeat = (500, 3) if args.quick else (5_000, 5)
    lines = [request_line(i) for i in range(1, n + 1)]
    sample = ours(lines[:1])[0]
    assert b"partly cloudy" in sample and b'"resultType":"complete"' in sample, sample
    results = {"mcp_proto": timed(ours, lines, repeat)}
    old = [legacy_line(i) for i in range(1, n + 1)]
    sample = ours_legacy(old[:1])[0]
    assert b"partly cloudy" in sample and b"resultType" not in sample, sample
    results["legacy"] = timed(ours_legacy, old, repeat)
    theirs = sdk_runner()
    if theirs is not None:
        results["sdk"] = timed(theirs, lines, repeat)
    ratios = {
        f"legacy/mcp_proto {k[:-3]}": results["legacy"][k] / results["mcp_proto"][k]
        for k in ("wall_us", "cpu_us")
    }
    if "sdk" in results:
        for k in ("wall_us", "cpu_us"):
            ratios[f"sdk/mcp_proto {k[:-3]}"] = results["sdk"][k] / results["mcp_proto"][k]
    if args.json:
        print(json.dumps({"n": n, "results": results, "ratios": ratios}, indent=2))
        return
    print(f"{n} sequential tools/call round trips, best of {repeat}")
    print(f"{'path':10} {'wall us':>10} {'cpu us':>10}")
    for name, r in results.items():
        print(f"{name:10} {r['wall_us']:10.2f} {r['cpu_us']:10.2f}")
    for k, v in ratios.items():
        print(f"{k:22} {v:7.2f}x")
    if theirs is None:
        print("(the SDK is not installed: run with `uv run --group bench`)")


if __name__ == "__main__":
    main()
