"""Server and client connections wired back to back in memory (issue 3 flows).

Test names cite the requirement IDs of ``notes/spec-base.md`` (see ``docs/requirements.md``).
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import mcp_proto as m
from mcp_proto import types as t

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
CAPS = t.ServerCapabilities(
    tools=t.ServerCapabilitiesTools(list_changed=True),
    resources=t.ServerCapabilitiesResources(subscribe=True, list_changed=True),
    logging={},
)


def server(**kw: Any) -> m.ServerConnection:
    return m.ServerConnection(capabilities=kw.pop("capabilities", CAPS), **kw)


def events(conn: Any) -> list[Any]:
    """The events ``conn`` has ready; ``ConnectionClosed`` or ``PAUSED`` ends the list."""
    out = []
    while True:
        ev = conn.next_event()
        if ev is m.NEED_DATA or ev is m.PAUSED or isinstance(ev, m.ConnectionClosed):
            if ev is not m.NEED_DATA:
                out.append(ev)
            return out
        out.append(ev)


def line(obj: Any) -> bytes:
    return orjson.dumps(obj) + b"\n"


def req(id: Any, method: str, params: dict[str, Any] | None = None, meta: Any = None) -> bytes:
    p = dict(params or {})
    p["_meta"] = META if meta is None else meta
    return line({"jsonrpc": "2.0", "id": id, "method": method, "params": p})


def feed(conn: Any, *chunks: bytes) -> list[Any]:
    for c in chunks:
        if c:  # b"" would mean end of input
            conn.receive_data(c)
    return events(conn)


def reply(ev: Any) -> dict[str, Any]:
    assert isinstance(ev, m.InvalidMessage) and ev.reply is not None
    return orjson.loads(m.ServerConnection().send(ev))  # type: ignore[no-any-return]


class Pair:
    """A client and a server, each side's output fed to the other."""

    def __init__(self, **server_kw: Any) -> None:
        self.client = m.ClientConnection(
            capabilities=t.ClientCapabilities(elicitation=t.ClientCapabilitiesElicitation())
        )
        self.server = server(**server_kw)

    def to_server(self, event: Any) -> list[Any]:
        return feed(self.server, self.client.send(event))

    def to_client(self, event: Any) -> list[Any]:
        return feed(self.client, self.server.send(event))


def call(pair: Pair, name: str = "echo", **meta: Any) -> m.Request:
    params = t.CallToolRequestParams(name=name, meta=pair.client.meta(**meta) if meta else None)
    return m.Request(id=pair.client.next_id(), method="tools/call", params=params)


# -- the happy path --------------------------------------------------------


def test_pat02_tools_call_round_trip() -> None:
    pair = Pair()
    request = call(pair)
    (got,) = pair.to_server(request)
    assert isinstance(got, m.Request) and isinstance(got.params, t.CallToolRequestParams)
    assert got.meta is not None and got.meta.protocol_version == "2026-07-28"
    assert got.meta.client_info == m.DEFAULT_CLIENT_INFO  # META-07: stamped by the client
    result = t.CallToolResult(content=[t.TextContent(text="hi")])
    (done,) = pair.to_client(m.Result(id=got.id, result=result))
    assert isinstance(done, m.Result) and isinstance(done.result, t.CallToolResult)
    assert done.result.content == result.content
    assert done.result.meta is not None
    assert done.result.meta.server_info == m.DEFAULT_SERVER_INFO  # META-11
    assert pair.server.in_flight() == () and pair.client.in_flight() == ()


def test_meta11_server_info_stamp_can_be_disabled() -> None:
    pair = Pair(stamp_server_info=False)
    (got,) = pair.to_server(call(pair))
    data = pair.server.send(m.Result(id=got.id, result=t.CallToolResult(content=[])))
    assert b"serverInfo" not in data and b'"resultType":"complete"' in data


def test_message_level_twin_round_trip() -> None:
    client, srv = m.ClientConnection(), server()
    (msg,) = client.send_message(
        m.Request(id=7, method="tools/list", params=t.PaginatedRequestParams())
    )
    srv.receive_message(msg)
    (got,) = events(srv)
    assert got.method == "tools/list"
    out = srv.send_message(
        m.Result(id=7, result=t.ListToolsResult(tools=[], ttl_ms=0, cache_scope="public"))
    )
    client.receive_message(orjson.dumps(out[0]))
    (done,) = events(client)
    assert isinstance(done.result, t.ListToolsResult)


