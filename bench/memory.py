"""Memory per in-flight request, per open subscription, and per legacy session.

Opens N requests (``tools/call``) and N subscriptions (``subscriptions/listen``)
through the public API, measuring with tracemalloc what the connection keeps
(the request events handed to the application are dropped, as an application
that answers later would keep only what it needs).  Prints bytes per item at
several N to show the per-item cost stays flat.  A legacy session is what an
``initialize``-era client costs while it is connected and idle: one dual-era connection
after ``initialize`` and ``notifications/initialized`` (issue 15's target: under 4 KiB);
an open one has a ``tools/call`` in flight besides; over HTTP, a session is that
connection in the endpoint's ``SessionTable``, opened by a POSTed ``initialize``.

    uv run python bench/memory.py [--n 10000]
"""

from __future__ import annotations

import argparse
import gc
import json
import tracemalloc

import mcp_proto as m
from mcp_proto import types as t

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}


def line(id: int, method: str, params: dict[str, object]) -> bytes:
    body = {"jsonrpc": "2.0", "id": id, "method": method, "params": {**params, "_meta": META}}
    return json.dumps(body, separators=(",", ":")).encode() + b"\n"


def measure(n: int, method: str, params: dict[str, object]) -> float:
    caps = t.ServerCapabilities(tools=t.ServerCapabilitiesTools(list_changed=True))
    conn = m.ServerConnection(capabilities=caps, max_in_flight=n, max_subscriptions=n)
    lines = [line(i, method, params) for i in range(n)]
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for data in lines:
        conn.receive_data(data)
        event = conn.next_event()
        assert isinstance(event, m.Request), event
        if method == "subscriptions/listen":
            ack = t.SubscriptionsAcknowledgedNotificationParams(
                notifications=t.SubscriptionFilter(tools_list_changed=True)
            )
            conn.send(
                m.Notification(
                    method="notifications/subscriptions/acknowledged",
                    params=ack,
                    request_id=event.id,
                )
            )
        del event
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    assert len(conn.in_flight()) == n
    return grown / n


INITIALIZE = (
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    b'"capabilities":{"sampling":{},"elicitation":{},"roots":{"listChanged":true}},'
    b'"clientInfo":{"name":"bench-client","version":"1.0.0"}}}\n'
    b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
)


CALL = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}\n'
CAPS = t.ServerCapabilities(tools=t.ServerCapabilitiesTools(list_changed=True), logging={})


def measure_sessions(n: int, *, busy: bool = False) -> float:
    """Bytes per legacy session: ``n`` dual-era connections, each initialized (``busy``:
    each with a ``tools/call`` in flight too)."""
    template = m.ServerConnection(capabilities=CAPS, legacy_versions=m.LEGACY_VERSIONS)
    sessions = []
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for _ in range(n):
        conn = template.fresh()
        conn.receive_data(INITIALIZE)
        event = conn.next_event()
        assert isinstance(event, m.AnsweredRequest), event
        conn.send(event)
        assert conn.next_event() is m.NEED_DATA
        if busy:
            conn.receive_data(CALL)
            assert isinstance(conn.next_event(), m.Request)
        sessions.append(conn)
        del event
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    assert all(s.legacy is not None and s.legacy.initialized for s in sessions)
    return grown / n


def measure_http_sessions(n: int) -> float:
    """Bytes per idle legacy session of an HTTP endpoint: ``n`` POSTed ``initialize``."""
    from mcp_proto.http import HTTPServer, SessionTable

    template = m.ServerConnection(capabilities=CAPS, legacy_versions=m.LEGACY_VERSIONS)
    counter = iter(range(1, 2**62))
    table = SessionTable(
        token=lambda size: next(counter).to_bytes(size, "big"),
        connection=template.fresh,
        max_sessions=n,
    )
    server = HTTPServer(connection=template.fresh, sessions=table)
    head = [("host", "localhost"), ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream")]  # fmt: skip
    body = INITIALIZE.split(b"\n")[0]
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for _ in range(n):
        reply = server.handle("POST", "/mcp", head, body).next_event()
        assert getattr(reply, "status", None) == 200, reply
        del reply
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    assert len(table) == n
    return grown / n


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=10_000)
    args = parser.parse_args()
    listen = {"notifications": {"toolsListChanged": True}}
    call = {"name": "echo", "arguments": {"text": "hi"}}
    for n in (args.n // 10, args.n):
        sub = measure(n, "subscriptions/listen", listen)
        req = measure(n, "tools/call", call)
        print(f"n={n:>6}: {sub:8.0f} B per open subscription, {req:8.0f} B per in-flight request")
    for n in (args.n // 10, args.n):
        idle, busy, http = (
            measure_sessions(n),
            measure_sessions(n, busy=True),
            measure_http_sessions(n),
        )
        print(f"n={n:>6}: {idle:8.0f} B per idle legacy session, {busy:8.0f} B per open one "
              f"(a call in flight), {http:8.0f} B per idle HTTP session")  # fmt: skip


if __name__ == "__main__":
    main()
