"""Edge cases of the connections: extensions, misuse, stray and late messages."""

from __future__ import annotations

from typing import Any

import attrs
import orjson
import pytest

import mcp_proto as m
from mcp_proto import types as t

from .test_connection import CAPS, META, Pair, call, events, feed, line, req, server

TASKS = "io.modelcontextprotocol/tasks"


@attrs.frozen(kw_only=True)
class TaskResult:
    result_type: str = attrs.field(default="task", metadata={"wire": "resultType"})
    task_id: str = attrs.field(metadata={"wire": "taskId"})
    extra: Any = attrs.field(factory=dict)


EXT = m.Extension(
    id=TASKS,
    requests={"tasks/get": (None, None)},
    notifications={"notifications/tasks/status": None},
    result_types={"task": TaskResult},
)


def ext_server() -> m.ServerConnection:
    caps = attrs.evolve(CAPS, extensions={TASKS: {}})
    return m.ServerConnection(capabilities=caps, extensions=[EXT])


def test_ver10_extension_ids_are_checked() -> None:
    with pytest.raises(m.MetaKeyError):
        m.Extension(id="tasks")
    with pytest.raises(ValueError, match="not declared"):
        m.ServerConnection(extensions=[EXT])


def test_extension_method_needs_both_sides() -> None:
    srv = ext_server()
    declared = {**META, "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}}}
    refused, accepted = feed(
        srv, req(1, "tasks/get", {"taskId": "a"}), req(2, "tasks/get", {"taskId": "a"}, declared)
    )
    assert isinstance(refused, m.InvalidMessage) and refused.error.code == -32601
    assert isinstance(accepted, m.Request) and accepted.params["taskId"] == "a"
    data = srv.send(m.Result(id=2, result=TaskResult(task_id="t1")))
    assert orjson.loads(data)["result"]["resultType"] == "task"
    with pytest.raises(m.LocalProtocolError):
        srv.send(m.Notification(method="notifications/unknown", params=None))
    note = line({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": {"x": 1}})
    (ev,) = feed(srv, note)
    assert ev == m.Notification(method="notifications/tasks/status", params={"x": 1})
    assert srv.send(m.Notification(method="notifications/tasks/status", params=None)) != b""


def test_extension_result_type_on_the_client() -> None:
    caps = t.ClientCapabilities(extensions={TASKS: {}})
    client = m.ClientConnection(capabilities=caps, extensions=[EXT])
    client.send(m.Request(id=1, method="tools/call", params=t.CallToolRequestParams(name="x")))
    (ev,) = feed(
        client, line({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "task", "taskId": "q"}})
    )
    assert isinstance(ev, m.Result) and ev.result == TaskResult(task_id="q")
    client.send(m.Request(id=2, method="tasks/get", params={"taskId": "q"}))
    (ev,) = feed(client, line({"jsonrpc": "2.0", "id": 2, "result": {"ok": True}}))
    assert ev.result["ok"] is True
    plain = m.ClientConnection(extensions=[EXT])  # registered but not declared
    plain.send(m.Request(id=1, method="tools/call", params=t.CallToolRequestParams(name="x")))
    (ev,) = feed(plain, line({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "task"}}))
    assert isinstance(ev, m.InvalidResponse)


def test_client_send_misuse() -> None:
    client = m.ClientConnection()
    with pytest.raises(m.LocalProtocolError, match="takes"):
        client.send(m.Request(id=1, method="tools/call", params=t.PaginatedRequestParams()))
    with pytest.raises(m.LocalProtocolError, match="unknown request"):
        client.send(m.Request(id=1, method="nope", params={}))
    with pytest.raises(m.LocalProtocolError, match="BASE-04"):
        client.send(m.Request(id=1.5, method="tools/list", params=t.PaginatedRequestParams()))  # type: ignore[arg-type]
    with pytest.raises(m.LocalProtocolError, match="PAT-03"):
        client.send(m.Result(id=1, result=None))
    with pytest.raises(m.LocalProtocolError, match="PAT-02"):
        client.send(m.Notification(method="notifications/progress", params=None))
    with pytest.raises(m.LocalProtocolError):
        client.send(m.Notification(method="notifications/cancelled", params=None))
    client.send(m.Request(id=1, method="tools/list", params=t.PaginatedRequestParams()))
    with pytest.raises(m.LocalProtocolError, match="BASE-06"):
        client.send(m.Request(id=1, method="tools/list", params=t.PaginatedRequestParams()))
    assert client.next_id() == 2  # skips ids chosen by hand
    params = t.CallToolRequestParams(name="x", meta=client.meta(progress_token="p"))
    client.send(m.Request(id=5, method="tools/call", params=params))
    with pytest.raises(m.LocalProtocolError, match="PROG-03"):
        client.send(m.Request(id=6, method="tools/call", params=params))
    bad = m.InvalidMessage(error=t.Error(code=-32700, message="x"))
    assert client.send(bad) == b""


def test_client_receives_stray_messages() -> None:
    client = m.ClientConnection(log_level="debug")
    client.send(m.Request(id=1, method="tools/list", params=t.PaginatedRequestParams()))
    evs = feed(
        client,
        b"garbage\n",
        line({"jsonrpc": "2.0", "id": 9, "method": "ping"}),
        line({"jsonrpc": "2.0", "error": {"code": -32700, "message": "p"}}),
        line({"jsonrpc": "2.0", "id": 77, "result": {}}),
        line({"jsonrpc": "2.0", "id": 77, "error": {"code": 1, "message": "p"}}),
        line(
            {
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {"level": "info", "data": 1},
            }
        ),
        line(
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": "zz", "progress": 1},
            }
        ),
        line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
        line({"jsonrpc": "2.0", "method": "notifications/whatever"}),
        line(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "error": {"code": -32022, "message": "v", "data": {"supported": 3}},
            }
        ),
    )
    names = [type(e).__name__ for e in evs]
    assert names == [
        "InvalidMessage",
        "InvalidMessage",
        "ErrorResponse",
        "InvalidMessage",
        "InvalidMessage",
        "Notification",
        "ErrorResponse",
    ]
    assert evs[5].request_id == 1  # the only request that asked for logs (LOG-05)
    assert client.statistics().dropped_messages == 3