# -- server: validation before the application (META-08, VER-02, ERR-07) -----


@pytest.mark.parametrize(
    ("data", "code", "id"),
    [
        (b"not json\n", -32700, None),
        (b"[1]\n", -32600, None),
        (line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}), -32602, 1),
        (req(2, "tools/list", meta={"io.modelcontextprotocol/clientCapabilities": {}}), -32602, 2),
        (
            req(3, "tools/list", meta={**META, "io.modelcontextprotocol/protocolVersion": "1"}),
            -32022,
            3,
        ),
        (req(4, "ping"), -32601, 4),
        (req(5, "logging/setLevel"), -32601, 5),
        (req(6, "resources/subscribe"), -32601, 6),
        (req(7, "no/such/method"), -32601, 7),
        (req(8, "prompts/list"), -32601, 8),  # ERR-07: prompts not offered
        (
            req(9, "tools/list", meta={**META, "io.modelcontextprotocol/logLevel": "loud"}),
            -32602,
            9,
        ),
    ],
)
def test_meta08_ver02_err07_refusals(data: bytes, code: int, id: Any) -> None:
    srv = server()
    (ev,) = feed(srv, data)
    assert isinstance(ev, m.InvalidMessage)
    body = reply(ev)
    assert body["error"]["code"] == code
    assert body.get("id") == id
    assert srv.in_flight() == ()


def test_ver02_unsupported_version_data() -> None:
    srv = server(supported_versions=("2026-07-28",))
    bad = {**META, "io.modelcontextprotocol/protocolVersion": "2025-11-25"}
    (ev,) = feed(srv, req(1, "tools/list", meta=bad))
    assert reply(ev)["error"]["data"] == {"supported": ["2026-07-28"], "requested": "2025-11-25"}


def test_ver16_initialize_names_supported_versions() -> None:
    (ev,) = feed(server(), line({"jsonrpc": "2.0", "id": 0, "method": "initialize"}))
    assert reply(ev)["error"] == {
        "code": -32601,
        "message": (
            "Method not found: initialize (this server speaks only per-request "
            "protocol versions: 2026-07-28)"
        ),
        "data": {"supported": ["2026-07-28"]},
    }


def test_base18_notifications_and_responses_are_never_answered() -> None:
    srv = server()
    evs = feed(
        srv,
        line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}),
        line({"jsonrpc": "2.0", "id": 1, "result": {}}),
        line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    assert all(isinstance(e, m.InvalidMessage) and e.reply is None for e in evs)
    assert len(evs) == 2  # the unknown notification is dropped silently
    assert srv.statistics().dropped_messages == 1


def test_base06_duplicate_in_flight_id_refused_original_kept() -> None:
    srv = server()
    first, dup = feed(srv, req(1, "tools/list"), req(1, "tools/list"))
    assert isinstance(first, m.Request)
    assert reply(dup)["error"]["code"] == -32600 and reply(dup)["id"] == 1
    assert srv.in_flight() == (1,)
    srv.send(m.Result(id=1, result=t.ListToolsResult(tools=[], ttl_ms=5, cache_scope="private")))
    (again,) = feed(srv, req(1, "tools/list"))  # the id is free again once answered
    assert isinstance(again, m.Request)


def test_ids_keep_their_type() -> None:
    srv = server()
    a, b = feed(srv, req(1, "tools/list"), req("1", "tools/list"))
    assert isinstance(a, m.Request) and isinstance(b, m.Request)
    data = srv.send(m.ErrorResponse(id="1", error=t.Error(code=-32603, message="x")))
    assert orjson.loads(data)["id"] == "1"


def test_in_flight_and_subscription_limits() -> None:
    srv = server(max_in_flight=1, max_subscriptions=1)
    listen = {"notifications": {}}
    evs = feed(
        srv,
        req(3, "subscriptions/listen", listen),
        req(4, "subscriptions/listen", listen),
        req(1, "tools/list"),
        req(2, "tools/list"),
    )
    kinds = [e if e is m.PAUSED else type(e).__name__ for e in evs]
    assert kinds == ["Request", "InvalidMessage", "Request", m.PAUSED]  # a listen is refused,
    assert reply(evs[1])["error"]["code"] == -32603  # a call is held (test_limits)
    assert srv.statistics().in_flight == 1 and srv.statistics().subscriptions == 1


