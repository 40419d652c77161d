"""h11 on both sides, over in-memory bytes: the stream connections' flows, and HTTP framing."""

from __future__ import annotations

import itertools
from typing import Any

import h11
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.http import (
    HTTPClient,
    HTTPClientConnection,
    HTTPServerConnection,
    Reply,
    RequestLost,
)

from ._http_helpers import SQL_TOOL, make_server


def drain(conn: Any) -> list[Any]:
    out = []
    while (event := conn.next_event()) is not m.NEED_DATA:
        out.append(event)
        if isinstance(event, m.ConnectionClosed):
            break
    return out


class HTTPPair:
    """A client and a server joined by an in-memory TCP connection, h11 on both ends."""

    def __init__(self, **server_options: Any) -> None:
        self.server = HTTPServerConnection(make_server(**server_options))
        caps = t.ClientCapabilities(elicitation=t.ClientCapabilitiesElicitation())
        client = HTTPClient(m.ClientConnection(capabilities=caps))
        self.client = HTTPClientConnection(client, host="localhost:8000")
        self.client.client.tools["execute_sql"] = SQL_TOOL
        self.wire: list[bytes] = []

    @property
    def conn(self) -> m.ClientConnection:
        return self.client.client.connection

    def request(self, method: str, params: Any, **kwargs: Any) -> list[Any]:
        event = m.Request(id=self.conn.next_id(), method=method, params=params)
        return self.to_server(event, **kwargs)

    def to_server(self, event: Any, **kwargs: Any) -> list[Any]:
        data = self.client.send(event, **kwargs)
        self.wire.append(data)
        self.server.receive_data(data)
        return drain(self.server)

    def to_client(self, event: Any) -> list[Any]:
        data = self.server.send(event)
        self.wire.append(data)
        self.client.receive_data(data)
        return drain(self.client)


def call_params(**meta: Any) -> t.CallToolRequestParams:
    return t.CallToolRequestParams(
        name="execute_sql",
        arguments={"region": "eu", "query": "q"},
        meta=HTTPClient().connection.meta(**meta) if meta else None,
    )


def test_keep_alive_several_requests_on_one_connection() -> None:
    pair = HTTPPair()
    for n in range(3):
        (req,) = pair.request("tools/call", call_params())
        assert isinstance(req, m.Request) and req.id == n + 1
        (res,) = pair.to_client(m.Result(id=req.id, result=t.CallToolResult(content=[])))
        assert isinstance(res, m.Result) and res.id == req.id
        assert not pair.client.busy and not pair.server.must_close
    assert b"mcp-param-region: eu" in pair.wire[0]
    assert b"content-type: application/json" in pair.wire[1]


def test_progress_flow_streams_sse() -> None:
    pair = HTTPPair()
    (req,) = pair.request("tools/call", call_params(progress_token="tok"))
    for i in (1, 2):
        progress = t.ProgressNotificationParams(progress_token="tok", progress=i, total=2)
        note = m.Notification(method="notifications/progress", params=progress, request_id=req.id)
        (got,) = pair.to_client(note)
        assert got.params.progress == i and got.request_id == req.id
    assert b"text/event-stream" in pair.wire[1] and b"x-accel-buffering: no" in pair.wire[1]
    assert pair.server.keepalive().endswith(b": keep-alive\n\n\r\n")
    (res,) = pair.to_client(m.Result(id=req.id, result=t.CallToolResult(content=[])))
    assert isinstance(res, m.Result)
    (again,) = pair.request("tools/list", t.PaginatedRequestParams())
    assert again.method == "tools/list"


def test_mrtr_flow_retries_on_a_new_post() -> None:
    pair = HTTPPair()
    (req,) = pair.request("tools/call", call_params())
    elicit = t.ElicitRequest(
        params=t.ElicitRequestFormParams(message="name?", requested_schema={"type": "object"})
    )
    ir = t.InputRequiredResult(input_requests={"who": elicit}, request_state="s1")
    (needed,) = pair.to_client(m.Result(id=req.id, result=ir))
    assert isinstance(needed, m.InputRequired) and needed.round == 1
    retry = needed.retry(
        id=pair.conn.next_id(), input_responses={"who": t.ElicitResult(action="decline")}
    )
    (again,) = pair.to_server(retry)
    assert again.params.request_state == "s1" and again.params.input_responses
    (done,) = pair.to_client(m.Result(id=again.id, result=t.CallToolResult(content=[])))
    assert isinstance(done, m.Result) and done.id == retry.id


