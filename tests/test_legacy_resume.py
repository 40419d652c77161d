"""Streams closed mid-call and their resume with ``Last-Event-ID`` (LEG-12, LEG-15).

The pure binding: ``ServerExchange.detach`` ends a legacy request's response with a
``retry`` field, what the request sends afterwards is kept, and a ``GET`` with
``Last-Event-ID`` gets it -- only that stream's events, never another's.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.http import (
    HTTPServer,
    HTTPServerConnection,
    Reply,
    ResponseEnd,
    ResponseStart,
    SessionTable,
)

from .test_legacy_http import counting_token, endpoint, frames, opened, post

LEGACY = ("mcp-protocol-version", "2025-11-25")


def call(server: HTTPServer, sid: str, id: int = 1, *extra: tuple[str, str]) -> Any:
    """The exchange of a ``tools/call`` in session ``sid``, its request taken."""
    body = {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "x"}}
    body["params"]["_meta"] = {"progressToken": f"p{id}"}
    ex, request = post(server, body, ("mcp-session-id", sid), LEGACY, *extra)
    assert isinstance(request, m.Request)
    return ex


def progress(id: int, n: float) -> m.Notification:
    params = t.ProgressNotificationParams(progress_token=f"p{id}", progress=n)
    return m.Notification(method="notifications/progress", params=params, request_id=id)


def done(id: int, text: str = "ok") -> m.Result:
    return m.Result(id=id, result=t.CallToolResult(content=[t.TextContent(text=text)]))


def resume(server: HTTPServer, sid: str, last: str | None) -> Any:
    headers = [("host", "localhost"), ("accept", "text/event-stream"), ("mcp-session-id", sid)]
    if last is not None:
        headers.append(("last-event-id", last))
    ex = server.handle("GET", "/mcp", headers)
    return ex, ex.next_event()


def detached_and_resumed(server: HTTPServer, sid: str) -> tuple[Any, Any]:
    """A detached call (id 1) and the ``GET`` following it, its start sent."""
    ex = call(server, sid)
    ex.detach()
    get, reply = resume(server, sid, "0.0")
    get.send(reply)
    return ex, get


def messages(parts: list[Any]) -> list[tuple[bytes, Any]]:
    """``(event id, message)`` of each data-bearing frame of ``parts``."""
    out = []
    for frame in frames(parts):
        fields = dict(line.split(b": ", 1) for line in frame.split(b"\n") if b": " in line)
        if fields.get(b"data", b"").strip():
            out.append((fields.get(b"id", b""), orjson.loads(fields[b"data"])))
    return out


def test_leg12_detach_ends_the_response_with_a_retry_field_and_the_request_goes_on() -> None:
    server, sid = opened()
    ex = call(server, sid)
    assert ex.can_detach and not ex.detached
    parts = ex.detach()
    assert isinstance(parts[0], ResponseStart) and isinstance(parts[-1], ResponseEnd)
    primed, retry = frames(parts)
    assert primed == b"id: 0.0\nretry: 1000\ndata: "  # an event with an id first (LEG-12)
    assert retry == b"retry: 1000"  # and a retry field before the close (LEG-12 SHOULD)
    assert ex.detached and not ex.done and not ex.can_detach
    assert ex.send(progress(1, 1)) == [] and ex.keepalive() == []  # the response is over
    assert ex.send(done(1)) == [] and ex.done


def test_leg15_a_get_with_last_event_id_replays_the_stream_and_ends_after_the_answer() -> None:
    server, sid = opened()
    ex = call(server, sid)
    ex.detach()
    ex.send(progress(1, 1))
    ex.send(done(1))
    get, reply = resume(server, sid, "0.0")
    assert isinstance(reply, Reply) and reply.stream and get.following and not get.standalone
    parts = get.send(reply)
    assert isinstance(parts[0], ResponseStart) and isinstance(parts[-1], ResponseEnd)
    assert dict(parts[0].headers)["content-type"] == "text/event-stream"
    (id1, note), (id2, answer) = messages(parts)
    assert (id1, note["method"]) == (b"0.1", "notifications/progress")
    assert (id2, answer["id"]) == (b"0.2", 1) and "resultType" not in answer["result"]
    assert get.done
    _, again = resume(server, sid, "0.0")  # delivered: forgotten, a plain GET stream now
    assert isinstance(again, Reply) and again.stream and not _.following


def test_leg15_a_resume_gets_only_the_events_after_its_last_event_id() -> None:
    server, sid = opened()
    ex = call(server, sid)
    ex.detach()
    for n in (1, 2, 3):
        ex.send(progress(1, n))
    ex.send(done(1))
    get, reply = resume(server, sid, "0.2")
    got = messages(get.send(reply))
    assert [i for i, _ in got] == [b"0.3", b"0.4"]


def test_leg15_a_resume_follows_a_request_still_running() -> None:
    server, sid = opened()
    ex = call(server, sid)
    ex.detach()
    ex.send(progress(1, 1))
    get, reply = resume(server, sid, "0.0")
    parts = get.send(reply)
    assert [i for i, _ in messages(parts)] == [b"0.1"] and not get.done
    assert get.following and frames(get.keepalive()) == [b": keep-alive"]  # quiet
    assert get.poll() == [] and ex.poll() == []  # a poll writes nothing when nothing came
    ex.send(progress(1, 2))
    assert [i for i, _ in messages(get.poll())] == [b"0.2"]
    ex.send(done(1))
    last = get.keepalive()
    assert [i for i, _ in messages(last)] == [b"0.3"] and isinstance(last[-1], ResponseEnd)
    assert get.done and not get.following


def test_leg15_no_replay_of_another_stream_or_another_sessions() -> None:
    """LEG-15 MUST NOT: an id naming no kept stream of *this* session opens a plain
    standalone stream, which carries none of the kept events."""
    server, sid = opened()
    _, other = opened(server)
    ex = call(server, sid)
    ex.detach()
    ex.send(done(1))
    for session, last in ((other, "0.0"), (sid, "5.0"), (sid, "x"), (sid, "0"), (sid, None)):
        get, reply = resume(server, session, last)
        assert isinstance(reply, Reply) and reply.stream and not get.following
        assert get.standalone and messages(get.send(reply)) == []
        get.client_closed()
    get, reply = resume(server, sid, "0.0")  # still kept for its own stream
    assert get.following and len(messages(get.send(reply))) == 1


def test_leg15_event_ids_stay_unique_across_detached_and_open_streams() -> None:
    server, sid = opened()
    first, second = call(server, sid, 1), call(server, sid, 2)
    first.detach()
    open_parts = second.send(progress(2, 1))
    first.send(progress(1, 1))
    first.send(done(1))
    get, reply = resume(server, sid, "0.0")
    ids = [i for i, _ in messages(get.send(reply))]
    assert ids == [b"0.1", b"0.2"] and b"id: 1.1" in b"".join(frames(open_parts))


def test_one_resume_at_a_time_per_stream() -> None:
    server, sid = opened()
    ex, get = detached_and_resumed(server, sid)
    _, refused = resume(server, sid, "0.0")
    assert isinstance(refused, Reply) and refused.status == 409  # never sent twice (LEG-14)
    get.client_closed()  # the client went away: the stream may be resumed again
    assert get.done and ex.detached  # ... and the request goes on
    again, _reply = resume(server, sid, "0.0")
    assert again.following


def test_the_end_of_the_session_ends_a_resume() -> None:
    server, sid = opened()
    _, get = detached_and_resumed(server, sid)
    delete = [("host", "localhost"), ("mcp-session-id", sid)]
    assert server.handle("DELETE", "/mcp", delete).next_event().status == 200
    assert get.keepalive() == [ResponseEnd()] and get.done


def test_only_a_running_legacy_request_on_an_event_stream_detaches() -> None:
    server, sid = opened()
    json_only = call(server, sid, 1, ("accept", "application/json"))
    json_server = endpoint()
    json_server, jsid = opened(json_server)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}
    head = [("host", "localhost"), ("content-type", "application/json"),
            ("accept", "application/json"), ("mcp-session-id", jsid), LEGACY]  # fmt: skip
    ex = json_server.handle("POST", "/mcp", head, orjson.dumps(body))
    assert isinstance(ex.next_event(), m.Request) and not ex.can_detach  # JSON only
    with pytest.raises(m.LocalProtocolError):
        ex.detach()
    assert json_only.can_detach  # (HEAD accepts both; the extra header is a second value)
    finished = call(server, sid, 2)
    finished.send(done(2))
    assert not finished.can_detach  # answered already
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": meta}}
    heads = (("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/list"))
    mex, request = post(server, body, *heads)  # the same endpoint, a modern request
    assert isinstance(request, m.Request) and not mex.can_detach


def test_a_detached_request_asks_for_input_and_its_answer_resumes_it() -> None:
    """The MRTR bridge after a detach: the input request is kept for the resume, the
    client's answer (a POST, 202) resumes the detached exchange with the next round."""
    server, sid = opened()
    ex = call(server, sid, 7)
    ex.detach()
    form = t.ElicitRequestFormParams(message="?", requested_schema={"type": "object"})
    ask = t.InputRequiredResult(input_requests={"n": t.ElicitRequest(params=form)})
    assert ex.send(m.Result(id=7, result=ask)) == [] and ex.awaiting_input
    get, reply = resume(server, sid, "0.0")
    ((_, asked),) = messages(get.send(reply))
    assert asked["method"] == "elicitation/create"
    answer = {"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "decline"}}
    _, accepted = post(server, answer, ("mcp-session-id", sid))
    assert accepted.status == 202 and accepted.resumed is ex
    again = ex.next_event()
    assert isinstance(again, m.Request) and again.round == 1
    ex.send(done(7))
    ((_, final),) = messages(get.keepalive())
    assert final["id"] == 7 and get.done


def test_a_detached_request_cancelled_while_waiting_ends_its_stream_unanswered() -> None:
    server, sid = opened()
    ex = call(server, sid, 7)
    ex.detach()
    form = t.ElicitRequestFormParams(message="?", requested_schema={"type": "object"})
    ex.send(
        m.Result(
            id=7, result=t.InputRequiredResult(input_requests={"n": t.ElicitRequest(params=form)})
        )
    )
    get, reply = resume(server, sid, "0.0")
    get.send(reply)
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
    post(server, cancel, ("mcp-session-id", sid))
    cancelled = ex.next_event()
    assert isinstance(cancelled, m.Cancelled) and ex.send(cancelled) == [] and ex.done
    last = get.keepalive()
    assert messages(last) == [] and last[-1] == ResponseEnd()


def test_the_kept_events_are_bounded_and_a_lost_answer_is_a_json_rpc_error() -> None:
    table = SessionTable(token=counting_token, replay_limit=600)
    server, sid = opened(endpoint(sessions=table))
    ex = call(server, sid)
    ex.detach()
    for n in range(1, 20):  # each frame is ~130 bytes: over the 600 the session keeps
        ex.send(progress(1, n))
    get, reply = resume(server, sid, "0.0")
    parts = get.send(reply)
    ((_, lost),) = messages(parts)
    assert lost["id"] == 1 and lost["error"]["code"] == m.INTERNAL_ERROR
    assert "lost" in lost["error"]["message"] and get.done
    assert ex.send(done(1)) == [] and ex.done  # the request still ends in order


def test_finished_kept_streams_give_way_to_new_ones() -> None:
    table = SessionTable(token=counting_token, replay_limit=2000)
    server, sid = opened(endpoint(sessions=table))
    for id in range(1, 40):  # more streams, and more bytes, than a session keeps
        ex = call(server, sid, id)
        ex.detach()
        ex.send(progress(id, 1))
        ex.send(done(id))
    session = table.get(sid)
    assert session is not None and session.replay is not None
    assert len(session.replay) <= 16 and session.replay_size <= 2000
    get, reply = resume(server, sid, "38.0")  # the newest is kept whole
    assert [i for i, _ in messages(get.send(reply))] == [b"38.1", b"38.2"]
    get, reply = resume(server, sid, "0.0")  # the oldest went: a plain stream
    assert get.standalone


def wire(server: HTTPServer, data: bytes) -> tuple[HTTPServerConnection, Any]:
    conn = HTTPServerConnection(server)
    conn.receive_data(data)
    return conn, conn.next_event()


def raw(method: str, sid: str, body: bytes = b"", *extra: str) -> bytes:
    lines = [f"{method} /mcp HTTP/1.1", "host: localhost", f"mcp-session-id: {sid}",
             "accept: application/json, text/event-stream", *extra]  # fmt: skip
    if body:
        lines += ["content-type: application/json", f"content-length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def test_a_detached_request_holds_its_connection_then_serves_the_pipelined_resume() -> None:
    """The client's resuming GET on the same connection is read once the request is
    over, and gets all of it at once; what it pipelines meanwhile stays bounded."""
    server, sid = opened()
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x",'
    body += b'"_meta":{"progressToken":"p1"}}}'
    conn, request = wire(server, raw("POST", sid, body, "mcp-protocol-version: 2025-11-25"))
    assert isinstance(request, m.Request)
    out = conn.detach()
    assert out.endswith(b"retry: 1000\n\n\r\n0\r\n\r\n")  # the chunked end of the response
    conn.receive_data(raw("GET", sid, b"", "last-event-id: 0.0"))
    assert conn.next_event() is m.NEED_DATA  # held: the request is not over
    assert conn.send(progress(1, 1)) == b"" and conn.send(done(1)) == b""
    reply = conn.next_event()
    assert isinstance(reply, Reply) and conn.exchange is not None and conn.exchange.following
    data = conn.send(reply)
    assert b'"notifications/progress"' in data and b'"id":1,"result"' in data
    assert data.endswith(b"0\r\n\r\n") and conn.exchange.done


def test_the_end_of_input_cancels_a_detached_request_and_closes_a_resume_quietly() -> None:
    server, sid = opened()
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}'
    conn, _ = wire(server, raw("POST", sid, body))
    conn.detach()
    get_conn, reply = wire(server, raw("GET", sid, b"", "last-event-id: 0.0"))
    get_conn.send(reply)
    get_conn.receive_data(b"")  # the resuming client went away: no cancel, the call goes on
    assert isinstance(get_conn.next_event(), m.ConnectionClosed)
    conn.receive_data(b"")  # the caller's own connection closing still cancels (documented)
    assert isinstance(conn.next_event(), m.Cancelled)


def test_finished_kept_streams_give_way_past_the_count_bound() -> None:
    server, sid = opened()
    for id in range(1, 21):  # small frames: the count bound (16) is reached first
        ex = call(server, sid, id)
        ex.detach()
        ex.send(done(id))
    session = server.sessions.get(sid)  # type: ignore[union-attr]
    assert session is not None and session.replay is not None
    assert sorted(session.replay) == list(range(4, 20))  # the oldest four went
    for stream in range(4, 20):  # each delivered once, then forgotten
        get, reply = resume(server, sid, f"{stream}.0")
        assert [a["id"] for _, a in messages(get.send(reply))] == [stream + 1]
    assert session.replay is None and session.replay_size == 0


def cancel(server: HTTPServer, sid: str, id: int) -> Reply:
    body = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}}
    _, reply = post(server, body, ("mcp-session-id", sid))
    return reply  # type: ignore[no-any-return]


