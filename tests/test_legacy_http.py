"""Legacy (``initialize``-era) sessions on a dual-era Streamable HTTP endpoint (LEG-10..19).

The pure binding (``HTTPServer.handle``) with a ``SessionTable``; test names cite the
requirement IDs of ``notes/spec-base.md``.
"""

from __future__ import annotations

from itertools import count
from typing import Any

import orjson
import pytest

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.http import (
    HTTPServer,
    HTTPServerConnection,
    Reply,
    ResponseData,
    ResponseEnd,
    ResponseStart,
    SessionTable,
)

CAPS = t.ServerCapabilities(
    tools=t.ServerCapabilitiesTools(),
    resources=t.ServerCapabilitiesResources(subscribe=True),
    logging={},
)
HEAD = [
    ("host", "localhost"),
    ("content-type", "application/json"),
    ("accept", "application/json, text/event-stream"),
]
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "legacy", "version": "1"},
    },
}


def counting_token(size: int) -> bytes:
    """A deterministic id source for tests (the adapters pass ``secrets.token_bytes``)."""
    return next(_COUNTER).to_bytes(size, "big")


_COUNTER = count(1)


def endpoint(**kw: Any) -> HTTPServer:
    template = m.ServerConnection(
        capabilities=CAPS, legacy_versions=kw.pop("legacy_versions", m.LEGACY_VERSIONS)
    )
    sessions = kw.pop("sessions", None)
    if sessions is None:  # (an empty table is falsy: it has a length)
        sessions = SessionTable(token=counting_token)
    return HTTPServer(connection=template.fresh, sessions=sessions, **kw)


def post(server: HTTPServer, body: Any, *headers: tuple[str, str]) -> Any:
    ex = server.handle("POST", "/mcp", [*HEAD, *headers], orjson.dumps(body))
    return ex, ex.next_event()


def parts_of(ex: Any, event: Any, parts: Any = None) -> tuple[int, dict[str, str], list[Any]]:
    parts = ex.send(event) if parts is None else parts
    start = parts[0]
    assert isinstance(start, ResponseStart)
    data = b"".join(p.data for p in parts if isinstance(p, ResponseData))
    headers = dict(start.headers)
    if headers.get("content-type") == "text/event-stream":
        bodies = [
            orjson.loads(line[5:])
            for line in data.split(b"\n")
            if line.startswith(b"data:") and line[5:].strip()  # (not the priming event)
        ]
    else:
        bodies = [orjson.loads(data)] if data else []
    return start.status, headers, bodies


def opened(server: HTTPServer | None = None) -> tuple[HTTPServer, str]:
    server = server or endpoint()
    _ex, reply = post(server, INIT)
    assert isinstance(reply, Reply) and reply.status == 200
    sid = dict(reply.headers)["mcp-session-id"]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    _, ack = post(server, note, ("mcp-session-id", sid))
    assert isinstance(ack, Reply) and ack.status == 202
    return server, sid


def test_leg16_initialize_opens_a_session_with_a_visible_ascii_id() -> None:
    server = endpoint()
    _ex, reply = post(server, INIT)
    sid = dict(reply.headers)["mcp-session-id"]
    assert len(sid) == 32 and all(0x21 <= ord(c) <= 0x7E for c in sid)
    body = orjson.loads(reply.body)
    assert body["id"] == 0 and body["result"]["protocolVersion"] == "2025-11-25"
    assert "resultType" not in body["result"]
    assert sid in server.sessions  # type: ignore[operator]


def test_leg16_ids_come_from_the_injected_source() -> None:
    seen: list[int] = []

    def source(size: int) -> bytes:
        seen.append(size)
        return b"\xab" * size

    _, reply = post(endpoint(sessions=SessionTable(token=source)), INIT)
    assert dict(reply.headers)["mcp-session-id"] == "ab" * 16 and seen == [16]


def test_a_broken_id_source_is_refused_not_looped_on() -> None:
    server = endpoint(sessions=SessionTable(token=lambda n: b"\x01" * n))
    post(server, INIT)
    with pytest.raises(RuntimeError, match="repeated"):
        post(server, INIT)


