"""Resource attacks on each adapter's HTTP server, with an honest client served throughout.

Each attack runs against a real server on 127.0.0.1 configured with small limits, so that
it is cheap; then an honest client makes ordinary ``tools/call`` requests, each on a new
connection, which must all succeed, each within a very generous bound:

* listens held open past their budget (per client, per principal, per server) are refused
  with ``429``/``503`` and a JSON-RPC error, so they cannot take every connection;
* request bodies stalled half-sent cannot buffer more than the shared body budget: past it
  they are refused with ``503``;
* a keep-alive connection that only gets binding replies (``202``) stays open while active;
* a client still sending a body that is too large reads its ``413`` (lingering close).

Bounded: every socket has a timeout, every server stops at the end.  ``-m "not attack"``
skips them.  ``bench/attacks_http.py`` runs the same attacks at full scale.
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_proto.http import Challenge, ProtectedResource
from tests.test_adapter_http import META, running

pytestmark = pytest.mark.attack

ADAPTERS = ["sync", "asyncio", "trio", "trio-raw"]
#: seconds an honest call may take during an attack: very generous, it takes milliseconds
HONEST_BOUND = 4.0
LISTEN = {"notifications": {"toolsListChanged": True}}


def request_bytes(
    method: str,
    params: dict[str, Any],
    *,
    id: int | None = 1,
    headers: dict[str, str] | None = None,
    length: int | None = None,
) -> bytes:
    """One POST to ``/mcp``; ``length`` claims a ``Content-Length`` other than the body's."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if id is not None:
        message["id"] = id
        message["params"] = {**params, "_meta": META}
    body = json.dumps(message).encode()
    head = {
        "host": "127.0.0.1",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "content-length": str(len(body) if length is None else length),
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
        **({"mcp-name": params["name"]} if "name" in params else {}),
        **(headers or {}),
    }
    lines = "".join(f"{k}: {v}\r\n" for k, v in head.items())
    return f"POST /mcp HTTP/1.1\r\n{lines}\r\n".encode() + (b"" if length else body)


