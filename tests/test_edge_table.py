"""The edge-case table of ``notes/spec-base.md`` section 3, for the stream transports.

One test per row, named ``test_row_NN_<what>_<requirement>``, driving a real
``ServerConnection`` or ``ClientConnection`` with bytes (through
:class:`mcp_proto.testing.ConnectionPair` where both sides take part).  Rows
already covered elsewhere are listed here instead of being tested twice:

====  ========================================================================
row   existing test
====  ========================================================================
6     test_connection.py::test_framing_crlf_blank_lines_and_chunking
7     test_connection.py::test_framing_over_long_line_is_fatal,
      ::test_framing_limit_applies_to_complete_lines (an over-long line is
      lost framing: the "close the stream" branch of the row, see
      docs/connections.md "Framing")
19    test_connection.py::test_base06_duplicate_in_flight_id_refused_original_kept
22    test_connection.py::test_base18_notifications_and_responses_are_never_answered
29    test_connection.py::test_meta08_ver02_err07_refusals (no params: -32602)
30    test_connection.py::test_meta08_ver02_err07_refusals (no/such/method)
31    test_connection.py::test_meta08_ver02_err07_refusals (prompts/list)
37    test_connection.py::test_ver02_unsupported_version_data
39    test_connection.py::test_capability_helper_err09 (the application calls
      ``require_client_capabilities``; the core cannot know what a tool needs)
40    test_connection.py::test_meta08_ver02_err07_refusals (logLevel "loud")
41    test_connection.py::test_log03_04_log_rules (LOG-03)
45    test_connection.py::test_base15_missing_result_type_is_complete
46    test_connection.py::test_base14_mrtr_client_rejects_bad_results (task)
47    test_connection.py::test_mrtr03_client_rejects_input_required_on_list
48    test_connection.py::test_base14_mrtr_client_rejects_bad_results (MRTR-09)
50    test_connection.py::test_client_round_cap
51    test_connection.py::test_mrtr_retry_round_trip (MRTR-14)
55    test_connection.py::test_err04_legacy_resource_not_found
64    test_connection.py::test_stdio13_nothing_is_sent_for_a_cancelled_request,
      test_connection_edges.py::test_server_drops_everything_for_a_cancelled_listen
69    test_connection.py::test_sub04_08_listen_flow_with_fan_out (server),
      ::test_sub_client_drops_unsolicited_stream_notifications (client)
71    test_connection.py::test_sub04_08_listen_flow_with_fan_out (server),
      test_connection_edges.py::test_client_listen_checks (client)
73    test_connection.py::test_sub13_abrupt_loss_is_reported_on_close
113   test_connection_edges.py::test_server_connection_closed_lists_lost_work
114   test_connection.py::test_sub13_abrupt_loss_is_reported_on_close
====  ========================================================================

Not tested here: rows 2, 65 and 77-111 are HTTP-only; rows 38 and 118 are
about dual-era (``initialize``) serving, which the stream server does not do
(``initialize`` is ``-32601`` with ``data.supported``, row 33); row 60
(invalid cursor) and row 75 (re-listening after a restart) are application
and adapter policy: the core cannot tell a valid cursor, and it reports the
lost listens in ``ConnectionClosed.subscriptions`` (row 73).
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import mcp_proto as m
from mcp_proto import testing as mt
from mcp_proto import types as t
from mcp_proto.request_state import RequestStateError, RequestStateSealer, missing_input_responses

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
CAPS = t.ServerCapabilities(
    tools=t.ServerCapabilitiesTools(list_changed=True),
    resources=t.ServerCapabilitiesResources(list_changed=True),
    logging={},
)
ELICIT = t.ElicitRequest(
    params=t.ElicitRequestFormParams(message="seats?", requested_schema={"type": "object"})
)
LIST_RESULT = t.ListToolsResult(tools=[], ttl_ms=0, cache_scope="public")


def line(obj: Any) -> bytes:
    return orjson.dumps(obj) + b"\n"


def req(id: Any, method: str = "tools/list", params: Any = None, meta: Any = None) -> bytes:
    body = dict(params or {})
    body["_meta"] = META if meta is None else meta
    return line({"jsonrpc": "2.0", "id": id, "method": method, "params": body})


def pair(**server_kw: Any) -> mt.ConnectionPair:
    caps = t.ClientCapabilities(elicitation=t.ClientCapabilitiesElicitation())
    return mt.ConnectionPair(
        client=m.ClientConnection(capabilities=caps),
        server=m.ServerConnection(capabilities=CAPS, **server_kw),
    )


def to_server(data: bytes, **server_kw: Any) -> tuple[m.ServerConnection, list[Any]]:
    p = pair(**server_kw)
    return p.server, p.deliver("client", data)


def answer(conn: m.ServerConnection, event: Any) -> Any:
    """The JSON of what the server sends for ``event`` (the reply of an InvalidMessage)."""
    assert isinstance(event, m.InvalidMessage), event
    return orjson.loads(conn.send(event))


def refused(data: bytes, code: int, id: Any = mt.ABSENT, **server_kw: Any) -> Any:
    """Feed one bad line to a server: it is refused with ``code`` (and ``id``); the reply."""
    srv, (event,) = to_server(data, **server_kw)
    reply = answer(srv, event)
    mt.assert_matches(reply, {"jsonrpc": "2.0", "id": id, "error": {"code": code}})
    assert srv.in_flight() == ()
    return reply


def client_waiting(method: str = "tools/call", params: Any = None) -> m.ClientConnection:
    """A client with request 1 in flight."""
    client = m.ClientConnection()
    client.send(m.Request(id=1, method=method, params=params or t.CallToolRequestParams(name="x")))
    return client


def client_gets(client: m.ClientConnection, *messages: Any) -> list[Any]:
    for message in messages:
        client.receive_data(message if isinstance(message, bytes) else line(message))
    return mt.drain(client)


def call(p: mt.ConnectionPair, name: str = "x", **meta: Any) -> m.Request:
    params = t.CallToolRequestParams(name=name, meta=p.client.meta(**meta) if meta else None)
    return p.request("tools/call", params)


# -- framing / JSON level -------------------------------------------------------


def test_row_01_malformed_json_line_ERR_13_STDIO_06() -> None:
    p = pair()
    bad, good = p.deliver("client", b"{not json\n" + req(1))
    mt.assert_matches(answer(p.server, bad), {"id": mt.ABSENT, "error": {"code": -32700}})
    assert isinstance(good, m.Request)  # the connection stays usable
    (dropped,) = p.deliver("server", b"{not json\n")  # a client never answers (PAT-03)
    assert isinstance(dropped, m.InvalidMessage) and dropped.reply is None
    assert p.client.send(dropped) == b""


def test_row_03_invalid_utf8_is_a_parse_error_TRANS_02() -> None:
    refused(b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"\xff"}}\n', -32700)


def test_row_04_utf8_bom_is_refused_on_stdio_TRANS_02() -> None:
    refused(b"\xef\xbb\xbf" + req(1), -32700)


def test_row_05_pretty_printed_json_is_one_error_per_line_STDIO_03() -> None:
    pretty = orjson.dumps(orjson.loads(req(1)), option=orjson.OPT_INDENT_2) + b"\n"
    srv, events = to_server(pretty + req(2))
    *bad, good = events
    assert len(bad) == pretty.count(b"\n")
    assert {answer(srv, e)["error"]["code"] for e in bad} == {-32700}
    assert isinstance(good, m.Request) and good.id == 2
    # writers never emit a raw newline inside a message
    data = srv.send(
        m.Result(id=2, result=t.ListToolsResult(tools=[], ttl_ms=0, cache_scope="public"))
    )
    assert data.count(b"\n") == 1


def test_row_08_batch_array_is_one_invalid_request_BASE_20() -> None:
    batch = b"[" + req(1).strip() + b"," + req(2).strip() + b"]\n"
    refused(batch, -32600)


@pytest.mark.parametrize("top", [b"1", b"null", b'"tools/list"', b"true"])
def test_row_09_top_level_scalar_is_an_invalid_request_ERR_13(top: bytes) -> None:
    refused(top + b"\n", -32600)


def test_row_10_deep_nesting_is_refused_by_a_depth_limit() -> None:
    deep: Any = 1
    for _ in range(20):
        deep = {"a": deep}
    srv, (bad, good) = to_server(
        req(1, "tools/call", {"name": "x", "arguments": deep}) + req(2), max_depth=16
    )
    mt.assert_matches(answer(srv, bad), {"id": mt.ABSENT, "error": {"code": -32700}})
    assert isinstance(good, m.Request)


def test_row_11_duplicate_keys_last_one_wins_documented() -> None:
    raw = req(1).replace(b'"id":1', b'"id":1,"id":2')
    _, (event,) = to_server(raw)
    assert isinstance(event, m.Request) and event.id == 2  # docs: _message.py, "last one wins"


@pytest.mark.parametrize("number", [b"NaN", b"Infinity", b"-Infinity", b"1e400"])
def test_row_12_non_finite_numbers_are_parse_errors(number: bytes) -> None:
    raw = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"x":' + number + b"}}\n"
    refused(raw, -32700)


# -- JSON-RPC envelope ------------------------------------------------------------


@pytest.mark.parametrize("jsonrpc", [None, "1.0", 2.0])
def test_row_13_missing_or_wrong_jsonrpc_echoes_the_id_BASE_02(jsonrpc: Any) -> None:
    obj = orjson.loads(req(5))
    if jsonrpc is None:
        del obj["jsonrpc"]
    else:
        obj["jsonrpc"] = jsonrpc
    refused(line(obj), -32600, id=5)


def test_row_14_null_id_BASE_05() -> None:
    reply = refused(req(None), -32600)
    assert "id" not in reply  # the error response omits the id (BASE-16)


@pytest.mark.parametrize("bad_id", [True, {"a": 1}, [1]])
def test_row_15_boolean_object_array_ids_BASE_04(bad_id: Any) -> None:
    refused(req(bad_id), -32600)


@pytest.mark.parametrize("bad_id", [b"1.5", b"1.0"])
def test_row_16_float_ids_refused_and_types_kept_BASE_04(bad_id: bytes) -> None:
    refused(req(7).replace(b'"id":7', b'"id":' + bad_id), -32600)
    p = pair()
    first, second = p.deliver("client", req(1) + req("1"))
    assert (first.id, second.id) == (1, "1")  # never converted
    assert orjson.loads(p.server.send(m.Result(id="1", result=LIST_RESULT)))["id"] == "1"


@pytest.mark.parametrize("big", [2**53 + 1, 2**63 + 5, 2**64 - 1])
def test_row_17_large_integer_ids_echoed_losslessly_BASE_04(big: int) -> None:
    p = pair()
    (event,) = p.deliver("client", req(big))
    assert event.id == big
    (done,) = p.deliver("server", p.server.send(m.Result(id=big, result=LIST_RESULT)))
    assert p.trace.entries[-1].message["id"] == big
    assert isinstance(done, m.InvalidMessage)  # the client never sent that id: not its request


def test_row_18_empty_string_id_is_valid_BASE_04() -> None:
    p = pair()
    (event,) = p.deliver("client", req(""))
    assert isinstance(event, m.Request) and event.id == ""
    assert p.server.send(m.Result(id="", result=LIST_RESULT)).startswith(
        b'{"jsonrpc":"2.0","id":""'
    )


def test_row_20_notification_method_with_an_id_BASE_18() -> None:
    srv, _ = to_server(req(1, "tools/call", {"name": "x"}))
    cancel = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "notifications/cancelled",
        "params": {"requestId": 1},
    }
    srv.receive_data(line(cancel))
    (event,) = mt.drain(srv)
    mt.assert_matches(answer(srv, event), {"id": 9, "error": {"code": -32600}})
    assert srv.in_flight() == (1,)  # not acted on: request 1 is not cancelled


def test_row_21_request_method_without_id_is_a_notification_BASE_18() -> None:
    srv, events = to_server(
        line({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "x"}})
    )
    assert events == [] and srv.statistics().dropped_messages == 1


def test_row_23_response_with_both_or_neither_result_and_error_BASE_10() -> None:
    for body in ({"result": {"content": []}, "error": {"code": 1, "message": "m"}}, {}):
        client = client_waiting()
        (event,) = client_gets(client, {"jsonrpc": "2.0", "id": 1, **body})
        assert isinstance(event, m.InvalidResponse) and event.id == 1
        assert client.in_flight() == ()  # the request failed, it is over


def test_row_24_response_with_unknown_id_CANCEL_12() -> None:
    client = client_waiting()
    (event,) = client_gets(client, {"jsonrpc": "2.0", "id": 42, "result": {}})
    assert isinstance(event, m.InvalidMessage) and event.reply is None
    assert client.in_flight() == (1,)


def test_row_25_error_response_without_id_BASE_16() -> None:
    client = client_waiting()
    (event,) = client_gets(client, {"jsonrpc": "2.0", "error": {"code": -32700, "message": "p"}})
    assert event == m.ErrorResponse(id=None, error=t.Error(code=-32700, message="p"))
    assert client.in_flight() == (1,)  # a connection-level error: it cannot end request 1


@pytest.mark.parametrize("error", [{"code": "x", "message": "m"}, {"code": -32603}])
def test_row_26_malformed_error_object_fails_the_request_BASE_17(error: Any) -> None:
    client = client_waiting()
    (event,) = client_gets(client, {"jsonrpc": "2.0", "id": 1, "error": error})
    assert isinstance(event, m.InvalidResponse) and client.in_flight() == ()


def test_row_27_server_to_client_request_is_not_answered_PAT_03() -> None:
    client = client_waiting()
    (event,) = client_gets(client, {"jsonrpc": "2.0", "id": 5, "method": "roots/list"})
    assert isinstance(event, m.InvalidMessage) and event.reply is None
    assert client.send(event) == b""


@pytest.mark.parametrize("params", [[1, 2], "x", 3])
def test_row_28_params_not_an_object_BASE_08(params: Any) -> None:
    # The row allows -32602 or -32600; the codec's documented choice is -32600 with the id.
    refused(
        line({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": params}), -32600, id=3
    )


# -- methods and metadata -----------------------------------------------------------


def test_row_32_unknown_notification_is_ignored_BASE_18() -> None:
    srv, events = to_server(line({"jsonrpc": "2.0", "method": "notifications/whatever"}))
    assert events == [] and srv.statistics().dropped_messages == 1


def test_row_33_legacy_methods_are_unknown_VER_16() -> None:
    for method in ("ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"):
        refused(req(1, method), -32601, id=1)
    reply = refused(
        line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}), -32601, id=0
    )
    assert reply["error"]["data"] == {"supported": ["2026-07-28"]}
    for note in ("notifications/initialized", "notifications/roots/list_changed"):
        _, events = to_server(line({"jsonrpc": "2.0", "method": note}))
        assert events == []


@pytest.mark.parametrize("missing", ["protocolVersion", "clientCapabilities"])
def test_row_34_missing_required_meta_META_08(missing: str) -> None:
    meta = {k: v for k, v in META.items() if not k.endswith(missing)}
    refused(req(4, meta=meta), -32602, id=4)


@pytest.mark.parametrize("caps", [None, [], "all"])
def test_row_35_client_capabilities_not_an_object_META_05(caps: Any) -> None:
    refused(
        req(4, meta={**META, "io.modelcontextprotocol/clientCapabilities": caps}), -32602, id=4
    )


def test_row_36_protocol_version_not_a_string_or_empty_VER_02() -> None:
    refused(
        req(1, meta={**META, "io.modelcontextprotocol/protocolVersion": 20260728}), -32602, id=1
    )
    reply = refused(
        req(2, meta={**META, "io.modelcontextprotocol/protocolVersion": ""}), -32022, id=2
    )
    assert reply["error"]["data"] == {"supported": ["2026-07-28"], "requested": ""}


def test_row_42_malformed_meta_keys_are_ignored_META_02() -> None:
    _, (event,) = to_server(req(1, meta={**META, "-bad": 1, "a..b/x": 2}))
    assert isinstance(event, m.Request)
    assert event.meta is not None and event.meta.extra == {"-bad": 1, "a..b/x": 2}


def test_row_43_client_info_is_optional_META_07() -> None:
    _, (event,) = to_server(req(1))
    assert isinstance(event, m.Request) and event.meta is not None
    assert event.meta.client_info is None


def test_row_44_malformed_client_info_is_ignored_META_12() -> None:
    """Display-only data: a malformed clientInfo is read as absent, never refused."""
    for bad in ({"name": "x"}, {"name": 1, "version": "1"}, "str", 7, []):
        _, (event,) = to_server(req(1, meta={**META, "io.modelcontextprotocol/clientInfo": bad}))
        assert isinstance(event, m.Request) and event.meta is not None
        assert event.meta.client_info is None


def test_row_49_input_request_with_unknown_method_MRTR_05() -> None:
    client = client_waiting()
    result = {"resultType": "input_required", "inputRequests": {"a": {"method": "foo/bar"}}}
    (event,) = client_gets(client, {"jsonrpc": "2.0", "id": 1, "result": result})
    assert isinstance(event, m.InvalidResponse) and "inputRequests" in event.error.message


def test_row_52_tampered_request_state_gets_invalid_params_MRTR_07() -> None:
    p = pair()
    sealer = RequestStateSealer(keys=b"k" * 32)
    (got,) = p.to_server(call(p, "book"))
    state = sealer.seal({"n": 1}, method=got.method, params={"name": "book"}, now=0)
    (ev,) = p.to_client(m.Result(id=got.id, result=t.InputRequiredResult(request_state=state)))
    retry = ev.retry(id=p.client.next_id())
    forged = retry.params.request_state.replace("v1.", "v1.e")
    retry = m.Request(
        id=retry.id,
        method=retry.method,
        params=t.CallToolRequestParams(name="book", request_state=forged),
    )
    (again,) = p.to_server(retry)
    with pytest.raises(RequestStateError) as info:
        sealer.verify(
            again.params.request_state, method=again.method, params={"name": "book"}, now=1
        )
    (error,) = p.to_client(m.ErrorResponse(id=again.id, error=info.value.error()))
    assert error.code == -32602 and error.error.data == {"reason": "signature"}


def test_row_53_missing_input_response_asks_again_MRTR_17() -> None:
    p = pair()
    (got,) = p.to_server(call(p))
    first = t.InputRequiredResult(input_requests={"seats": ELICIT, "meal": ELICIT})
    (ev,) = p.to_client(m.Result(id=got.id, result=first))
    assert isinstance(ev, m.InputRequired)
    partial = {"seats": t.ElicitResult(action="accept"), "junk": t.ListRootsResult(roots=[])}
    params = t.CallToolRequestParams(name="x", input_responses=partial)
    retry = m.Request(id=p.client.next_id(), method="tools/call", params=params)
    (again,) = p.to_server(retry)
    missing = missing_input_responses(again.params.input_responses, ["seats", "meal"])
    assert missing == ["meal"]  # "junk" is ignored
    ask = t.InputRequiredResult(input_requests=dict.fromkeys(missing, ELICIT))
    (ev2,) = p.to_client(m.Result(id=again.id, result=ask))
    assert isinstance(ev2, m.InputRequired) and list(ev2.input_requests) == ["meal"]


def test_row_54_mrtr_fields_on_a_non_mrtr_request_are_ignored_MRTR_03() -> None:
    _, (event,) = to_server(
        req(1, "tools/list", {"inputResponses": {"a": {}}, "requestState": "s"})
    )
    assert isinstance(event, m.Request) and event.params.cursor is None
    assert event.params.extra == {"inputResponses": {"a": {}}, "requestState": "s"}


@pytest.mark.parametrize("code", [-32000, -32001, -32010, -32019])
def test_row_56_legacy_range_codes_have_no_meaning_ERR_02(code: int) -> None:
    client = client_waiting()
    (event,) = client_gets(
        client, {"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": "m"}}
    )
    assert type(event) is m.ErrorResponse and not event.is_resource_not_found()


def test_row_57_undefined_reserved_codes_ERR_03_ERR_14() -> None:
    client = client_waiting()
    (event,) = client_gets(
        client, {"jsonrpc": "2.0", "id": 1, "error": {"code": -32023, "message": "m"}}
    )
    assert type(event) is m.ErrorResponse and event.code == -32023
    srv, _ = to_server(req(1))
    for code in (-32001, -32003, -32004, -32023):
        with pytest.raises(m.LocalProtocolError, match="ERR-03"):
            srv.send(m.ErrorResponse(id=1, error=t.Error(code=code, message="no")))


@pytest.mark.parametrize(
    ("sent", "ttl", "scope"),
    [
        ({"ttlMs": -5, "cacheScope": "public"}, 0, "public"),
        ({}, None, None),
        ({"ttlMs": 1500.7}, 1500, None),
        ({"ttlMs": 10, "cacheScope": "shared"}, 10, "private"),
    ],
)
def test_row_58_client_reads_cache_hints_leniently_CACHE_06(
    sent: Any, ttl: Any, scope: Any
) -> None:
    client = client_waiting("tools/list", t.PaginatedRequestParams())
    (event,) = client_gets(client, {"jsonrpc": "2.0", "id": 1, "result": {"tools": [], **sent}})
    assert isinstance(event, m.Result)
    assert (event.result.ttl_ms, event.result.cache_scope) == (ttl, scope)


def test_row_59_empty_next_cursor_is_kept_PAGE_06() -> None:
    client = client_waiting("tools/list", t.PaginatedRequestParams())
    (event,) = client_gets(
        client, {"jsonrpc": "2.0", "id": 1, "result": {"tools": [], "nextCursor": ""}}
    )
    assert event.result.next_cursor == ""  # not None: there are more pages


# -- cancellation, progress, subscriptions -------------------------------------------


def cancelled(id: Any) -> bytes:
    return line(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}}
    )


def test_row_61_cancel_for_unknown_or_completed_id_is_ignored_CANCEL_10() -> None:
    p = pair()
    (got,) = p.to_server(call(p))
    p.server.send(m.Result(id=got.id, result=t.CallToolResult(content=[])))
    assert p.deliver("client", cancelled(got.id) + cancelled(99)) == []
    assert p.server.statistics().dropped_messages == 2


def test_row_62_malformed_cancel_is_ignored_CANCEL_14() -> None:
    p = pair()
    p.to_server(call(p))
    note = line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"reason": "x"}})
    (event,) = p.deliver("client", note)
    assert isinstance(event, m.InvalidMessage) and event.reply is None
    assert p.server.send(event) == b"" and p.server.in_flight() == (1,)


def test_row_63_cancel_crossing_the_response_CANCEL_11() -> None:
    p = pair()
    (got,) = p.to_server(call(p))
    response = p.server.send(m.Result(id=got.id, result=t.CallToolResult(content=[])))
    cancel = p.client.cancel(got.id)  # both in flight at once
    assert p.deliver("client", cancel) == []  # the server already answered: ignored
    assert p.deliver("server", response) == []  # the client already gave up: dropped
    assert p.client.statistics().dropped_messages == 1


def test_row_66_server_cancel_of_a_non_listen_is_ignored_CANCEL_02() -> None:
    client = client_waiting()
    assert client_gets(client, cancelled(1)) == []
    assert client.in_flight() == (1,)


def test_row_67_stray_progress_is_ignored_PROG_05_06_08() -> None:
    p = pair()
    (got,) = p.to_server(call(p, progress_token="t"))

    def progress(token: str, value: float) -> bytes:
        params = {"progressToken": token, "progress": value}
        return line({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})

    assert len(p.deliver("server", progress("t", 1))) == 1
    assert p.deliver("server", progress("t", 1)) == []  # not increasing
    assert p.deliver("server", progress("other", 2)) == []  # unknown token
    p.to_client(m.Result(id=got.id, result=t.CallToolResult(content=[])))
    assert p.deliver("server", progress("t", 3)) == []  # after completion
    assert p.client.statistics().dropped_messages == 3


def test_row_68_duplicate_progress_token_still_processed_PROG_03() -> None:
    meta = {**META, "progressToken": "same"}
    srv, events = to_server(
        req(1, "tools/call", {"name": "a"}, meta) + req(2, "tools/call", {"name": "b"}, meta)
    )
    assert [type(e) for e in events] == [m.Request, m.Request]
    for id in (1, 2):
        srv.send(m.Result(id=id, result=t.CallToolResult(content=[])))
    assert srv.in_flight() == ()
    p = pair()  # the client core never produces the duplicate
    p.to_server(call(p, progress_token="same"))
    with pytest.raises(m.LocalProtocolError, match="PROG-03"):
        p.to_server(call(p, progress_token="same"))


def listen(p: mt.ConnectionPair, **flt: Any) -> m.Request:
    params = t.SubscriptionsListenRequestParams(notifications=t.SubscriptionFilter(**flt))
    return p.request("subscriptions/listen", params)


def ack(id: Any, **flt: Any) -> m.Notification:
    params = t.SubscriptionsAcknowledgedNotificationParams(
        notifications=t.SubscriptionFilter(**flt)
    )
    return m.Notification(
        method="notifications/subscriptions/acknowledged", params=params, request_id=id
    )


def test_row_70_stream_notification_without_subscription_id_SUB_09() -> None:
    p = pair()
    (got,) = p.to_server(listen(p, tools_list_changed=True))
    p.to_client(ack(got.id, tools_list_changed=True))
    (event,) = p.deliver(
        "server", line({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    )
    assert (
        isinstance(event, m.InvalidMessage)
        and event.reply is None
        and "SUB-09" in event.error.message
    )


def test_row_72_unsupported_filter_types_are_left_out_of_the_ack_SUB_06() -> None:
    p = pair()
    (got,) = p.to_server(listen(p, tools_list_changed=True, prompts_list_changed=True))
    (acked,) = p.to_client(ack(got.id, tools_list_changed=True))  # no prompts: not an error
    assert acked.notifications == t.SubscriptionFilter(tools_list_changed=True)
    with pytest.raises(m.LocalProtocolError, match="SUB-02"):
        p.server.send(
            m.Notification(
                method="notifications/prompts/list_changed",
                params=t.NotificationParams(),
                request_id=got.id,
            )
        )


def test_row_74_listen_result_with_another_subscription_id_SUB_12() -> None:
    p = pair()
    (got,) = p.to_server(listen(p, tools_list_changed=True))
    result = {"resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": 999}}
    (event,) = p.deliver("server", line({"jsonrpc": "2.0", "id": got.id, "result": result}))
    assert isinstance(event, m.SubscriptionEnded) and event.id == got.id and event.graceful


def test_row_76_request_scoped_notifications_on_a_listen_SUB_15_LOG_05() -> None:
    p = pair()
    params = t.SubscriptionsListenRequestParams(
        notifications=t.SubscriptionFilter(tools_list_changed=True),
        meta=p.client.meta(progress_token="lt", log_level="debug"),
    )
    (got,) = p.to_server(p.request("subscriptions/listen", params))
    progress = t.ProgressNotificationParams(progress_token="lt", progress=1)
    with pytest.raises(m.LocalProtocolError, match="SUB-15"):
        p.server.send(m.Notification(method="notifications/progress", params=progress))
    log = t.LoggingMessageNotificationParams(level="info", data="x")
    with pytest.raises(m.LocalProtocolError, match="SUB-15"):
        p.server.send(
            m.Notification(method="notifications/message", params=log, request_id=got.id)
        )
    # the client drops progress that names a listen's token, and never files logs under a listen
    note = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": "lt", "progress": 1},
    }
    assert p.deliver("server", line(note)) == []
    logged = {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "info", "data": 1},
    }
    (event,) = p.deliver("server", line(logged))
    assert isinstance(event, m.Notification) and event.request_id is None


# -- stdio / lifecycle --------------------------------------------------------------


def test_row_112_non_mcp_output_is_dropped_not_fatal_STDIO_06() -> None:
    client = client_waiting()
    events = client_gets(
        client,
        b"Loading model...\n",
        b"DEBUG x=1\n",
        {"jsonrpc": "2.0", "id": 1, "result": {"content": []}},
    )
    assert [type(e) for e in events] == [m.InvalidMessage, m.InvalidMessage, m.Result]
    assert all(e.reply is None for e in events[:2])


def test_row_115_probe_without_reply_late_answer_discarded_STDIO_18() -> None:
    p = pair()
    probe = p.client.discover_request()
    p.to_server(probe)
    p.client.cancel(probe.id)  # the adapter's timeout fired: fall back to legacy
    late = p.server.send(m.Result(id=probe.id, result=p.server.discover_result()))
    assert p.deliver("server", late) == []


@pytest.mark.parametrize("code", [-32601, -32602, -32600])
def test_row_116_probe_answers_STDIO_18_19(code: int) -> None:
    client = m.ClientConnection()
    client.send(client.discover_request())
    (legacy,) = client_gets(
        client, {"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": "m"}}
    )
    assert type(legacy) is m.ErrorResponse  # not modern: the caller falls back
    client.send(client.discover_request())
    error = {
        "code": -32022,
        "message": "v",
        "data": {"supported": ["2026-07-28"], "requested": "x"},
    }
    (modern,) = client_gets(client, {"jsonrpc": "2.0", "id": 2, "error": error})
    assert isinstance(modern, m.VersionNotSupported) and modern.supported == ("2026-07-28",)


def test_row_117_discover_answered_with_a_non_discover_result_STDIO_18() -> None:
    client = m.ClientConnection()
    client.send(client.discover_request())
    (event,) = client_gets(client, {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}})
    assert isinstance(event, m.InvalidResponse)
    assert client.server_capabilities is None


def test_row_119_initialized_without_initialize_is_ignored_BASE_18() -> None:
    _, events = to_server(line({"jsonrpc": "2.0", "method": "notifications/initialized"}) + req(1))
    assert [type(e) for e in events] == [m.Request]


def test_row_120_concurrent_requests_answered_out_of_order_BASE_21() -> None:
    p = pair()
    got = p.to_server(call(p, "a"), call(p, "b"), call(p, "c"))
    results = {r.id: t.CallToolResult(content=[t.TextContent(text=r.params.name)]) for r in got}
    done = p.to_client(*(m.Result(id=i, result=results[i]) for i in (3, 1, 2)))
    assert [(e.id, e.result.content[0].text) for e in done] == [(3, "c"), (1, "a"), (2, "b")]
    assert p.client.in_flight() == () == p.server.in_flight()
