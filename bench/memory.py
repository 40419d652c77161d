"""Memory per in-flight request, per open subscription, and per idle legacy session.

Opens N requests (``tools/call``) and N subscriptions (``subscriptions/listen``)
through the public API, measuring with tracemalloc what the connection keeps
(the request events handed to the application are dropped, as an application
that answers later would keep only what it needs).  Prints bytes per item at
several N to show the per-item cost stays flat.  A legacy session is what an
``initialize``-era client costs while it is connected and idle: one dual-era connection
after ``initialize`` and ``notifications/initialized`` (issue 15's target: under 4 KiB);
the HTTP binding will keep one per ``Mcp-Session-Id``.

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


def measure_sessions(n: int) -> float:
    """Bytes per idle legacy session: ``n`` dual-era connections, each initialized."""
    caps = t.ServerCapabilities(tools=t.ServerCapabilitiesTools(list_changed=True), logging={})
    template = m.ServerConnection(capabilities=caps, legacy_versions=m.LEGACY_VERSIONS)
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
        sessions.append(conn)
        del event
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    assert all(s.legacy is not None and s.legacy.initialized for s in sessions)
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
        print(f"n={n:>6}: {measure_sessions(n):8.0f} B per idle legacy session")


if __name__ == "__main__":
    main()
