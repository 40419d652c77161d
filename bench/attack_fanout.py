"""Listens that stop reading, against change notifications: the attack of issue 24, per adapter.

    uv run python bench/attack_fanout.py [--stalled 7] [--triggers 3] [--timeout 40] [ADAPTER ...]

Against ``bench/servers/fanout.py`` (default settings) as a subprocess on 127.0.0.1:

1. one honest listen, which reads everything and stamps each notification's arrival,
   and ``--stalled`` listens with a 4 KiB ``SO_RCVBUF`` that read their acknowledgement
   and then nothing;
2. fill: ``flood`` calls of one 64 KiB notification each, until the stalled listens'
   socket buffers and outboxes must be full (``tcp_wmem``'s maximum, 2 MiB and 64
   notifications more), or until a call takes over 2 s (the server waits for them:
   their buffers are full);
3. the attack: ``trigger`` (one ``tools/list_changed``) called ``--triggers`` times in turn.

Prints per adapter and phase the calls' latency and the honest listen's delay per
notification (from the start of the call that sent it to its arrival), p50 and max; then,
after ``--wait`` seconds more of stalling, how many stalled connections the server had
closed (each read up to its end, within ``--timeout`` seconds in all), and the warnings
the server logged.  Every call gives up after ``--timeout`` seconds; the server is killed
at the end.
"""

from __future__ import annotations

import argparse
import json
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import h11

SERVER = str(Path(__file__).resolve().parent / "servers" / "fanout.py")
META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
LISTEN = {"notifications": {"toolsListChanged": True, "resourceSubscriptions": ["file:///bench/"]}}
SIZE = 64 * 1024


def request(conn: h11.Connection, id: int, method: str, params: dict[str, Any]) -> bytes:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": id, "method": method, "params": {**params, "_meta": META}}
    ).encode()
    headers = [
        ("host", "127.0.0.1"),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("content-length", str(len(body))),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", method),
    ] + ([("mcp-name", params["name"])] if "name" in params else [])
    head = conn.send(h11.Request(method="POST", target="/mcp", headers=headers))
    return head + conn.send(h11.Data(data=body)) + conn.send(h11.EndOfMessage())


def connect(at: tuple[str, int], rcvbuf: int = 0) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(10)
    sock.connect(at)
    return sock


class Honest(threading.Thread):
    """The listen that reads: the arrival time of every change notification, in order."""

    def __init__(self, at: tuple[str, int]) -> None:
        super().__init__(daemon=True)
        self.sock = connect(at)
        self.conn = h11.Connection(h11.CLIENT)
        self.sock.sendall(request(self.conn, 1, "subscriptions/listen", LISTEN))
        self.arrivals: list[float] = []
        self.acknowledged = threading.Event()
        self.body = b""

    def run(self) -> None:
        self.sock.settimeout(None)
        try:
            while data := self.sock.recv(1 << 20):
                now = time.monotonic()
                self.conn.receive_data(data)
                while (event := self.conn.next_event()) is not h11.NEED_DATA:
                    if isinstance(event, h11.Data):
                        self.frames(event.data, now)
        except (OSError, h11.RemoteProtocolError):
            pass  # closed at the end of the run

    def frames(self, data: bytes, now: float) -> None:
        self.body += data
        *frames, self.body = self.body.split(b"\n\n")
        for frame in frames:
            if b"acknowledged" in frame:
                self.acknowledged.set()
            elif frame.startswith(b"data:"):
                self.arrivals.append(now)


def stalled(at: tuple[str, int], id: int) -> socket.socket:
    """A listen that reads its acknowledgement, a little at a time, and then nothing."""
    sock = connect(at, rcvbuf=4096)
    sock.sendall(request(h11.Connection(h11.CLIENT), id, "subscriptions/listen", LISTEN))
    seen = b""
    while b"acknowledged" not in seen:
        chunk = sock.recv(256)
        if not chunk:
            raise ConnectionError("the server closed a listen before acknowledging it")
        seen += chunk
    return sock


def call(at: tuple[str, int], params: dict[str, Any], timeout: float) -> float:
    """Seconds until the tool call's answer (``timeout`` when it gave up waiting)."""
    start = time.monotonic()
    conn = h11.Connection(h11.CLIENT)
    with connect(at) as sock:
        sock.sendall(request(conn, 2, "tools/call", params))
        while (left := start + timeout - time.monotonic()) > 0:
            event = conn.next_event()
            if isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                break
            if event is h11.NEED_DATA:
                sock.settimeout(left)
                try:
                    conn.receive_data(sock.recv(65536))
                except TimeoutError:
                    break
    return min(time.monotonic() - start, timeout)


