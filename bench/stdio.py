"""End to end over stdio: requests/s and server CPU per ``tools/call``, ours vs the SDK.

Run::

    uv run --group bench python bench/stdio.py [--n 2000] [--json]

One raw client (this script: pre-built request lines, responses counted by newline) drives
each server as a subprocess (``bench/servers/echo.py``): our blocking, asyncio and trio
adapters and the official SDK's lowlevel ``Server`` over its ``stdio_server``.  Two modes:

* ``sequential``: write one request, read its response, repeat;
* ``pipelined``: a writer thread sends all N while the main thread reads.

Server CPU per request is the server process's CPU time (``/proc/PID/stat``, so Linux)
over the timed calls only, after 20 warm-up calls: start-up and shutdown excluded.  With
two CPUs or more the server is pinned to one and the client to the others; each server
runs ``--rounds`` times, interleaved, and medians are reported.  A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

SERVER = str(Path(__file__).resolve().parent / "servers" / "echo.py")
# also: inline-floor, trio-floor (servers/echo.py)
KINDS = ("sync", "asyncio", "trio", "trio-raw", "sdk")


def line(id: int) -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{'
        b'"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
        b'"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"},'
        b'"io.modelcontextprotocol/clientCapabilities":{}},'
        b'"name":"get_weather","arguments":{"location":"New York"}}}\n' % id
    )


def pin(server_pid: int) -> None:
    """The server on the last CPU, this client on the others (when there are two or more).

    Without it, a run's figures depend on where the scheduler puts the two
    processes, and the sequential ones moved by half from run to run here.
    """
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if len(cpus) >= 2:
        os.sched_setaffinity(server_pid, {cpus[-1]})
        os.sched_setaffinity(0, set(cpus[:-1]))


def read_lines(stream: int, count: int) -> None:
    seen, buffered = 0, b""
    while seen < count:
        chunk = os.read(stream, 1 << 16)
        if not chunk:
            raise RuntimeError(f"server closed after {seen} of {count} responses")
        seen += chunk.count(b"\n")
        buffered = chunk
    assert b'"result"' in buffered, buffered[-300:]


def server_cpu(pid: int) -> float:
    """CPU seconds process ``pid`` has used so far (Linux ``/proc``)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(kind: str, n: int, mode: str) -> tuple[float, float]:
    """(wall seconds for the N requests, server CPU seconds for them)."""
    proc = subprocess.Popen(
        [sys.executable, SERVER, kind], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    pin(proc.pid)
    assert proc.stdin is not None and proc.stdout is not None
    out = proc.stdout.fileno()
    # Warm-up calls, so that start-up is in neither figure.
    for i in range(20):
        proc.stdin.write(line(i))
        proc.stdin.flush()
        read_lines(out, 1)
    lines = [line(i) for i in range(1, n + 1)]
    cpu0 = server_cpu(proc.pid)
    start = time.perf_counter()
    if mode == "sequential":
        for data in lines:
            proc.stdin.write(data)
            proc.stdin.flush()
            read_lines(out, 1)
    else:

        def write_all() -> None:
            assert proc.stdin is not None
            proc.stdin.write(b"".join(lines))
            proc.stdin.flush()

        writer = threading.Thread(target=write_all)
        writer.start()
        read_lines(out, n)
        writer.join()
    wall = time.perf_counter() - start
    cpu = server_cpu(proc.pid) - cpu0
    proc.stdin.close()
    proc.wait(30)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3, help="runs per server; medians reported")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("kinds", nargs="*", default=list(KINDS))
    args = ap.parse_args()
    runs: dict[str, list[dict[str, float]]] = {kind: [] for kind in args.kinds}
    for _ in range(args.rounds):  # interleaved, so that a noisy moment hits every server
        for kind in args.kinds:
            row: dict[str, float] = {}
            for mode in ("sequential", "pipelined"):
                wall, cpu = run(kind, args.n, mode)
                row[f"{mode}_rps"] = args.n / wall
                row[f"{mode}_cpu_us"] = cpu / args.n * 1e6
            runs[kind].append(row)
    results = {
        kind: {key: statistics.median(r[key] for r in rows) for key in rows[0]}
        for kind, rows in runs.items()
    }
    if args.json:
        print(json.dumps({"n": args.n, "results": results}, indent=2))
        return
    print(
        f"{args.n} tools/call over stdio per mode, median of {args.rounds} rounds;"
        " server CPU over the timed calls only"
    )
    print(
        f"{'server':8} {'seq req/s':>10} {'seq cpu us':>11} {'pipe req/s':>11} {'pipe cpu us':>12}"
    )
    for kind, r in results.items():
        print(
            f"{kind:8} {r['sequential_rps']:10.0f} {r['sequential_cpu_us']:11.1f}"
            f" {r['pipelined_rps']:11.0f} {r['pipelined_cpu_us']:12.1f}"
        )
    if "sdk" in results:
        for kind in results:
            if kind != "sdk":
                seq = results["sdk"]["sequential_cpu_us"] / results[kind]["sequential_cpu_us"]
                pipe = results["sdk"]["pipelined_cpu_us"] / results[kind]["pipelined_cpu_us"]
                print(f"sdk/{kind} server CPU per request: {seq:.1f}x seq, {pipe:.1f}x pipelined")


if __name__ == "__main__":
    main()
