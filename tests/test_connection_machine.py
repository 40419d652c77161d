"""Rule-based state machine: a client and a server wired back to back over bytes.

Hypothesis drives random interleavings of calls, progress, log messages, results,
errors, MRTR rounds, cancellations, listens, acknowledgements and change
notifications, with every transfer split at a random point.  After every step the
two connections must agree with a simple model and with each other:

* the requests in flight are the same on both sides and in the model (BASE-06, BASE-21);
* each client request ends with exactly one terminal event (BASE-09, PAT-02);
* nothing is ever sent for a cancelled request (STDIO-13, CANCEL-11);
* stream notifications reach exactly the acknowledged listens (SUB-02, SUB-04, SUB-08);
* every line on the wire is one valid message with no raw newline (STDIO-03).
"""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

import mcp_proto as m
from mcp_proto import types as t

CAPS = t.ServerCapabilities(tools=t.ServerCapabilitiesTools(list_changed=True), logging={})
TERMINAL = (m.Result, m.ErrorResponse, m.InputRequired, m.InvalidResponse, m.SubscriptionEnded)
TOOLS_CHANGED = m.Notification(
    method="notifications/tools/list_changed", params=t.NotificationParams()
)
ELICIT = t.ElicitRequest(
    params=t.ElicitRequestFormParams(message="name?", requested_schema={"type": "object"})
)


def check_wire(data: bytes) -> None:
    """Every line is one complete, decodable message (STDIO-03)."""
    assert data.endswith(b"\n")
    for line in data[:-1].split(b"\n"):
        assert line and b"\r" not in line
        m.decode_message(line)


def drain(conn: Any) -> list[Any]:
    out = []
    while (event := conn.next_event()) is not m.NEED_DATA:
        assert event is not m.PAUSED  # the model keeps under max_in_flight
        out.append(event)
    return out