def test_listen_flow_ack_changes_keepalive_and_graceful_end() -> None:
    pair = HTTPPair()
    flt = t.SubscriptionFilter(tools_list_changed=True)
    (req,) = pair.request(
        "subscriptions/listen", t.SubscriptionsListenRequestParams(notifications=flt)
    )
    ack = t.SubscriptionsAcknowledgedNotificationParams(notifications=flt)
    (acked,) = pair.to_client(
        m.Notification(
            method="notifications/subscriptions/acknowledged", params=ack, request_id=req.id
        )
    )
    assert acked == m.SubscriptionAcknowledged(id=req.id, notifications=flt)
    changed = m.Notification(
        method="notifications/tools/list_changed", params=t.NotificationParams()
    )
    (note,) = pair.to_client(changed)  # request_id=None: fanned out to this listen
    assert note.method == "notifications/tools/list_changed" and note.request_id == req.id
    unrelated = m.Notification(
        method="notifications/prompts/list_changed", params=t.NotificationParams()
    )
    assert pair.server.send(unrelated) == b""
    pair.client.receive_data(pair.server.keepalive())
    assert drain(pair.client) == []
    (ended,) = pair.to_client(m.Result(id=req.id, result=t.SubscriptionsListenResult()))
    assert isinstance(ended, m.SubscriptionEnded) and ended.graceful


def test_cancellation_by_closing_the_connection() -> None:
    pair = HTTPPair()
    (req,) = pair.request("tools/call", call_params(progress_token="tok"))
    progress = t.ProgressNotificationParams(progress_token="tok", progress=1)
    pair.to_client(
        m.Notification(method="notifications/progress", params=progress, request_id=req.id)
    )
    lost = pair.client.close()
    assert isinstance(lost, RequestLost) and lost.id == req.id
    assert pair.conn.in_flight() == ()
    assert pair.client.close() is None
    pair.server.receive_data(b"")
    cancelled, closed = drain(pair.server)
    assert cancelled == m.Cancelled(id=req.id, reason="the client closed the HTTP response")
    assert isinstance(closed, m.ConnectionClosed)
    assert pair.server.send(m.Result(id=req.id, result=t.CallToolResult(content=[]))) == b""


def test_cancel_before_any_response_and_closed_client_refuses_sends() -> None:
    pair = HTTPPair()
    pair.request("tools/call", call_params())
    lost = pair.client.close()
    assert isinstance(lost, RequestLost)
    with pytest.raises(m.LocalProtocolError, match="closed"):
        pair.client.send(m.Request(id=50, method="tools/list", params=t.PaginatedRequestParams()))


def test_one_exchange_at_a_time() -> None:
    pair = HTTPPair()
    pair.request("tools/call", call_params())
    with pytest.raises(m.LocalProtocolError, match="one exchange at a time"):
        pair.request("tools/list", t.PaginatedRequestParams())


def test_server_closing_mid_stream_loses_the_request() -> None:
    pair = HTTPPair()
    (req,) = pair.request("tools/call", call_params(progress_token="tok"))
    progress = t.ProgressNotificationParams(progress_token="tok", progress=1)
    pair.to_client(
        m.Notification(method="notifications/progress", params=progress, request_id=req.id)
    )
    pair.client.receive_data(b"")
    lost, closed = drain(pair.client)
    assert isinstance(lost, RequestLost) and isinstance(closed, m.ConnectionClosed)


def test_server_closing_before_the_response_loses_the_request() -> None:
    pair = HTTPPair()
    pair.request("tools/call", call_params())
    pair.client.receive_data(b"")
    lost, closed = drain(pair.client)
    assert isinstance(lost, RequestLost) and isinstance(closed, m.ConnectionClosed)
    idle = HTTPClientConnection()
    idle.receive_data(b"")
    assert isinstance(idle.next_event(), m.ConnectionClosed)


def test_bad_http_from_the_server_loses_the_request() -> None:
    pair = HTTPPair()
    pair.request("tools/call", call_params())
    pair.client.receive_data(b"NOT HTTP\r\n\r\n")
    lost, _closed = drain(pair.client)
    assert isinstance(lost, RequestLost) and "not valid HTTP" in lost.reason


def test_refusals_over_h11_keep_the_connection_when_the_body_was_read() -> None:
    pair = HTTPPair(connection=m.ServerConnection)  # no capabilities: tools/list is unknown
    (reply,) = pair.request("tools/list", t.PaginatedRequestParams())
    assert isinstance(reply, Reply) and reply.status == 404
    (err,) = pair.to_client(reply)
    assert isinstance(err, m.ErrorResponse) and err.code == -32601
    assert not pair.server.must_close
    (again,) = pair.request("tools/list", t.PaginatedRequestParams())
    assert isinstance(again, Reply)


def test_get_is_405_over_h11() -> None:
    server = HTTPServerConnection(make_server())
    server.receive_data(b"GET /mcp HTTP/1.1\r\nHost: localhost\r\n\r\n")
    (reply,) = drain(server)
    out = server.send(reply)
    assert out.startswith(b"HTTP/1.1 405 ") and b"allow: POST" in out
    server.receive_data(b"DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: x\r\n\r\n")
    (reply,) = drain(server)
    assert server.send(reply).startswith(b"HTTP/1.1 405 ")