def closed_by_server(socks: list[socket.socket], seconds: float) -> int:
    """How many of ``socks`` the server ends within ``seconds`` (what it sent is read, dropped)."""
    closed = 0
    deadline = time.monotonic() + seconds
    with selectors.DefaultSelector() as waiting:
        for sock in socks:
            sock.setblocking(False)
            waiting.register(sock, selectors.EVENT_READ)
        while waiting.get_map() and (left := deadline - time.monotonic()) > 0:
            for key, _ in waiting.select(left):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                try:
                    data = sock.recv(1 << 20)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""  # reset: ended all the same
                if not data:
                    waiting.unregister(sock)
                    closed += 1
    return closed


def fill_bytes() -> int:
    try:
        most = int(Path("/proc/sys/net/ipv4/tcp_wmem").read_text().split()[2])
    except (OSError, ValueError, IndexError):
        most = 4 << 20
    return most + (2 << 20) + 64 * SIZE


def summary(values: list[float]) -> str:
    if not values:
        return "-"
    return f"p50 {statistics.median(values) * 1000:8.1f} ms  max {max(values) * 1000:8.1f} ms"


def attack(adapter: str, args: argparse.Namespace) -> None:
    with tempfile.TemporaryFile("w+") as log:
        command = [sys.executable, SERVER, adapter]
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True)
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip()
            host, port = url.split("//")[1].split("/")[0].split(":")
            run(adapter, (host, int(port)), args)
        finally:
            proc.kill()
            proc.wait(30)
        log.seek(0)
        warnings = log.read().splitlines()
    behind = sum("behind" in w for w in warnings)
    timed_out = sum("connection closed" in w for w in warnings)
    print(f"  server warnings: {behind} fell behind, {timed_out} closed after a slow write")


def run(adapter: str, at: tuple[str, int], args: argparse.Namespace) -> None:
    n_stalled, triggers, timeout = args.stalled, args.triggers, args.timeout
    honest = Honest(at)
    honest.start()
    if not honest.acknowledged.wait(10):
        raise RuntimeError("the honest listen was not acknowledged")
    victims = [stalled(at, 100 + k) for k in range(n_stalled)]
    starts: list[float] = []
    fill: list[float] = []
    flood = {"name": "flood", "arguments": {"count": 1, "size": SIZE}}
    while len(fill) * SIZE < fill_bytes():
        starts.append(time.monotonic())
        fill.append(call(at, flood, timeout))
        if fill[-1] > 2.0:
            break  # the server waits for the stalled listens: their buffers are full
    attack_calls = []
    for _ in range(triggers):
        starts.append(time.monotonic())
        attack_calls.append(call(at, {"name": "trigger"}, timeout))
    deadline = time.monotonic() + timeout
    while len(honest.arrivals) < len(starts) and time.monotonic() < deadline:
        time.sleep(0.05)
    delays = [a - s for a, s in zip(honest.arrivals, starts, strict=False)]
    time.sleep(args.wait)  # still stalled: past the server's write deadline, if it has one
    closed = closed_by_server(victims, timeout)
    print(f"{adapter}: {n_stalled} stalled listens, 1 honest")
    print(f"  fill    {len(fill):4d} calls   call  {summary(fill)}")
    print(f"  {'':22}honest {summary(delays[: len(fill)])}")
    print(
        f"  attack  {triggers:4d} calls   call  {summary(attack_calls)}   each "
        + " ".join(f"{c:.3f}s" for c in attack_calls)
    )
    print(f"  {'':22}honest {summary(delays[len(fill) :])}")
    missing = len(starts) - len(honest.arrivals)
    print(f"  honest listen: {missing} notifications missing; stalled closed: {closed}")
    for sock in (*victims, honest.sock):
        sock.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stalled", type=int, default=7)
    ap.add_argument("--triggers", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=40.0, help="seconds a call may take")
    ap.add_argument("--wait", type=float, default=7.0, help="seconds of stalling after it")
    ap.add_argument("adapters", nargs="*", default=["sync", "asyncio", "trio"])
    args = ap.parse_args()
    for adapter in args.adapters:
        attack(adapter, args)


if __name__ == "__main__":
    main()