class Wire(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        caps = t.ClientCapabilities(elicitation=t.ClientCapabilitiesElicitation())
        self.client = m.ClientConnection(capabilities=caps, max_rounds=3)
        self.server = m.ServerConnection(capabilities=CAPS, max_in_flight=8, max_subscriptions=4)
        # the model: id -> what the test knows of each open request
        self.calls: dict[int, dict[str, Any]] = {}
        self.listens: dict[int, bool] = {}  # id -> acknowledged
        self.ended: dict[int, int] = {}  # id -> terminal events seen by the client
        self.cancelled: set[int] = set()

    # -- transport ----------------------------------------------------------

    def deliver(self, data: bytes, to: Any, split: int) -> list[Any]:
        if not data:
            return []
        check_wire(data)
        cut = split % (len(data) + 1)
        for part in (data[:cut], data[cut:]):
            if part:
                to.receive_data(part)
        events = drain(to)
        for event in events:
            if isinstance(event, TERMINAL):
                self.ended[event.id] = self.ended.get(event.id, 0) + 1
        return events

    def to_server(self, event: Any, split: int) -> list[Any]:
        return self.deliver(self.client.send(event), self.server, split)

    def to_client(self, event: Any, split: int) -> list[Any]:
        return self.deliver(self.server.send(event), self.client, split)

    def pick(self, data: st.DataObject, ids: Any) -> int:
        return data.draw(st.sampled_from(sorted(ids)))

    # -- client requests ----------------------------------------------------

    @precondition(lambda self: len(self.calls) < 8)
    @rule(progress=st.booleans(), log=st.booleans(), split=st.integers(0, 10_000))
    def call(self, progress: bool, log: bool, split: int) -> None:
        id = self.client.next_id()
        meta = self.client.meta(
            progress_token=f"p{id}" if progress else None, log_level="info" if log else None
        )
        params = t.CallToolRequestParams(name="echo", arguments={"n": id}, meta=meta)
        (got,) = self.to_server(m.Request(id=id, method="tools/call", params=params), split)
        assert isinstance(got, m.Request) and got.id == id and got.params.arguments == {"n": id}
        self.calls[id] = {"token": meta.progress_token, "log": log, "progress": 0, "round": 0}

    @precondition(lambda self: len(self.listens) < 4)
    @rule(split=st.integers(0, 10_000))
    def listen(self, split: int) -> None:
        id = self.client.next_id()
        flt = t.SubscriptionFilter(tools_list_changed=True)
        request = m.Request(
            id=id,
            method="subscriptions/listen",
            params=t.SubscriptionsListenRequestParams(notifications=flt),
        )
        (got,) = self.to_server(request, split)
        assert isinstance(got, m.Request) and got.id == id
        self.listens[id] = False

    # -- server answers -----------------------------------------------------

    @precondition(lambda self: any(c["token"] for c in self.calls.values()))
    @rule(data=st.data(), split=st.integers(0, 10_000))
    def progress(self, data: st.DataObject, split: int) -> None:
        id = self.pick(data, [i for i, c in self.calls.items() if c["token"]])
        call = self.calls[id]
        call["progress"] += 1
        params = t.ProgressNotificationParams(
            progress_token=call["token"], progress=call["progress"]
        )
        (got,) = self.to_client(
            m.Notification(method="notifications/progress", params=params), split
        )
        assert isinstance(got, m.Notification) and got.request_id == id  # PROG-02

    @precondition(lambda self: any(c["log"] for c in self.calls.values()))
    @rule(data=st.data(), split=st.integers(0, 10_000))
    def log(self, data: st.DataObject, split: int) -> None:
        id = self.pick(data, [i for i, c in self.calls.items() if c["log"]])
        params = t.LoggingMessageNotificationParams(level="warning", data={"id": id})
        (got,) = self.to_client(
            m.Notification(method="notifications/message", params=params, request_id=id), split
        )
        assert isinstance(got, m.Notification) and got.params.data == {"id": id}

    @precondition(lambda self: self.calls)
    @rule(data=st.data(), split=st.integers(0, 10_000))
    def complete(self, data: st.DataObject, split: int) -> None:
        id = self.pick(data, self.calls)
        result = t.CallToolResult(content=[t.TextContent(text=str(id))])
        (got,) = self.to_client(m.Result(id=id, result=result), split)
        assert isinstance(got, m.Result) and got.id == id
        assert got.result.content[0].text == str(id)
        del self.calls[id]

    @precondition(lambda self: self.calls)
    @rule(data=st.data(), split=st.integers(0, 10_000))
    def fail(self, data: st.DataObject, split: int) -> None:
        id = self.pick(data, self.calls)
        error = t.Error(code=m.INVALID_PARAMS, message="no")
        (got,) = self.to_client(m.ErrorResponse(id=id, error=error), split)
        assert isinstance(got, m.ErrorResponse) and got.id == id and got.code == m.INVALID_PARAMS
        del self.calls[id]

    @precondition(lambda self: self.calls)
    @rule(data=st.data(), split=st.integers(0, 10_000), state=st.text(max_size=20))
    def input_required(self, data: st.DataObject, split: int, state: str) -> None:
        id = self.pick(data, self.calls)
        call = self.calls.pop(id)
        result = t.InputRequiredResult(input_requests={"who": ELICIT}, request_state=state)
        (got,) = self.to_client(m.Result(id=id, result=result), split)
        if call["round"] + 1 > self.client.max_rounds:
            assert isinstance(got, m.InvalidResponse) and "rounds" in got.error.message
            return
        assert isinstance(got, m.InputRequired) and got.round == call["round"] + 1
        retry = got.retry(
            id=self.client.next_id(), input_responses={"who": t.ElicitResult(action="decline")}
        )
        (again,) = self.to_server(retry, split)
        assert isinstance(again, m.Request) and again.id == retry.id != id  # MRTR-14
        assert again.params.request_state == state  # MRTR-13: echoed exactly
        self.calls[retry.id] = {**call, "progress": 0, "round": call["round"] + 1}

    @precondition(lambda self: self.calls or self.listens)
    @rule(data=st.data(), split=st.integers(0, 10_000))
    def client_cancels(self, data: st.DataObject, split: int) -> None:
        id = self.pick(data, [*self.calls, *self.listens])
        (got,) = self.deliver(self.client.cancel(id, "user"), self.server, split)
        assert got == m.Cancelled(id=id, reason="user")
        # Anything the server sends for it now is dropped (STDIO-13).
        if id in self.calls:
            result: Any = t.CallToolResult(content=[])
        else:
            result = t.SubscriptionsListenResult()
        assert self.server.send(m.Result(id=id, result=result)) == b""
        self.calls.pop(id, None)
        self.listens.pop(id, None)
        self.cancelled.add(id)

    # -- subscriptions ------------------------------------------------------

    @precondition(lambda self: not all(self.listens.values()))
    @rule(data=st.data(), split=st.integers(0, 10_000))
    def acknowledge(self, data: st.DataObject, split: int) -> None:
        id = self.pick(data, [i for i, acked in self.listens.items() if not acked])
        params = t.SubscriptionsAcknowledgedNotificationParams(
            notifications=t.SubscriptionFilter(tools_list_changed=True)
        )
        ack = m.Notification(
            method="notifications/subscriptions/acknowledged", params=params, request_id=id
        )
        (got,) = self.to_client(ack, split)
        assert isinstance(got, m.SubscriptionAcknowledged) and got.id == id
        self.listens[id] = True

    @rule(split=st.integers(0, 10_000))
    def change(self, split: int) -> None:
        got = self.to_client(TOOLS_CHANGED, split)
        assert sorted(e.request_id for e in got) == sorted(
            i for i, acked in self.listens.items() if acked
        )
        assert all(e.method == TOOLS_CHANGED.method for e in got)

    @precondition(lambda self: any(self.listens.values()))
    @rule(data=st.data(), split=st.integers(0, 10_000))
    def end_listen(self, data: st.DataObject, split: int) -> None:
        id = self.pick(data, [i for i, acked in self.listens.items() if acked])
        (got,) = self.to_client(m.Result(id=id, result=t.SubscriptionsListenResult()), split)
        assert isinstance(got, m.SubscriptionEnded) and got.graceful and got.id == id
        del self.listens[id]

    # -- hostility ----------------------------------------------------------

    @rule(junk=st.sampled_from([b"{not json\n", b"[]\n", b'{"jsonrpc":"1.0","id":7}\n']))
    def junk_to_server(self, junk: bytes) -> None:
        self.server.receive_data(junk)
        (got,) = drain(self.server)
        assert isinstance(got, m.InvalidMessage) and got.reply is not None
        reply = orjson.loads(self.server.send(got))
        assert reply["error"]["code"] in (m.PARSE_ERROR, m.INVALID_REQUEST)

    # -- invariants ---------------------------------------------------------

    @invariant()
    def both_sides_agree_with_the_model(self) -> None:
        open_ids = {*self.calls, *self.listens}
        assert set(self.server.in_flight()) == open_ids
        assert set(self.client.in_flight()) == open_ids
        assert self.server.statistics().subscriptions == len(self.listens)
        assert self.client.statistics().subscriptions == len(self.listens)

    @invariant()
    def each_request_ends_once(self) -> None:
        assert all(count == 1 for count in self.ended.values())
        assert not (self.cancelled & set(self.ended))


Wire.TestCase.settings = settings(
    max_examples=60,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestWire = Wire.TestCase
