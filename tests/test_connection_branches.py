"""The connection layer's remaining paths: extensions both ways, explicit stream targets,
misuse of the public events and guards.

Each test names what the spec (or the contract of the public piece) says should happen on a
path the main suites do not take: an extension's notification sent by a client, a server
that did not declare the extension of a ``resultType``, an extension's params that do not
decode, a change sent to one named listen, a listen result without ``serverInfo``.
"""

from __future__ import annotations

from typing import Any

import attrs
import orjson
import pytest

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.lifecycle import (
    GUARDS,
    GuardConfig,
    Move,
    RequestRecord,
    RequestTracker,
    Tombstones,
)

from .test_connection import CAPS, META, feed, line, req
from .test_connection_edges import TaskResult

TASKS = "io.modelcontextprotocol/tasks"
DECLARED = {**META, "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}}}
SUB = "io.modelcontextprotocol/subscriptionId"


@attrs.frozen(kw_only=True)
class TaskParams:
    task_id: str = attrs.field(metadata={"wire": "taskId"})
    meta: t.RequestMetaObject | None = attrs.field(default=None, metadata={"wire": "_meta"})
    extra: Any = attrs.field(factory=dict)


EXT = m.Extension(
    id=TASKS,
    requests={"tasks/get": (None, None), "tasks/typed": (TaskParams, TaskResult)},
    notifications={"notifications/tasks/status": None},
    result_types={"task": TaskResult},
)


def ext_server(**kw: Any) -> m.ServerConnection:
    caps = attrs.evolve(CAPS, extensions={TASKS: {}})
    return m.ServerConnection(capabilities=caps, extensions=[EXT], **kw)


def ext_client() -> m.ClientConnection:
    caps = t.ClientCapabilities(extensions={TASKS: {}})
    return m.ClientConnection(capabilities=caps, extensions=[EXT])


def wire(data: bytes) -> dict[str, Any]:
    message: dict[str, Any] = orjson.loads(data)
    return message


# -- the client and extensions ---------------------------------------------------------


def test_a_client_sends_an_extensions_notification_with_and_without_params() -> None:
    client = ext_client()
    bare = wire(client.send(m.Notification(method="notifications/tasks/status")))
    assert bare == {"jsonrpc": "2.0", "method": "notifications/tasks/status"}
    status = m.Notification(method="notifications/tasks/status", params={"state": "working"})
    assert wire(client.send(status))["params"] == {"state": "working"}


def test_a_client_receives_an_extensions_notification_as_it_came() -> None:
    client = ext_client()
    note = {"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": {"x": 1}}
    (event,) = feed(client, line(note))
    assert event == m.Notification(method="notifications/tasks/status", params={"x": 1})


def test_mrtr03_input_required_on_an_extensions_method_is_an_invalid_response() -> None:
    client = ext_client()
    client.send(m.Request(id=1, method="tasks/get", params={"taskId": "a"}))
    answer = {"resultType": "input_required", "requestState": "s"}
    (event,) = feed(client, line({"jsonrpc": "2.0", "id": 1, "result": answer}))
    assert isinstance(event, m.InvalidResponse) and "(MRTR-03)" in event.error.message
    assert client.statistics().in_flight == 0


def test_base14_a_result_type_the_server_did_not_declare_is_unknown() -> None:
    """Both sides must declare the extension for its ``resultType`` to count."""
    client = ext_client()
    discover = client.discover_request()
    client.send(discover)
    found = {"supportedVersions": ["2026-07-28"], "capabilities": {}, "serverInfo": {}}
    found["serverInfo"] = {"name": "s", "version": "1"}
    (event,) = feed(client, line({"jsonrpc": "2.0", "id": discover.id, "result": found}))
    assert isinstance(event, m.Result), event
    client.send(m.Request(id=7, method="tools/call", params=t.CallToolRequestParams(name="x")))
    task = {"resultType": "task", "taskId": "q"}
    (event,) = feed(client, line({"jsonrpc": "2.0", "id": 7, "result": task}))
    assert (
        isinstance(event, m.InvalidResponse) and "unknown resultType 'task'" in event.error.message
    )


# -- the server and extensions ---------------------------------------------------------


def test_an_extension_request_with_a_bad_meta_or_version_or_params_is_refused() -> None:
    server = ext_server()
    bad_meta = {**DECLARED, "io.modelcontextprotocol/clientCapabilities": "none"}
    old = {**DECLARED, "io.modelcontextprotocol/protocolVersion": "1999-01-01"}
    events = feed(
        server,
        req(1, "tasks/typed", {"taskId": "a"}, bad_meta),
        req(2, "tasks/typed", {"taskId": "a"}, old),
        req(3, "tasks/typed", {"taskId": 5}, DECLARED),
        req(4, "tasks/typed", {"taskId": "a"}, DECLARED),
    )
    codes = [e.error.code if isinstance(e, m.InvalidMessage) else None for e in events]
    assert codes == [-32602, -32022, -32602, None]  # INVALID_PARAMS, version (VER-xx), params
    assert "/taskId" in events[2].error.message
    assert isinstance(events[3], m.Request) and events[3].params.task_id == "a"


def test_base09_an_extension_method_answers_only_with_its_declared_classes() -> None:
    server = ext_server()
    feed(server, req(4, "tasks/typed", {"taskId": "a"}, DECLARED))
    with pytest.raises(m.LocalProtocolError, match="answers with one of TaskResult"):
        server.send(m.Result(id=4, result=t.CallToolResult(content=[])))
    assert wire(server.send(m.Result(id=4, result=TaskResult(task_id="a"))))["result"]["taskId"]


def test_a_guard_asked_about_a_method_no_one_knows_says_so() -> None:
    """The tracker is public (``mcp_proto.lifecycle``): a record of a method neither the
    registry nor an extension knows cannot be answered, and the error says why."""
    tracker = RequestTracker(Tombstones(4))
    meta = t.RequestMetaObject(
        protocol_version="2026-07-28", client_capabilities=t.ClientCapabilities()
    )
    tracker.open(RequestRecord(1, "vendor/unknown", meta, None))
    with pytest.raises(m.LocalProtocolError, match="no result type is known for 'vendor/unknown'"):
        tracker.step(Move.RESULT, 1, t.CallToolResult(content=[]))


def test_base18_an_extension_note_for_a_cancelled_request_is_dropped() -> None:
    server = ext_server()
    feed(server, req(1, "tasks/get", {"taskId": "a"}, DECLARED))
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    feed(server, line(cancel))
    note = m.Notification(method="notifications/tasks/status", request_id=1)
    assert server.send(note) == b""
    assert server.statistics().dropped_sends == 1


# -- listens ----------------------------------------------------------------------------


def listening(server: m.ServerConnection, id: int, **filter: Any) -> None:
    feed(server, req(id, "subscriptions/listen", {"notifications": filter}))
    ack = t.SubscriptionsAcknowledgedNotificationParams(notifications=t.SubscriptionFilter())
    ack = attrs.evolve(ack, notifications=t.SubscriptionFilter(tools_list_changed=True))
    method = "notifications/subscriptions/acknowledged"
    server.send(m.Notification(method=method, params=ack, request_id=id))


def test_sub08_a_change_sent_to_one_named_listen_carries_its_subscription_id() -> None:
    server = m.ServerConnection(capabilities=CAPS)
    listening(server, 5, toolsListChanged=True)
    listening(server, 6, toolsListChanged=True)
    sent = server.send(m.Notification(method="notifications/tools/list_changed", request_id=6))
    (only,) = sent.splitlines()
    assert wire(only)["params"]["_meta"] == {SUB: 6}


def test_sub12_a_listen_result_without_server_info_still_names_its_subscription() -> None:
    server = m.ServerConnection(capabilities=CAPS, stamp_server_info=False)
    listening(server, 5, toolsListChanged=True)
    body = wire(server.send(m.Result(id=5, result=t.SubscriptionsListenResult())))["result"]
    assert body["_meta"] == {SUB: 5}


# -- public pieces used wrongly, and their answers ----------------------------------------


def test_mrtr03_retrying_a_request_whose_params_take_no_input_responses_is_refused() -> None:
    request = m.Request(id=1, method="tools/list", params=t.PaginatedRequestParams())
    result = t.InputRequiredResult(request_state="s")
    event = m.InputRequired(id=1, result=result, request=request, round=1)
    with pytest.raises(ValueError, match="tools/list does not take input responses"):
        event.retry(id=2)


def test_change_in_filter_refuses_what_no_filter_names_and_an_update_without_a_uri() -> None:
    guard, rule = GUARDS["change_in_filter"]
    meta = t.RequestMetaObject(
        protocol_version="2026-07-28", client_capabilities=t.ClientCapabilities()
    )
    wanted = t.SubscriptionFilter(tools_list_changed=True, resource_subscriptions=["file:///a"])
    params = t.SubscriptionsListenRequestParams(notifications=wanted, meta=meta)
    record = RequestRecord(1, "subscriptions/listen", meta, params)
    record.honoured = wanted
    config = GuardConfig()
    assert guard(record, ("notifications/tools/list_changed", None), config) is None
    assert guard(record, ("notifications/message", None), config) is not None
    no_uri = t.ResourceUpdatedNotificationParams(uri=None)  # type: ignore[arg-type]
    assert guard(record, ("notifications/resources/updated", no_uri), config) is not None
    assert rule == "SUB-02"


def test_missing_capabilities_of_a_nested_capability_that_is_all_there_is_empty() -> None:
    declared = {"elicitation": {"form": {}, "url": {}}}
    assert m.missing_capabilities(declared, {"elicitation": {"form": {}}}) == {}
    assert m.missing_capabilities(declared, {"sampling": {}}) == {"sampling": {}}
