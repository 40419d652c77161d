"""Load figures: every response accounted for, and the server's peak memory, per adapter.

Run::

    uv run python bench/load.py [--stdio-n 10000] [--http-clients 200] [--http-calls 20]

* stdio: ``--stdio-n`` pipelined ``tools/call`` on one connection to the everything-free
  echo server (``bench/servers/echo.py``); counts responses by id;
* HTTP: ``--http-clients`` concurrent keep-alive clients, each making ``--http-calls``
  calls to the echo server over Streamable HTTP; counts responses by id.

The server's peak resident memory is its ``VmHWM`` from ``/proc`` (Linux) just before it
exits.  Figures, not assertions (``tests/test_load_*.py`` assert the behaviour).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from http_throughput import free_port, post, wait_port

SERVER = str(Path(__file__).resolve().parent / "servers" / "echo.py")


async def read_response(reader: asyncio.StreamReader) -> bytes:
    """The body of one HTTP/1.1 response (``Content-Length`` or chunked)."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    if length:
        return await reader.readexactly(length)
    chunks = b""
    while True:
        size = int((await reader.readuntil(b"\r\n")).strip(), 16)
        data = await reader.readexactly(size + 2)
        if size == 0:
            return chunks
        chunks += data[:-2]


LINE = (
    b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{'
    b'"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientCapabilities":{}},'
    b'"name":"get_weather","arguments":{"location":"New York"}}}\n'
)


def peak_kib(pid: int, field: str = "VmHWM") -> int:
    """A memory figure of process ``pid`` in KiB: its peak resident size, or ``field``."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    return -1


def stdio(kind: str, n: int) -> dict[str, float]:
    proc = subprocess.Popen(
        [sys.executable, SERVER, kind], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert proc.stdin is not None and proc.stdout is not None
    start = time.perf_counter()
    payload = b"".join(LINE % i for i in range(n))
    writer = threading.Thread(target=proc.stdin.write, args=(payload,))
    writer.start()
    seen: set[int] = set()
    errors = 0
    for line in proc.stdout:
        message = json.loads(line)
        seen.add(message["id"])
        errors += "error" in message
        if len(seen) == n:
            break
    seconds = time.perf_counter() - start
    peak = peak_kib(proc.pid)
    writer.join()
    proc.stdin.close()
    proc.wait(30)
    return {"answered": len(seen), "errors": errors, "rps": n / seconds, "peak_mib": peak / 1024}


def http(kind: str, clients: int, calls: int) -> dict[str, float]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, SERVER, kind, "--http", str(port)])
    wait_port(port, time.monotonic() + 30)
    seen: set[int] = set()
    errors = 0

    async def client(c: int) -> None:
        nonlocal errors
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for i in range(calls):
            id = c * calls + i
            writer.write(post(id, port))
            await writer.drain()
            body = json.loads(await read_response(reader))
            if body.get("id") == id and "result" in body:
                seen.add(id)
            else:
                errors += 1
        writer.close()

    async def main() -> float:
        start = time.perf_counter()
        await asyncio.gather(*(client(c) for c in range(clients)))
        return time.perf_counter() - start

    seconds = asyncio.run(main())
    peak = peak_kib(proc.pid)
    proc.terminate()
    proc.wait(30)
    total = clients * calls
    return {
        "answered": len(seen),
        "errors": errors,
        "rps": total / seconds,
        "peak_mib": peak / 1024,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stdio-n", type=int, default=10_000)
    ap.add_argument("--http-clients", type=int, default=200)
    ap.add_argument("--http-calls", type=int, default=20)
    args = ap.parse_args()
    print(f"stdio: {args.stdio_n} pipelined calls on one connection")
    for kind in ("sync", "asyncio", "trio"):
        r = stdio(kind, args.stdio_n)
        print(
            f"  {kind:8} answered {r['answered']:.0f}, errors {r['errors']:.0f}, "
            f"{r['rps']:.0f} req/s, server peak RSS {r['peak_mib']:.1f} MiB"
        )
    total = args.http_clients * args.http_calls
    print(f"http: {args.http_clients} concurrent clients x {args.http_calls} calls = {total}")
    for kind in ("sync", "asyncio", "trio"):
        r = http(kind, args.http_clients, args.http_calls)
        print(
            f"  {kind:8} answered {r['answered']:.0f}, errors {r['errors']:.0f}, "
            f"{r['rps']:.0f} req/s, server peak RSS {r['peak_mib']:.1f} MiB"
        )


if __name__ == "__main__":
    main()
