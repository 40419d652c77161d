"""The client role on the same request lifecycle as the server (``_connection/_requests.py``).

What the client receives is looked up in the same table the server's sends are: a
move the table refuses is an ``InvalidMessage`` / ``InvalidResponse`` naming the
table's rule (or a quiet drop, where the spec's edge cases say to ignore it), and the
guards a receiver runs (``RECEIVED``) are the server's own functions.  Messages are
fed as the wire would carry them, and ``ClientConnection.request_state`` shows where
each request went.
"""

from __future__ import annotations

from typing import Any

import pytest

import mcp_proto as m
from mcp_proto import LocalProtocolError
from mcp_proto import types as t
from mcp_proto.lifecycle import GUARDS, RECEIVED, State, narrowed

SUB = "io.modelcontextprotocol/subscriptionId"


def sent(client: m.ClientConnection, *requests: tuple[str, Any]) -> list[int]:
    """Send each ``(method, params)``; the ids, in order."""
    ids = []
    for method, params in requests:
        id = client.next_id()
        client.send(m.Request(id=id, method=method, params=params))
        ids.append(id)
    return ids


def received(client: m.ClientConnection, message: dict[str, Any]) -> Any:
    client.receive_message({"jsonrpc": "2.0", **message})
    return client.next_event()


def note(method: str, params: dict[str, Any], sub: int | None = None) -> dict[str, Any]:
    if sub is not None:
        params = {**params, "_meta": {SUB: sub}}
    return {"method": method, "params": params}


def listen(meta: t.RequestMetaObject | None = None, **filter: Any) -> Any:
    filters = t.SubscriptionFilter(**filter)
    return t.SubscriptionsListenRequestParams(notifications=filters, meta=meta)


CALL = ("tools/call", t.CallToolRequestParams(name="x"))
ACK = "notifications/subscriptions/acknowledged"
TOOLS_CHANGED = "notifications/tools/list_changed"


def test_a_clients_requests_go_through_the_states_of_the_table() -> None:
    client = m.ClientConnection()
    call, sub, other = sent(
        client, CALL, ("subscriptions/listen", listen(tools_list_changed=True)), CALL
    )
    states = [client.request_state(i) for i in (call, sub, other, 99)]
    assert states == [State.OPEN, State.LISTENING, State.OPEN, State.UNKNOWN]
    ack = received(client, note(ACK, {"notifications": {"toolsListChanged": True}}, sub))
    assert isinstance(ack, m.SubscriptionAcknowledged)
    assert client.request_state(sub) is State.ACKNOWLEDGED
    result = received(client, {"id": call, "result": {"content": []}})
    assert isinstance(result, m.Result) and client.request_state(call) is State.DONE
    client.cancel(other)
    assert client.request_state(other) is State.CANCELLED
    ended = received(client, note("notifications/cancelled", {"requestId": sub}))
    assert isinstance(ended, m.SubscriptionEnded) and client.request_state(sub) is State.DONE
    assert client.statistics().in_flight == client.statistics().subscriptions == 0


def test_base06_an_id_in_flight_is_refused_by_the_table() -> None:
    client = m.ClientConnection()
    (id,) = sent(client, CALL)
    with pytest.raises(LocalProtocolError) as raised:
        client.send(m.Request(id=id, method=CALL[0], params=CALL[1]))
    assert raised.value.rule == "BASE-06"
    received(client, {"id": id, "result": {"content": []}})
    client.send(m.Request(id=id, method=CALL[0], params=CALL[1]))  # ended: the id may come back
    assert client.request_state(id) is State.OPEN


def test_input_required_ends_the_round_in_its_own_state() -> None:
    """MRTR-14: the retry is a new request; the round's id ends as INPUT_REQUIRED."""
    client = m.ClientConnection()
    (id,) = sent(client, CALL)
    event = received(
        client, {"id": id, "result": {"resultType": "input_required", "requestState": "s"}}
    )
    assert isinstance(event, m.InputRequired)
    assert client.request_state(id) is State.INPUT_REQUIRED


@pytest.mark.parametrize(
    ("result", "rule"),
    [
        ({"resultType": "input_required"}, "MRTR-09"),
        (
            {"resultType": "input_required", "inputRequests": {"a": {"method": "roots/list"}}},
            "MRTR-10",
        ),
    ],
)
def test_input_required_is_judged_by_the_servers_guards(result: dict[str, Any], rule: str) -> None:
    client = m.ClientConnection()
    (id,) = sent(client, CALL)
    event = received(client, {"id": id, "result": result})
    assert isinstance(event, m.InvalidResponse) and f"({rule})" in event.error.message
    assert client.request_state(id) is State.DONE


def test_sub04_a_change_before_the_ack_and_a_second_ack_are_invalid() -> None:
    client = m.ClientConnection()
    (sub,) = sent(client, ("subscriptions/listen", listen(tools_list_changed=True)))
    early = received(client, note(TOOLS_CHANGED, {}, sub))
    assert isinstance(early, m.InvalidMessage) and "(SUB-04)" in early.error.message
    received(client, note(ACK, {"notifications": {"toolsListChanged": True}}, sub))
    again = received(client, note(ACK, {"notifications": {"toolsListChanged": True}}, sub))
    assert isinstance(again, m.InvalidMessage) and "(SUB-04)" in again.error.message
    change = received(client, note(TOOLS_CHANGED, {}, sub))
    assert isinstance(change, m.Notification) and change.request_id == sub


