"""Property: a connection's events do not depend on how the bytes were chunked."""

from __future__ import annotations

import itertools
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

import mcp_proto as m

from .test_connection import META, events, server

LINES = [
    orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}),
    b"not json at all",
    orjson.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"_meta": META}}),
    b"",
    orjson.dumps(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    ),
    orjson.dumps({"jsonrpc": "2.0", "id": "x", "method": "tools/call", "params": {"name": 1}}),
    orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "é\n", "_meta": META},
        }
    ),
    b"[]",
]


def run(chunks: list[bytes]) -> list[Any]:
    conn = server()
    out: list[Any] = []
    for c in filter(None, chunks):  # b"" would mean end of input
        conn.receive_data(c)
        out.extend(events(conn))
    conn.receive_data(b"")
    out.extend(events(conn))
    return out


@settings(max_examples=60, deadline=None)
@given(
    picks=st.lists(st.sampled_from(LINES), max_size=12),
    crlf=st.booleans(),
    cuts=st.lists(st.integers(min_value=0, max_value=4000), max_size=20),
)
def test_events_independent_of_chunking(picks: list[bytes], crlf: bool, cuts: list[int]) -> None:
    end = b"\r\n" if crlf else b"\n"
    data = b"".join(p + end for p in picks)
    whole = run([data])
    assert run([data[i : i + 1] for i in range(len(data))]) == whole
    bounds = sorted({0, len(data), *(c for c in cuts if c < len(data))})
    assert run([data[a:b] for a, b in itertools.pairwise(bounds)]) == whole
    assert isinstance(whole[-1], m.ConnectionClosed)