def test_leg11_requests_in_a_session_are_served_as_legacy() -> None:
    server, sid = opened()
    ex, request = post(
        server,
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}},
        ("mcp-session-id", sid),
        ("mcp-protocol-version", "2025-11-25"),
    )
    assert isinstance(request, m.Request) and request.params.meta.protocol_version == "2025-11-25"
    status, headers, (body,) = parts_of(ex, m.Result(id=1, result=t.CallToolResult(content=[])))
    assert status == 200 and body == {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}
    assert "mcp-session-id" not in headers


@pytest.mark.parametrize(
    ("method", "params"),
    [("ping", None), ("logging/setLevel", {"level": "info"}),
     ("resources/subscribe", {"uri": "test://a"})],
)  # fmt: skip
def test_session_requests_the_core_answers_are_exactly_empty(method: str, params: Any) -> None:
    server, sid = opened()
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 2, "method": method}
    if params is not None:
        message["params"] = params
    _, reply = post(server, message, ("mcp-session-id", sid))
    assert reply.status == 200 and orjson.loads(reply.body) == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {},
    }


def test_leg16_an_unknown_or_ended_session_is_404() -> None:
    server, sid = opened()
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    _, reply = post(server, ping, ("mcp-session-id", "nope"))
    assert reply.status == 404
    ex = server.handle("DELETE", "/mcp", [("host", "localhost"), ("mcp-session-id", sid)])
    assert ex.next_event().status == 200
    _, reply = post(server, ping, ("mcp-session-id", sid))
    assert reply.status == 404
    ex = server.handle("DELETE", "/mcp", [("host", "localhost"), ("mcp-session-id", sid)])
    assert ex.next_event().status == 404


def test_leg17_leg06_a_protocol_version_header_other_than_the_sessions_is_400() -> None:
    """The 400 of LEG-17 carries the legacy unsupported-version error of LEG-06."""
    server, sid = opened()
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    for version in ("2025-06-18", "2026-07-28", "banana"):
        _, reply = post(server, ping, ("mcp-session-id", sid), ("mcp-protocol-version", version))
        error = orjson.loads(reply.body)["error"]
        assert reply.status == 400 and error["code"] == m.INVALID_PARAMS
        assert (
            error["message"].startswith("Unsupported protocol version")
            and "LEG-17" in error["message"]
        )
        assert error["data"] == {"supported": ["2025-11-25"], "requested": version}


def test_leg13_get_and_delete_need_a_session() -> None:
    server, _sid = opened()
    for method in ("GET", "DELETE"):  # not a session's: 405 as on a modern endpoint
        assert server.handle(method, "/mcp", [("host", "localhost")]).next_event().status == 405


def get_stream(server: HTTPServer, sid: str, accept: str = "text/event-stream") -> Any:
    headers = [("host", "localhost"), ("accept", accept), ("mcp-session-id", sid)]
    ex = server.handle("GET", "/mcp", headers)
    return ex, ex.next_event()


def frames(parts: list[Any]) -> list[bytes]:
    data = b"".join(p.data for p in parts if isinstance(p, ResponseData))
    return [f for f in data.split(b"\n\n") if f]


UPDATED = m.Notification(
    method="notifications/resources/updated",
    params=t.ResourceUpdatedNotificationParams(uri="test://a"),
)


def test_leg13_a_get_with_a_session_opens_its_standalone_stream() -> None:
    server, sid = opened()
    ex, reply = get_stream(server, sid)
    assert isinstance(reply, Reply) and reply.stream and reply.status == 200
    (start,) = ex.send(reply)  # the start alone: the stream stays open
    assert isinstance(start, ResponseStart) and start.status == 200
    assert dict(start.headers)["content-type"] == "text/event-stream"
    assert ex.streaming and not ex.done and ex.standalone
    assert frames(ex.keepalive()) == [b": keep-alive"]  # a quiet stream gets comments (HTTP-SSE-2)