def test_sub02_a_change_not_asked_for_is_invalid() -> None:
    client = m.ClientConnection()
    (sub,) = sent(client, ("subscriptions/listen", listen(tools_list_changed=True)))
    received(client, note(ACK, {"notifications": {"toolsListChanged": True}}, sub))
    event = received(client, note("notifications/prompts/list_changed", {}, sub))
    assert isinstance(event, m.InvalidMessage) and "(SUB-02)" in event.error.message


def test_sub07_an_ack_that_grants_more_than_asked_is_narrowed_to_the_request() -> None:
    """SUB-06 lets a server honour a subset; a superset is the server's fault, and the
    client keeps only what it asked for, so the listen goes on (SUB-07: gracefully)."""
    client = m.ClientConnection()
    asked = listen(tools_list_changed=True, resource_subscriptions=["file:///a"])
    (sub,) = sent(client, ("subscriptions/listen", asked))
    granted = {
        "toolsListChanged": True,
        "promptsListChanged": True,
        "resourceSubscriptions": ["file:///a", "file:///b"],
    }
    ack = received(client, note(ACK, {"notifications": granted}, sub))
    assert isinstance(ack, m.SubscriptionAcknowledged)
    assert ack.notifications == t.SubscriptionFilter(
        tools_list_changed=True, prompts_list_changed=None, resource_subscriptions=["file:///a"]
    )
    unasked = received(client, note("notifications/prompts/list_changed", {}, sub))
    assert isinstance(unasked, m.InvalidMessage) and "(SUB-02)" in unasked.error.message
    updated = note("notifications/resources/updated", {"uri": "file:///b"}, sub)
    assert isinstance(received(client, updated), m.InvalidMessage)


def test_narrowed_keeps_a_subset_as_it_is() -> None:
    asked = t.SubscriptionFilter(tools_list_changed=True, resource_subscriptions=["a", "b"])
    subset = t.SubscriptionFilter(resource_subscriptions=["b"])
    assert narrowed(subset, asked) is subset
    assert narrowed(t.SubscriptionFilter(prompts_list_changed=True), asked) == (
        t.SubscriptionFilter(prompts_list_changed=None)
    )


def test_sub15_prog05_progress_on_a_listen_or_not_increasing_is_dropped() -> None:
    client = m.ClientConnection()
    call = client.next_id()
    params = t.CallToolRequestParams(name="x", meta=client.meta(progress_token="p"))
    client.send(m.Request(id=call, method="tools/call", params=params))
    progress = {
        "method": "notifications/progress",
        "params": {"progressToken": "p", "progress": 2},
    }
    assert isinstance(received(client, progress), m.Notification)
    assert received(client, progress) is m.NEED_DATA  # 2 after 2 (PROG-05)
    sub = client.next_id()
    on_listen = listen(tools_list_changed=True, meta=client.meta(progress_token="q"))
    client.send(m.Request(id=sub, method="subscriptions/listen", params=on_listen))
    stream = note("notifications/progress", {"progressToken": "q", "progress": 1})
    assert received(client, stream) is m.NEED_DATA  # request-scoped, never on a listen (SUB-15)
    assert client.statistics().dropped_messages == 2


def test_cancel03_a_servers_cancel_of_a_call_is_dropped_and_the_call_goes_on() -> None:
    client = m.ClientConnection()
    (call,) = sent(client, CALL)
    assert received(client, note("notifications/cancelled", {"requestId": call})) is m.NEED_DATA
    assert client.request_state(call) is State.OPEN
    assert client.statistics().dropped_messages == 1


def test_cache01_is_the_senders_duty_a_client_takes_a_result_without_cache_fields() -> None:
    """``cache_fields`` is not in RECEIVED: the server must send them, the client reads on."""
    assert RECEIVED.issubset(GUARDS)
    assert "cache_fields" not in RECEIVED and "result_type" not in RECEIVED
    client = m.ClientConnection()
    (id,) = sent(client, ("tools/list", t.PaginatedRequestParams()))
    event = received(client, {"id": id, "result": {"tools": []}})
    assert isinstance(event, m.Result) and client.request_state(id) is State.DONE


def test_a_second_answer_is_dropped_as_one_after_a_cancel_is() -> None:
    """CANCEL-11/12: an answer to a request that ended is not an error, only counted."""
    client = m.ClientConnection()
    done, cancelled = sent(client, CALL, CALL)
    received(client, {"id": done, "result": {"content": []}})
    client.cancel(cancelled)
    for id in (done, cancelled):
        assert received(client, {"id": id, "result": {"content": []}}) is m.NEED_DATA
    unknown = received(client, {"id": 99, "result": {"content": []}})
    assert isinstance(unknown, m.InvalidMessage)
    assert client.statistics().dropped_messages == 2
