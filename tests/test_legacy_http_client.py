"""The HTTP client in a 2025-11-25 session (issue 16; LEG-10..17), against our own
dual-era endpoint, both sides the pure binding: the ``initialize`` POST, the session id
and version on every later request, the server's requests answered by POSTs, a stream
closed mid-call and resumed, ``404`` as the end of the session, the GET stream, DELETE.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.http import (
    HTTPClient,
    HTTPPost,
    HTTPServer,
    ResponseData,
    ResponseStart,
    SessionExpired,
    StreamInterrupted,
    UnexpectedResponse,
)

from .test_legacy_http import endpoint

CAPS = t.ClientCapabilities(elicitation=t.ClientCapabilitiesElicitation())


def serve(server: HTTPServer, post: HTTPPost) -> Any:
    """The server's exchange for ``post`` and its first event."""
    headers = [("host", "localhost"), *post.headers]
    ex = server.handle(post.method, post.target, headers, post.body)
    return ex, ex.next_event()


def to_client(client: HTTPClient, post: HTTPPost, parts: list[Any], end: bool = True) -> Any:
    """The client's exchange for the server's response ``parts``; its events."""
    start = parts[0]
    assert isinstance(start, ResponseStart)
    got = client.response(post, start.status, list(start.headers))
    for part in parts[1:]:
        if isinstance(part, ResponseData):
            got.receive_data(part.data)
    if end:
        got.receive_data(b"")
    events = []
    while (event := got.next_event()) is not m.NEED_DATA:
        events.append(event)
    return got, events


def opened() -> tuple[HTTPServer, HTTPClient]:
    server = endpoint()
    client = HTTPClient(m.ClientConnection(capabilities=CAPS))
    probe = m.EraProbe(transport="http", next_id=client.connection.next_id, capabilities=CAPS)
    assert probe.start() is None
    init = probe.not_modern()  # (the first modern request drew a legacy 400)
    post = client.send(init)  # type: ignore[arg-type]
    headers = dict(post.headers)
    assert "mcp-session-id" not in headers and "mcp-protocol-version" not in headers
    ex, reply = serve(server, post)
    _, (result,) = to_client(client, post, ex.send(reply))
    legacy = probe.received(result)
    assert isinstance(legacy, m.Legacy) and client.session_id is not None
    note = client.send(legacy.initialized)
    ex, ack = serve(server, note)
    assert ack.status == 202
    return server, client


def call(client: HTTPClient, id_meta: bool = True) -> m.Request:
    conn = client.connection
    params = t.CallToolRequestParams(name="x", meta=conn.meta(progress_token="p"))
    return m.Request(id=conn.next_id(), method="tools/call", params=params)


def test_leg16_leg17_every_request_after_initialize_names_the_session_and_version() -> None:
    server, client = opened()
    post = client.send(call(client))
    headers = dict(post.headers)
    assert headers["mcp-session-id"] == client.session_id
    assert headers["mcp-protocol-version"] == "2025-11-25"
    assert "mcp-method" not in headers and "mcp-name" not in headers  # no modern headers
    ex, request = serve(server, post)
    assert isinstance(request, m.Request) and request.meta.protocol_version == "2025-11-25"
    answer = m.Result(id=request.id, result=t.CallToolResult(content=[]))
    _, (result,) = to_client(client, post, ex.send(answer))
    assert isinstance(result, m.Result) and result.id == post.request.id  # type: ignore[union-attr]


def test_the_servers_request_on_the_stream_is_answered_by_a_post() -> None:
    server, client = opened()
    post = client.send(call(client))
    ex, request = serve(server, post)
    form = t.ElicitRequestFormParams(message="?", requested_schema={"type": "object"})
    ask = t.InputRequiredResult(input_requests={"k": t.ElicitRequest(params=form)})
    stream, (asked,) = to_client(client, post, ex.send(m.Result(id=request.id, result=ask)),
                                 end=False)  # fmt: skip
    assert isinstance(asked, m.ServerRequest) and not stream.complete  # (its id is not ours)
    reply = client.answer(asked.answer(t.ElicitResult(action="decline")))
    assert reply is not None and dict(reply.headers)["mcp-session-id"] == client.session_id
    _, accepted = serve(server, reply)
    assert accepted.status == 202 and accepted.resumed is ex
    again = ex.next_event()
    parts = ex.send(m.Result(id=again.id, result=t.CallToolResult(content=[])))
    data = b"".join(p.data for p in parts if isinstance(p, ResponseData))
    stream.receive_data(data)
    stream.receive_data(b"")
    (result,) = [stream.next_event()]
    assert isinstance(result, m.Result) and stream.complete


def test_leg12_leg15_a_stream_closed_mid_call_is_resumed_with_last_event_id() -> None:
    server, client = opened()
    post = client.send(call(client))
    ex, request = serve(server, post)
    closed, (interrupted,) = to_client(client, post, ex.detach())
    assert isinstance(interrupted, StreamInterrupted) and closed.complete
    assert interrupted.last_event_id == "0.0" and interrupted.retry_ms == 1000
    assert request.id in client.connection.in_flight()  # not cancelled: it goes on
    ex.send(m.Result(id=request.id, result=t.CallToolResult(content=[])))
    get = client.resume(interrupted)
    assert get.method == "GET" and dict(get.headers)["last-event-id"] == "0.0"
    resumed, reply = serve(server, get)
    _, (result,) = to_client(client, get, resumed.send(reply))
    assert isinstance(result, m.Result) and result.id == request.id