# -- server: send rules -----------------------------------------------------


def test_base09_result_only_for_in_flight_request() -> None:
    srv = server()
    with pytest.raises(m.LocalProtocolError, match="not in flight"):
        srv.send(m.Result(id=9, result=t.CallToolResult(content=[])))


def test_result_class_must_fit_the_method() -> None:
    srv = server()
    feed(srv, req(1, "tools/call", {"name": "x"}))
    with pytest.raises(m.LocalProtocolError, match="CallToolResult"):
        srv.send(m.Result(id=1, result=t.ListToolsResult(tools=[])))
    assert srv.in_flight() == (1,)  # refused sends change nothing


def test_cache01_cacheable_results_need_hints() -> None:
    srv = server()
    feed(srv, req(1, "tools/list"))
    with pytest.raises(m.LocalProtocolError, match="CACHE-01"):
        srv.send(m.Result(id=1, result=t.ListToolsResult(tools=[])))
    with pytest.raises(m.LocalProtocolError, match="CACHE-01"):
        srv.send(
            m.Result(id=1, result=t.ListToolsResult(tools=[], ttl_ms=-1, cache_scope="public"))
        )


def test_discover_answered_from_configuration() -> None:
    srv = server(instructions="be nice", cache_hints=(60000, "public"))
    (ev,) = feed(srv, req(1, "server/discover"))
    out = orjson.loads(srv.send(m.Result(id=ev.id, result=srv.discover_result())))
    assert out["result"]["supportedVersions"] == ["2026-07-28"]
    assert out["result"]["instructions"] == "be nice"
    assert out["result"]["ttlMs"] == 60000 and out["result"]["cacheScope"] == "public"


def test_cache_hints_scope_is_private_or_public() -> None:
    """A scope the schema does not allow is refused when the server is configured, not
    sent in every ``server/discover`` answer."""
    with pytest.raises(ValueError, match="cache scope must be 'private' or 'public'"):
        server(cache_hints=(0, "shared"))  # type: ignore[arg-type]


def test_err03_reserved_error_codes_refused() -> None:
    srv = server()
    feed(srv, req(1, "tools/list"))
    for code in (-32002, -32042, -32000):
        with pytest.raises(m.LocalProtocolError, match="ERR-03"):
            srv.send(m.ErrorResponse(id=1, error=t.Error(code=code, message="no")))


def test_mrtr03_09_10_input_required_rules() -> None:
    srv = server()
    caps = {"elicitation": {}}
    feed(
        srv,
        req(1, "tools/list"),
        req(2, "tools/call", {"name": "x"}),
        req(
            3,
            "tools/call",
            {"name": "x"},
            meta={**META, "io.modelcontextprotocol/clientCapabilities": caps},
        ),
    )
    elicit = t.ElicitRequest(
        params=t.ElicitRequestFormParams(message="name?", requested_schema={"type": "object"})
    )
    url = t.ElicitRequest(
        params=t.ElicitRequestURLParams(message="go", url="https://x", mode="url")
    )
    with pytest.raises(m.LocalProtocolError, match="MRTR-03"):
        srv.send(m.Result(id=1, result=t.InputRequiredResult(request_state="s")))
    with pytest.raises(m.LocalProtocolError, match="MRTR-09"):
        srv.send(m.Result(id=2, result=t.InputRequiredResult()))
    with pytest.raises(m.LocalProtocolError, match="MRTR-10"):
        srv.send(m.Result(id=2, result=t.InputRequiredResult(input_requests={"a": elicit})))
    with pytest.raises(m.LocalProtocolError, match="MRTR-10"):
        srv.send(m.Result(id=3, result=t.InputRequiredResult(input_requests={"a": url})))
    data = srv.send(m.Result(id=3, result=t.InputRequiredResult(input_requests={"a": elicit})))
    assert orjson.loads(data)["result"]["resultType"] == "input_required"


