"""A hostile server throws a huge ``application/json`` body at each HTTP client.

Run::

    uv run python bench/attack_client_body.py [--mib 1024] [--limit-mib L] [--json]
        [--kinds sync asyncio trio] [--framings chunked close length]

For each client kind and body framing, a fresh child process starts a raw-socket server
thread on 127.0.0.1 that answers one ``tools/call`` POST with ``200``,
``Content-Type: application/json`` and a body of ``--mib`` MiB: ``chunked``,
``close`` (no ``Content-Length``: the body ends when the connection closes) or
``length`` (announced by ``Content-Length``).  The body is the JSON-RPC result of the
call with a huge string in it, written in 64 KiB pieces from one buffer, so the server
holds next to nothing.  The child first makes one call answered with a 4 KiB body (to
load what a call needs), then the attacked one, and reports what it did, how many MiB
the server got to write before the client went away, and the growth of the child's peak
resident memory over the attacked call (``ru_maxrss`` after minus before: a fresh
process, so the high-water mark is the client's).  ``--limit-mib`` sets the client's
``max_message_size`` (the library's default, 16 MiB, when absent).

Everything is bounded: the server stops when the body is written or the client has gone
(a write fails), and every socket wait times out after 120 s.  Figures, not assertions:
``tests/test_http_client_attack.py`` asserts the bound with this module's server.
"""

from __future__ import annotations

import argparse
import json
import resource
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

PIECE = 64 * 1024
MIB = 1024 * 1024
KINDS = ("sync", "asyncio", "trio")
FRAMINGS = ("chunked", "close", "length")
WAIT = 120.0


def read_request(conn: socket.socket) -> dict[str, Any]:
    """The JSON-RPC request of one POST with a ``Content-Length`` body (what clients send)."""
    data = b""
    while b"\r\n\r\n" not in data:
        more = conn.recv(PIECE)
        if not more:
            raise ConnectionResetError("the client left before its request")
        data += more
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
    while len(body) < length and (more := conn.recv(PIECE)):
        body += more
    message: dict[str, Any] = json.loads(body)
    return message


def pieces(size: int, id: Any) -> Iterator[bytes]:
    """A ``size``-byte JSON-RPC result for request ``id`` (one huge string in it), in pieces
    of at most 64 KiB cut from one shared buffer."""
    prefix = b'{"jsonrpc":"2.0","id":%s,"result":{"content":[],' % json.dumps(id).encode()
    prefix += b'"structuredContent":{"pad":"'
    suffix = b'"}}}'
    filler = b"x" * PIECE
    left = size - len(prefix) - len(suffix)
    yield prefix
    while left > 0:
        n = min(left, PIECE)
        yield filler if n == PIECE else filler[:n]
        left -= n
    yield suffix


def send_body(conn: socket.socket, size: int, framing: str, id: Any, sent: list[int]) -> None:
    """Answer request ``id`` with ``200`` and a ``size``-byte ``application/json`` body framed
    as ``framing``, adding each piece's size to ``sent[0]`` once it is written.

    Raises ``OSError`` when the client goes away (``ConnectionError``) or stops reading
    for ``WAIT`` seconds (``TimeoutError``).
    """
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
    head += {
        "chunked": b"transfer-encoding: chunked\r\n",
        "close": b"connection: close\r\n",
        "length": b"content-length: %d\r\n" % size,
    }[framing]
    conn.sendall(head + b"\r\n")
    chunked = framing == "chunked"
    for piece in pieces(size, id):
        if chunked:
            conn.sendall(b"%x\r\n" % len(piece))
        conn.sendall(piece)
        if chunked:
            conn.sendall(b"\r\n")
        sent[0] += len(piece)
    if chunked:
        conn.sendall(b"0\r\n\r\n")


def serve_body(
    listener: socket.socket, size: int, framing: str, report: dict[str, Any], wait: float = WAIT
) -> None:
    """Answer one POST with a ``size``-byte body (:func:`send_body`); then stop.

    Fills ``report``: ``sent``, the body bytes written (fewer than ``size`` when the client
    closed first), and ``ended``: ``"done"``, ``"client closed"`` (a reset or a broken
    pipe) or ``"timeout"`` (nobody read for ``wait`` seconds).  Never raises.
    """
    sent = [0]
    report["ended"] = "done"
    try:
        conn, _ = listener.accept()
        with conn:
            conn.settimeout(wait)
            send_body(conn, size, framing, read_request(conn)["id"], sent)
    except TimeoutError:
        report["ended"] = "timeout"
    except OSError:
        report["ended"] = "client closed"
    report["sent"] = sent[0]