def test_leg09_a_cancel_reaches_a_running_request_and_its_stream_ends_unanswered() -> None:
    """The client's ``notifications/cancelled`` (another POST) names the exchange that
    runs the request; sending the ``Cancelled`` it gives ends the open stream."""
    server, sid = opened()
    ex = call(server, sid)
    ex.send(progress(1, 1))  # the stream is open
    assert ex.expects_news and ex.next_event() is m.NEED_DATA
    reply = cancel(server, sid, 1)
    assert reply.status == 202 and reply.resumed is ex
    cancelled = ex.next_event()
    assert cancelled == m.Cancelled(id=1, reason=None)
    assert ex.send(cancelled) == [ResponseEnd()] and ex.done and not ex.expects_news
    assert ex.send(progress(1, 2)) == [] and ex.send(done(1)) == []  # dropped, as on stdio
    assert cancel(server, sid, 1).resumed is None  # over: nothing left to reach


def test_leg09_a_cancel_before_anything_was_sent_is_an_empty_stream_or_a_202() -> None:
    server, sid = opened()
    ex = call(server, sid)
    cancel(server, sid, 1)
    parts = ex.send(ex.next_event())
    assert parts[0] == ResponseStart(status=200, headers=parts[0].headers)
    assert dict(parts[0].headers)["content-type"] == "text/event-stream"
    assert parts[1:] == [ResponseEnd()] and ex.done
    body = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "x"}}
    head = [("host", "localhost"), ("content-type", "application/json"),
            ("accept", "application/json"), ("mcp-session-id", sid), LEGACY]  # fmt: skip
    plain = server.handle("POST", "/mcp", head, orjson.dumps(body))
    assert isinstance(plain.next_event(), m.Request)
    cancel(server, sid, 3)
    start, end = plain.send(plain.next_event())
    assert start.status == 202 and end == ResponseEnd()


