"""Streamable HTTP throughput: requests/s of ``tools/call``, our servers vs the SDK's (uvicorn).

Run::

    uv run --group bench python bench/http_throughput.py [--n 3000] [--concurrency 8] [--json]

One raw client (this script: a ``selectors`` loop over ``--concurrency`` keep-alive
connections, each sending pre-built POSTs one after the other and reading each response
whole; the cheapest client Python has, so that servers, not the client, run out of CPU) drives each
server as a subprocess on 127.0.0.1 (``bench/servers/echo.py KIND --http PORT``): our
blocking, asyncio and trio adapters, and the official SDK's lowlevel ``Server`` on its
``streamable_http_app`` under uvicorn (stateless, JSON responses).  Server CPU per request
is the server process's CPU time (``/proc/PID/stat``, so Linux) over the timed run only:
start-up and warm-up excluded.  With two CPUs or more the server is pinned to one and the
client to the others; each server runs ``--rounds`` times, interleaved, and medians are
reported.  A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import selectors
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

SERVER = str(Path(__file__).resolve().parent / "servers" / "echo.py")
KINDS = ("sync", "asyncio", "trio", "trio-raw", "sdk")
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


_LENGTH = re.compile(rb"\r\ncontent-length:[ \t]*([0-9]+)", re.IGNORECASE)


class _Conn:
    """One keep-alive connection of the raw client: send a POST, read its response whole."""

    def __init__(self, port: int, ids: range) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.setblocking(False)
        self.requests = [post(i, port) for i in ids]
        self.next = 0
        self.buf = b""

    def send_next(self) -> bool:
        if self.next == len(self.requests):
            return False
        self.sock.sendall(self.requests[self.next])  # small: fits the socket buffer
        self.next += 1
        return True

    def response_done(self) -> bool:
        """Whether the buffer holds one whole response (then it is checked and dropped)."""
        head_end = self.buf.find(b"\r\n\r\n")
        if head_end < 0:
            return False
        head = self.buf[:head_end]
        length = _LENGTH.search(head)
        if length is not None:
            end = head_end + 4 + int(length.group(1))
        else:  # chunked (the SDK under uvicorn may send it)
            end = self.buf.find(b"\r\n0\r\n\r\n", head_end) + 7
            if end < 7:
                return False
        if len(self.buf) < end:
            return False
        assert b"partly cloudy" in self.buf[:end], self.buf[:300]
        self.buf = self.buf[end:]
        return True


def drive(port: int, n: int, concurrency: int) -> float:
    """Seconds for ``n`` calls over ``concurrency`` keep-alive connections.

    A ``selectors`` loop over raw non-blocking sockets: the cheapest client Python
    has, so that the server, not the client, is what runs out of CPU.
    """
    per = n // concurrency
    conns = [_Conn(port, range(w * per, (w + 1) * per)) for w in range(concurrency)]
    sel = selectors.DefaultSelector()
    start = time.perf_counter()
    for c in conns:
        c.send_next()
        sel.register(c.sock, selectors.EVENT_READ, c)
    open_ = len(conns)
    while open_:
        for key, _ in sel.select():
            c = key.data
            data = c.sock.recv(1 << 16)
            if not data:
                raise RuntimeError("the server closed a connection")
            c.buf += data
            while c.response_done():
                if not c.send_next():
                    sel.unregister(c.sock)
                    open_ -= 1
    elapsed = time.perf_counter() - start
    for c in conns:
        c.sock.close()
    sel.close()
    return elapsed


def pin(server_pid: int) -> None:
    """The server on the last CPU, this client on the others (when there are two or more).

    Without it, a run's figures depend on where the scheduler puts the two
    processes (same core or not), and vary by half from run to run here.
    """
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if len(cpus) >= 2:
        os.sched_setaffinity(server_pid, {cpus[-1]})
        os.sched_setaffinity(0, set(cpus[:-1]))


def server_cpu(pid: int) -> float:
    """CPU seconds the server process has used so far (Linux ``/proc``)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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
    proc = subprocess.Popen([sys.executable, SERVER, kind, "--http", str(port)])
    pin(proc.pid)
    try:
        wait_port(port, time.monotonic() + 30)
        drive(port, 8 * concurrency, concurrency)  # warm-up
        before = server_cpu(proc.pid)
        seconds = drive(port, n, concurrency)
        cpu = server_cpu(proc.pid) - before
    finally:
        proc.terminate()
        proc.wait(30)
    done = (n // concurrency) * concurrency
    return {"rps": done / seconds, "cpu_us": cpu / done * 1e6}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3, help="runs per server; medians reported")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("kinds", nargs="*", default=list(KINDS))
    args = ap.parse_args()
    runs: dict[str, list[dict[str, float]]] = {kind: [] for kind in args.kinds}
    for _ in range(args.rounds):  # interleaved, so that a noisy moment hits every server
        for kind in args.kinds:
            runs[kind].append(run(kind, args.n, args.concurrency))
    results = {
        kind: {key: statistics.median(r[key] for r in rs) for key in rs[0]}
        for kind, rs in runs.items()
    }
    if args.json:
        print(json.dumps({"n": args.n, "concurrency": args.concurrency, "results": results}))
        return
    print(
        f"{args.n} tools/call over HTTP/1.1 keep-alive, {args.concurrency} connections,"
        f" median of {args.rounds} rounds"
    )
    print(f"{'server':8} {'req/s':>8} {'server cpu us/req':>18}")
    for kind, r in results.items():
        print(f"{kind:8} {r['rps']:8.0f} {r['cpu_us']:18.1f}")
    if "sdk" in results:
        sdk = results["sdk"]
        for kind, r in results.items():
            if kind != "sdk":
                print(
                    f"{kind}/sdk throughput: {r['rps'] / sdk['rps']:.1f}x,"
                    f" sdk/{kind} server CPU per request: {sdk['cpu_us'] / r['cpu_us']:.1f}x"
                )


if __name__ == "__main__":
    main()