def call(kind: str, url: str, limit: int | None, wait: float = WAIT) -> Any:
    """One ``tools/call`` with a new ``kind`` client: its result, or what it raised.

    ``limit`` is the client's ``max_message_size`` (its default when None); ``wait``
    its timeout.  The client speaks 2026-07-28 at once (``era="modern"``): the attacker
    answers one call, not an era probe first.
    """
    options: dict[str, Any] = {"timeout": wait, "era": "modern"}
    if limit is not None:
        options["max_message_size"] = limit
    if kind == "sync":
        import mcp_proto_sync

        with mcp_proto_sync.Client.http(url, **options) as client:
            return client.call_tool("x")
    if kind == "asyncio":
        import asyncio

        import mcp_proto_asyncio

        async def main_asyncio() -> Any:
            async with mcp_proto_asyncio.Client.http(url, **options) as client:
                return await client.call_tool("x")

        return asyncio.run(main_asyncio())
    import trio

    import mcp_proto_trio

    async def main_trio() -> Any:
        async with mcp_proto_trio.Client.http(url, **options) as client:
            return await client.call_tool("x")

    return trio.run(main_trio)


@contextmanager
def serving(size: int, framing: str, wait: float = WAIT) -> Iterator[tuple[str, dict[str, Any]]]:
    """The URL of a server thread answering one POST with a ``size``-byte body, and the
    report :func:`serve_body` fills; the thread has stopped when the block ends."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(wait)
    report: dict[str, Any] = {}
    server = threading.Thread(target=serve_body, args=(listener, size, framing, report, wait))
    server.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/mcp", report
    finally:
        server.join(3 * wait)
        listener.close()
    if server.is_alive():
        raise RuntimeError("the server thread did not stop")


def served(kind: str, framing: str, size: int, limit: int | None) -> tuple[str, int]:
    """One call of ``kind`` answered with a ``size``-byte body: its outcome, and the body
    bytes the server wrote."""
    with serving(size, framing) as (url, report):
        try:
            call(kind, url, limit)
            outcome = "returned"
        except Exception as e:
            outcome = f"{type(e).__name__}: {e}"
    return outcome, report["sent"]


def attack(kind: str, framing: str, size: int, limit: int | None) -> dict[str, Any]:
    """Serve one ``size``-byte body to one call of ``kind``; what happened, and the cost.

    A call answered with a small body first loads what a call needs, so the peak's
    growth is the big body's alone.
    """
    warm, _ = served(kind, framing, 4096, limit)
    assert warm == "returned", warm
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    outcome, sent = served(kind, framing, size, limit)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "kind": kind,
        "framing": framing,
        "body_mib": size // MIB,
        "sent_mib": round(sent / MIB, 1),
        "peak_rss_growth_mib": round((after - before) / 1024, 1),  # ru_maxrss is in KiB
        "seconds": round(seconds, 2),
        "outcome": outcome,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mib", type=int, default=1024, help="body size in MiB")
    parser.add_argument("--limit-mib", type=float, help="the client's max_message_size")
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--framings", nargs="+", choices=FRAMINGS, default=list(FRAMINGS))
    parser.add_argument("--json", action="store_true", help="one JSON object a line")
    parser.add_argument("--one", nargs=2, metavar=("KIND", "FRAMING"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    limit = None if args.limit_mib is None else int(args.limit_mib * MIB)
    if args.one:  # the child: one attack, one JSON line
        print(json.dumps(attack(args.one[0], args.one[1], args.mib * MIB, limit)))
        return
    extra = [] if args.limit_mib is None else ["--limit-mib", str(args.limit_mib)]
    row = "{:<8} {:<8} {:>9} {:>9} {:>10} {:>7}  {}"
    if not args.json:
        print(row.format("client", "framing", "body MiB", "sent MiB", "RSS +MiB", "s", "outcome"))
    for kind in args.kinds:
        for framing in args.framings:
            child = subprocess.run(
                [sys.executable, __file__, "--mib", str(args.mib), *extra, "--one", kind, framing],
                capture_output=True,
                text=True,
                timeout=6 * WAIT,
                check=False,
            )
            lines = child.stdout.strip().splitlines()
            if not lines:
                print(f"{kind} {framing}: failed: {child.stderr[-400:]}")
            elif args.json:
                print(lines[-1])
            else:
                r = json.loads(lines[-1])
                cost = (r["body_mib"], r["sent_mib"], r["peak_rss_growth_mib"], r["seconds"])
                print(row.format(kind, framing, *cost, r["outcome"]))


if __name__ == "__main__":
    main()