def test_client_invalid_result_ends_request() -> None:
    client = m.ClientConnection()
    client.send(m.Request(id=1, method="tools/call", params=t.CallToolRequestParams(name="x")))
    (ev,) = feed(client, line({"jsonrpc": "2.0", "id": 1, "result": {"content": 3}}))
    assert isinstance(ev, m.InvalidResponse) and client.in_flight() == ()


def test_client_progress_must_increase() -> None:
    pair = Pair()
    pair.to_server(call(pair, progress_token=1))
    prog = line(
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": 1, "progress": 5},
        }
    )
    assert len(feed(pair.client, prog)) == 1
    assert feed(pair.client, prog) == []  # not increasing: dropped


def test_client_listen_checks() -> None:
    pair = Pair()
    flt = t.SubscriptionFilter(resource_subscriptions=["file:///d/"])
    lst = m.Request(
        id=pair.client.next_id(),
        method="subscriptions/listen",
        params=t.SubscriptionsListenRequestParams(notifications=flt),
    )
    (got,) = pair.to_server(lst)
    ack_params = t.SubscriptionsAcknowledgedNotificationParams(notifications=flt)
    ack = m.Notification(
        method="notifications/subscriptions/acknowledged", params=ack_params, request_id=got.id
    )
    wire = pair.server.send(ack)
    assert len(feed(pair.client, wire)) == 1
    (twice,) = feed(pair.client, wire)
    assert "already acknowledged (SUB-04)" in twice.error.message
    upd = m.Notification(
        method="notifications/resources/updated",
        params=t.ResourceUpdatedNotificationParams(uri="file:///d/x"),
    )
    assert [e.request_id for e in feed(pair.client, pair.server.send(upd))] == [got.id]
    raw = {
        "jsonrpc": "2.0",
        "method": "notifications/tools/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": got.id}},
    }
    (wrong,) = feed(pair.client, line(raw))
    assert "SUB-02" in wrong.error.message
    pair.client.cancel(got.id)
    assert feed(pair.client, line(raw)) == []  # late, after cancel
    assert pair.client.statistics().subscriptions == 0


def test_server_send_misuse() -> None:
    srv = server()
    feed(
        srv,
        req(1, "tools/call", {"name": "x"}),
        req(2, "subscriptions/listen", {"notifications": {}}),
    )
    with pytest.raises(m.LocalProtocolError, match="PAT-03"):
        srv.send(m.Request(id=1, method="tools/list", params=None))
    with pytest.raises(m.LocalProtocolError, match="PROG-04"):
        srv.send(m.Notification(method="notifications/progress", params=None))
    with pytest.raises(m.LocalProtocolError):
        srv.send(m.Notification(method="notifications/message", params=None))
    with pytest.raises(m.LocalProtocolError):
        srv.send(m.Notification(method="notifications/subscriptions/acknowledged", params=None))
    with pytest.raises(m.LocalProtocolError):
        srv.send(m.Notification(method="notifications/cancelled", params=None))
    ackp = t.SubscriptionsAcknowledgedNotificationParams(notifications=t.SubscriptionFilter())
    with pytest.raises(m.LocalProtocolError, match="SUB-04"):
        srv.send(m.Notification(method="notifications/subscriptions/acknowledged", params=ackp))
    with pytest.raises(m.LocalProtocolError, match="not a subscriptions/listen"):
        srv.send(
            m.Notification(
                method="notifications/subscriptions/acknowledged", params=ackp, request_id=1
            )
        )
    log = t.LoggingMessageNotificationParams(level="info", data=1)
    with pytest.raises(m.LocalProtocolError, match="SUB-15"):
        srv.send(m.Notification(method="notifications/message", params=log, request_id=2))
    prog = t.ProgressNotificationParams(progress_token="nope", progress=1)
    with pytest.raises(m.LocalProtocolError, match="PROG-06"):
        srv.send(m.Notification(method="notifications/progress", params=prog, request_id=1))
    assert srv.send(m.ErrorResponse(id=None, error=t.Error(code=-32600, message="x"))).startswith(
        b'{"jsonrpc":"2.0","error"'
    )
    srv.send(m.ErrorResponse(id=1, error=t.Error(code=-32603, message="boom")))
    with pytest.raises(m.LocalProtocolError, match="already answered"):
        srv.send(m.ErrorResponse(id=1, error=t.Error(code=-32603, message="boom")))
    assert srv.request_info(2) is not None and srv.request_info(2).listen is not None  # type: ignore[union-attr]


