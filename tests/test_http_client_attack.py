"""A hostile server streams a huge ``application/json`` body at each HTTP client, on 127.0.0.1.

The server is ``bench/attack_client_body.py``'s: a raw-socket thread that answers a
``tools/call`` with a 64 MiB JSON-RPC result (chunked, close-delimited, or announced by
``Content-Length``) written in 64 KiB pieces from one buffer, and stops by itself once
the body is sent, the client has gone, or nobody read for 20 s.  Each client is bounded
at 1 MiB (``max_message_size``): the call must raise ``RemoteProtocolError`` naming the
limit, the client must close the connection (the server sees it go away long before the
body is sent), and the client must keep little memory while it happens.

Memory is measured as tracemalloc's peak of traced allocations during the attacked call,
after a first call that loads what a call needs.  Not ``ru_maxrss``: in a pytest process
the high-water mark is whatever earlier tests peaked at, so its growth can read 0 even
for a client that buffers everything.  tracemalloc counts every ``bytes`` and
``bytearray`` of the read path (socket reads, h11's buffer, the body kept) in every
thread, and the server thread allocates next to nothing.  The asserted bound, 8 MiB, is
8 times the limit and an eighth of the body: a client with no bound holds at least
64 MiB, and one that ignored the 1 MiB option would hold its 16 MiB default.
"""

from __future__ import annotations

import importlib.util
import socket
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

import mcp_proto
import mcp_proto_sync

from .test_adapter_http_clients import open_client

_PATH = Path(__file__).resolve().parent.parent / "bench" / "attack_client_body.py"
_SPEC = importlib.util.spec_from_file_location("attack_client_body", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
attack = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(attack)

MIB = 1024 * 1024
BODY = 64 * MIB
WAIT = 20.0
REFUSED = r"HTTP 200: .* the 1048576-byte limit \(max_message_size\)"


@pytest.mark.parametrize("framing", ["chunked", "close", "length"])
@pytest.mark.parametrize("kind", ["sync", "asyncio", "trio"])
def test_a_huge_json_body_fails_the_call_closes_and_keeps_little(kind: str, framing: str) -> None:
    with attack.serving(4096, framing, WAIT) as (url, _):  # a first call loads what calls need
        assert attack.call(kind, url, MIB, WAIT).content == []
    with attack.serving(BODY, framing, WAIT) as (url, report):
        tracemalloc.start()
        try:
            with pytest.raises(mcp_proto.RemoteProtocolError, match=REFUSED):
                attack.call(kind, url, MIB, WAIT)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert report["ended"] == "client closed" and report["sent"] < BODY // 4
    assert peak < 8 * MIB, f"{peak / MIB:.1f} MiB traced"


@contextmanager
def serving_each(*answers: Callable[[socket.socket], None]) -> Iterator[str]:
    """A server that hands its next connections to ``answers``, each in a thread of its own."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(WAIT)
    threads: list[threading.Thread] = []

    def accept() -> None:
        for answer in answers:
            conn, _ = listener.accept()
            conn.settimeout(WAIT)
            threads.append(threading.Thread(target=answer, args=(conn,)))
            threads[-1].start()

    acceptor = threading.Thread(target=accept)
    acceptor.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    finally:
        acceptor.join(3 * WAIT)
        for thread in threads:
            thread.join(3 * WAIT)
        listener.close()
    assert not any(thread.is_alive() for thread in [acceptor, *threads])


class Exchanges:
    """Answers ``tools/call`` by tool name: ``huge`` gets the 64 MiB body once ``small``
    is in flight; ``small`` gets its answer only after the huge one was refused."""

    def __init__(self) -> None:
        self.small_arrived = threading.Event()
        self.huge_refused = threading.Event()
        self.huge_sent = [0]

    def answer(self, conn: socket.socket) -> None:
        with conn:
            try:
                request = attack.read_request(conn)
                if request["params"]["name"] == "huge":
                    self.small_arrived.wait(WAIT)
                    attack.send_body(conn, BODY, "chunked", request["id"], self.huge_sent)
                else:
                    self.small_arrived.set()
                    self.huge_refused.wait(WAIT)
                    attack.send_body(conn, 200, "length", request["id"], [0])
            except OSError:
                self.huge_refused.set()  # the client closed the huge one's connection


@pytest.mark.parametrize("kind", ["asyncio", "trio"])
def test_a_refused_body_leaves_calls_on_other_connections_alone(kind: str) -> None:
    server = Exchanges()

    async def main(url: str) -> None:
        got: dict[str, Any] = {}
        with anyio.fail_after(3 * WAIT):
            async with open_client(
                kind, url, timeout=WAIT, max_message_size=MIB, era="modern"
            ) as client:

                async def small() -> None:
                    got["small"] = await client.call_tool("small")

                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(small)
                    with pytest.raises(mcp_proto.RemoteProtocolError, match=REFUSED):
                        await client.call_tool("huge")
                assert got["small"].content == [] and not client.conn.in_flight()

    with serving_each(server.answer, server.answer) as url:
        anyio.run(main, url, backend=kind)
    assert server.huge_refused.is_set() and server.huge_sent[0] < BODY // 4


def test_the_blocking_client_calls_on_afresh_after_a_refused_body() -> None:
    server = Exchanges()
    server.small_arrived.set()  # one call at a time: the huge one comes first

    with (
        serving_each(server.answer, server.answer) as url,
        mcp_proto_sync.Client.http(url, timeout=WAIT, max_message_size=MIB, era="modern") as c,
    ):
        with pytest.raises(mcp_proto.RemoteProtocolError, match=REFUSED):
            c.call_tool("huge")
        assert c.call_tool("small").content == []  # on a new connection
        assert not c.conn.in_flight()
    assert server.huge_refused.is_set() and server.huge_sent[0] < BODY // 4