def test_prog05_06_progress_rules() -> None:
    pair = Pair()
    (got,) = pair.to_server(call(pair, progress_token="tok"))
    note = lambda p: m.Notification(  # noqa: E731
        method="notifications/progress",
        params=t.ProgressNotificationParams(progress_token="tok", progress=p),
    )
    (ev,) = pair.to_client(note(1))
    assert ev.request_id == got.id
    with pytest.raises(m.LocalProtocolError, match="PROG-05"):
        pair.server.send(note(1))
    with pytest.raises(m.LocalProtocolError, match="PROG-06"):
        pair.server.send(
            m.Notification(
                method="notifications/progress",
                params=t.ProgressNotificationParams(progress_token="other", progress=2),
            )
        )
    pair.server.send(note(2.5))
    pair.server.send(m.Result(id=got.id, result=t.CallToolResult(content=[])))
    with pytest.raises(m.LocalProtocolError, match="PROG-06"):
        pair.server.send(note(3))  # PROG-08: progress stops after completion


def test_log03_04_log_rules() -> None:
    srv = server()
    feed(
        srv,
        req(1, "tools/list"),
        req(2, "tools/list", meta={**META, "io.modelcontextprotocol/logLevel": "warning"}),
    )

    def log(level: str, id: Any) -> m.Notification:
        params = t.LoggingMessageNotificationParams(level=level, data="d")  # type: ignore[arg-type]
        return m.Notification(method="notifications/message", params=params, request_id=id)

    with pytest.raises(m.LocalProtocolError, match="LOG-03"):
        srv.send(log("error", 1))
    with pytest.raises(m.LocalProtocolError, match="LOG-04"):
        srv.send(log("info", 2))
    with pytest.raises(m.LocalProtocolError, match="LOG-05"):
        srv.send(log("error", None))
    assert b'"level":"error"' in srv.send(log("error", 2))


# -- cancellation (STDIO-13, CANCEL-xx) --------------------------------------


def test_stdio13_nothing_is_sent_for_a_cancelled_request() -> None:
    pair = Pair()
    (got,) = pair.to_server(call(pair, progress_token=5))
    (ev,) = feed(pair.server, pair.client.cancel(got.id, "user"))
    assert ev == m.Cancelled(id=got.id, reason="user")
    progress = t.ProgressNotificationParams(progress_token=5, progress=1)
    assert pair.server.send(m.Result(id=got.id, result=t.CallToolResult(content=[]))) == b""
    assert (
        pair.server.send(
            m.Notification(method="notifications/progress", params=progress, request_id=got.id)
        )
        == b""
    )
    assert pair.server.statistics().dropped_sends == 2


def test_cancel11_late_response_dropped_by_client() -> None:
    pair = Pair()
    (got,) = pair.to_server(call(pair))
    pair.client.cancel(got.id)
    late = line({"jsonrpc": "2.0", "id": got.id, "result": {"content": []}})
    assert feed(pair.client, late) == []
    assert pair.client.statistics().dropped_messages == 1


def test_cancel08_client_cannot_cancel_unknown_request() -> None:
    with pytest.raises(m.LocalProtocolError, match="CANCEL-08"):
        m.ClientConnection().cancel(42)


def test_cancel14_unknown_cancel_ignored_by_server() -> None:
    srv = server()
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}
    assert feed(srv, line(cancel)) == []


# -- MRTR on the client (MRTR-09..16) -----------------------------------------


def test_mrtr_retry_round_trip() -> None:
    pair = Pair()
    first = call(pair)
    (got,) = pair.to_server(first)
    elicit = t.ElicitRequest(
        params=t.ElicitRequestFormParams(message="name?", requested_schema={"type": "object"})
    )
    ir = t.InputRequiredResult(input_requests={"who": elicit}, request_state="opaque\u00e9==")
    (ev,) = pair.to_client(m.Result(id=got.id, result=ir))
    assert isinstance(ev, m.InputRequired) and ev.round == 1
    with pytest.raises(ValueError, match="MRTR-14"):
        ev.retry(id=first.id, input_responses={"who": t.ElicitResult(action="cancel")})
    with pytest.raises(ValueError, match="MRTR-16"):
        ev.retry(id=99)
    retry = ev.retry(
        id=pair.client.next_id(), input_responses={"who": t.ElicitResult(action="decline")}
    )
    (again,) = pair.to_server(retry)
    assert again.id != first.id
    assert again.params.request_state == "opaque\u00e9=="  # MRTR-13: echoed exactly
    assert again.params.input_responses["who"].action == "decline"
    assert again.params.name == "echo"