def test_leg13_the_get_stream_carries_what_the_session_asked_for_only() -> None:
    server, sid = opened()
    ex, reply = get_stream(server, sid)
    ex.send(reply)
    assert ex.send(UPDATED) == []  # not subscribed to test://a
    subscribe = {"jsonrpc": "2.0", "id": 5, "method": "resources/subscribe",
                 "params": {"uri": "test://a"}}  # fmt: skip
    post(server, subscribe, ("mcp-session-id", sid))
    (frame,) = frames(ex.send(UPDATED))
    assert orjson.loads(frame.removeprefix(b"data: ")) == {
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {"uri": "test://a"},
    }
    changed = m.Notification(method="notifications/tools/list_changed")
    assert ex.send(changed) == []  # the server did not declare tools.listChanged


def test_leg14_one_standalone_stream_per_session_so_nothing_is_sent_twice() -> None:
    server, sid = opened()
    ex, reply = get_stream(server, sid)
    ex.send(reply)
    _, second = get_stream(server, sid)
    assert second.status == 409 and b"LEG-14" in second.body
    assert ex.client_closed() is None  # the client closed it: the slot is free again
    again, reply = get_stream(server, sid)
    assert reply.stream and again.send(reply)


def test_leg13_the_get_stream_never_carries_a_response_and_ends_with_its_session() -> None:
    server, sid = opened()
    ex, reply = get_stream(server, sid)
    ex.send(reply)
    parts = ex.send(m.Result(id=None, result=t.SubscriptionsListenResult()))  # a writer's end
    assert parts == [ResponseEnd()] and ex.done
    assert ex.send(UPDATED) == [] and ex.keepalive() == []
    ex, reply = get_stream(server, sid)  # the slot was freed by that end
    ex.send(reply)
    delete = server.handle("DELETE", "/mcp", [("host", "localhost"), ("mcp-session-id", sid)])
    assert delete.next_event().status == 200
    assert ex.keepalive() == [ResponseEnd()]  # the session ended: so does its stream


def test_leg13_a_get_must_accept_an_event_stream() -> None:
    server, sid = opened()
    _, reply = get_stream(server, sid, accept="application/json")
    assert reply.status == 406


def test_a_refused_get_stream_frees_the_sessions_slot() -> None:
    server, sid = opened()
    ex, _reply = get_stream(server, sid)
    (start, end) = ex.send(Reply(status=429))  # the host's listen budget said no
    assert start.status == 429 and end == ResponseEnd()
    _again, reply = get_stream(server, sid)
    assert reply.stream


def test_the_client_closing_its_get_stream_closes_the_connection() -> None:
    server, sid = opened()
    conn = HTTPServerConnection(server)
    conn.receive_data(
        b"GET /mcp HTTP/1.1\r\nhost: localhost\r\naccept: text/event-stream\r\n"
        b"mcp-session-id: " + sid.encode() + b"\r\n\r\n"
    )
    reply = conn.next_event()
    assert isinstance(reply, Reply) and reply.stream
    assert conn.send(reply).startswith(b"HTTP/1.1 200")
    assert conn.next_event() is m.NEED_DATA
    conn.receive_data(b"")
    assert isinstance(conn.next_event(), m.ConnectionClosed)
    assert server.sessions.get(sid).stream is None  # type: ignore[union-attr]


@pytest.mark.parametrize("session", [None, "live", "f" * 32])
def test_leg19_modern_requests_on_the_same_endpoint_ignore_sessions_and_mint_none(
    session: str | None,
) -> None:
    """Routed by shape: modern ``_meta`` takes the modern path with no session id, with
    the id of a live session, or with one never issued (not a 404)."""
    server, sid = opened()
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}
    headers = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/list")]
    if session is not None:
        headers.append(("mcp-session-id", sid if session == "live" else session))
    ex, request = post(server, body, *headers)
    assert isinstance(request, m.Request) and request.params.meta.protocol_version == "2026-07-28"
    _status, out_headers, (answer,) = parts_of(
        ex, m.Result(id=1, result=t.ListToolsResult(tools=[], ttl_ms=0, cache_scope="public"))
    )
    assert answer["result"]["resultType"] == "complete" and "mcp-session-id" not in out_headers
    assert len(server.sessions) == 1  # type: ignore[arg-type]


def test_leg22_a_modern_only_endpoint_refuses_initialize() -> None:
    server = endpoint(legacy_versions=())
    _, reply = post(server, INIT)
    assert reply.status == 400 and "mcp-session-id" not in dict(reply.headers)


