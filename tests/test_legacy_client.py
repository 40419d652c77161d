"""A client connection in an ``initialize``-era session (issue 16; LEG-01..09).

Driven against our own dual-era server connection, byte for byte, as two peers: the
handshake the EraProbe starts, modern requests sent the legacy way, legacy results read
as modern ones, the server's requests as ``ServerRequest`` events answered with
``Result``, and what a hostile server may send instead.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import mcp_proto as m
from mcp_proto import types as t

CAPS = t.ServerCapabilities(
    tools=t.ServerCapabilitiesTools(),
    resources=t.ServerCapabilitiesResources(subscribe=True),
    logging={},
)
CLIENT_CAPS = t.ClientCapabilities(elicitation=t.ClientCapabilitiesElicitation())


def relay(sender: Any, receiver: Any, data: bytes) -> list[Any]:
    """Give ``data`` to ``receiver``; its events."""
    receiver.receive_data(data)
    events = []
    while (event := receiver.next_event()) is not m.NEED_DATA:
        events.append(event)
    return events


def session() -> tuple[m.ClientConnection, m.ServerConnection, m.Legacy]:
    client = m.ClientConnection(capabilities=CLIENT_CAPS)
    server = m.ServerConnection(capabilities=CAPS, legacy_versions=m.LEGACY_VERSIONS)
    probe = m.EraProbe(
        transport="stdio", next_id=client.next_id, capabilities=CLIENT_CAPS, versions=()
    )
    init = probe.start()
    assert isinstance(init, m.Request)
    (answered,) = relay(client, server, client.send(init))
    assert isinstance(answered, m.AnsweredRequest) and answered.method == "initialize"
    (result,) = relay(server, client, server.send(answered))
    legacy = probe.received(result)
    assert isinstance(legacy, m.Legacy) and client.legacy is not None
    assert relay(client, server, client.send(legacy.initialized)) == []
    assert server.legacy is not None and server.legacy.initialized  # LEG-03
    return client, server, legacy


def call(client: m.ClientConnection, name: str = "x", **meta: Any) -> m.Request:
    params = t.CallToolRequestParams(name=name, meta=client.meta(**meta))
    return m.Request(id=client.next_id(), method="tools/call", params=params)


def test_leg01_leg03_the_handshake_opens_a_legacy_session_on_both_sides() -> None:
    client, _server, legacy = session()
    assert client.legacy.version == "2025-11-25" == legacy.version  # type: ignore[union-attr]
    assert legacy.capabilities.tools is not None and legacy.server_info.name == "mcp-proto"
    with pytest.raises(m.LocalProtocolError, match="LEG-03"):
        client.send(legacy.initialized)  # once


def test_requests_lose_the_modern_meta_and_results_need_no_result_type() -> None:
    client, server, _ = session()
    request = call(client, progress_token="p1")
    wire = client.send(request)
    body = orjson.loads(wire)
    assert body["params"]["_meta"] == {"progressToken": "p1"}  # no io.modelcontextprotocol/*
    (got,) = relay(client, server, wire)
    assert isinstance(got, m.Request) and got.meta.protocol_version == "2025-11-25"
    progress = t.ProgressNotificationParams(progress_token="p1", progress=1)
    note = m.Notification(method="notifications/progress", params=progress, request_id=got.id)
    answer = m.Result(id=got.id, result=t.CallToolResult(content=[t.TextContent(text="hi")]))
    out = server.send(note) + server.send(answer)
    assert b"resultType" not in out
    progressed, result = relay(server, client, out)
    assert progressed.method == "notifications/progress" and progressed.request_id == got.id
    assert isinstance(result, m.Result) and result.result.content[0].text == "hi"
    plain = call(client)
    assert "_meta" not in orjson.loads(client.send(plain))["params"]  # nothing left of it


def test_the_servers_input_request_is_a_server_request_answered_with_a_result() -> None:
    """The MRTR bridge of our server and this: one callback answers both eras."""
    client, server, _ = session()
    (got,) = relay(client, server, client.send(call(client)))
    form = t.ElicitRequestFormParams(message="name?", requested_schema={"type": "object"})
    ask = t.InputRequiredResult(input_requests={"who": t.ElicitRequest(params=form)})
    (asked,) = relay(server, client, server.send(m.Result(id=got.id, result=ask)))
    assert isinstance(asked, m.ServerRequest) and asked.method == "elicitation/create"
    assert isinstance(asked.request, t.ElicitRequest)  # the type an MRTR round carries
    assert asked.request.params.message == "name?"
    reply = client.send(asked.answer(t.ElicitResult(action="accept", content={"n": "Ada"})))
    assert b"resultType" not in reply and client.legacy.asked == {}  # type: ignore[union-attr]
    (again,) = relay(client, server, reply)
    assert isinstance(again, m.Request) and again.round == 1
    assert again.params.input_responses["who"].content == {"n": "Ada"}
    done = m.Result(id=got.id, result=t.CallToolResult(content=[]))
    (result,) = relay(server, client, server.send(done))
    assert isinstance(result, m.Result) and result.id == got.id


def test_session_requests_ping_set_level_subscribe_answer_none() -> None:
    client, server, _ = session()
    for method, params in (
        ("ping", None),
        ("logging/setLevel", {"level": "error"}),
        ("resources/subscribe", {"uri": "a://b"}),
        ("resources/unsubscribe", {"uri": "a://b"}),
    ):
        request = m.Request(id=client.next_id(), method=method, params=params)
        (answered,) = relay(client, server, client.send(request))
        assert isinstance(answered, m.AnsweredRequest)
        (result,) = relay(server, client, server.send(answered))
        assert result == m.Result(id=request.id, result=None)
    assert server.legacy.log_level == "error"  # type: ignore[union-attr]


def test_the_servers_ping_and_session_notifications() -> None:
    client, server, _ = session()
    (ping,) = relay(server, client, b'{"jsonrpc":"2.0","id":"s1","method":"ping"}\n')
    assert isinstance(ping, m.AnsweredRequest)
    assert client.send(ping) == b'{"jsonrpc":"2.0","id":"s1","result":{}}\n'
    updated = m.Notification(
        method="notifications/resources/updated",
        params=t.ResourceUpdatedNotificationParams(uri="a://b"),
    )
    relay(client, server, client.send(m.Request(id=client.next_id(), method="resources/subscribe",
                                                params={"uri": "a://b"})))  # fmt: skip
    (note,) = relay(server, client, server.send(updated))
    assert note == m.Notification(method="notifications/resources/updated", params=updated.params)
    changed = b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n'
    (listed,) = relay(server, client, changed)
    assert listed.method == "notifications/tools/list_changed" and listed.request_id is None


def raw_request(id: Any, method: str, params: Any = None) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        body["params"] = params
    return orjson.dumps(body) + b"\n"


SAMPLE = {"messages": [], "maxTokens": 5}


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (raw_request(1, "sampling/createMessage", SAMPLE), m.METHOD_NOT_FOUND),  # LEG-07
        (raw_request(2, "tools/call", {"name": "x"}), m.METHOD_NOT_FOUND),
        (raw_request(3, "elicitation/create", {"message": 5}), m.INVALID_PARAMS),
        (raw_request(4, "elicitation/create", [1]), m.INVALID_PARAMS),
    ],
)
def test_hostile_server_requests_get_a_json_rpc_error_the_client_sends(
    data: bytes, code: int
) -> None:
    client, _, _ = session()
    (refused,) = relay(None, client, data)
    assert isinstance(refused, m.InvalidMessage) and refused.error.code == code
    reply = orjson.loads(client.send(refused))
    assert reply["error"]["code"] == code and reply["id"] == orjson.loads(data)["id"]
    assert client.legacy.asked == {}  # type: ignore[union-attr]


def test_the_servers_requests_are_bounded_and_ids_checked() -> None:
    client, _, _ = session()
    form = {"message": "?", "requestedSchema": {"type": "object"}}
    (bad_id,) = relay(None, client, raw_request([1], "elicitation/create", form))
    assert isinstance(bad_id, m.InvalidMessage) and client.send(bad_id) == b""  # no id: no reply
    for n in range(64):
        (ok,) = relay(None, client, raw_request(n, "elicitation/create", form))
        assert isinstance(ok, m.ServerRequest)
    (twice,) = relay(None, client, raw_request(0, "elicitation/create", form))
    assert isinstance(twice, m.InvalidMessage) and "BASE-06" in twice.error.message
    (over,) = relay(None, client, raw_request(99, "elicitation/create", form))
    assert isinstance(over, m.InvalidMessage) and over.error.code == m.INTERNAL_ERROR


def test_the_server_may_cancel_its_request_and_its_answer_is_then_refused() -> None:
    client, _, _ = session()
    form = {"message": "?", "requestedSchema": {"type": "object"}}
    (asked,) = relay(None, client, raw_request("e1", "elicitation/create", form))
    cancel = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"e1"}}\n'
    (cancelled,) = relay(None, client, cancel)
    assert cancelled == m.Cancelled(id="e1", reason=None)
    with pytest.raises(m.LocalProtocolError, match="asked nothing"):
        client.send(asked.answer(t.ElicitResult(action="decline")))
    error = m.ErrorResponse(id="e2", error=t.Error(code=1, message="no"))
    with pytest.raises(m.LocalProtocolError):
        client.send(error)


def test_an_error_answer_to_the_servers_request() -> None:
    client, _, _ = session()
    form = {"message": "?", "requestedSchema": {"type": "object"}}
    (asked,) = relay(None, client, raw_request(7, "elicitation/create", form))
    error = t.Error(code=m.INVALID_REQUEST, message="the user went away", data={"why": 1})
    reply = orjson.loads(client.send(m.ErrorResponse(id=asked.id, error=error)))
    assert reply == {"jsonrpc": "2.0", "id": 7, "error": {"code": m.INVALID_REQUEST,
                     "message": "the user went away", "data": {"why": 1}}}  # fmt: skip


def test_what_has_no_legacy_form_is_refused() -> None:
    client, _, _ = session()
    for method, params in (
        ("server/discover", t.RequestParams()),
        ("subscriptions/listen", t.RequestParams()),
        ("initialize", None),
        ("no/such", None),
    ):
        with pytest.raises(m.LocalProtocolError):
            client.send(m.Request(id=client.next_id(), method=method, params=params))


def test_a_broken_initialize_result_is_an_invalid_response() -> None:
    client = m.ClientConnection()
    init = m.Request(id=1, method="initialize", params={"protocolVersion": "2025-11-25"})
    client.send(init)
    with pytest.raises(m.LocalProtocolError, match="LEG-01"):
        client.send(m.Request(id=2, method="initialize", params=None))
    (broken,) = relay(None, client, b'{"jsonrpc":"2.0","id":1,"result":{"capabilities":5}}\n')
    assert isinstance(broken, m.InvalidResponse) and client.legacy is None


def test_more_of_what_a_session_sends_and_drops() -> None:
    client, server, _ = session()
    request = call(client)
    (got,) = relay(client, server, client.send(request))
    (cancelled,) = relay(client, server, client.cancel(request.id, "changed my mind"))  # LEG-09
    assert cancelled == m.Cancelled(id=got.id, reason="changed my mind")
    stray = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"zz"}}\n'
    assert relay(None, client, stray) == []  # names nothing of ours: dropped
    bad = b'{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":5}}\n'
    (broken,) = relay(None, client, bad)
    assert isinstance(broken, m.InvalidMessage) and client.send(broken) == b""
    form = {"message": "?", "requestedSchema": {"type": "object"}}
    (asked,) = relay(None, client, raw_request(8, "elicitation/create", form))
    with pytest.raises(m.LocalProtocolError, match="must be an object"):
        client.send(asked.answer(None))
    plain = orjson.loads(client.send(m.ErrorResponse(id=8, error=t.Error(code=1, message="x"))))
    assert plain["error"] == {"code": 1, "message": "x"}


def test_initialize_ids_follow_the_id_rules() -> None:
    client = m.ClientConnection()
    with pytest.raises(m.LocalProtocolError, match="BASE-04"):
        client.send(m.Request(id=1.5, method="initialize", params=None))  # type: ignore[arg-type]
    client.send(call(client))
    with pytest.raises(m.LocalProtocolError, match="BASE-06"):
        client.send(m.Request(id=1, method="initialize", params=None))


# -- listens mapped on the session (issue 16) -----------------------------------


def legacy_caps(**caps: Any) -> Any:
    from mcp_proto.types import legacy as lt

    return m.structure(caps, lt.ServerCapabilities)


def test_a_listen_keeps_what_the_servers_capabilities_can_send() -> None:
    wanted = t.SubscriptionFilter(tools_list_changed=True, prompts_list_changed=True,
                                  resources_list_changed=True,
                                  resource_subscriptions=["a://1", "a://2", "a://1"])  # fmt: skip
    full = m.LegacyListen(wanted, legacy_caps(tools={"listChanged": True},
                          prompts={"listChanged": True},
                          resources={"listChanged": True, "subscribe": True}))  # fmt: skip
    assert full.subscribe == ("a://1", "a://2")  # once each
    assert full.honoured == t.SubscriptionFilter(
        tools_list_changed=True, prompts_list_changed=True, resources_list_changed=True,
        resource_subscriptions=["a://1", "a://2"])  # fmt: skip
    bare = m.LegacyListen(wanted, legacy_caps(tools={}, resources={"listChanged": False}))
    assert bare.subscribe == () and bare.honoured == t.SubscriptionFilter()  # SUB-07: less
    unasked = m.LegacyListen(t.SubscriptionFilter(), legacy_caps(tools={"listChanged": True}))
    assert unasked.honoured == t.SubscriptionFilter()


def test_a_listen_takes_the_session_notifications_it_asked_for() -> None:
    wanted = t.SubscriptionFilter(tools_list_changed=True, resource_subscriptions=["a://1"])
    caps = legacy_caps(
        tools={"listChanged": True}, prompts={"listChanged": True}, resources={"subscribe": True}
    )
    listen = m.LegacyListen(wanted, caps)

    def note(method: str, params: Any = None) -> m.Notification:
        return m.Notification(method=method, params=params)

    assert listen.matches(note("notifications/tools/list_changed"))
    assert not listen.matches(note("notifications/prompts/list_changed"))  # not asked
    assert not listen.matches(note("notifications/resources/list_changed"))
    typed = t.ResourceUpdatedNotificationParams(uri="a://1")
    assert listen.matches(note("notifications/resources/updated", typed))
    assert listen.matches(note("notifications/resources/updated", {"uri": "a://1"}))
    assert not listen.matches(note("notifications/resources/updated", {"uri": "a://2"}))
    assert not listen.matches(note("notifications/message", {"level": "info", "data": 1}))