def test_413_over_h11_closes_the_connection() -> None:
    server = HTTPServerConnection(make_server(max_body_size=10))
    server.receive_data(
        b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\n" + b"x" * 100
    )
    (reply,) = drain(server)
    out = server.send(reply)
    assert out.startswith(b"HTTP/1.1 413 ") and server.must_close


def test_broken_http_request_gets_400_and_close() -> None:
    server = HTTPServerConnection(make_server())
    server.receive_data(b"POST /mcp HTTP/1.1\r\nBad Header\r\n\r\n")
    reply, closed = drain(server)
    assert isinstance(closed, m.ConnectionClosed)
    assert isinstance(reply, Reply) and reply.status == 400
    assert server.send(reply).startswith(b"HTTP/1.1 400 ") and server.must_close
    with pytest.raises(m.LocalProtocolError, match="no request"):
        HTTPServerConnection(make_server()).send(reply)


def test_server_send_without_request_and_idle_close() -> None:
    server = HTTPServerConnection(make_server())
    assert server.keepalive() == b""
    server.receive_data(b"")
    assert isinstance(server.next_event(), m.ConnectionClosed)


def frames(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    edges = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(edges) if b > a]


def summary(events: list[Any]) -> list[str]:
    return [repr(e) for e in events]


def recorded_exchange(stream: bool) -> tuple[bytes, bytes, list[str], list[str]]:
    """One exchange recorded as bytes (SSE or JSON), with the events each side saw."""
    pair = HTTPPair()
    server_events = pair.request("tools/call", call_params(progress_token="tok"))
    out = b""
    for i in (1, 2) if stream else ():
        progress = t.ProgressNotificationParams(progress_token="tok", progress=i)
        note = m.Notification(method="notifications/progress", params=progress, request_id=1)
        out += pair.server.send(note)
    text = t.TextContent(text="é\n" * 50)
    out += pair.server.send(m.Result(id=1, result=t.CallToolResult(content=[text])))
    pair.client.receive_data(out)
    return pair.wire[0], out, summary(server_events), summary(drain(pair.client))


EXCHANGES = {kind: recorded_exchange(kind == "sse") for kind in ("sse", "json")}
REQUEST_BYTES, _, SERVER_EVENTS, _ = EXCHANGES["sse"]


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["sse", "json"]), st.lists(st.integers(min_value=0), max_size=10))
def test_http_responses_parse_the_same_whatever_the_chunking(kind: str, cuts: list[int]) -> None:
    _, response, _, expected = EXCHANGES[kind]
    assert len(expected) == (3 if kind == "sse" else 1)
    pair = HTTPPair()
    pair.request("tools/call", call_params(progress_token="tok"))
    events: list[Any] = []
    for chunk in frames(response, cuts):
        pair.client.receive_data(chunk)
        events += drain(pair.client)
    assert summary(events) == expected


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=0), max_size=10))
def test_http_requests_parse_the_same_whatever_the_chunking(cuts: list[int]) -> None:
    server = HTTPServerConnection(make_server())
    events: list[Any] = []
    for chunk in frames(REQUEST_BYTES, cuts):
        server.receive_data(chunk)
        events += drain(server)
    assert summary(events) == SERVER_EVENTS


def test_h11_is_what_frames_the_bytes() -> None:
    conn = h11.Connection(h11.CLIENT)
    conn.send(
        h11.Request(method="POST", target="/mcp", headers=[("host", "x"), ("content-length", "0")])
    )
    conn.send(h11.EndOfMessage())
    conn.receive_data(EXCHANGES["sse"][1])
    response = conn.next_event()
    assert isinstance(response, h11.Response) and response.status_code == 200
    assert dict(response.headers)[b"transfer-encoding"] == b"chunked"


def test_client_asking_to_close_after_one_exchange() -> None:
    server = HTTPServerConnection(make_server())
    client = HTTPClient()
    post = client.send(
        m.Request(id=1, method="tools/call", params=t.CallToolRequestParams(name="x"))
    )
    head = b"".join(f"{k}: {v}\r\n".encode() for k, v in post.headers)
    server.receive_data(
        b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
        + head
        + f"Content-Length: {len(post.body)}\r\n\r\n".encode()
        + post.body
    )
    (request,) = drain(server)
    out = server.send(m.Result(id=request.id, result=t.CallToolResult(content=[])))
    assert b"connection: close" in out.lower() and server.must_close
    # nothing more to wait for: the adapter can close without waiting for the client
    assert isinstance(server.next_event(), m.ConnectionClosed)
