"""The h11-free client binding: POSTs, tool filtering, responses (edge 104-108), era, auth."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.http import (
    ACCEPT,
    AuthenticationRequired,
    Era,
    HTTPClient,
    HTTPPost,
    RequestLost,
    ToolRejected,
    UnexpectedResponse,
    detect_era,
    parse_www_authenticate,
    sse_message,
)

from ._http_helpers import SQL_TOOL, make_server


def drain(source: Any) -> list[Any]:
    out = []
    while (event := source.next_event()) is not m.NEED_DATA:
        out.append(event)
    return out


def call(client: HTTPClient, name: str = "execute_sql", **arguments: Any) -> HTTPPost:
    params = t.CallToolRequestParams(name=name, arguments=arguments)
    return client.send(
        m.Request(id=client.connection.next_id(), method="tools/call", params=params)
    )


def respond(
    client: HTTPClient,
    post: HTTPPost,
    status: int,
    ctype: str | None,
    *chunks: bytes,
    end: bool = True,
) -> list[Any]:
    headers = [("content-type", ctype)] if ctype else []
    ex = client.response(post, status, headers)
    for chunk in chunks:
        if chunk:
            ex.receive_data(chunk)
    if end:
        ex.receive_data(b"")
    return drain(ex)


def result(id: Any, **extra: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": id, "result": {"content": [], **extra}})


def test_http07_20_29_30_post_headers() -> None:
    client = HTTPClient(headers=[("authorization", "Bearer x")])
    client.tools["execute_sql"] = SQL_TOOL
    post = call(client, region="Hello, 世界", limit=-7, dry=True, query="q")
    h = dict(post.headers)
    assert post.method == "POST" and post.target == "/mcp"
    assert h["content-type"] == "application/json" and h["accept"] == ACCEPT
    assert h["mcp-protocol-version"] == "2026-07-28" and h["mcp-method"] == "tools/call"
    assert h["mcp-name"] == "execute_sql"
    assert h["mcp-param-region"] == "=?base64?SGVsbG8sIOS4lueVjA==?="
    assert (h["mcp-param-limit"], h["mcp-param-dry"]) == ("-7", "true")
    assert h["authorization"] == "Bearer x"
    assert orjson.loads(post.body)["params"]["arguments"]["region"] == "Hello, 世界"


def test_http36_null_or_absent_arguments_get_no_header() -> None:
    client = HTTPClient()
    client.tools["execute_sql"] = SQL_TOOL
    h = dict(call(client, region=None, query="q").headers)
    assert not [k for k in h if k.startswith("mcp-param-")]


def test_edge93_unsafe_integer_is_refused_locally_before_anything_is_sent() -> None:
    client = HTTPClient()
    client.tools["execute_sql"] = SQL_TOOL
    with pytest.raises(m.LocalProtocolError):
        call(client, limit=2**53)
    assert client.connection.in_flight() == ()


def test_http21_mcp_name_uses_the_sentinel_when_needed() -> None:
    client = HTTPClient()
    for uri, header in [
        ("file:///a b", "file:///a b"),
        ("file:///é", "=?base64?ZmlsZTovLy/DqQ==?="),
        ("=?base64?x?=", "=?base64?PT9iYXNlNjQ/eD89?="),
    ]:
        params = t.ReadResourceRequestParams(uri=uri)
        post = client.send(
            m.Request(id=client.connection.next_id(), method="resources/read", params=params)
        )
        assert dict(post.headers)["mcp-name"] == header


def test_tool_argument_overrides_the_cache_and_invalid_tool_is_refused() -> None:
    client = HTTPClient()
    h = dict(call(client, region="eu").headers)
    assert "mcp-param-region" not in h  # unknown tool: nothing to mirror
    params = t.CallToolRequestParams(name="execute_sql", arguments={"region": "eu"})
    post = client.send(m.Request(id=99, method="tools/call", params=params), tool=SQL_TOOL)
    assert dict(post.headers)["mcp-param-region"] == "eu"
    bad = t.Tool(
        name="b",
        input_schema={
            "type": "object",
            "properties": {"a": {"type": "number", "x-mcp-header": "A"}},
        },
    )
    with pytest.raises(m.LocalProtocolError, match="HTTP-27"):
        client.send(
            m.Request(id=100, method="tools/call", params=t.CallToolRequestParams(name="b")),
            tool=bad,
        )


def test_http12_cancel_is_not_posted() -> None:
    client = HTTPClient()
    post = call(client)
    note = m.Notification(
        method="notifications/cancelled",
        params=t.CancelledNotificationParams(request_id=post.request.id),  # type: ignore[union-attr]
    )
    with pytest.raises(m.LocalProtocolError, match="HTTP-12"):
        client.send(note)


def test_edge92_http27_tools_list_drops_invalid_tools_with_a_warning() -> None:
    client = HTTPClient()
    post = client.send(m.Request(id=1, method="tools/list", params=t.PaginatedRequestParams()))
    bad = {
        "name": "bad",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "number", "x-mcp-header": "A"}},
        },
    }
    good = m.unstructure(SQL_TOOL)
    data = orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"tools": [bad, good], "ttlMs": 0, "cacheScope": "public"},
        }
    )
    events = respond(client, post, 200, "application/json", data)
    assert isinstance(events[0], ToolRejected) and events[0].name == "bad"
    assert "not integer" in events[0].reason
    assert [tool.name for tool in events[1].result.tools] == ["execute_sql"]
    assert set(client.tools) == {"execute_sql"}
    # A clean list passes through unchanged.
    post = client.send(m.Request(id=2, method="tools/list", params=t.PaginatedRequestParams()))
    data = orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "result": {"tools": [good], "ttlMs": 0, "cacheScope": "public"},
        }
    )
    (only,) = respond(client, post, 200, "application/json", data)
    assert isinstance(only, m.Result)


def test_http11_json_response() -> None:
    client = HTTPClient()
    post = call(client)
    (event,) = respond(
        client, post, 200, "application/json; charset=utf-8", result(1)[:5], result(1)[5:]
    )
    assert isinstance(event, m.Result) and isinstance(event.result, t.CallToolResult)


def test_http11_sse_response_with_comments_multiline_and_crlf() -> None:
    client = HTTPClient()
    post = client.send(
        m.Request(
            id=client.connection.next_id(),
            method="tools/call",
            params=t.CallToolRequestParams(
                name="x", meta=client.connection.meta(progress_token="p")
            ),
        )
    )
    progress = (
        b'{"jsonrpc":"2.0","method":"notifications/progress",'
        b'"params":{"progressToken":"p","progress":1}}'
    )
    cut = progress.index(b',"method"') + 1  # a line break between JSON tokens is whitespace
    stream = (
        b": hi\r\n"
        + b"data: "
        + progress[:cut]
        + b"\r\ndata:"
        + progress[cut:]
        + b"\r\n\r\n"
        + sse_message(result(1))
    )
    events = respond(client, post, 200, "text/event-stream", stream)
    assert [type(e).__name__ for e in events] == ["Notification", "Result"]


def test_leg12_a_priming_event_with_empty_data_is_not_a_message() -> None:
    """A 2025-11-25 server opens a stream with an id, a retry and empty data (LEG-12)."""
    client = HTTPClient()
    post = call(client)
    stream = b"id: 0.0\nretry: 1000\ndata: \n\n" + b"id: 0.1\n" + sse_message(result(1))
    events = respond(client, post, 200, "text/event-stream", stream)
    assert [type(e).__name__ for e in events] == ["Result"]


def test_edge106_sse_ends_without_the_response_is_a_lost_request() -> None:
    client = HTTPClient()
    post = call(client)
    (event,) = respond(client, post, 200, "text/event-stream", b": only a comment\n\n")
    assert isinstance(event, RequestLost) and event.id == 1 and event.request is post.request
    assert client.connection.in_flight() == ()


def test_edge108_frames_after_the_final_response_are_ignored() -> None:
    client = HTTPClient()
    post = call(client)
    ex = client.response(post, 200, [("content-type", "text/event-stream")])
    ex.receive_data(sse_message(result(1)))
    assert ex.complete
    ex.receive_data(sse_message(result(1)))
    ex.receive_data(b"")
    assert [type(e).__name__ for e in drain(ex)] == ["Result"]
    with pytest.raises(RuntimeError):
        ex.receive_data(b"x")


@pytest.mark.parametrize(
    ("status", "ctype", "data", "reason"),
    [
        (202, None, b"", "202"),
        (200, None, b"", "no JSON-RPC body"),
        (200, "text/html", b"<html>", "no JSON-RPC body"),
        (200, "application/json", b"{", "does not parse"),
        (500, "application/json", b'{"detail":"x"}', "JSON body"),
        (404, None, b"", "no JSON-RPC body"),
    ],
)
def test_edge104_unreadable_answers(
    status: int, ctype: str | None, data: bytes, reason: str
) -> None:
    client = HTTPClient()
    post = call(client)
    (event,) = respond(client, post, status, ctype, data)
    assert isinstance(event, UnexpectedResponse) and reason in event.reason
    assert client.connection.in_flight() == ()


def test_json_body_that_is_not_our_response_loses_the_request() -> None:
    client = HTTPClient()
    post = call(client)
    events = respond(client, post, 200, "application/json", result(77))
    assert isinstance(events[-1], RequestLost)


def test_edge105_modern_errors_become_the_usual_events() -> None:
    client = HTTPClient()
    post = call(client)
    body = (
        b'{"jsonrpc":"2.0","error":{"code":-32022,"message":"x",'
        b'"data":{"supported":["2026-07-28"],"requested":"1"}}}'
    )
    (event,) = respond(client, post, 400, "application/json", body)
    assert isinstance(event, m.VersionNotSupported) and event.id == post.request.id  # type: ignore[union-attr]
    post = call(client)
    body = b'{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}'
    (event,) = respond(client, post, 404, "application/json", body)
    assert isinstance(event, m.ErrorResponse) and event.code == -32601


@pytest.mark.parametrize(
    ("status", "body", "era"),
    [
        (400, b'{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"x"}}', Era.MODERN),
        (400, b'{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"x"}}', Era.MODERN),
        (400, b'{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"x"}}', Era.MODERN),
        (404, b'{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x"}}', Era.MODERN),
        (
            400,
            b'{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"No session"}}',
            Era.LEGACY,
        ),
        (400, b"", Era.LEGACY),
        (404, b"Not Found", Era.LEGACY),
        (405, b"", Era.LEGACY),
        (400, b"[1]", Era.LEGACY),
        (401, b"", Era.AUTH),
        (403, b"", Era.AUTH),
    ],
)
def test_http42_46_edge105_era_detection(status: int, body: bytes, era: Era) -> None:
    assert detect_era(status, body) is era


@pytest.mark.parametrize("written", [b"null", b'"server-error"', b"99"])
def test_an_error_status_answers_the_post_whatever_id_it_names_http_46(written: bytes) -> None:
    """A 4xx JSON-RPC error is the answer to the one request of its POST, even under a
    placeholder id (a legacy server's transport writes ``"server-error"``), never a lost
    request.  To a modern request an error that is no modern one is a legacy server's
    refusal (HTTP-42): ``UnexpectedResponse`` of the legacy era, the error kept."""
    client = HTTPClient()
    post = call(client)
    body = b'{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"No session"}}' % written
    (event,) = respond(client, post, 400, "application/json", body)
    assert isinstance(event, UnexpectedResponse) and event.id == post.request.id  # type: ignore[union-attr]
    assert event.era is Era.LEGACY and event.status == 400
    assert event.error is not None and event.error.code == -32000
    assert event.reason == "error -32000: 'No session'" and not client.connection.in_flight()


@pytest.mark.parametrize(
    ("status", "code"), [(400, -32020), (400, -32021), (400, -32022), (404, -32601)]
)
def test_http42_a_modern_error_status_is_the_error_response(status: int, code: int) -> None:
    """A recognized modern error in a 4xx body is a modern server's answer: the error
    response itself (``-32022`` included, as ``VersionNotSupported``)."""
    client = HTTPClient()
    post = call(client)
    data = b',"data":{"supported":["2026-07-28"]}' if code == -32022 else b""
    body = b'{"jsonrpc":"2.0","id":1,"error":{"code":%d,"message":"m"%s}}' % (code, data)
    (event,) = respond(client, post, status, "application/json", body)
    assert isinstance(event, m.ErrorResponse | m.VersionNotSupported)
    assert event.error.code == code


def test_a_5xx_error_is_the_error_response_whatever_its_code() -> None:
    """A ``5xx`` is a server's failure, not a sign of its era (HTTP-42 reads ``4xx``):
    its JSON-RPC error is the call's answer."""
    client = HTTPClient()
    post = call(client)
    body = b'{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"busy"}}'
    (event,) = respond(client, post, 500, "application/json", body)
    assert isinstance(event, m.ErrorResponse) and event.code == -32603


def test_a_refused_initialize_is_its_error_response_vers16() -> None:
    """``initialize`` refused with a 4xx JSON-RPC error (a modern-only server naming its
    versions, VER-16) stays the error response: its message is the caller's to show."""
    client = HTTPClient()
    probe = m.EraProbe(transport="http", next_id=client.connection.next_id)
    assert probe.start() is None
    post = client.send(probe.not_modern())  # type: ignore[arg-type]
    body = b'{"jsonrpc":"2.0","id":%d,"error":{"code":-32600,"message":"use 2026-07-28"}}' % (
        post.request.id  # type: ignore[union-attr]
    )
    (event,) = respond(client, post, 400, "application/json", body)
    assert isinstance(event, m.ErrorResponse) and event.error.message == "use 2026-07-28"


def test_unexpected_response_carries_the_era() -> None:
    client = HTTPClient()
    post = call(client)
    (event,) = respond(client, post, 405, None, b"")
    assert event.era is Era.LEGACY


def test_edge111_401_and_403_surface_the_challenge() -> None:
    client = HTTPClient()
    post = call(client)
    ex = client.response(
        post,
        401,
        [
            (
                "www-authenticate",
                'Bearer resource_metadata="https://h/.well-known/oauth-protected-resource", '
                'scope="files:read"',
            )
        ],
    )
    ex.receive_data(b"ignored")
    ex.receive_data(b"")
    (event,) = drain(ex)
    assert isinstance(event, AuthenticationRequired) and event.status == 401
    assert event.bearer is not None
    assert event.bearer.resource_metadata == "https://h/.well-known/oauth-protected-resource"
    assert event.bearer.scope == "files:read" and event.bearer.error is None
    assert client.connection.in_flight() == ()
    post = call(client)
    (event,) = respond(client, post, 403, None, b"")
    assert event.bearer is None and event.challenges == ()


def test_parse_www_authenticate() -> None:
    value = (
        'Basic realm="x", Bearer error="insufficient_scope", scope="a b",\r\n '
        'resource_metadata="https://h/p", error_description="need \\"a\\"", '
        "Negotiate abc==, Other"
    )
    challenges = parse_www_authenticate(value)
    assert [c.scheme for c in challenges] == ["basic", "bearer", "negotiate", "other"]
    bearer = challenges[1]
    assert bearer.params == {
        "error": "insufficient_scope",
        "scope": "a b",
        "resource_metadata": "https://h/p",
        "error_description": 'need "a"',
    }
    assert parse_www_authenticate("") == []
    assert parse_www_authenticate("Bearer") == [parse_www_authenticate("bearer")[0]]


def test_notifications_and_202() -> None:
    client = HTTPClient(m.ClientConnection(extensions=[]))
    post = HTTPPost(target="/mcp", headers=(), body=b"{}")
    ex = client.response(post, 202, [])
    assert ex.complete and drain(ex) == []
    ex = client.response(post, 400, [("content-type", "application/json")])
    ex.receive_data(b'{"jsonrpc":"2.0","error":{"code":-32600,"message":"x"}}')
    ex.receive_data(b"")
    (event,) = drain(ex)
    assert isinstance(event, UnexpectedResponse) and event.id is None
    ex = client.response(post, 200, [])
    ex.receive_data(b"")
    assert drain(ex) == [] and ex.complete


def test_close_cancels_by_closing_the_stream() -> None:
    client = HTTPClient()
    post = call(client)
    ex = client.response(post, 200, [("content-type", "text/event-stream")])
    lost = ex.close()
    assert isinstance(lost, RequestLost) and client.connection.in_flight() == ()
    assert ex.close() is None


def test_round_trip_through_the_pure_server() -> None:
    server = make_server()
    client = HTTPClient()
    client.tools["execute_sql"] = SQL_TOOL
    post = call(client, region="eu", query="q")
    ex = server.handle("POST", post.target, [("host", "localhost"), *post.headers], post.body)
    request = ex.next_event()
    assert isinstance(request, m.Request)
    parts = ex.send(
        m.Result(id=request.id, result=t.CallToolResult(content=[t.TextContent(text="ok")]))
    )
    reader = client.response(post, parts[0].status, parts[0].headers)  # type: ignore[union-attr]
    for part in parts[1:]:
        reader.receive_data(getattr(part, "data", b""))
    (answer,) = drain(reader)
    assert answer.result.content[0].text == "ok"


def test_edge110_listen_answered_with_json_is_a_subscription_end() -> None:
    client = HTTPClient()
    params = t.SubscriptionsListenRequestParams(
        notifications=t.SubscriptionFilter(tools_list_changed=True)
    )
    post = client.send(m.Request(id=1, method="subscriptions/listen", params=params))
    body = (
        b'{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}'
    )
    (event,) = respond(client, post, 200, "application/json", body)
    assert isinstance(event, m.SubscriptionEnded) and event.graceful


def test_www_authenticate_token68_and_unquoted_values() -> None:
    (a, b) = parse_www_authenticate("Negotiate abc==, Bearer error=invalid_token")
    assert (a.scheme, a.params) == ("negotiate", {})
    assert b.params == {"error": "invalid_token"}
    assert parse_www_authenticate("Bearer a=b, ,") == [parse_www_authenticate("Bearer a=b")[0]]


def test_the_h11_names_are_lazy() -> None:
    import mcp_proto.http as h

    assert h.HTTPServerConnection.__name__ == "HTTPServerConnection"
    with pytest.raises(AttributeError):
        h.nothing  # noqa: B018
