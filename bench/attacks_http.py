"""Resource attacks on the HTTP servers at full scale: is an honest client still served?

Run::

    uv run python bench/attacks_http.py [--listens 256] [--bodies 256] [--calls 20]

Each adapter's echo server (``bench/servers/echo.py KIND --http PORT``, default settings)
runs as a subprocess on 127.0.0.1, so its memory is its own, and is attacked twice:

* ``listens``: ``--listens`` ``subscriptions/listen`` streams opened and held (the refused
  ones closed once answered), as many as the server's default ``max_connections``;
* ``bodies``: ``--bodies`` POSTs announcing a 4 MiB body (the default ``max_body_size``) and
  sending all of it but one byte, then stalling.

While the attack holds, an honest client makes ``--calls`` ``tools/call`` requests one after
the other, each on a new connection and given ``--timeout`` seconds.  Printed per adapter and
attack: what the attack got (listens held, bodies refused), the honest calls' success rate and
p50/p99 latency (of those that succeeded), and the server's peak resident memory (``VmHWM``
from ``/proc``, Linux) against its resident memory once started.  Figures, not assertions:
``tests/test_http_attacks.py`` asserts the behaviour at small scale.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from http_throughput import free_port, post, wait_port
from load import peak_kib

SERVER = str(Path(__file__).resolve().parent / "servers" / "echo.py")
BODY = 4 * 1024 * 1024
LISTEN = (
    b'{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"_meta":{'
    b'"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientCapabilities":{}},'
    b'"notifications":{"toolsListChanged":true}}}'
)


def head(port: int, method: str, length: int) -> bytes:
    return (
        f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
        "accept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\n"
        f"mcp-method: {method}\r\ncontent-length: {length}\r\n\r\n"
    ).encode()


def status_of(sock: socket.socket) -> int | None:
    """The status of the response on ``sock``; ``None`` if it closed or timed out first."""
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            more = sock.recv(65536)
            if not more:
                return None
            data += more
    except OSError:
        return None
    return int(data.split()[1])


def attack_listens(port: int, n: int, held: list[socket.socket]) -> str:
    statuses: dict[int | None, int] = {}
    for i in range(n):
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=2)
            body = LISTEN % i
            sock.sendall(head(port, "subscriptions/listen", len(body)) + body)
            status = status_of(sock)
        except OSError:
            sock, status = None, None
        statuses[status] = statuses.get(status, 0) + 1
        if sock is not None and status == 200:
            held.append(sock)  # the stream stays open
        elif sock is not None:
            sock.close()
    return ", ".join(f"{count} {status or 'failed'}" for status, count in statuses.items())


def attack_bodies(port: int, n: int, held: list[socket.socket]) -> str:
    stalled = refused = failed = 0
    piece = b" " * (1024 * 1024)
    for _ in range(n):
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=2)
        except OSError:
            failed += 1
            continue
        held.append(sock)
        try:
            sock.sendall(head(port, "tools/call", BODY))
            for _ in range(3):
                sock.sendall(piece)
            sock.sendall(piece[:-1])  # all but one byte: the request never completes
            stalled += 1
        except OSError:
            refused += status_of(sock) == 503  # the server stopped reading: its answer
    time.sleep(1.0)  # the server reads what the kernel took from us, and may refuse it
    for sock in held:  # those the server refused after the whole body was sent
        sock.setblocking(False)
        try:
            if sock.recv(65536).startswith(b"HTTP/1.1 503"):
                stalled, refused = stalled - 1, refused + 1
        except OSError:
            pass
    return f"{stalled} stalled, {refused} refused 503, {failed} not connected"


def honest(port: int, calls: int, timeout: float) -> tuple[int, list[float]]:
    ok, latencies = 0, []
    for i in range(calls):
        start = time.perf_counter()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
                sock.sendall(post(i, port))
                data = b""
                while not data.endswith(b"}"):
                    more = sock.recv(65536)
                    if not more:
                        break
                    data += more
            answer = json.loads(data.partition(b"\r\n\r\n")[2])
        except (OSError, ValueError):
            continue
        if answer.get("id") == i and "result" in answer:
            ok += 1
            latencies.append(time.perf_counter() - start)
    return ok, latencies


def run(
    kind: str,
    attack: Callable[[int, int, list[socket.socket]], str],
    n: int,
    args: argparse.Namespace,
) -> None:
    port = free_port()
    proc = subprocess.Popen([sys.executable, SERVER, kind, "--http", str(port)])
    held: list[socket.socket] = []
    try:
        wait_port(port, time.monotonic() + 30)
        time.sleep(0.5)
        start_kib = peak_kib(proc.pid, "VmRSS")
        what = attack(port, n, held)
        ok, latencies = honest(port, args.calls, args.timeout)
        peak = peak_kib(proc.pid)
    finally:
        for sock in held:
            sock.close()
        proc.terminate()
        proc.wait(30)
    if latencies:
        cuts = statistics.quantiles(latencies, n=100, method="inclusive")
        timing = f"p50 {cuts[49] * 1000:.1f} ms, p99 {cuts[98] * 1000:.1f} ms"
    else:
        timing = "no call succeeded"
    print(
        f"  {kind:8} {what}; honest {ok}/{args.calls} ({timing}); "
        f"server RSS {start_kib / 1024:.0f} MiB at start, peak {peak / 1024:.0f} MiB"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--listens", type=int, default=256)
    ap.add_argument("--bodies", type=int, default=256)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--timeout", type=float, default=2.0)
    ap.add_argument("kinds", nargs="*", default=["sync", "asyncio", "trio"])
    args = ap.parse_args()
    print(f"{args.listens} listens held open; honest calls: {args.calls}, {args.timeout} s each")
    for kind in args.kinds:
        run(kind, attack_listens, args.listens, args)
    print(f"{args.bodies} bodies of 4 MiB stalled one byte short")
    for kind in args.kinds:
        run(kind, attack_bodies, args.bodies, args)


if __name__ == "__main__":
    main()
