"""HTTP/1.1 framing of one MCP exchange: our server wire beside h11, and the whole exchange.

Run::

    uv run python bench/http_wire.py [--n 20000]

Four figures per ``tools/call`` POST (the request of ``bench/http_throughput.py``) and a
237-byte JSON response, best of 5 runs, in one process:

* ``h11``: ``h11.Connection(SERVER)`` reads the request and writes the response;
* ``ServerWire``: ``mcp_proto.http.wire.ServerWire`` does the same;
* ``ServerWire, chunked``: the same request with its body sent ``chunked`` in three
  chunks (one with a chunk extension) and a trailer field, the reader's strictest path;
* ``exchange``: the whole of it through ``HTTPServerConnection`` -- framing, the
  binding's checks, the core's request and result -- as an HTTP adapter runs it.

A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import h11

sys.path.insert(0, str(Path(__file__).resolve().parent))
from http_throughput import post

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.http import HTTPServer, HTTPServerConnection
from mcp_proto.http.wire import PAUSED, ServerWire
from mcp_proto_runtime import ServerSettings, answer

BODY = b"x" * 237
HEADERS = [("content-type", "application/json"), ("content-length", "237")]


def best(fn: Callable[[bytes], object], data: list[bytes]) -> float:
    """Best of 5 runs over ``data``, in microseconds per item."""
    for item in data[:500]:
        fn(item)
    runs = []
    for _ in range(5):
        start = time.perf_counter()
        for item in data:
            fn(item)
        runs.append((time.perf_counter() - start) / len(data) * 1e6)
    return min(runs)


def chunked(raw: bytes) -> bytes:
    """``raw`` with its Content-Length body re-sent as three chunks and a trailer field."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = [ln for ln in head.split(b"\r\n") if not ln.startswith(b"content-length")]
    third = len(body) // 3
    parts = [body[:third], body[third : 2 * third], body[2 * third :]]
    out = [b"\r\n".join([*lines, b"transfer-encoding: chunked"]), b"\r\n\r\n"]
    for i, part in enumerate(parts):
        out.append(b"%x%s\r\n%s\r\n" % (len(part), b";n=1" if i == 1 else b"", part))
    out.append(b"0\r\nx-trailer: done\r\n\r\n")
    return b"".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000)
    args = ap.parse_args()
    data = [post(i, 8000) for i in range(args.n)]

    theirs = h11.Connection(h11.SERVER)

    def with_h11(raw: bytes) -> bytes:
        theirs.receive_data(raw)
        while theirs.next_event() not in (h11.NEED_DATA, h11.PAUSED):
            pass
        out = theirs.send(h11.Response(status_code=200, headers=HEADERS)) or b""
        out += (theirs.send(h11.Data(data=BODY)) or b"") + (theirs.send(h11.EndOfMessage()) or b"")
        theirs.start_next_cycle()
        return out

    ours = ServerWire()

    def with_wire(raw: bytes) -> bytes:
        ours.receive_data(raw)
        while ours.next_event() is not PAUSED:
            pass
        return ours.respond(200, HEADERS) + ours.body(BODY) + ours.end()

    chunked_data = [chunked(raw) for raw in data]

    caps = t.ServerCapabilities(tools=t.ServerCapabilitiesTools())
    info = t.Implementation(name="bench-server", version="1.0.0")
    settings = ServerSettings({}, capabilities=caps, server_info=info)
    conn = HTTPServerConnection(HTTPServer(connection=settings.connection))
    result = t.CallToolResult(content=[t.TextContent(text="Current weather: 72F")])

    def exchange(raw: bytes) -> bytes:
        conn.receive_data(raw)
        out = b""
        while (event := conn.next_event()) is not m.NEED_DATA:
            if isinstance(event, m.Request):
                out = conn.send(answer(event, result, cache_hints=(0, "private")))
        return out

    assert with_h11(data[0]).split(b"\r\n")[0] == b"HTTP/1.1 200 "
    assert with_wire(data[0]).split(b"\r\n")[0] == b"HTTP/1.1 200 OK"
    assert b'"result"' in exchange(data[0])
    h11_us, wire_us, exchange_us = (best(f, data) for f in (with_h11, with_wire, exchange))
    chunked_us = best(with_wire, chunked_data)
    print(f"{args.n} tools/call POSTs, best of 5, us per exchange")
    print(f"h11 framing          {h11_us:7.1f}")
    print(f"ServerWire framing   {wire_us:7.1f}   (h11/ours {h11_us / wire_us:.1f}x)")
    print(f"ServerWire, chunked  {chunked_us:7.1f}   (three chunks and a trailer)")
    print(f"whole exchange       {exchange_us:7.1f}   (HTTPServerConnection, binding and core)")


if __name__ == "__main__":
    main()