def test_mrtr13_no_state_no_echo() -> None:
    pair = Pair()
    (got,) = pair.to_server(call(pair))
    elicit = t.ElicitRequest(
        params=t.ElicitRequestFormParams(message="?", requested_schema={"type": "object"})
    )
    (ev,) = pair.to_client(
        m.Result(id=got.id, result=t.InputRequiredResult(input_requests={"k": elicit}))
    )
    data = pair.client.send(
        ev.retry(id=pair.client.next_id(), input_responses={"k": t.ElicitResult(action="cancel")})
    )
    assert b"requestState" not in data


def test_client_round_cap() -> None:
    pair = Pair()
    pair.client.max_rounds = 1
    (got,) = pair.to_server(call(pair))
    state = t.InputRequiredResult(request_state="s")
    (ev,) = pair.to_client(m.Result(id=got.id, result=state))
    (got2,) = pair.to_server(ev.retry(id=pair.client.next_id()))
    (ev2,) = pair.to_client(m.Result(id=got2.id, result=state))
    assert isinstance(ev2, m.InvalidResponse) and "rounds" in ev2.error.message


@pytest.mark.parametrize(
    ("result", "fragment"),
    [
        ({"resultType": "task"}, "unknown resultType"),
        ({"resultType": "input_required"}, "MRTR-09"),
        (
            {"resultType": "input_required", "inputRequests": {"r": {"method": "roots/list"}}},
            "MRTR-10",
        ),
    ],
)
def test_base14_mrtr_client_rejects_bad_results(result: Any, fragment: str) -> None:
    client = m.ClientConnection()
    client.send(m.Request(id=1, method="tools/call", params=t.CallToolRequestParams(name="x")))
    (ev,) = feed(client, line({"jsonrpc": "2.0", "id": 1, "result": result}))
    assert isinstance(ev, m.InvalidResponse) and fragment in ev.error.message
    assert client.in_flight() == ()


def test_mrtr03_client_rejects_input_required_on_list() -> None:
    client = m.ClientConnection()
    client.send(m.Request(id=1, method="tools/list", params=t.PaginatedRequestParams()))
    (ev,) = feed(
        client,
        line(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {"resultType": "input_required", "requestState": "x"},
            }
        ),
    )
    assert isinstance(ev, m.InvalidResponse) and "MRTR-03" in ev.error.message


def test_base15_missing_result_type_is_complete() -> None:
    client = m.ClientConnection()
    client.send(m.Request(id=1, method="tools/call", params=t.CallToolRequestParams(name="x")))
    (ev,) = feed(client, line({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}))
    assert isinstance(ev, m.Result) and ev.result.result_type == "complete"


def test_err04_legacy_resource_not_found() -> None:
    client = m.ClientConnection()
    client.send(
        m.Request(id=1, method="resources/read", params=t.ReadResourceRequestParams(uri="x:/"))
    )
    (ev,) = feed(
        client, line({"jsonrpc": "2.0", "id": 1, "error": {"code": -32002, "message": "nf"}})
    )
    assert isinstance(ev, m.ErrorResponse) and ev.is_resource_not_found()


def test_ver02_client_version_not_supported_event() -> None:
    pair = Pair()
    pair.client.protocol_version = "2099-01-01"
    probe = pair.client.discover_request()
    (ev,) = pair.to_server(probe)
    (vn,) = feed(pair.client, pair.server.send(ev))
    assert isinstance(vn, m.VersionNotSupported)
    assert vn.supported == ("2026-07-28",) and vn.requested == "2099-01-01"
    assert vn.choose(["2026-07-28", "2099-01-01"]) == "2026-07-28"
    pair.client.protocol_version = vn.choose(["2026-07-28"]) or ""
    (ok,) = pair.to_server(pair.client.discover_request())
    (res,) = pair.to_client(m.Result(id=ok.id, result=pair.server.discover_result()))
    assert isinstance(res.result, t.DiscoverResult)
    assert pair.client.server_capabilities == CAPS


# -- subscriptions (SUB-xx) ---------------------------------------------------


def listen(pair: Pair, **flt: Any) -> m.Request:
    params = t.SubscriptionsListenRequestParams(notifications=t.SubscriptionFilter(**flt))
    return m.Request(id=pair.client.next_id(), method="subscriptions/listen", params=params)