def test_a_finished_exchange_leaves_nothing_behind_in_its_session() -> None:
    server, sid = opened()
    session = server.sessions.get(sid)  # type: ignore[union-attr]
    assert session is not None
    for id in range(5):
        ex = call(server, sid, id)
        ex.send(done(id))
    ex = call(server, sid, 9)
    ex.client_closed()
    assert session.running == {}


def test_what_cannot_detach_or_is_over_gives_nothing() -> None:
    server, sid = opened()
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}'
    conn = HTTPServerConnection(server)
    assert conn.detach() == b""  # no exchange
    head = (f"POST /mcp HTTP/1.1\r\nhost: localhost\r\nmcp-session-id: {sid}\r\n"
            f"accept: application/json\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\n\r\n")  # fmt: skip
    conn.receive_data(head.encode() + body)
    assert isinstance(conn.next_event(), m.Request)
    assert conn.detach() == b""  # a client that takes JSON only: nothing to resume
    ex = call(server, sid, 2)
    ex.client_closed()
    assert ex.send(m.Cancelled(id=2, reason=None)) == []  # over already: nothing to end


def test_a_detached_connection_that_must_close_is_not_held() -> None:
    """``Connection: close`` on the detached request: its end closes, nothing is held."""
    server, sid = opened()
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}'
    conn, request = wire(server, raw("POST", sid, body, "connection: close"))
    assert isinstance(request, m.Request)
    conn.detach()
    assert conn.must_close
    conn.send(done(1))
    assert isinstance(conn.next_event(), m.ConnectionClosed)
