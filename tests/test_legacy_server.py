"""The dual-era server connection: one ``initialize``-era session beside modern requests.

Test names cite the requirement IDs of ``notes/spec-base.md`` (LEG-xx, VER-xx; see
``docs/requirements.md``).  Everything runs over the byte interface (``receive_data``
and ``send``), as a stdio server would.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import mcp_proto as m
from mcp_proto import types as t

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
CAPS = t.ServerCapabilities(
    tools=t.ServerCapabilitiesTools(list_changed=True),
    prompts=t.ServerCapabilitiesPrompts(),
    resources=t.ServerCapabilitiesResources(subscribe=True, list_changed=True),
    logging={},
)
CLIENT_CAPS = {"sampling": {}, "elicitation": {}, "roots": {"listChanged": True}}
ELICIT = t.ElicitRequest(
    method="elicitation/create",
    params=t.ElicitRequestFormParams(
        message="name?", requested_schema={"type": "object", "properties": {}}
    ),
)
SAMPLE = t.CreateMessageRequest(
    method="sampling/createMessage",
    params=t.CreateMessageRequestParams(
        messages=[t.SamplingMessage(role="user", content=t.TextContent(type="text", text="hi"))],
        max_tokens=10,
    ),
)


def server(**kw: Any) -> m.ServerConnection:
    kw.setdefault("capabilities", CAPS)
    kw.setdefault("legacy_versions", m.LEGACY_VERSIONS)
    return m.ServerConnection(**kw)


def line(obj: Any) -> bytes:
    return orjson.dumps(obj) + b"\n"


def events(conn: m.ServerConnection, *messages: Any) -> list[Any]:
    for message in messages:
        conn.receive_data(line(message))
    out = []
    while True:
        ev = conn.next_event()
        if ev is m.NEED_DATA:
            return out
        out.append(ev)
        if ev is m.PAUSED or isinstance(ev, m.ConnectionClosed):
            return out


def sent(conn: m.ServerConnection, event: Any) -> list[dict[str, Any]]:
    return [orjson.loads(x) for x in conn.send(event).splitlines()]


def call(id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def modern(id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return call(id, method, {**(params or {}), "_meta": MODERN_META})


def initialize(version: Any = "2025-11-25", caps: Any = None) -> dict[str, Any]:
    return call(
        0,
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": CLIENT_CAPS if caps is None else caps,
            "clientInfo": {"name": "legacy-client", "version": "1.0"},
        },
    )


def opened(**kw: Any) -> m.ServerConnection:
    """A server with an initialized legacy session."""
    version = kw.pop("version", "2025-11-25")
    conn = server(**kw)
    (ev,) = events(conn, initialize(version))
    conn.send(ev)
    assert events(conn, {"jsonrpc": "2.0", "method": "notifications/initialized"}) == []
    return conn


def test_leg01_leg02_initialize_is_answered_with_the_session_facts() -> None:
    conn = server(instructions="be nice")
    (ev,) = events(conn, initialize())
    assert isinstance(ev, m.AnsweredRequest) and ev.method == "initialize"
    assert ev.params.client_info.name == "legacy-client"
    (answer,) = sent(conn, ev)
    assert answer == {
        "jsonrpc": "2.0",
        "id": 0,
        "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {
                "logging": {},
                "prompts": {},
                "resources": {"listChanged": True, "subscribe": True},
                "tools": {"listChanged": True},
            },
            "serverInfo": {"name": "mcp-proto", "version": "0.1.0"},
            "instructions": "be nice",
        },
    }
    assert conn.legacy is not None and conn.legacy.version == "2025-11-25"
    assert conn.legacy.params.client_info.name == "legacy-client"
    assert conn.legacy.params.capabilities.roots is not None


@pytest.mark.parametrize(
    ("requested", "negotiated"),
    [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-11-25"),  # not offered: the newest one instead
        ("2024-11-05", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),  # no initialize semantics: a legacy version
        ("1999-01-01", "2025-11-25"),
    ],
)
def test_leg05_version_negotiation(requested: str, negotiated: str) -> None:
    conn = server()
    (ev,) = events(conn, initialize(requested))
    assert sent(conn, ev)[0]["result"]["protocolVersion"] == negotiated


def test_leg05_only_the_configured_versions_are_negotiated() -> None:
    conn = server(legacy_versions=("2025-06-18",))
    (ev,) = events(conn, initialize("2025-11-25"))
    assert sent(conn, ev)[0]["result"]["protocolVersion"] == "2025-06-18"


def test_versions_the_server_cannot_honour_are_refused_at_configuration() -> None:
    with pytest.raises(ValueError, match="2025-03-26"):
        m.ServerConnection(legacy_versions=("2025-03-26",))
    with pytest.raises(ValueError, match="2024-11-05"):
        m.ServerConnection().fresh(legacy_versions=("2024-11-05",))


@pytest.mark.parametrize("bad", [{"protocolVersion": 5}, {"capabilities": {}}, None])
def test_leg01_a_malformed_initialize_is_invalid_params_and_opens_nothing(bad: Any) -> None:
    conn = server()
    message = call(0, "initialize", bad)
    (ev,) = events(conn, message)
    assert isinstance(ev, m.InvalidMessage) and ev.error.code == -32602
    assert sent(conn, ev)[0]["id"] == 0
    assert conn.legacy is None


def test_leg01_a_second_initialize_is_refused() -> None:
    conn = opened()
    (ev,) = events(conn, {**initialize(), "id": 9})
    assert isinstance(ev, m.InvalidMessage) and ev.error.code == -32600
    assert sent(conn, ev)[0]["id"] == 9
    assert conn.legacy is not None and conn.legacy.version == "2025-11-25"


def test_leg22_ver16_modern_only_refuses_initialize_naming_the_versions() -> None:
    conn = m.ServerConnection(capabilities=CAPS)
    (ev,) = events(conn, initialize())
    (answer,) = sent(conn, ev)
    assert answer["error"]["code"] == -32601
    assert "2026-07-28" in answer["error"]["message"]
    assert answer["error"]["data"] == {"supported": ["2026-07-28"]}


def test_leg04_ping_is_answered_before_initialize_and_after() -> None:
    conn = server()
    (ev,) = events(conn, call(1, "ping"))
    assert isinstance(ev, m.AnsweredRequest)
    assert sent(conn, ev) == [{"jsonrpc": "2.0", "id": 1, "result": {}}]
    conn = opened()
    (ev,) = events(conn, call(2, "ping", {}))
    assert sent(conn, ev) == [{"jsonrpc": "2.0", "id": 2, "result": {}}]


def test_leg02_results_carry_no_result_type_cache_fields_or_server_info_stamp() -> None:
    conn = opened()
    (req,) = events(conn, call(1, "tools/list"))
    assert isinstance(req, m.Request) and req.method == "tools/list"
    result = t.ListToolsResult(tools=[], ttl_ms=5000, cache_scope="private")
    assert sent(conn, m.Result(id=1, result=result)) == [
        {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}
    ]


def test_ver17_a_legacy_request_reaches_the_application_as_a_modern_one() -> None:
    """The session's facts are the request's ``_meta``: the same events in both eras."""
    conn = opened()
    (req,) = events(conn, call(1, "tools/call", {"name": "echo", "_meta": {"progressToken": 7}}))
    meta = req.params.meta
    assert meta.protocol_version == "2025-11-25"
    assert meta.client_info.name == "legacy-client"
    assert meta.client_capabilities.sampling is not None
    assert meta.progress_token == 7
    assert meta.log_level == "debug"  # no setLevel yet: every level may be sent


def test_leg07_a_request_for_a_capability_not_offered_is_method_not_found() -> None:
    conn = opened(capabilities=t.ServerCapabilities(tools=t.ServerCapabilitiesTools()))
    for id, method, params in [
        (1, "prompts/list", None),
        (2, "logging/setLevel", {"level": "info"}),
        (3, "resources/subscribe", {"uri": "test://a"}),
    ]:
        (ev,) = events(conn, call(id, method, params))
        assert isinstance(ev, m.InvalidMessage), method
        assert sent(conn, ev)[0]["error"]["code"] == -32601


def test_removed_modern_only_and_task_methods_are_not_served_in_a_session() -> None:
    conn = opened()
    for id, method in enumerate(["tasks/list", "subscriptions/listen"], 1):
        (ev,) = events(conn, call(id, method, {}))
        assert sent(conn, ev)[0]["error"]["code"] == -32601


def test_set_level_filters_session_log_messages_and_answers_empty() -> None:
    conn = opened()
    info = t.LoggingMessageNotificationParams(level="info", data="i")
    error = t.LoggingMessageNotificationParams(level="error", data="e")
    note = m.Notification(method="notifications/message", params=info)
    assert len(sent(conn, note)) == 1  # before setLevel, every level
    (ev,) = events(conn, call(1, "logging/setLevel", {"level": "warning"}))
    assert isinstance(ev, m.AnsweredRequest) and ev.params.level == "warning"
    assert sent(conn, ev) == [{"jsonrpc": "2.0", "id": 1, "result": {}}]
    assert sent(conn, note) == []
    (out,) = sent(conn, m.Notification(method="notifications/message", params=error))
    assert out == {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"data": "e", "level": "error"},
    }
    (req,) = events(conn, call(2, "tools/call", {"name": "x"}))
    assert req.params.meta.log_level == "warning"  # request-scoped logs follow it too


def test_set_level_refuses_an_unknown_level() -> None:
    conn = opened()
    (ev,) = events(conn, call(1, "logging/setLevel", {"level": "loud"}))
    assert isinstance(ev, m.InvalidMessage) and ev.error.code == -32602
    assert conn.legacy is not None and conn.legacy.log_level is None


def test_subscribe_unsubscribe_and_updated_for_subscribed_uris_only() -> None:
    conn = opened()
    updated = m.Notification(
        method="notifications/resources/updated",
        params=t.ResourceUpdatedNotificationParams(uri="test://watched"),
    )
    assert sent(conn, updated) == []
    (ev,) = events(conn, call(1, "resources/subscribe", {"uri": "test://watched"}))
    assert sent(conn, ev) == [{"jsonrpc": "2.0", "id": 1, "result": {}}]
    assert sent(conn, updated)[0]["params"] == {"uri": "test://watched"}
    (ev,) = events(conn, call(2, "resources/unsubscribe", {"uri": "test://watched"}))
    assert sent(conn, ev)[0]["result"] == {}
    assert sent(conn, updated) == []


def test_list_changed_goes_to_the_session_only_where_declared() -> None:
    conn = opened()
    for method, expected in [
        ("notifications/tools/list_changed", 1),
        ("notifications/resources/list_changed", 1),
        ("notifications/prompts/list_changed", 0),  # prompts without listChanged
    ]:
        assert len(sent(conn, m.Notification(method=method))) == expected, method


def test_progress_and_request_logs_in_a_session() -> None:
    conn = opened()
    events(conn, call(1, "tools/call", {"name": "x", "_meta": {"progressToken": "p"}}))
    progress = t.ProgressNotificationParams(progress_token="p", progress=1, total=2)
    out = sent(conn, m.Notification(method="notifications/progress", params=progress))
    assert out[0]["params"] == {"progress": 1, "progressToken": "p", "total": 2}
    log = t.LoggingMessageNotificationParams(level="debug", data="d")
    out = sent(conn, m.Notification(method="notifications/message", params=log, request_id=1))
    assert out[0]["method"] == "notifications/message"
    with pytest.raises(m.LocalProtocolError):  # PROG-05 holds in legacy sessions too
        conn.send(m.Notification(method="notifications/progress", params=progress))


def test_leg09_cancellation_of_a_legacy_request() -> None:
    conn = opened()
    events(conn, call(1, "tools/call", {"name": "x"}))
    (ev,) = events(
        conn,
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
    )
    assert ev == m.Cancelled(id=1, reason=None)
    assert conn.send(m.Result(id=1, result=t.CallToolResult(content=[]))) == b""


def _input_round(conn: m.ServerConnection, *inputs: Any) -> list[dict[str, Any]]:
    (req,) = events(conn, call(5, "tools/call", {"name": "ask"}))
    assert req.round == 0
    asks = {f"k{i}": r for i, r in enumerate(inputs)}
    result = t.InputRequiredResult(input_requests=asks, request_state="state-1")
    return sent(conn, m.Result(id=5, result=result))


def test_mrtr_bridge_input_requests_become_server_requests_and_come_back() -> None:
    """An ``input_required`` result asks the client with real requests; the answers
    re-enter the handler under the original id, as a modern retry would."""
    conn = opened()
    asked = _input_round(conn, ELICIT, SAMPLE)
    assert [(a["id"], a["method"]) for a in asked] == [
        (0, "elicitation/create"),
        (1, "sampling/createMessage"),
    ]
    assert asked[0]["params"]["message"] == "name?"
    assert all("result" not in a for a in asked)
    # answered out of order; nothing until the last answer
    sampled = {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"}
    assert events(conn, {"jsonrpc": "2.0", "id": 1, "result": sampled}) == []
    (retry,) = events(
        conn, {"jsonrpc": "2.0", "id": 0, "result": {"action": "accept", "content": {"n": 1}}}
    )
    assert isinstance(retry, m.Request) and retry.id == 5 and retry.round == 1
    assert retry.params.request_state == "state-1"
    answers = retry.params.input_responses
    assert answers["k0"] == t.ElicitResult(action="accept", content={"n": 1})
    assert isinstance(answers["k1"], t.CreateMessageResult)
    (final,) = sent(conn, m.Result(id=5, result=t.CallToolResult(content=[])))
    assert final == {"jsonrpc": "2.0", "id": 5, "result": {"content": []}}


def test_mrtr_bridge_second_round_counts_and_uses_fresh_ids() -> None:
    conn = opened()
    _input_round(conn, ELICIT)
    (retry,) = events(conn, {"jsonrpc": "2.0", "id": 0, "result": {"action": "decline"}})
    result = t.InputRequiredResult(input_requests={"again": ELICIT})
    (asked,) = sent(conn, m.Result(id=5, result=result))
    assert asked["id"] == 1
    (retry,) = events(conn, {"jsonrpc": "2.0", "id": 1, "result": {"action": "cancel"}})
    assert retry.round == 2 and retry.params.request_state is None


def test_mrtr_bridge_never_asks_for_a_capability_the_client_did_not_declare() -> None:
    conn = opened(version="2025-11-25")
    conn2 = server()
    conn2.send(events(conn2, initialize(caps={}))[0])
    events(conn2, call(5, "tools/call", {"name": "ask"}))
    result = t.InputRequiredResult(input_requests={"k": SAMPLE})
    with pytest.raises(m.LocalProtocolError):
        conn2.send(m.Result(id=5, result=result))
    assert conn.legacy is not None


def test_mrtr_bridge_a_client_error_ends_the_request_with_an_error() -> None:
    conn = opened()
    _input_round(conn, ELICIT, SAMPLE)
    error = {"code": -1, "message": "user said no"}
    (ev,) = events(conn, {"jsonrpc": "2.0", "id": 1, "error": error})
    assert isinstance(ev, m.InvalidMessage)
    (answer,) = sent(conn, ev)
    assert answer["id"] == 5 and answer["error"]["code"] == -32603
    assert answer["error"]["data"] == error
    # the other answer arrives late: dropped, nothing re-enters the handler
    assert events(conn, {"jsonrpc": "2.0", "id": 0, "result": {"action": "accept"}}) == []


def test_mrtr_bridge_an_invalid_client_answer_ends_the_request() -> None:
    conn = opened()
    _input_round(conn, ELICIT)
    (ev,) = events(conn, {"jsonrpc": "2.0", "id": 0, "result": {"action": "maybe"}})
    assert sent(conn, ev)[0]["error"]["code"] == -32603


def test_mrtr_bridge_cancel_while_waiting_drops_the_round() -> None:
    conn = opened()
    _input_round(conn, ELICIT)
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}
    assert events(conn, cancel) == [m.Cancelled(id=5, reason=None)]
    assert events(conn, {"jsonrpc": "2.0", "id": 0, "result": {"action": "accept"}}) == []
    assert conn.in_flight() == ()


def test_base06_an_id_waiting_for_input_is_still_in_flight() -> None:
    conn = opened()
    _input_round(conn, ELICIT)
    assert conn.in_flight() == (5,)
    (ev,) = events(conn, call(5, "tools/call", {"name": "again"}))
    assert isinstance(ev, m.InvalidMessage) and ev.error.code == -32600


def test_stray_responses_are_dropped() -> None:
    conn = opened()
    assert events(conn, {"jsonrpc": "2.0", "id": 42, "result": {}}) == []
    assert events(conn, {"jsonrpc": "2.0", "id": "x", "result": {}}) == []
    plain = server()
    (ev,) = events(plain, {"jsonrpc": "2.0", "id": 1, "result": {}})
    assert isinstance(ev, m.InvalidMessage) and ev.reply is None  # PAT-03, no session


def test_roots_list_changed_reaches_the_application() -> None:
    conn = opened()
    (ev,) = events(conn, {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
    assert ev == m.Notification(method="notifications/roots/list_changed")


def test_leg20_ver18_both_eras_on_one_stream_share_no_state() -> None:
    conn = opened()
    events(conn, call(1, "logging/setLevel", {"level": "error"}))
    (req,) = events(conn, modern(2, "tools/call", {"name": "x"}))
    assert req.params.meta.protocol_version == "2026-07-28"
    assert req.params.meta.log_level is None  # the legacy setLevel does not reach it
    (out,) = sent(conn, m.Result(id=2, result=t.CallToolResult(content=[])))
    assert out["result"]["resultType"] == "complete"  # a modern result stays modern
    assert "io.modelcontextprotocol/serverInfo" in out["result"]["_meta"]
    (disc,) = events(conn, modern(3, "server/discover"))
    assert disc.method == "server/discover"  # never requires initialize (LEG-20)


def test_base06_ids_are_unique_across_both_eras() -> None:
    conn = opened()
    events(conn, modern(1, "tools/call", {"name": "x"}))
    (ev,) = events(conn, call(1, "tools/call", {"name": "y"}))
    assert isinstance(ev, m.InvalidMessage) and ev.error.code == -32600
    events(conn, call(2, "tools/call", {"name": "y"}))
    (ev,) = events(conn, modern(2, "tools/call", {"name": "x"}))
    assert isinstance(ev, m.InvalidMessage) and ev.error.code == -32600


def test_cancel_of_a_modern_request_is_routed_to_the_modern_path() -> None:
    conn = opened()
    events(conn, modern(1, "tools/call", {"name": "x"}))
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    assert events(conn, cancel) == [m.Cancelled(id=1, reason=None)]


def test_without_a_session_a_legacy_shaped_request_is_refused_as_modern() -> None:
    """No ``initialize`` yet and no modern ``_meta``: the modern rules answer (META-08)."""
    conn = server()
    (ev,) = events(conn, call(1, "tools/list"))
    assert isinstance(ev, m.InvalidMessage) and ev.error.code == -32602


def test_connection_closed_lists_both_eras_in_flight() -> None:
    conn = opened()
    events(conn, modern(1, "tools/call", {"name": "x"}))
    events(conn, call(2, "tools/call", {"name": "y"}))
    conn.receive_data(b"")
    (closed,) = events(conn)
    assert isinstance(closed, m.ConnectionClosed)
    assert set(closed.in_flight) == {1, 2}
    assert conn.statistics().in_flight == 2


def test_max_in_flight_pauses_a_legacy_request_and_resumes_it() -> None:
    conn = opened(max_in_flight=1)
    assert len(events(conn, call(1, "tools/call", {"name": "x"}))) == 1
    assert events(conn, call(2, "tools/call", {"name": "y"})) == [m.PAUSED]
    assert conn.paused
    assert conn.next_event() is m.PAUSED
    conn.send(m.Result(id=1, result=t.CallToolResult(content=[])))
    second = conn.next_event()
    assert isinstance(second, m.Request) and second.id == 2
    assert not conn.paused


def test_fresh_copies_the_era_configuration_and_no_session() -> None:
    conn = opened()
    new = conn.fresh()
    assert new.legacy_versions == m.LEGACY_VERSIONS and new.legacy is None
    (ev,) = events(new, initialize("2025-06-18"))
    assert sent(new, ev)[0]["result"]["protocolVersion"] == "2025-06-18"


def test_error_responses_for_legacy_requests_are_plain_json_rpc() -> None:
    conn = opened()
    events(conn, call(1, "tools/call", {"name": "x"}))
    error = t.Error(code=-32602, message="no such tool")
    (out,) = sent(conn, m.ErrorResponse(id=1, error=error))
    assert out == {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "no such tool"}}
    (out,) = sent(conn, m.ErrorResponse(id=None, error=error))  # an error with no request
    assert "id" not in out


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": None, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1]},
        {"jsonrpc": "1.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "1.0", "id": 1, "method": "ping"},
        # found by the fuzzer: a method or an id that is an object (unhashable)
        {"jsonrpc": "2.0", "id": 3, "method": {"level": "error"}},
        {"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"},
    ],
)
def test_malformed_legacy_requests_get_the_codec_refusal(message: dict[str, Any]) -> None:
    conn = opened()
    (ev,) = events(conn, message)
    assert isinstance(ev, m.InvalidMessage) and ev.error.code == -32600


def test_a_batch_is_refused_in_a_dual_era_connection() -> None:
    """JSON-RPC batches are not served (2025-03-26 is not offered, LEG-18)."""
    conn = opened()
    conn.receive_data(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n')
    (ev,) = events(conn)
    assert isinstance(ev, m.InvalidMessage) and ev.error.code == -32600


def test_unknown_notifications_in_a_session_are_dropped() -> None:
    conn = opened()
    assert events(conn, {"jsonrpc": "2.0", "method": "notifications/whatever"}) == []
    progress = {"progressToken": "p", "progress": 1}
    assert (
        events(conn, {"jsonrpc": "2.0", "method": "notifications/progress", "params": progress})
        == []
    )


def test_session_logs_need_the_logging_capability() -> None:
    conn = opened(capabilities=t.ServerCapabilities(tools=t.ServerCapabilitiesTools()))
    log = t.LoggingMessageNotificationParams(level="error", data="e")
    assert sent(conn, m.Notification(method="notifications/message", params=log)) == []


def test_other_notifications_take_the_modern_rules_in_a_session() -> None:
    conn = opened()
    with pytest.raises(m.LocalProtocolError):
        conn.send(m.Notification(method="notifications/unknown"))
