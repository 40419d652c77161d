"""Streamable HTTP throughput: requests/s of ``tools/call``, our servers vs the SDK's (uvicorn).

Run::

    uv run --group bench python bench/http_throughput.py [--n 3000] [--concurrency 8] [--json]

One raw client (this script: asyncio, ``--concurrency`` keep-alive connections, each
sending pre-built POSTs one after the other and reading each response whole) drives each
server as a subprocess on 127.0.0.1 (``bench/servers/echo.py KIND --http PORT``): our
blocking, asyncio and trio adapters, and the official SDK's lowlevel ``Server`` on its
``streamable_http_app`` under uvicorn (stateless, JSON responses).  Server CPU per request
comes from ``getrusage(RUSAGE_CHILDREN)`` once each server exits.  A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

SERVER = str(Path(__file__).resolve().parent / "servers" / "echo.py")
KINDS = ("sync", "asyncio", "trio", "sdk")
BODY = (
    b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{'
    b'"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"},'
    b'"io.modelcontextprotocol/clientCapabilities":{}},'
    b'"name":"get_weather","arguments":{"location":"New York"}}}'
)


def post(id: int, port: int) -> bytes:
    body = BODY % id
    head = (
        f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
        "accept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\n"
        f"mcp-method: tools/call\r\nmcp-name: get_weather\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def read_response(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    if length:
        return await reader.readexactly(length)
    chunks = b""  # chunked (the SDK under uvicorn may send it)
    while True:
        size = int((await reader.readuntil(b"\r\n")).strip(), 16)
        data = await reader.readexactly(size + 2)
        if size == 0:
            return chunks
        chunks += data[:-2]


async def drive(port: int, n: int, concurrency: int) -> float:
    """Seconds for ``n`` calls over ``concurrency`` keep-alive connections."""
    per = n // concurrency

    async def worker(w: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for i in range(per):
            writer.write(post(w * per + i, port))
            await writer.drain()
            body = await read_response(reader)
            assert b"partly cloudy" in body, body[:300]
        writer.close()

    await asyncio.gather(*(worker(0) for _ in range(1)))  # warm-up round-trips
    start = time.perf_counter()
    await asyncio.gather(*(worker(w) for w in range(concurrency)))
    return time.perf_counter() - start


def wait_port(port: int, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {port}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(kind: str, n: int, concurrency: int) -> dict[str, float]:
    port = free_port()
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen([sys.executable, SERVER, kind, "--http", str(port)])
    try:
        wait_port(port, time.monotonic() + 30)
        seconds = asyncio.run(drive(port, n, concurrency))
    finally:
        proc.terminate()
        proc.wait(30)
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)
    done = (n // concurrency) * concurrency
    return {"rps": done / seconds, "cpu_us_incl_startup": cpu / done * 1e6}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("kinds", nargs="*", default=list(KINDS))
    args = ap.parse_args()
    results = {kind: run(kind, args.n, args.concurrency) for kind in args.kinds}
    if args.json:
        print(json.dumps({"n": args.n, "concurrency": args.concurrency, "results": results}))
        return
    print(f"{args.n} tools/call over HTTP/1.1 keep-alive, {args.concurrency} connections")
    print(f"{'server':8} {'req/s':>8} {'cpu us/req (incl. start-up)':>28}")
    for kind, r in results.items():
        print(f"{kind:8} {r['rps']:8.0f} {r['cpu_us_incl_startup']:28.1f}")
    if "sdk" in results:
        for kind in results:
            if kind != "sdk":
                print(
                    f"{kind}/sdk throughput: {results[kind]['rps'] / results['sdk']['rps']:.1f}x"
                )


if __name__ == "__main__":
    main()