def test_server_drops_everything_for_a_cancelled_listen() -> None:
    srv = server()
    feed(srv, req(1, "subscriptions/listen", {"notifications": {"toolsListChanged": True}}))
    cancel = line(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    )
    assert feed(srv, cancel) == [m.Cancelled(id=1)]
    ackp = t.SubscriptionsAcknowledgedNotificationParams(notifications=t.SubscriptionFilter())
    sends = [
        m.Notification(
            method="notifications/subscriptions/acknowledged", params=ackp, request_id=1
        ),
        m.Notification(method="notifications/tools/list_changed", params=None, request_id=1),
        m.Notification(
            method="notifications/cancelled", params=t.CancelledNotificationParams(request_id=1)
        ),
        m.Notification(
            method="notifications/message",
            params=t.LoggingMessageNotificationParams(level="info", data=1),
            request_id=1,
        ),
        m.ErrorResponse(id=1, error=t.Error(code=-32603, message="x")),
    ]
    assert [srv.send(s) for s in sends] == [b""] * len(sends)
    assert srv.statistics().dropped_sends == len(sends)


def test_server_connection_closed_lists_lost_work() -> None:
    srv = server()
    feed(srv, req(1, "tools/list"), req(2, "subscriptions/listen", {"notifications": {}}))
    srv.receive_data(b"")
    assert srv.next_event() == m.ConnectionClosed(in_flight=(1,), subscriptions=(2,))


def test_receive_message_accepts_typed_messages() -> None:
    srv = server()
    msg = m.decode_message(req(1, "tools/list"))
    srv.receive_message(msg)
    srv.receive_message(b"[]")
    first, second = events(srv)
    assert isinstance(first, m.Request) and isinstance(second, m.InvalidMessage)


def test_encode_failure_leaves_state_unchanged() -> None:
    srv = server()
    feed(srv, req(1, "tools/call", {"name": "x"}))
    bad = t.CallToolResult(content=[t.TextContent(text="\ud800")])
    with pytest.raises(m.EncodeError):
        srv.send(m.Result(id=1, result=bad))
    assert srv.in_flight() == (1,)


def test_need_data_sentinel() -> None:
    assert repr(m.NEED_DATA) == "NEED_DATA" and type(m.NEED_DATA) is not type


def test_capability_helpers() -> None:
    assert m.has_capability({"resources": {"subscribe": True}}, ("resources", "subscribe"))
    assert not m.has_capability({"resources": {"subscribe": False}}, ("resources", "subscribe"))
    assert not m.has_capability(None, ("tools",))
    assert m.missing_capabilities({"elicitation": {"form": {}}}, {"elicitation": {"url": {}}}) == {
        "elicitation": {"url": {}}
    }
    assert m.require_client_capabilities(None, {"roots": {}}) is not None
    caps = t.ClientCapabilities(sampling={}, roots={})
    reqs = {
        "s": t.CreateMessageRequest(
            params=t.CreateMessageRequestParams(messages=[], max_tokens=1)
        ),
        "r": t.ListRootsRequest(),
    }
    assert m.undeclared_input_requests(caps, reqs) == []
    assert m.undeclared_input_requests(None, reqs) == ["s", "r"]


def test_prog06_progress_token_must_belong_to_the_named_request() -> None:
    srv = server()
    feed(
        srv,
        req(1, "tools/call", {"name": "x"}, meta={**META, "progressToken": "a"}),
        req(2, "tools/call", {"name": "x"}),
    )
    prog = t.ProgressNotificationParams(progress_token="a", progress=1)
    with pytest.raises(m.LocalProtocolError, match="PROG-06"):
        srv.send(m.Notification(method="notifications/progress", params=prog, request_id=2))
    assert srv.send(m.Notification(method="notifications/progress", params=prog, request_id=1))
