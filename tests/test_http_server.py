"""The h11-free server binding: every server-side HTTP row (77-103, 109-111) of the edge table."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.http import Challenge, HTTPServer, ProtectedResource, Reply

from ._http_helpers import (
    SQL_TOOL,
    VERSION,
    body,
    headers,
    make_server,
    parts_of,
    post,
    reply_of,
)

CALL = {"name": "execute_sql", "arguments": {"region": "us-west1", "query": "q"}}
CALL_HEADERS = {"mcp_param_region": "us-west1"}


def call(**extra: str) -> tuple[bytes, list[tuple[str, str]]]:
    return body("tools/call", CALL), headers(
        "tools/call", "execute_sql", **{**CALL_HEADERS, **extra}
    )


def refused(
    hdrs: list[tuple[str, str]], data: bytes, **kw: Any
) -> tuple[int, dict[str, str], Any]:
    ex, event = post(make_server(**kw), data, hdrs)
    return reply_of(ex, event)


def without(hdrs: list[tuple[str, str]], name: str) -> list[tuple[str, str]]:
    return [(k, v) for k, v in hdrs if k != name]


def replace(hdrs: list[tuple[str, str]], name: str, value: str) -> list[tuple[str, str]]:
    return [*without(hdrs, name), (name, value)]


def assert_mismatch(result: tuple[int, dict[str, str], Any], fragment: str, id: Any = 1) -> None:
    status, _, message = result
    assert status == 400
    assert message["error"]["code"] == m.HEADER_MISMATCH
    assert fragment in message["error"]["message"]
    assert message.get("id") == id


# -- the happy paths ---------------------------------------------------------------------------


def test_http11_single_result_is_application_json() -> None:
    data, hdrs = call()
    ex, event = post(make_server(), data, hdrs)
    assert isinstance(event, m.Request) and event.params.name == "execute_sql"
    status, h, raw, ended = parts_of(ex, m.Result(id=1, result=t.CallToolResult(content=[])))
    assert (status, h["content-type"], ended) == (200, "application/json", True)
    assert int(h["content-length"]) == len(raw)
    assert orjson.loads(raw)["result"]["resultType"] == "complete"
    assert ex.done and ex.next_event() is m.NEED_DATA


def test_http13_notifications_before_the_result_switch_to_sse() -> None:
    data = body("tools/call", CALL, progressToken="tok")
    ex, _event = post(make_server(), data, call()[1])
    progress = t.ProgressNotificationParams(progress_token="tok", progress=1)
    status, h, first, ended = parts_of(
        ex, m.Notification(method="notifications/progress", params=progress, request_id=1)
    )
    assert (status, h["content-type"], h["x-accel-buffering"], ended) == (
        200,
        "text/event-stream",
        "no",
        False,
    )
    assert ex.streaming
    assert first.startswith(b'data: {"jsonrpc":"2.0","method":"notifications/progress"')
    keep = parts_of(ex, m.Result(id=1, result=t.CallToolResult(content=[])))
    assert (
        keep[0] == 0 and keep[3] is True and keep[2].startswith(b'data: {"jsonrpc":"2.0","id":1')
    )
    with pytest.raises(m.LocalProtocolError):
        ex.send(m.Result(id=1, result=t.CallToolResult(content=[])))


def test_http_sse_2_keepalive_frame_starts_or_continues_the_stream() -> None:
    ex, _ = post(make_server(), *call())
    status, h, data, ended = parts_of_keepalive(ex)
    assert (status, h["content-type"], data, ended) == (
        200,
        "text/event-stream",
        b": keep-alive\n\n",
        False,
    )
    assert parts_of_keepalive(ex)[2] == b": keep-alive\n\n"


def parts_of_keepalive(ex: Any) -> tuple[int, dict[str, str], bytes, bool]:
    from ._http_helpers import flatten

    return flatten(ex.keepalive())


def test_only_sse_accepted_streams_even_a_single_result() -> None:
    data, hdrs = call()
    ex, _ = post(make_server(), data, replace(hdrs, "accept", "text/event-stream"))
    _status, h, raw, ended = parts_of(ex, m.Result(id=1, result=t.CallToolResult(content=[])))
    assert h["content-type"] == "text/event-stream" and ended and raw.startswith(b"data: ")


def test_edge96_only_json_accepted_drops_notifications() -> None:
    data = body("tools/call", CALL, progressToken="tok")
    ex, _ = post(make_server(), data, replace(call()[1], "accept", "application/json"))
    progress = t.ProgressNotificationParams(progress_token="tok", progress=1)
    note = m.Notification(method="notifications/progress", params=progress, request_id=1)
    assert ex.send(note) == [] and ex.dropped_notifications == 1
    assert ex.keepalive() == []
    status, h, _, _ = parts_of(ex, m.Result(id=1, result=t.CallToolResult(content=[])))
    assert (status, h["content-type"]) == (200, "application/json")


def test_edge102_notification_post_is_202_without_headers() -> None:
    data = orjson.dumps({"jsonrpc": "2.0", "method": "notifications/whatever"})
    hdrs = [("host", "localhost"), ("content-type", "application/json")]
    status, h, message = refused(hdrs, data)
    assert (status, message, h["content-length"]) == (202, None, "0")


def test_edge103_posted_cancel_is_ignored() -> None:
    data = orjson.dumps(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    )
    _ex, event = post(make_server(), data, headers("notifications/cancelled"))
    assert isinstance(event, Reply) and event.status == 202 and event.notification is None


def test_http10_bad_notification_is_400_without_id() -> None:
    data = orjson.dumps({"jsonrpc": "1.0", "method": "notifications/x"})
    status, _, message = refused(headers("notifications/x"), data)
    assert status == 400 and "id" not in message and message["error"]["code"] == -32600


def test_edge100_101_session_and_last_event_id_are_ignored_never_echoed() -> None:
    data, hdrs = call(mcp_session_id="abc", last_event_id="5")
    ex, event = post(make_server(), data, hdrs)
    assert isinstance(event, m.Request)
    for part in ex.send(m.Result(id=1, result=t.CallToolResult(content=[]))):
        for name, _ in getattr(part, "headers", ()):
            assert name not in ("mcp-session-id", "last-event-id")


# -- header validation (HTTP-15..39) -----------------------------------------------------------


def test_edge77_missing_protocol_version() -> None:
    data, hdrs = call()
    assert_mismatch(refused(without(hdrs, "mcp-protocol-version"), data), "MCP-Protocol-Version")


def test_edge78_protocol_version_differs_from_meta() -> None:
    data, hdrs = call()
    assert_mismatch(refused(replace(hdrs, "mcp-protocol-version", "2025-11-25"), data), "match")


def test_http17_unsupported_version_is_32022_and_400() -> None:
    data = body("tools/call", CALL, **{"io.modelcontextprotocol/protocolVersion": "2099-01-01"})
    hdrs = replace(call()[1], "mcp-protocol-version", "2099-01-01")
    status, _, message = refused(hdrs, data)
    assert status == 400 and message["error"]["code"] == -32022
    assert message["error"]["data"] == {"supported": [VERSION], "requested": "2099-01-01"}


def test_edge79_missing_mcp_method() -> None:
    data, hdrs = call()
    assert_mismatch(refused(without(hdrs, "mcp-method"), data), "Mcp-Method")


@pytest.mark.parametrize("value", ["Tools/Call", "tools/list"])
def test_edge80_mcp_method_differs(value: str) -> None:
    data, hdrs = call()
    assert_mismatch(refused(replace(hdrs, "mcp-method", value), data), "does not match")


def test_edge81_header_name_case_variations_are_accepted() -> None:
    data, hdrs = call()
    shouted = [(k.upper() if k.startswith("mcp") else k, v) for k, v in hdrs]
    assert isinstance(post(make_server(), data, shouted)[1], m.Request)
    spaced = [(k, f"  {v}\t") for k, v in hdrs]
    assert isinstance(post(make_server(), data, spaced)[1], m.Request)


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/call", CALL),
        ("prompts/get", {"name": "p"}),
        ("resources/read", {"uri": "file:///a"}),
    ],
)
def test_edge82_missing_mcp_name(method: str, params: dict[str, Any]) -> None:
    hdrs = headers(method, **(CALL_HEADERS if method == "tools/call" else {}))
    assert_mismatch(refused(hdrs, body(method, params)), "Mcp-Name")


def test_edge83_mcp_name_differs() -> None:
    data, hdrs = call()
    assert_mismatch(refused(replace(hdrs, "mcp-name", "other"), data), "'other'")
    read = body("resources/read", {"uri": "file:///a"})
    assert_mismatch(refused(headers("resources/read", "file:///b"), read), "match")


def test_edge84_base64_sentinel_is_decoded_before_comparing() -> None:
    params = {"name": "Hello, 世界"}
    data = body("prompts/get", params)
    _ex, event = post(
        make_server(), data, headers("prompts/get", "=?base64?SGVsbG8sIOS4lueVjA==?=")
    )
    assert isinstance(event, m.Request)


def test_edge85_uppercase_sentinel_is_compared_literally() -> None:
    hdrs = headers("prompts/get", "=?BASE64?cA==?=")
    assert_mismatch(refused(hdrs, body("prompts/get", {"name": "p"})), "match")
    ok = post(make_server(), body("prompts/get", {"name": "=?BASE64?cA==?="}), hdrs)[1]
    assert isinstance(ok, m.Request)


@pytest.mark.parametrize("value", ["=?base64?!!?=", "=?base64?/w==?=", "=?base64?="])
def test_edge86_malformed_sentinel(value: str) -> None:
    hdrs = headers("prompts/get", value)
    assert_mismatch(refused(hdrs, body("prompts/get", {"name": "p"})), "malformed")


def test_edge87_unencoded_sentinel_lookalike_mismatches() -> None:
    hdrs = headers("prompts/get", "=?base64?YWJj?=")
    assert_mismatch(refused(hdrs, body("prompts/get", {"name": "=?base64?YWJj?="})), "match")


def test_edge88_raw_non_ascii_is_invalid_characters() -> None:
    hdrs = headers("prompts/get", "caf\xe9")
    assert_mismatch(refused(hdrs, body("prompts/get", {"name": "café"})), "encode")


@pytest.mark.parametrize(
    ("args", "extra", "fragment"),
    [
        ({"region": "eu"}, {"mcp_param_region": "us"}, "does not match"),
        ({"region": "eu"}, {}, "missing Mcp-Param-Region"),
        ({"region": None}, {"mcp_param_region": "eu"}, "no value in the body"),
        ({}, {"mcp_param_region": "eu"}, "no value in the body"),
        ({"limit": 5}, {"mcp_param_limit": "6"}, "does not match"),
        ({"dry": True}, {"mcp_param_dry": "True"}, "does not match"),
        ({"region": "eu"}, {"mcp_param_region": "=?base64?%%?="}, "malformed"),
        ({"region": ["eu"]}, {"mcp_param_region": "eu"}, "does not match"),
        ({"region": "é"}, {"mcp_param_region": "\xe9"}, "encode"),  # HTTP-34: raw non-ASCII
        ({"region": "a\tb"}, {"mcp_param_region": "a\tb"}, "encode"),  # a control character
    ],
)
def test_edge89_90_param_header_mismatches(
    args: dict[str, Any], extra: dict[str, str], fragment: str
) -> None:
    data = body("tools/call", {"name": "execute_sql", "arguments": args})
    assert_mismatch(refused(headers("tools/call", "execute_sql", **extra), data), fragment)


@pytest.mark.parametrize(
    ("args", "extra"),
    [
        (
            {"region": "eu", "limit": 42, "dry": False},
            {"mcp_param_region": "eu", "mcp_param_limit": "42.0", "mcp_param_dry": "false"},
        ),
        ({"region": None}, {}),
        ({}, {}),
        ({"region": "eu"}, {"MCP-PARAM-REGION": "eu", "mcp_param_unknown": "x"}),
        ({"region": " é "}, {"mcp_param_region": "=?base64?IMOpIA==?="}),
    ],
)
def test_edge89_90_91_param_headers_that_pass(args: dict[str, Any], extra: dict[str, str]) -> None:
    data = body("tools/call", {"name": "execute_sql", "arguments": args})
    hdrs = headers("tools/call", "execute_sql", **extra)
    assert isinstance(post(make_server(), data, hdrs)[1], m.Request)


def test_params_not_checked_for_unknown_or_invalid_tools() -> None:
    bad = t.Tool(
        name="bad",
        input_schema={
            "type": "object",
            "properties": {"a": {"type": "number", "x-mcp-header": "A"}},
        },
    )
    server = make_server(tools={"bad": bad, "execute_sql": SQL_TOOL}.get)
    for name in ("bad", "unknown"):
        data = body("tools/call", {"name": name, "arguments": {"a": 1}})
        assert isinstance(post(server, data, headers("tools/call", name))[1], m.Request)


def test_edge94_duplicate_standard_headers() -> None:
    data, hdrs = call()
    for name in ("mcp-method", "mcp-protocol-version", "mcp-name", "mcp-param-region"):
        value = dict(hdrs)[name]
        assert_mismatch(refused([*hdrs, (name, value)], data), "more than once")


def test_header_error_for_an_unreadable_id_has_no_id() -> None:
    data = orjson.dumps({"jsonrpc": "2.0", "id": [1], "method": "tools/call", "params": {}})
    assert_mismatch(refused(without(call()[1], "mcp-method"), data), "Mcp-Method", id=None)


# -- body and core checks ----------------------------------------------------------------------


def test_malformed_json_is_400_32700_id_null() -> None:
    status, _, message = refused(call()[1], b'{"jsonrpc":')
    assert (status, message["error"]["code"], "id" in message) == (400, -32700, False)


@pytest.mark.parametrize(
    "data",
    [
        b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]',
        b'{"jsonrpc":"2.0","id":1,"result":{}}',
        b"3",
    ],
)
def test_http08_batch_response_or_scalar_is_400_32600(data: bytes) -> None:
    status, _, message = refused(call()[1], data)
    assert (status, message["error"]["code"]) == (400, -32600)


def test_http18_unknown_method_is_404_32601() -> None:
    data = body("frobnicate", {})
    status, _, message = refused(headers("frobnicate"), data)
    assert (status, message["error"]["code"], message["id"]) == (404, -32601, 1)
    removed = refused(headers("ping"), body("ping", {}))
    assert (removed[0], removed[2]["error"]["code"]) == (404, -32601)


def test_http18_method_behind_an_unoffered_capability_is_404() -> None:
    server = make_server(connection=m.ServerConnection)
    ex, event = post(server, body("tools/list", {}), headers("tools/list"))
    assert reply_of(ex, event)[0] == 404


def test_missing_meta_field_is_400_32602() -> None:
    data = orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/list",
            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": VERSION}},
        }
    )
    status, _, message = refused(headers("tools/list"), data)
    assert (status, message["error"]["code"], message["id"]) == (400, -32602, 3)


def test_app_error_codes_map_to_statuses() -> None:
    for code, status in [(-32021, 400), (-32601, 404), (-32602, 200), (-32603, 200)]:
        ex, event = post(make_server(), *call())
        error = t.Error(code=code, message="x")
        got = parts_of(ex, m.ErrorResponse(id=event.id, error=error))
        assert got[0] == status and orjson.loads(got[2])["error"]["code"] == code


def test_capability_error_reply_from_the_core_helpers() -> None:
    ex, event = post(make_server(), *call())
    need = t.ClientCapabilities(sampling=t.ClientCapabilitiesSampling())
    error = m.missing_required_client_capability(need)
    status, _, raw, _ = parts_of(ex, m.ErrorResponse(id=event.id, error=error))
    assert status == 400 and orjson.loads(raw)["error"]["data"]["requiredCapabilities"]


@pytest.mark.parametrize(
    ("ctype", "status"),
    [
        ("text/plain", 415),
        ("application/json; charset=latin-1", 415),
        ("application/json; charset=UTF-8", 0),
    ],
)
def test_edge97_content_type(ctype: str, status: int) -> None:
    data, hdrs = call()
    ex, event = post(make_server(), data, replace(hdrs, "content-type", ctype))
    if status:
        assert reply_of(ex, event)[0] == status
    else:
        assert isinstance(event, m.Request)
    missing = post(make_server(), data, without(hdrs, "content-type"))[1]
    assert isinstance(missing, m.Request)  # missing: try to parse


@pytest.mark.parametrize(
    ("accept", "ok"),
    [
        ("text/html", False),
        ("application/json;q=0, text/event-stream;q=0", False),
        ("*/*", True),
        ("application/*", True),
        ("text/*;q=0.5", True),
        ("*/*;q=0, application/json", True),
        ("application/json;q=bad", False),
    ],
)
def test_edge96_accept(accept: str, ok: bool) -> None:
    data, hdrs = call()
    ex, event = post(make_server(), data, replace(hdrs, "accept", accept))
    if ok:
        assert isinstance(event, m.Request)
    else:
        assert reply_of(ex, event)[0] == 406
    assert isinstance(post(make_server(), data, without(hdrs, "accept"))[1], m.Request)


def test_listen_needs_an_event_stream() -> None:
    data = body("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    hdrs = replace(headers("subscriptions/listen"), "accept", "application/json")
    ex, event = post(make_server(), data, hdrs)
    assert reply_of(ex, event)[0] == 406


def test_body_over_the_limit_is_413_without_buffering() -> None:
    server = make_server(max_body_size=100)
    _data, hdrs = call()
    ex = server.exchange("POST", "/mcp", [*hdrs, ("content-length", "101")])
    assert not ex.wants_body
    assert reply_of(ex, ex.next_event())[0] == 413
    ex = server.exchange("POST", "/mcp", hdrs)  # no length: counted as it arrives
    ex.receive_body(b"x" * 60)
    ex.receive_body(b"x" * 60)
    assert not ex.wants_body and ex._body == bytearray()
    ex.receive_body(b"x" * 60)  # ignored
    ex.end_of_body()
    status, h, _ = reply_of(ex, ex.next_event())
    assert (status, h["connection"]) == (413, "close")


@pytest.mark.parametrize("length", ["\u00b9", "\u0663", "-1", "1e3"])
def test_a_content_length_only_str_isdigit_takes_is_not_a_number(length: str) -> None:
    # "\u00b9".isdigit() is True and int() refuses it: the check must not raise (fuzzing)
    _data, hdrs = call()
    ex = make_server().exchange("POST", "/mcp", [*hdrs, ("content-length", length)])
    assert ex.wants_body


# -- endpoint, methods, origin -----------------------------------------------------------------


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT", "PATCH"])
def test_edge98_99_other_methods_are_405_allow_post(method: str) -> None:
    ex, event = post(make_server(), b"", headers("x"), method=method)
    status, h, _ = reply_of(ex, event)
    assert (status, h["allow"]) == (405, "POST")


def test_edge99_other_paths_are_404() -> None:
    ex, event = post(make_server(), *call(), target="/other")
    assert reply_of(ex, event)[0] == 404
    ex, event = post(make_server(endpoint="/api/mcp"), *call(), target="/api/mcp?x=1")
    assert isinstance(event, m.Request)


@pytest.mark.parametrize(
    ("host", "origin", "ok"),
    [
        ("localhost:8000", None, True),
        ("127.0.0.1", "http://localhost:3000", True),
        ("[::1]:8000", "https://[::1]", True),
        ("evil.example", None, False),
        ("localhost", "http://evil.example", False),
        ("localhost", "null", False),
    ],
)
def test_edge95_dns_rebinding(host: str, origin: str | None, ok: bool) -> None:
    data, hdrs = call()
    hdrs = replace(hdrs, "host", host)
    if origin is not None:
        hdrs.append(("origin", origin))
    ex, event = post(make_server(), data, hdrs)
    if ok:
        assert isinstance(event, m.Request)
    else:
        status, _, message = reply_of(ex, event)
        assert status == 403 and "id" not in message
    open_server = make_server(allowed_hosts=None, allowed_origins=None)
    assert isinstance(post(open_server, data, hdrs)[1], m.Request)


# -- cancellation ------------------------------------------------------------------------------


def test_edge65_client_closing_the_stream_cancels_the_request() -> None:
    data = body("tools/call", CALL, progressToken="tok")
    ex, _event = post(make_server(), data, call()[1])
    progress = t.ProgressNotificationParams(progress_token="tok", progress=1)
    note = m.Notification(method="notifications/progress", params=progress, request_id=1)
    assert ex.send(note)
    cancelled = ex.client_closed()
    assert cancelled == m.Cancelled(id=1, reason="the client closed the HTTP response")
    assert ex.done
    assert ex.send(m.Result(id=1, result=t.CallToolResult(content=[]))) == []
    assert ex.send(note) == []
    assert ex.client_closed() is None


def test_cancel_of_an_exchange_without_request() -> None:
    ex, _ = post(make_server(), b"{", call()[1])
    assert ex.client_closed() is None
    with pytest.raises(m.LocalProtocolError):
        ex.send(m.Result(id=1, result=t.CallToolResult(content=[])))


# -- authorization (edge 111) ------------------------------------------------------------------


def verify(token: str | None, _headers: Any) -> Challenge | None:
    if token is None:
        return Challenge(scope="files:read")
    if token == "expired":
        return Challenge(error="invalid_token", description="expired")
    if token == "reader":
        return Challenge.insufficient_scope("files:write")
    return None


AUTH = ProtectedResource(
    resource="https://mcp.example.com/mcp",
    authorization_servers=["https://auth.example.com"],
    verify=verify,
    scopes_supported=["files:read", "files:write"],
)


def authed(token: str | None) -> tuple[int, dict[str, str], Any]:
    data, hdrs = call()
    if token is not None:
        hdrs.append(("authorization", f"Bearer {token}"))
    server = make_server(auth=AUTH, allowed_hosts=None)
    ex, event = post(server, data, hdrs)
    if isinstance(event, m.Request):
        return 200, {}, None
    return reply_of(ex, event)


def test_edge111_missing_token_is_401_with_resource_metadata_and_scope() -> None:
    status, h, _ = authed(None)
    assert status == 401
    assert h["www-authenticate"] == (
        'Bearer resource_metadata="https://mcp.example.com'
        '/.well-known/oauth-protected-resource/mcp", '
        'scope="files:read"'
    )


def test_edge111_invalid_token_and_insufficient_scope() -> None:
    status, h, _ = authed("expired")
    assert status == 401 and 'error="invalid_token"' in h["www-authenticate"]
    status, h, _ = authed("reader")
    assert status == 403
    assert 'error="insufficient_scope", scope="files:write"' in h["www-authenticate"]
    assert authed("writer")[0] == 200


def test_auth_protected_resource_metadata_document() -> None:
    server = make_server(auth=AUTH)
    for path in (
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ):
        ex, event = post(server, b"", [("host", "localhost")], method="GET", target=path)
        status, h, doc = reply_of(ex, event)
        assert (status, h["content-type"]) == (200, "application/json")
        assert doc == {
            "resource": "https://mcp.example.com/mcp",
            "authorization_servers": ["https://auth.example.com"],
            "bearer_methods_supported": ["header"],
            "scopes_supported": ["files:read", "files:write"],
        }
    ex, event = post(
        server,
        b"",
        [("host", "localhost")],
        method="POST",
        target="/.well-known/oauth-protected-resource",
    )
    assert reply_of(ex, event)[0] == 405


def test_app_can_answer_insufficient_scope_per_operation() -> None:
    server = make_server(
        auth=ProtectedResource(
            resource="https://h/", authorization_servers=[], verify=lambda *_: None
        )
    )
    ex, event = post(server, *call())
    assert isinstance(event, m.Request)
    status, h, _ = reply_of(ex, server.challenge_reply(Challenge.insufficient_scope("admin")))
    assert status == 403 and h["www-authenticate"].startswith(
        'Bearer resource_metadata="https://h/.well-known/oauth-protected-resource"'
    )
    assert ex.done
    with pytest.raises(m.LocalProtocolError):
        ex.send(Reply(status=500))
    with pytest.raises(m.LocalProtocolError):
        HTTPServer().challenge_reply(Challenge())


def test_edge109_an_error_after_the_stream_started_is_the_last_event() -> None:
    data = body("tools/call", CALL, progressToken="tok")
    ex, _ = post(make_server(), data, call()[1])
    progress = t.ProgressNotificationParams(progress_token="tok", progress=1)
    parts_of(ex, m.Notification(method="notifications/progress", params=progress, request_id=1))
    error = m.ErrorResponse(
        id=1, error=m.missing_required_client_capability(t.ClientCapabilities())
    )
    status, _, frame, ended = parts_of(ex, error)
    assert status == 0 and ended  # no new status: the stream is already 200
    assert frame.startswith(b'data: {"jsonrpc":"2.0","id":1,"error":{"code":-32021')


def test_edge110_immediate_listen_result_is_plain_json() -> None:
    data = body("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    ex, event = post(make_server(), data, headers("subscriptions/listen"))
    assert isinstance(event, m.Request)
    status, h, raw, ended = parts_of(ex, m.Result(id=1, result=t.SubscriptionsListenResult()))
    assert (status, h["content-type"], ended) == (200, "application/json", True)
    assert orjson.loads(raw)["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 1


def test_server_ends_a_listen_with_cancelled_and_the_stream_ends() -> None:
    flt = {"notifications": {"toolsListChanged": True}}
    ex, _event = post(
        make_server(), body("subscriptions/listen", flt), headers("subscriptions/listen")
    )
    cancel = t.CancelledNotificationParams(request_id=1, reason="shutting down")
    status, h, frame, ended = parts_of(
        ex, m.Notification(method="notifications/cancelled", params=cancel)
    )
    assert (status, h["content-type"], ended) == (200, "text/event-stream", True)
    assert b"notifications/cancelled" in frame and ex.done


def test_metadata_extra_fields_and_root_resource() -> None:
    auth = ProtectedResource(
        resource="https://h",
        authorization_servers=["https://a"],
        verify=lambda *_: None,
        metadata={"resource_name": "Demo"},
    )
    assert auth.metadata_paths == ("/.well-known/oauth-protected-resource",)
    assert auth.metadata_document()["resource_name"] == "Demo"
    assert "scopes_supported" not in auth.metadata_document()


def test_edge111_token_in_the_query_string_is_refused() -> None:
    data, hdrs = call()
    server = make_server(auth=AUTH)
    ex, event = post(
        server, data, [*hdrs, ("authorization", "Bearer writer")], target="/mcp?access_token=x"
    )
    status, h, _ = reply_of(ex, event)
    assert status == 400 and 'error="invalid_request"' in h["www-authenticate"]


def test_keepalive_only_while_a_request_runs() -> None:
    ex, event = post(make_server(), b"{", call()[1])
    assert isinstance(event, Reply) and ex.keepalive() == []
    ex, event = post(make_server(), *call())
    parts_of(ex, m.Result(id=event.id, result=t.CallToolResult(content=[])))
    assert ex.keepalive() == []


def test_remembered_head_verdicts_are_per_head_and_bounded() -> None:
    """The header checks' verdicts are remembered per distinct head (no auth), never
    mixed up between heads, and at most a bounded number of them."""
    server = make_server(max_body_size=100)
    _data, hdrs = call()
    hosts = [("host", "evil.example"), ("host", "localhost:8000")]
    for _ in range(2):  # the second round is answered from memory
        bad = server.exchange("POST", "/mcp", [*replace(hdrs, "host", hosts[0][1])])
        assert reply_of(bad, bad.next_event())[0] == 403
        good = server.exchange("POST", "/mcp", [*replace(hdrs, "host", hosts[1][1])])
        assert good.wants_body  # not refused
        big = server.exchange("POST", "/mcp", [*hdrs, ("content-length", "101")])
        assert reply_of(big, big.next_event())[0] == 413  # the length is never remembered
    for n in range(1000):  # a client varying its heads gets no memory of its own
        server.exchange("POST", f"/other{n}", hdrs)
    assert len(server._verdicts) <= 256