def test_session_table_bounds_sessions_and_expires_idle_ones() -> None:
    table = SessionTable(token=counting_token, max_sessions=2, idle_timeout=10)
    server = endpoint(sessions=table)
    first = opened(server)[1]
    table.advance(5)
    second = opened(server)[1]
    _, full = post(server, INIT)
    assert full.status == 503 and len(table) == 2
    assert table.advance(12) == [first]  # idle since 0
    assert table.advance(12.5) == []  # scanned at most every idle_timeout / 8
    assert opened(server)[1] not in (first, second)
    assert table.advance(100) and len(table) == 0


def test_a_full_table_expires_idle_sessions_before_refusing() -> None:
    table = SessionTable(token=counting_token, max_sessions=1, idle_timeout=10)
    server = endpoint(sessions=table)
    first = opened(server)[1]
    assert table.advance(9) == []  # scanned: nothing idle yet; the next scan is at 10.25
    assert table.advance(10.1) == []  # not scanned, though the session is idle now
    assert opened(server)[1] != first and first not in table


def asking(server: HTTPServer, session: tuple[str, str]) -> Any:
    """The exchange of a ``tools/call`` (id 7) that streamed one elicitation (id 0)."""
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "ask"}}
    ex, _ = post(server, call, session)
    form = t.ElicitRequestFormParams(message="?", requested_schema={"type": "object"})
    ask = t.InputRequiredResult(input_requests={"n": t.ElicitRequest(params=form)})
    ex.send(m.Result(id=7, result=ask))
    return ex


def test_mrtr_over_http_the_answer_post_resumes_the_streaming_exchange() -> None:
    """LEG-12: input requests go on the request's SSE stream; the client POSTs its answer
    (202), and the original exchange gives the next round of its request."""
    server, sid = opened()
    session = ("mcp-session-id", sid)
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "ask"}}
    ex, _request = post(server, call, session)
    form = t.ElicitRequestFormParams(message="name?", requested_schema={"type": "object"})
    ask = t.InputRequiredResult(input_requests={"n": t.ElicitRequest(params=form)})
    parts = ex.send(m.Result(id=7, result=ask))
    data = b"".join(p.data for p in parts if isinstance(p, ResponseData))
    priming, event, *_ = data.split(b"\n\n")
    assert priming == b"id: 0.0\nretry: 1000\ndata: "  # LEG-12: first, with an id and retry
    assert event.startswith(b"id: 0.1\ndata: {")  # every event after it has an id (LEG-15)
    _status, headers, (asked,) = parts_of(ex, m.Result(id=7, result=ask), parts)
    assert headers["content-type"] == "text/event-stream"
    assert asked["method"] == "elicitation/create" and asked["id"] == 0
    assert ex.next_event() is m.NEED_DATA and ex.awaiting_input
    answer = {"jsonrpc": "2.0", "id": 0, "result": {"action": "accept", "content": {"n": 1}}}
    _, reply = post(server, answer, session)
    assert reply.status == 202 and reply.resumed is ex and not ex.awaiting_input
    retry = ex.next_event()
    assert isinstance(retry, m.Request) and retry.id == 7 and retry.round == 1
    parts = ex.send(m.Result(id=7, result=t.CallToolResult(content=[])))
    data = b"".join(p.data for p in parts if isinstance(p, ResponseData))
    assert b'"id":7' in data and b"resultType" not in data


def test_mrtr_over_http_a_client_error_ends_the_request_on_its_stream() -> None:
    server, sid = opened()
    session = ("mcp-session-id", sid)
    ex = asking(server, session)
    _, reply = post(
        server, {"jsonrpc": "2.0", "id": 0, "error": {"code": 1, "message": "no"}}, session
    )
    assert reply.status == 202 and reply.resumed is ex
    failed = ex.next_event()
    assert isinstance(failed, m.InvalidMessage)
    data = b"".join(p.data for p in ex.send(failed) if isinstance(p, ResponseData))
    assert b'"id":7' in data and b"-32603" in data


