"""Requirements of ``notes/spec-base.md`` that the connections enforce, one test each.

The flows of ``test_connection.py`` cover most IDs; these are the ones they did not name
(``docs/requirements.md`` gives each ID's spec page).
Requirements about processes, HTTP, caching clients or applications are the adapters' and
the applications' business and are tested where those live.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import mcp_proto as m
from mcp_proto import types as t
from tests.test_connection import (
    CAPS,
    META,
    TOOLS_CHANGED,
    Pair,
    ack,
    call,
    feed,
    line,
    listen,
    req,
    server,
)

ELICIT = t.ElicitRequest(
    params=t.ElicitRequestFormParams(message="name?", requested_schema={"type": "object"})
)


def codes(events: list[Any]) -> list[int]:
    return [e.reply.error.code for e in events]


def test_log02_log_messages_need_the_logging_capability() -> None:
    srv = server(capabilities=t.ServerCapabilities(tools=t.ServerCapabilitiesTools()))
    feed(srv, req(1, "tools/list", meta={**META, "io.modelcontextprotocol/logLevel": "debug"}))
    params = t.LoggingMessageNotificationParams(level="error", data="x")
    log = m.Notification(method="notifications/message", params=params, request_id=1)
    with pytest.raises(m.LocalProtocolError, match="LOG-02"):
        srv.send(log)
    with_logging = server()
    feed(
        with_logging,
        req(1, "tools/list", meta={**META, "io.modelcontextprotocol/logLevel": "debug"}),
    )
    assert b'"level":"error"' in with_logging.send(log)


def test_log06_unknown_log_level_is_invalid_params() -> None:
    meta = {**META, "io.modelcontextprotocol/logLevel": "verbose"}
    assert codes(feed(server(), req(1, "tools/list", meta=meta))) == [m.INVALID_PARAMS]


@pytest.mark.parametrize("caps", [None, [], "x", 1])
def test_meta05_client_capabilities_must_be_an_object(caps: Any) -> None:
    meta = {**META, "io.modelcontextprotocol/clientCapabilities": caps}
    assert codes(feed(server(), req(1, "tools/list", meta=meta))) == [m.INVALID_PARAMS]


def test_meta06_ver05_discover_needs_the_meta_too() -> None:
    bare = line({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}})
    absent = line({"jsonrpc": "2.0", "id": 2, "method": "server/discover"})
    assert codes(feed(server(), bare, absent)) == [m.INVALID_PARAMS, m.INVALID_PARAMS]
    (ok,) = feed(server(), req(3, "server/discover"))
    assert isinstance(ok, m.Request) and ok.method == "server/discover"


def test_ver04_ver06_discover_result_from_configuration() -> None:
    srv = server(instructions="be kind", cache_hints=(60_000, "private"))
    (got,) = feed(srv, req(1, "server/discover"))
    body = orjson.loads(srv.send(m.Result(id=got.id, result=srv.discover_result())))["result"]
    assert body["supportedVersions"] == ["2026-07-28"]
    assert body["capabilities"] == orjson.loads(orjson.dumps(m.unstructure(CAPS)))
    assert body["instructions"] == "be kind"
    assert (body["ttlMs"], body["cacheScope"], body["resultType"]) == (
        60_000,
        "private",
        "complete",
    )
    assert body["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mcp-proto"


def test_ver01_each_request_is_judged_on_its_own() -> None:
    srv = server()
    old = {**META, "io.modelcontextprotocol/protocolVersion": "2025-11-25"}
    first, second, third = feed(
        srv, req(1, "tools/list", meta=old), req(2, "tools/list"), req(3, "tools/list", meta=old)
    )
    assert first.reply.error.code == m.UNSUPPORTED_PROTOCOL_VERSION
    assert isinstance(second, m.Request) and second.id == 2
    assert third.reply.error.code == m.UNSUPPORTED_PROTOCOL_VERSION


def test_meta09_capabilities_come_from_each_request_alone() -> None:
    srv = server()
    declared = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    feed(
        srv,
        req(1, "tools/call", {"name": "a"}, meta=declared),
        req(2, "tools/call", {"name": "b"}),
    )
    ask = t.InputRequiredResult(input_requests={"who": ELICIT})
    assert b"input_required" in srv.send(m.Result(id=1, result=ask))
    with pytest.raises(m.LocalProtocolError, match="MRTR-10"):
        srv.send(m.Result(id=2, result=ask))  # request 1's capabilities do not carry over


def test_mrtr02_retries_carry_the_required_meta() -> None:
    pair = Pair()
    (got,) = pair.to_server(call(pair))
    (ev,) = pair.to_client(m.Result(id=got.id, result=t.InputRequiredResult(request_state="s")))
    wire = orjson.loads(pair.client.send(ev.retry(id=pair.client.next_id())))
    meta = wire["params"]["_meta"]
    assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert "io.modelcontextprotocol/clientCapabilities" in meta
    assert wire["params"]["requestState"] == "s"


def test_mrtr15_request_state_never_leaks_into_other_requests() -> None:
    pair = Pair()
    (got,) = pair.to_server(call(pair))
    other = call(pair, name="other")
    pair.client.send(other)
    (ev,) = pair.to_client(m.Result(id=got.id, result=t.InputRequiredResult(request_state="s")))
    assert isinstance(ev, m.InputRequired)
    fresh = pair.client.send(call(pair, name="fresh"))
    assert b"requestState" not in fresh and b"inputResponses" not in fresh


def test_mrtr05_input_requests_of_other_kinds_are_invalid() -> None:
    client = m.ClientConnection(
        capabilities=t.ClientCapabilities(elicitation=t.ClientCapabilitiesElicitation())
    )
    client.send(m.Request(id=1, method="tools/call", params=t.CallToolRequestParams(name="x")))
    bad = {"resultType": "input_required", "inputRequests": {"a": {"method": "tools/list"}}}
    (ev,) = feed(client, line({"jsonrpc": "2.0", "id": 1, "result": bad}))
    assert isinstance(ev, m.InvalidResponse) and ev.id == 1
    assert client.in_flight() == ()


@pytest.mark.parametrize(
    "error",
    [{"code": "1", "message": "m"}, {"message": "m"}, {"code": 1}, {"code": 1.5, "message": "m"}],
)
def test_base17_malformed_error_fails_that_request(error: Any) -> None:
    client = m.ClientConnection()
    client.send(m.Request(id=7, method="tools/list", params=t.PaginatedRequestParams()))
    (ev,) = feed(client, line({"jsonrpc": "2.0", "id": 7, "error": error}))
    assert isinstance(ev, m.InvalidResponse) and ev.id == 7  # a local error, not a peer's (ERR-16)
    assert client.in_flight() == ()


def test_err02_legacy_range_codes_carry_no_meaning() -> None:
    client = m.ClientConnection()
    client.send(m.Request(id=1, method="tools/list", params=t.PaginatedRequestParams()))
    (ev,) = feed(
        client, line({"jsonrpc": "2.0", "id": 1, "error": {"code": -32010, "message": "x"}})
    )
    assert type(ev) is m.ErrorResponse and ev.code == -32010 and not ev.is_resource_not_found()


def test_base19_notification_meta_is_optional() -> None:
    srv = server()
    (got,) = feed(srv, req(1, "tools/call", {"name": "x"}))
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    assert feed(srv, line(cancel)) == [m.Cancelled(id=got.id)]


def test_cancel12_15_cancel_after_the_response_is_harmless_and_unanswered() -> None:
    pair = Pair()
    (got,) = pair.to_server(call(pair))
    response = pair.server.send(m.Result(id=got.id, result=t.CallToolResult(content=[])))
    late_cancel = line(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": got.id}}
    )
    assert feed(pair.server, late_cancel) == []  # ignored (CANCEL-10) and never answered
    (ev,) = feed(pair.client, response)
    assert isinstance(ev, m.Result)


def test_stdio10_responses_may_come_in_any_order() -> None:
    pair = Pair()
    got = [pair.to_server(call(pair, name=str(i)))[0] for i in range(3)]
    for request in reversed(got):
        (ev,) = pair.to_client(
            m.Result(
                id=request.id,
                result=t.CallToolResult(content=[t.TextContent(text=str(request.id))]),
            )
        )
        assert ev.id == request.id and ev.result.content[0].text == str(request.id)


def test_stdio09_11_trans03_each_side_sends_only_its_direction() -> None:
    client, srv = m.ClientConnection(), server()
    with pytest.raises(m.LocalProtocolError, match="PAT-03"):
        client.send(m.Result(id=1, result=t.CallToolResult(content=[])))
    with pytest.raises(m.LocalProtocolError):
        srv.send(m.Request(id=1, method="tools/list", params=t.PaginatedRequestParams()))


def test_sub03_false_and_empty_filters_subscribe_to_nothing() -> None:
    pair = Pair()
    (a,) = pair.to_server(listen(pair, tools_list_changed=False, resource_subscriptions=[]))
    with pytest.raises(m.LocalProtocolError, match="SUB-06"):
        pair.server.send(ack(a.id, tools_list_changed=True))
    pair.to_client(ack(a.id))
    assert pair.server.send(TOOLS_CHANGED) == b""
    update = m.Notification(
        method="notifications/resources/updated",
        params=t.ResourceUpdatedNotificationParams(uri="file:///a"),
    )
    assert pair.server.send(update) == b""


def test_sub05_sub10_acknowledgement_order_is_per_subscription() -> None:
    pair = Pair()
    (a,) = pair.to_server(listen(pair, tools_list_changed=True))
    (b,) = pair.to_server(listen(pair, tools_list_changed=True))
    pair.to_client(ack(b.id, tools_list_changed=True))
    (note,) = pair.to_client(TOOLS_CHANGED)  # b's notification before a's acknowledgement
    assert note.request_id == b.id
    (acked,) = pair.to_client(ack(a.id, tools_list_changed=True))
    assert acked.id == a.id


def test_prog09_meta13_progress_carries_no_subscription_id() -> None:
    pair = Pair()
    (lst,) = pair.to_server(listen(pair, tools_list_changed=True))
    pair.to_client(ack(lst.id, tools_list_changed=True))
    pair.to_server(call(pair, progress_token="t"))
    progress = t.ProgressNotificationParams(progress_token="t", progress=1)
    wire = pair.server.send(m.Notification(method="notifications/progress", params=progress))
    assert b"subscriptionId" not in wire
    stream = pair.server.send(TOOLS_CHANGED)
    assert (
        orjson.loads(stream)["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == lst.id
    )


def test_page06_empty_cursor_is_kept() -> None:
    pair = Pair()
    request = m.Request(
        id=pair.client.next_id(), method="tools/list", params=t.PaginatedRequestParams(cursor="")
    )
    (got,) = pair.to_server(request)
    assert got.params.cursor == ""
    result = t.ListToolsResult(tools=[], next_cursor="", ttl_ms=0, cache_scope="public")
    (ev,) = pair.to_client(m.Result(id=got.id, result=result))
    assert ev.result.next_cursor == ""  # not the end of the list


def test_elic25_number_fields_are_answered_with_numbers() -> None:
    """schema.json allows integers only; the prose and schema.ts say number (docs/model.md)."""
    answer = m.structure({"action": "accept", "content": {"age": 18.5, "n": 3}}, t.ElicitResult)
    assert answer.content == {"age": 18.5, "n": 3} and type(answer.content["n"]) is int


def test_a_fresh_server_connection_is_a_new_one_with_the_same_configuration() -> None:
    """``ServerConnection.fresh`` (one per HTTP request) builds what ``__init__`` builds."""
    caps = t.ServerCapabilities(tools=t.ServerCapabilitiesTools())
    options: dict[str, Any] = {
        "capabilities": caps,
        "server_info": t.Implementation(name="s", version="1"),
        "instructions": "hi",
        "cache_hints": (5, "private"),
        "max_in_flight": 7,
        "max_subscriptions": 3,
        "max_message_size": 1000,
        "max_depth": 9,
        "tombstones": 11,
    }
    template = m.ServerConnection(**options)
    fresh, built = template.fresh(), m.ServerConnection(**options)
    assert vars(fresh).keys() == vars(built).keys()
    assert vars(fresh)["_inbox"] is None  # made on first use, its own then
    state = ("_rules", "_lines", "_gone", "_requests")
    for name, value in vars(built).items():
        mine = vars(fresh)[name]
        if name in state:  # its own, new
            assert type(mine) is type(value) and mine is not vars(template)[name], name
        elif name not in ("extensions", "_guards", "_router"):  # no __eq__, or bound
            assert mine == value, name
    assert fresh._rules.tracker is fresh._requests and fresh._requests.gone is fresh._gone
    assert fresh._gone._limit == 11 and fresh._lines._max == 1000
