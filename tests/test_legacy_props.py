"""Properties of the dual-era server: the two eras give the application the same events.

Hypothesis draws a run of requests (calls, reads, prompts, lists, with arbitrary names,
arguments and ids) and feeds it to a dual-era :class:`~mcp_proto.ServerConnection`
twice, over the byte interface a stdio server uses: once inside an ``initialize``-era
session (LEG-20), once as modern stateless requests (VER-17), each time cut into chunks
at arbitrary points.  Whatever the chunking, the application sees the same requests in
both eras (the same ids, methods and params; only the per-request ``_meta`` differs,
filled from ``initialize`` in the session), and the same answer reaches the client in
both, less what the legacy wire has no room for (``resultType``, LEG-02).
"""

from __future__ import annotations

import itertools
from typing import Any

import attrs
import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mcp_proto as m
from mcp_proto import types as t

from .test_legacy_server import initialize, modern, server

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_names = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=12)
_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | _names
_arguments = st.dictionaries(_names, _scalars, max_size=3)


@st.composite
def request_bodies(draw: st.DrawFn) -> tuple[str, dict[str, Any] | None]:
    """A method and its params, as a client would send them (no ``_meta``)."""
    kind = draw(st.sampled_from(["tools/call", "resources/read", "prompts/get", "tools/list"]))
    if kind == "tools/call":
        params: dict[str, Any] = {"name": draw(_names)}
        if draw(st.booleans()):
            params["arguments"] = draw(_arguments)
        return kind, params
    if kind == "resources/read":
        return kind, {"uri": "test://" + draw(st.from_regex(r"[a-z0-9/]{1,12}", fullmatch=True))}
    if kind == "prompts/get":
        args = draw(st.dictionaries(_names, _names, max_size=2))
        return kind, {"name": draw(_names), **({"arguments": args} if args else {})}
    return kind, draw(st.sampled_from([None, {"cursor": draw(_names)}]))


@st.composite
def runs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Requests with distinct ids (strings and integers), without ``_meta``."""
    bodies = draw(st.lists(request_bodies(), min_size=1, max_size=6))
    n = len(bodies)
    ids_ = st.lists(st.integers(1, 2**31) | _names, min_size=n, max_size=n,
                    unique_by=lambda i: (type(i), i))  # fmt: skip
    ids = draw(ids_)
    out = []
    for id, (method, params) in zip(ids, bodies, strict=True):
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        out.append(message)
    return out


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    edges = [0, *points, len(data)]
    # no empty piece: ``receive_data(b"")`` is the end of input
    return [data[a:b] for a, b in itertools.pairwise(edges) if b > a]


def feed(conn: m.ServerConnection, messages: list[dict[str, Any]], cuts: list[int]) -> list[Any]:
    """Every event of ``messages`` as bytes cut at ``cuts``; initialize is answered."""
    data = b"".join(orjson.dumps(msg) + b"\n" for msg in messages)
    out = []
    for piece in chunked(data, cuts):
        conn.receive_data(piece)
        while (event := conn.next_event()) is not m.NEED_DATA:
            assert not isinstance(event, m.ConnectionClosed) and event is not m.PAUSED
            if isinstance(event, m.AnsweredRequest):
                conn.send(event)
            else:
                out.append(event)
    return out


def without_meta(event: Any) -> tuple[Any, ...]:
    assert isinstance(event, m.Request), event
    params = event.params
    if attrs.has(type(params)) and hasattr(params, "meta"):
        params = attrs.evolve(params, meta=None)
    return event.id, event.method, params


def answer(event: m.Request) -> m.Result:
    """What an application answers, the same in both eras."""
    text = f"{event.method} {event.id!r}"
    hints: dict[str, Any] = {"ttl_ms": 0, "cache_scope": "private"}  # cacheable (CACHE-01)
    if event.method == "tools/call":
        return m.Result(id=event.id, result=t.CallToolResult(content=[t.TextContent(text=text)]))
    if event.method == "resources/read":
        uri = event.params.uri
        contents = [t.TextResourceContents(uri=uri, text=text)]
        return m.Result(id=event.id, result=t.ReadResourceResult(contents=contents, **hints))
    if event.method == "prompts/get":
        message = t.PromptMessage(role="user", content=t.TextContent(text=text))
        return m.Result(id=event.id, result=t.GetPromptResult(messages=[message]))
    tools = [t.Tool(name=text, input_schema={"type": "object"})]
    return m.Result(id=event.id, result=t.ListToolsResult(tools=tools, **hints))


def answers(conn: m.ServerConnection, events: list[Any]) -> list[dict[str, Any]]:
    out = []
    for event in events:
        for raw in conn.send(answer(event)).splitlines():
            message = orjson.loads(raw)
            result = message["result"]
            # the modern wire's alone (LEG-02): resultType, the cache hints, the _meta stamp
            for key in ("resultType", "ttlMs", "cacheScope", "_meta"):
                result.pop(key, None)
            out.append(message)
    return out


@SETTINGS
@given(run=runs(), cuts_a=st.lists(st.integers(0, 10**6)), cuts_b=st.lists(st.integers(0, 10**6)))
def test_leg20_ver17_both_eras_give_the_same_events_whatever_the_chunking(
    run: list[dict[str, Any]], cuts_a: list[int], cuts_b: list[int]
) -> None:
    session = [
        initialize(),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        *run,
    ]
    legacy_conn, modern_conn = server(), server()
    legacy = feed(legacy_conn, session, cuts_a)
    stateless = feed(modern_conn, [modern(r["id"], r["method"], r.get("params")) for r in run],
                     cuts_b)  # fmt: skip
    assert [without_meta(e) for e in legacy] == [without_meta(e) for e in stateless]
    assert all(e.params.meta.protocol_version == "2025-11-25" for e in legacy)
    assert all(e.params.meta.protocol_version == "2026-07-28" for e in stateless)
    assert answers(legacy_conn, legacy) == answers(modern_conn, stateless)


@SETTINGS
@given(run=runs(), cuts=st.lists(st.integers(0, 10**6), max_size=40))
def test_a_legacy_session_gives_the_same_events_in_one_piece_or_many(
    run: list[dict[str, Any]], cuts: list[int]
) -> None:
    session = [initialize(), {"jsonrpc": "2.0", "method": "notifications/initialized"}, *run]
    whole, pieces = feed(server(), session, []), feed(server(), session, cuts)
    assert whole == pieces