def test_a_cancel_while_waiting_for_input_ends_the_streaming_exchange() -> None:
    server, sid = opened()
    session = ("mcp-session-id", sid)
    ex = asking(server, session)
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
    _, reply = post(server, cancel, session)
    assert reply.status == 202 and reply.resumed is ex
    assert ex.next_event() == m.Cancelled(id=7, reason=None)


def test_leg11_stray_responses_and_notifications_in_a_session_are_202() -> None:
    server, sid = opened()
    for body in (
        {"jsonrpc": "2.0", "id": 99, "result": {}},
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}},
    ):
        _, reply = post(server, body, ("mcp-session-id", sid))
        assert reply.status == 202 and reply.resumed is None


def test_bad_json_in_a_session_is_a_parse_error() -> None:
    server, sid = opened()
    ex = server.handle("POST", "/mcp", [*HEAD, ("mcp-session-id", sid)], b"{nope")
    reply = ex.next_event()
    assert reply.status == 400 and b"-32700" in reply.body


def test_refusals_on_the_legacy_paths_are_spec_shaped() -> None:
    server, sid = opened()
    session = ("mcp-session-id", sid)
    get = [("host", "localhost"), ("accept", "text/event-stream"), ("mcp-session-id", "x")]
    assert server.handle("GET", "/mcp", get).next_event().status == 404
    # a malformed initialize: refused with its id, no session opened
    before = len(server.sessions)  # type: ignore[arg-type]
    _, reply = post(server, {**INIT, "id": 3, "params": {"protocolVersion": 1}})
    assert reply.status == 400 and orjson.loads(reply.body)["id"] == 3
    assert len(server.sessions) == before  # type: ignore[arg-type]
    # bad JSON without a session: the modern path's -32700
    ex = server.handle("POST", "/mcp", HEAD, b"{nope")
    assert ex.next_event().status == 400
    # a request the session refuses, and a notification it cannot decode
    bad = {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": 5}}
    _, reply = post(server, bad, session)
    assert reply.status == 200 and orjson.loads(reply.body)["id"] == 4
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": []}}
    _, reply = post(server, note, session)
    assert reply.status == 400 and b"-32602" in reply.body
    with pytest.raises(ValueError, match="max_sessions"):
        SessionTable(token=counting_token, max_sessions=0)


def test_an_initialize_notification_opens_no_session() -> None:
    """Found by the HTTP fuzz harness: ``initialize`` without an id reached an assertion.
    It is a notification like any other (202), and no session is opened."""
    server = endpoint()
    _, reply = post(server, {k: v for k, v in INIT.items() if k != "id"})
    assert reply.status == 202 and len(server.sessions) == 0  # type: ignore[arg-type]


def test_leg16_an_error_answer_in_a_session_is_200_never_404() -> None:
    """A legacy client reads 404 as "your session is gone" and starts over (LEG-16), so a
    JSON-RPC error to a session's request (the core's refusal, or the application's) goes
    with status 200, as the 2025-11-25 transport has every request answered."""
    server, sid = opened()
    unknown = {"jsonrpc": "2.0", "id": 7, "method": "no/such/method"}
    _, reply = post(server, unknown, ("mcp-session-id", sid))
    assert reply.status == 200 and orjson.loads(reply.body)["error"]["code"] == -32601
    call = {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "x"}}
    ex, request = post(server, call, ("mcp-session-id", sid))
    error = t.Error(code=m.METHOD_NOT_FOUND, message="no such tool here")
    status, _headers, (body,) = parts_of(ex, m.ErrorResponse(id=request.id, error=error))
    assert status == 200 and body["error"]["code"] == -32601


def test_a_dual_era_per_request_connection_on_the_modern_path_cannot_crash_it() -> None:
    """Found while wiring the adapters: their per-request connections were dual-era, so a
    legacy ``ping`` with the modern headers reached an assertion.  It is answered."""
    template = m.ServerConnection(capabilities=CAPS, legacy_versions=m.LEGACY_VERSIONS)
    server = HTTPServer(connection=template.fresh)
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = (("mcp-protocol-version", "2026-07-28"), ("mcp-method", "ping"))
    _, reply = post(server, ping, *headers)
    assert reply.status == 200 and orjson.loads(reply.body)["result"] == {}