def ack(id: Any, **flt: Any) -> m.Notification:
    params = t.SubscriptionsAcknowledgedNotificationParams(
        notifications=t.SubscriptionFilter(**flt)
    )
    return m.Notification(
        method="notifications/subscriptions/acknowledged", params=params, request_id=id
    )


TOOLS_CHANGED = m.Notification(
    method="notifications/tools/list_changed", params=t.NotificationParams()
)


def updated(uri: str) -> m.Notification:
    return m.Notification(
        method="notifications/resources/updated",
        params=t.ResourceUpdatedNotificationParams(uri=uri),
    )


def test_sub04_08_listen_flow_with_fan_out() -> None:
    pair = Pair()
    (a,) = pair.to_server(
        listen(pair, tools_list_changed=True, resource_subscriptions=["file:///a"])
    )
    (b,) = pair.to_server(listen(pair, tools_list_changed=True))
    with pytest.raises(m.LocalProtocolError, match="SUB-04"):
        pair.server.send(
            m.Notification(
                method=TOOLS_CHANGED.method, params=TOOLS_CHANGED.params, request_id=a.id
            )
        )
    assert pair.server.send(TOOLS_CHANGED) == b""  # nobody acknowledged yet
    with pytest.raises(m.LocalProtocolError, match="SUB-06"):
        pair.server.send(ack(a.id, prompts_list_changed=True))
    (ack_a,) = pair.to_client(
        ack(a.id, tools_list_changed=True, resource_subscriptions=["file:///a"])
    )
    assert ack_a == m.SubscriptionAcknowledged(
        id=a.id,
        notifications=t.SubscriptionFilter(
            tools_list_changed=True, resource_subscriptions=["file:///a"]
        ),
    )
    with pytest.raises(m.LocalProtocolError, match="SUB-04"):
        pair.server.send(ack(a.id))
    pair.to_client(ack(b.id, tools_list_changed=True))
    fan = pair.to_client(TOOLS_CHANGED)
    assert [(e.method, e.request_id) for e in fan] == [
        ("notifications/tools/list_changed", a.id),
        ("notifications/tools/list_changed", b.id),
    ]
    assert [e.request_id for e in pair.to_client(updated("file:///a/b"))] == [a.id]  # SUB-16
    assert pair.to_client(updated("file:///ab")) == []
    with pytest.raises(m.LocalProtocolError, match="SUB-02"):
        pair.server.send(
            m.Notification(
                method="notifications/prompts/list_changed",
                params=t.NotificationParams(),
                request_id=a.id,
            )
        )
    (end,) = pair.to_client(m.Result(id=a.id, result=t.SubscriptionsListenResult()))
    assert isinstance(end, m.SubscriptionEnded) and end.graceful and end.id == a.id
    assert end.result is not None and end.result.meta is not None
    assert end.result.meta.subscription_id == a.id  # SUB-12
    (gone,) = pair.to_client(
        m.Notification(
            method="notifications/cancelled", params=t.CancelledNotificationParams(request_id=b.id)
        )
    )
    assert gone == m.SubscriptionEnded(id=b.id, graceful=True)  # CANCEL-02
    assert pair.server.statistics().subscriptions == 0 == pair.client.statistics().subscriptions


def test_cancel03_server_cancels_only_listens() -> None:
    pair = Pair()
    (got,) = pair.to_server(call(pair))
    with pytest.raises(m.LocalProtocolError, match="CANCEL-03"):
        pair.server.send(
            m.Notification(
                method="notifications/cancelled",
                params=t.CancelledNotificationParams(request_id=got.id),
            )
        )