def test_leg16_a_404_in_the_session_is_session_expired() -> None:
    server, client = opened()
    delete = [("host", "localhost"), ("mcp-session-id", client.session_id or "")]
    server.handle("DELETE", "/mcp", delete)  # the server forgets it
    post = client.send(call(client))
    ex, reply = serve(server, post)
    assert reply.status == 404
    _, (expired,) = to_client(client, post, ex.send(reply))
    assert isinstance(expired, SessionExpired) and expired.request is post.request
    assert client.session_id is None and client.end_session() is None


def test_a_4xx_error_in_a_legacy_session_is_the_error_response() -> None:
    """In a session, a 4xx JSON-RPC error is the server's answer to the call (no era
    question is left to ask): the error response, under the call's id."""
    _, client = opened()
    post = client.send(call(client))
    body = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad"}}'
    got = client.response(post, 400, [("content-type", "application/json")])
    got.receive_data(body)
    got.receive_data(b"")
    event = got.next_event()
    assert isinstance(event, m.ErrorResponse) and event.id == post.request.id  # type: ignore[union-attr]


def test_leg16_a_session_id_that_is_not_visible_ascii_is_refused() -> None:
    client = HTTPClient(m.ClientConnection())
    init = m.Request(id=1, method="initialize", params={"protocolVersion": "2025-11-25"})
    post = client.send(init)
    got = client.response(post, 200, [("content-type", "application/json"),
                                      ("mcp-session-id", "a\x01b")])  # fmt: skip
    (refused,) = [got.next_event()]
    assert isinstance(refused, UnexpectedResponse) and "LEG-16" in refused.reason
    assert client.session_id is None


def test_leg13_the_get_stream_and_delete() -> None:
    server, client = opened()
    sub = m.Request(id=client.connection.next_id(), method="resources/subscribe",
                    params={"uri": "a://b"})  # fmt: skip
    post = client.send(sub)
    ex, answered = serve(server, post)
    to_client(client, post, ex.send(answered))
    get = client.open_stream()
    assert get.method == "GET" and get.request is None
    stream_ex, reply = serve(server, get)
    updated = m.Notification(
        method="notifications/resources/updated",
        params=t.ResourceUpdatedNotificationParams(uri="a://b"),
    )
    parts = stream_ex.send(reply) + stream_ex.send(updated)
    stream, (note,) = to_client(client, get, parts, end=False)
    assert note.method == "notifications/resources/updated" and not stream.complete
    stream.receive_data(b"")
    assert stream.complete and stream.next_event() is m.NEED_DATA  # quietly over
    delete = client.end_session()
    assert delete is not None and delete.method == "DELETE" and client.session_id is None
    _, done = serve(server, delete)
    assert done.status == 200


def test_leg09_a_cancel_is_posted_in_a_legacy_session() -> None:
    server, client = opened()
    request = call(client)
    post = client.send(request)
    ex, _ = serve(server, post)
    params = t.CancelledNotificationParams(request_id=request.id, reason="bored")
    note = client.send(m.Notification(method="notifications/cancelled", params=params))
    assert orjson.loads(note.body)["method"] == "notifications/cancelled"
    _, accepted = serve(server, note)
    assert accepted.status == 202 and accepted.resumed is ex


def test_leg09_cancel_is_a_post_in_a_session_and_nothing_for_a_modern_request() -> None:
    server, client = opened()
    request = call(client)
    post = client.send(request)
    ex, _ = serve(server, post)
    cancel = client.cancel(request.id, "timed out")
    assert cancel is not None and cancel.request is None  # a notification: no answer
    sent = orjson.loads(cancel.body)
    assert sent["method"] == "notifications/cancelled"
    assert sent["params"] == {"requestId": request.id, "reason": "timed out"}
    assert request.id not in client.connection.in_flight()  # retired: a late answer drops
    assert client.cancel(request.id) is None  # once
    _, accepted = serve(server, cancel)
    assert accepted.status == 202 and accepted.resumed is ex
    modern = HTTPClient(m.ClientConnection())
    ask = m.Request(id=modern.connection.next_id(), method="tools/list",
                    params=t.PaginatedRequestParams())  # fmt: skip
    modern.send(ask)
    assert modern.cancel(ask.id) is None  # closing its response is the cancellation


def test_what_a_legacy_http_client_refuses_or_has_nothing_to_post_for() -> None:
    client = HTTPClient(m.ClientConnection())
    with pytest.raises(m.LocalProtocolError, match="LEG-13"):
        client.open_stream()  # no session
    _, client = opened()
    error = t.Error(code=m.INVALID_REQUEST, message="no id to answer")
    assert client.answer(m.InvalidMessage(error=error)) is None  # no reply: nothing to POST