def read_head(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """The status and headers of the next response, and the bytes after them."""
    data = b""
    while b"\r\n\r\n" not in data:
        more = sock.recv(65536)
        if not more:
            raise ConnectionError(f"closed before a response head: {data!r}")
        data += more
    head, _, rest = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    fields = dict(line.split(":", 1) for line in lines)
    return int(status_line.split()[1]), {k.lower(): v.strip() for k, v in fields.items()}, rest


def read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """A whole ``Content-Length`` response."""
    status, headers, body = read_head(sock)
    while len(body) < int(headers.get("content-length", 0)):
        more = sock.recv(65536)
        if not more:
            raise ConnectionError("closed inside a response body")
        body += more
    return status, headers, body


def closed(sock: socket.socket) -> bool:
    """Whether the server closed the connection (reads end, or reset)."""
    try:
        return sock.recv(65536) == b""
    except ConnectionResetError:
        return True


def honest_calls(at: tuple[str, int], n: int = 20, **headers: str) -> list[float]:
    """``n`` ordinary calls, each on a connection of its own; their latencies in seconds."""
    latencies = []
    for i in range(n):
        start = time.monotonic()
        with socket.create_connection(at, timeout=HONEST_BOUND) as sock:
            call = request_bytes("tools/call", {"name": "test_simple_text"}, id=i, headers=headers)
            sock.sendall(call)
            status, _, body = read_response(sock)
        assert status == 200, (i, status, body)
        answer = json.loads(body)
        assert answer["id"] == i and "result" in answer, answer
        latencies.append(time.monotonic() - start)
    return latencies


@contextlib.contextmanager
def sockets() -> Iterator[list[socket.socket]]:
    held: list[socket.socket] = []
    try:
        yield held
    finally:
        for sock in held:
            sock.close()


def open_listens(
    at: tuple[str, int], n: int, held: list[socket.socket], tokens: bool = False
) -> list[tuple[int, dict[str, str], Any]]:
    """Open ``n`` listens; keep the acknowledged ones, close the others once answered."""
    outcomes = []
    for i in range(n):
        sock = socket.create_connection(at, timeout=5)
        auth = {"authorization": f"Bearer attacker-{i}"} if tokens else {}
        sock.sendall(request_bytes("subscriptions/listen", LISTEN, id=i, headers=auth))
        status, headers, body = read_head(sock)
        if status == 200:
            held.append(sock)  # the stream stays open
            outcomes.append((status, headers, None))
            continue
        while len(body) < int(headers["content-length"]):
            body += sock.recv(65536)
        assert closed(sock)  # a refusal closes the connection
        sock.close()
        outcomes.append((status, headers, json.loads(body)))
    return outcomes


def assert_refused(outcome: tuple[int, dict[str, str], Any], status: int, id: int) -> None:
    code, headers, body = outcome
    assert code == status, outcome
    assert int(headers["retry-after"]) > 0 and headers["connection"] == "close"
    assert body["id"] == id and body["error"]["code"] == -32603, body  # as the core's own limit
    assert "subscriptions" in body["error"]["message"]


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_listens_past_the_client_budget_are_refused_429(adapter: str) -> None:
    """Without the budget the 16 listens held every connection: no call got through."""
    limits = {"max_connections": 16, "max_listens": 8, "max_listens_per_client": 4}
    with running(adapter, **limits) as at:
        with sockets() as held:
            outcomes = open_listens(at, 16, held)
            latencies = honest_calls(at)
        with sockets() as again:  # the listens closed: their places are given back
            deadline = time.monotonic() + 5
            while len(again) < 4 and time.monotonic() < deadline:
                open_listens(at, 1, again)  # refused until the server saw the others close
            reopened = len(again)
    assert [o[0] for o in outcomes[:4]] == [200] * 4
    for i, outcome in enumerate(outcomes[4:], start=4):
        assert_refused(outcome, 429, i)
    assert max(latencies) < HONEST_BOUND
    assert reopened == 4


def allow_any_token(token: str | None, headers: Any) -> Challenge | None:
    return None if token else Challenge()


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_listens_past_the_server_budget_are_refused_503(adapter: str) -> None:
    """Each bearer token is a principal with a budget of its own; the server's bounds them all."""
    auth = ProtectedResource(
        resource="http://127.0.0.1/mcp",
        authorization_servers=["https://auth.example"],
        verify=allow_any_token,
    )
    limits = {"max_connections": 16, "max_listens": 8, "max_listens_per_client": 4}
    with running(adapter, {"auth": auth}, **limits) as at, sockets() as held:
        outcomes = open_listens(at, 16, held, tokens=True)
        latencies = honest_calls(at, authorization="Bearer honest")
    assert [o[0] for o in outcomes[:8]] == [200] * 8
    for i, outcome in enumerate(outcomes[8:], start=8):
        assert_refused(outcome, 503, i)
    assert max(latencies) < HONEST_BOUND


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_stalled_bodies_cannot_buffer_past_the_body_budget(adapter: str) -> None:
    """12 bodies stalled at 96 KiB: 80 KiB each past the allowance, 3 fit in 256 KiB."""
    kib = 1024
    limits = {"body_budget": 256 * kib, "body_allowance": 16 * kib, "client_timeout": 10}
    with (
        running(adapter, {"max_body_size": 128 * kib}, **limits) as at,
        sockets() as held,
    ):
        head = request_bytes("tools/call", {"name": "test_simple_text"}, length=128 * kib)
        for _ in range(12):
            sock = socket.create_connection(at, timeout=3)
            held.append(sock)
            sock.sendall(head + b" " * (96 * kib))  # and then nothing more: stalled
        refusals = []
        waiting = list(held)
        deadline = time.monotonic() + 5
        while len(refusals) < 12 - 3 and (left := deadline - time.monotonic()) > 0:
            for sock in select.select(waiting, [], [], left)[0]:
                waiting.remove(sock)
                status, headers, body = read_response(sock)
                assert json.loads(body)["error"]["code"] == -32603
                assert int(headers["retry-after"]) > 0 and headers["connection"] == "close"
                refusals.append(status)
        latencies = honest_calls(at)  # while the stalled bodies hold the budget
    assert refusals == [503] * (12 - 3), refusals
    assert max(latencies) < HONEST_BOUND


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_the_idle_clock_restarts_on_every_exchange(adapter: str) -> None:
    """Notification POSTs (202) every 0.2 s for 2 s on one connection, ``client_timeout`` 1 s."""
    cancel = request_bytes("notifications/cancelled", {"requestId": 7}, id=None)
    with running(adapter, client_timeout=1.0) as at:
        with socket.create_connection(at, timeout=5) as sock:
            start = time.monotonic()
            answered = 0
            while time.monotonic() - start < 2.0:
                sock.sendall(cancel)
                status, headers, _ = read_head(sock)
                assert status == 202 and headers.get("connection") != "close", (answered, status)
                answered += 1
                time.sleep(0.2)
        latencies = honest_calls(at, n=5)
    assert answered >= 5
    assert max(latencies) < HONEST_BOUND


def send_then_read(at: tuple[str, int], head: bytes, sent: int) -> int | None:
    """Send ``head``, then ``sent`` body bytes, then read the response, as most clients do.

    The status, or ``None`` when the connection was reset before the response could be read
    (the sending failed: a client that sends its whole body first then gives up).  The body
    goes out a moment after the head, by which time the server has answered it.
    """
    with socket.create_connection(at, timeout=5) as sock:
        try:
            sock.sendall(head)
            time.sleep(0.1)
            for _ in range(sent // 65536):
                sock.sendall(b"x" * 65536)
            return read_head(sock)[0]
        except OSError:
            return None


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_client_still_sending_reads_its_413(adapter: str) -> None:
    """A 10 MiB body over the 4 MiB bound: 768 KiB of it sent, then the 413 read, every time."""
    head = request_bytes("tools/call", {"name": "test_simple_text"}, length=10 * 1024 * 1024)
    with running(adapter) as at:
        statuses = [send_then_read(at, head, 768 * 1024) for _ in range(5)]
        latencies = honest_calls(at, n=5)
    assert statuses == [413] * 5
    assert max(latencies) < HONEST_BOUND