def test_sub_client_drops_unsolicited_stream_notifications() -> None:
    client = m.ClientConnection()
    client.send(
        m.Request(
            id=1,
            method="subscriptions/listen",
            params=t.SubscriptionsListenRequestParams(
                notifications=t.SubscriptionFilter(tools_list_changed=True)
            ),
        )
    )
    meta = {"_meta": {"io.modelcontextprotocol/subscriptionId": 1}}
    early = line({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": meta})
    (ev,) = feed(client, early)
    assert isinstance(ev, m.InvalidMessage) and "SUB-04" in ev.error.message
    stray = line(
        {
            "jsonrpc": "2.0",
            "method": "notifications/tools/list_changed",
            "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 9}},
        }
    )
    (ev,) = feed(client, stray)
    assert "SUB-09" in ev.error.message


def test_sub13_abrupt_loss_is_reported_on_close() -> None:
    pair = Pair()
    pair.to_server(listen(pair, tools_list_changed=True))
    pair.to_server(call(pair))
    pair.client.receive_data(b"")
    closed = pair.client.next_event()
    assert closed == m.ConnectionClosed(in_flight=(2,), subscriptions=(1,))
    assert pair.client.next_event() == closed


# -- framing ------------------------------------------------------------------


def test_framing_crlf_blank_lines_and_chunking() -> None:
    data = (
        b"\r\n\n" + req(1, "tools/list").replace(b"\n", b"\r\n") + b"   \n" + req(2, "tools/list")
    )
    one = [e.id for e in feed(server(), data)]
    srv = server()
    for i in range(len(data)):
        srv.receive_data(data[i : i + 1])
    assert one == [e.id for e in events(srv)] == [1, 2]


def test_framing_over_long_line_is_fatal() -> None:
    srv = server(max_message_size=64)
    srv.receive_data(b"x" * 100)
    with pytest.raises(m.RemoteProtocolError, match="limit"):
        srv.next_event()
    with pytest.raises(m.RemoteProtocolError):
        srv.next_event()


def test_framing_limit_applies_to_complete_lines() -> None:
    srv = server(max_message_size=len(req(1, "tools/list")) - 1)
    assert isinstance(feed(srv, req(1, "tools/list")[:-1] + b"\r\n")[0], m.Request)
    srv = server(max_message_size=10)
    srv.receive_data(req(1, "tools/list"))
    with pytest.raises(m.RemoteProtocolError):
        srv.next_event()


def test_framing_eof_mid_line_is_fatal_and_data_after_eof_refused() -> None:
    srv = server()
    srv.receive_data(b'{"jsonrpc"')
    srv.receive_data(b"")
    with pytest.raises(m.RemoteProtocolError, match="middle"):
        srv.next_event()
    with pytest.raises(RuntimeError):
        srv.receive_data(b"x")
    clean = server()
    clean.receive_data(b"")
    assert clean.next_event() == m.ConnectionClosed()
    with pytest.raises(RuntimeError):
        clean.receive_message(b"{}")


def test_framing_byte_at_a_time_is_linear() -> None:
    """A 2 MiB message fed one byte at a time: each byte is scanned once."""
    big = req(1, "tools/call", {"name": "x", "arguments": {"s": "a" * (2 * 1024 * 1024)}})
    srv = server()
    view = memoryview(big)
    for i in range(len(big)):
        srv.receive_data(view[i : i + 1].tobytes())
        if i % 4096 == 0:
            assert srv.next_event() is m.NEED_DATA
    (ev,) = events(srv)
    assert isinstance(ev, m.Request)


def test_send_never_contains_a_raw_newline() -> None:
    pair = Pair()
    (got,) = pair.to_server(call(pair))
    data = pair.server.send(
        m.Result(id=got.id, result=t.CallToolResult(content=[t.TextContent(text="a\nb")]))
    )
    assert data.count(b"\n") == 1 and data.endswith(b"\n")


def test_capability_helper_err09() -> None:
    pair = Pair()
    (got,) = pair.to_server(call(pair))
    assert m.require_client_capabilities(got.meta, {"elicitation": {}}) is None
    err = m.require_client_capabilities(got.meta, {"sampling": {}, "elicitation": {}})
    assert err is not None and err.code == -32021
    assert err.data == {"requiredCapabilities": {"sampling": {}}}


def test_messages_fed_whole_come_out_in_order_and_their_queue_is_given_back() -> None:
    """``receive_message`` twice, then two events in that order; the queue, freed once
    empty (an idle legacy HTTP session keeps none: bench/memory.py), is made again."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"}}  # fmt: skip
    server = m.ServerConnection()
    for id in (1, 2):
        server.receive_message(
            {"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {"_meta": meta}}
        )
    ids = [server.next_event().reply.id, server.next_event().reply.id]  # type: ignore[union-attr]
    assert ids == [1, 2]  # (refused in order: this server has no tools)
    assert server.next_event() is m.NEED_DATA
    server.receive_message({"jsonrpc": "2.0", "id": 3, "method": "tools/list",
                            "params": {"_meta": meta}})  # fmt: skip
    assert server.next_event().reply.id == 3  # type: ignore[union-attr]
