"""The request lifecycle as a table (``mcp_proto/_connection/_requests.py``), driven cell by cell.

For every state and every move, a tracker holds one request in that state and the move
is tried with a payload that passes every guard: the outcome is exactly the table's
(the next state, a quiet drop, or a ``LocalProtocolError`` naming the table's rule),
and a refused move changes nothing.  Each guard refuses one payload with its own
rule.  A pair missing from the table is refused with the move's default rule, and
every rule the table or a guard names is one of ``docs/requirements.md``.  The same
table, through ``ServerConnection``, is what ``test_connection*.py`` check on the
wire; the table itself is checked against the spec by a grid written out here.
"""

from __future__ import annotations

import doctest
import importlib.util
import re
from typing import Any

import pytest

import mcp_proto as m
from mcp_proto import LocalProtocolError
from mcp_proto import types as t
from mcp_proto.lifecycle import (
    DEFAULT_REFUSAL,
    DROP,
    GUARDS,
    TERMINAL,
    TRANSITIONS,
    Move,
    Refusal,
    RequestRecord,
    RequestTracker,
    State,
    Tombstones,
    Transition,
)
from tests.conftest import ROOT

ID = 7
LISTEN_FILTER = t.SubscriptionFilter(tools_list_changed=True, resource_subscriptions=["file:///a"])


def meta(**extra: Any) -> t.RequestMetaObject:
    return t.RequestMetaObject(
        protocol_version="2026-07-28", client_capabilities=t.ClientCapabilities(), **extra
    )


def record(listen: bool) -> RequestRecord:
    if listen:
        params = t.SubscriptionsListenRequestParams(notifications=LISTEN_FILTER, meta=meta())
        return RequestRecord(ID, "subscriptions/listen", params.meta, params)
    return RequestRecord(ID, "tools/call", meta(progress_token="tok", log_level="info"), None)


def tracker_in(state: State) -> RequestTracker:
    """A tracker whose request ``ID`` is in ``state``, got there by the table's own moves."""
    tracker = RequestTracker(Tombstones(16))
    if state is State.UNKNOWN:
        return tracker
    rec = record(listen=state in (State.LISTENING, State.ACKNOWLEDGED))
    tracker.open(rec)
    if state is State.ACKNOWLEDGED:
        rec.honoured = LISTEN_FILTER
        tracker.apply(rec, State.ACKNOWLEDGED)
    elif state in TERMINAL:
        tracker.apply(rec, state)
    assert tracker.state(ID) is state
    return tracker


def passing(move: Move, rec: RequestRecord | None) -> Any:
    """A payload for ``move`` that every guard of the move passes."""
    listen = rec is not None and rec.listen is not None
    return {
        Move.RESULT: t.SubscriptionsListenResult() if listen else t.CallToolResult(content=[]),
        Move.INPUT_REQUIRED: t.InputRequiredResult(request_state="s"),
        Move.PROGRESS: t.ProgressNotificationParams(progress_token="tok", progress=1),
        Move.LOG: t.LoggingMessageNotificationParams(level="error", data="x"),
        Move.ACK: LISTEN_FILTER,
        Move.CHANGE: ("notifications/tools/list_changed", None),
    }.get(move)


CELLS = [(state, move) for state in State for move in Move]


@pytest.mark.parametrize(("state", "move"), CELLS, ids=[f"{s.value}-{m.value}" for s, m in CELLS])
def test_every_cell_does_what_the_table_says(state: State, move: Move) -> None:
    tracker = tracker_in(state)
    rec = tracker.live.get(ID)
    entry = TRANSITIONS[(state, move)]
    before = (tracker.state(ID), dict(tracker.live), tracker.calls, tracker.listens)
    if move in (Move.REQUEST, Move.LISTEN):  # opening: the role looks it up, then opens
        assert tracker.entry(ID, move) is entry
    elif isinstance(entry, Refusal) and entry.drop:
        assert tracker.step(move, ID, passing(move, rec)) is None
    elif isinstance(entry, Refusal):
        with pytest.raises(LocalProtocolError) as raised:
            tracker.step(move, ID, passing(move, rec))
        assert raised.value.rule == entry.rule
    else:
        assert rec is not None and tracker.step(move, ID, passing(move, rec)) == (rec, entry.to)
        tracker.apply(rec, entry.to)
        assert tracker.state(ID) is entry.to
        return
    after = (tracker.state(ID), dict(tracker.live), tracker.calls, tracker.listens)
    assert after == before  # checking changes nothing


def test_opening_a_request_is_refused_while_its_id_is_live_and_allowed_after() -> None:
    for state in State:
        for move in (Move.REQUEST, Move.LISTEN):
            entry = TRANSITIONS[(state, move)]
            live = state not in TERMINAL and state is not State.UNKNOWN
            assert isinstance(entry, Refusal) == live, (state, move)
            if live:
                assert isinstance(entry, Refusal) and entry.rule == "BASE-06"


def test_terminal_states_keep_the_id_as_a_tombstone_and_free_the_counts() -> None:
    for state in TERMINAL:
        for listen in (False, True):
            tracker = RequestTracker(Tombstones(16))
            rec = record(listen)
            tracker.open(rec)
            assert (tracker.calls, tracker.listens) == ((0, 1) if listen else (1, 0))
            assert (rec.progress_token in tracker.by_token) == (not listen)
            tracker.apply(rec, state)
            assert (tracker.calls, tracker.listens, tracker.live, tracker.by_token) == (
                0,
                0,
                {},
                {},
            )
            assert tracker.state(ID) is state
            tracker.open(record(listen))  # the id is reused: the tombstone goes
            assert tracker.state(ID) in (State.OPEN, State.LISTENING)


def test_a_forgotten_tombstone_is_unknown_again() -> None:
    tracker = RequestTracker(Tombstones(1))
    tracker.open(rec := record(False))
    tracker.apply(rec, State.CANCELLED)
    tracker.gone.add("other", State.DONE)  # the oldest is forgotten
    assert tracker.state(ID) is State.UNKNOWN


# -- the guards -----------------------------------------------------------------------

FAILING = [
    # (state, move, payload, rule)
    (State.OPEN, Move.RESULT, t.ListToolsResult(tools=[]), "BASE-09"),  # another method's
    (State.OPEN, Move.INPUT_REQUIRED, t.InputRequiredResult(), "MRTR-09"),
    (
        State.OPEN,
        Move.INPUT_REQUIRED,
        t.InputRequiredResult(
            input_requests={
                "q": t.ElicitRequest(
                    params=t.ElicitRequestFormParams(
                        message="?", requested_schema={"type": "object"}
                    )
                )
            }
        ),
        "MRTR-10",
    ),
    (
        State.OPEN,
        Move.PROGRESS,
        t.ProgressNotificationParams(progress_token="tok", progress=0),
        "PROG-05",
    ),
    (State.OPEN, Move.LOG, t.LoggingMessageNotificationParams(level="debug", data=1), "LOG-04"),
    (State.LISTENING, Move.ACK, t.SubscriptionFilter(prompts_list_changed=True), "SUB-06"),
    (State.ACKNOWLEDGED, Move.CHANGE, ("notifications/prompts/list_changed", None), "SUB-02"),
]


@pytest.mark.parametrize(("state", "move", "payload", "rule"), FAILING)
def test_each_guard_refuses_with_its_rule(
    state: State, move: Move, payload: Any, rule: str
) -> None:
    tracker = tracker_in(state)
    if move is Move.PROGRESS:
        tracker.live[ID].last_progress = 0
    with pytest.raises(LocalProtocolError) as raised:
        tracker.step(move, ID, payload)
    assert raised.value.rule == rule
    assert tracker.state(ID) is state


def test_the_guards_the_table_names_exist_and_every_guard_is_used() -> None:
    named = {
        g for entry in TRANSITIONS.values() if isinstance(entry, Transition) for g in entry.guards
    }
    assert named == set(GUARDS)


def test_log_requested_and_mrtr_method_and_cache_fields() -> None:
    tracker = RequestTracker(Tombstones(4))
    tracker.open(RequestRecord(1, "tools/call", meta(), None))  # no logLevel
    params = t.LoggingMessageNotificationParams(level="error", data=1)
    with pytest.raises(LocalProtocolError, match="logLevel") as raised:
        tracker.step(Move.LOG, 1, params)
    assert raised.value.rule == "LOG-03"
    tracker.open(RequestRecord(2, "tools/list", meta(), None))
    with pytest.raises(LocalProtocolError) as raised:
        tracker.step(Move.INPUT_REQUIRED, 2, t.InputRequiredResult(request_state="s"))
    assert raised.value.rule == "MRTR-03"
    with pytest.raises(LocalProtocolError) as raised:
        tracker.step(Move.RESULT, 2, t.ListToolsResult(tools=[]))  # no ttlMs, no cacheScope
    assert raised.value.rule == "CACHE-01"
    cached = t.ListToolsResult(tools=[], ttl_ms=0, cache_scope="public")
    assert tracker.step(Move.RESULT, 2, cached) is not None


# -- totality and rule ids ------------------------------------------------------------


def test_the_table_has_every_cell_and_a_missing_one_names_the_moves_rule(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert set(TRANSITIONS) == set(CELLS)
    assert set(DEFAULT_REFUSAL) == set(Move)
    for state, move in CELLS:
        table = {k: v for k, v in TRANSITIONS.items() if k != (state, move)}
        monkeypatch.setattr("mcp_proto._connection._requests.TRANSITIONS", table)
        tracker = tracker_in(state)
        with pytest.raises(LocalProtocolError) as raised:
            tracker.step(move, ID, passing(move, tracker.live.get(ID)))
        assert raised.value.rule == DEFAULT_REFUSAL[move]
        assert state.value in str(raised.value)


def test_every_rule_named_is_a_requirement() -> None:
    path = ROOT / "docs" / "requirements.md"
    known = set(re.findall(r"^\| ([A-Z]+-\d+)[ |]", path.read_text(), re.MULTILINE))
    named = {e.rule for e in TRANSITIONS.values() if isinstance(e, Refusal) and e.rule}
    named |= set(DEFAULT_REFUSAL.values()) | {rule for _, rule in GUARDS.values()}
    assert named and named <= known, named - known
    assert DROP.rule is None


# -- the table against the spec, written out independently ----------------------------

#: each cell: the next state, ``drop``, or the rule a refusal names (from the spec pages);
#: one row per move, one column per state: UNKNOWN, OPEN, LISTENING, ACKNOWLEDGED, DONE,
#: INPUT_REQUIRED, CANCELLED (abbreviated as in :data:`SHORT`)
EXPECTED = """
request         open     BASE-06  BASE-06  BASE-06  open     open     open
listen          lstn     BASE-06  BASE-06  BASE-06  lstn     lstn     lstn
cancel          drop     cncl     cncl     cncl     drop     drop     drop
result          BASE-09  done     done     done     BASE-09  BASE-09  drop
input_required  BASE-09  inpt     MRTR-03  MRTR-03  BASE-09  BASE-09  drop
error           BASE-09  done     done     done     BASE-09  BASE-09  drop
progress        PROG-06  open     SUB-15   SUB-15   PROG-06  PROG-06  drop
log             BASE-09  open     SUB-15   SUB-15   BASE-09  BASE-09  drop
ack             BASE-09  SUB-04   ackd     SUB-04   BASE-09  BASE-09  drop
change          BASE-09  SUB-08   SUB-04   ackd     BASE-09  BASE-09  drop
note            BASE-09  open     lstn     ackd     BASE-09  BASE-09  drop
end_listen      BASE-09  CANCEL-03 done    done     BASE-09  BASE-09  drop
"""
SHORT = {
    "lstn": "listening",
    "ackd": "acknowledged",
    "inpt": "input_required",
    "cncl": "cancelled",
}


def test_the_table_is_the_one_the_spec_gives() -> None:
    rows = [line.split() for line in EXPECTED.strip().splitlines()]
    assert [Move(row[0]) for row in rows] == list(Move)
    for row in rows:
        move = Move(row[0])
        for state, want in zip(State, row[1:], strict=True):
            entry = TRANSITIONS[(state, move)]
            if isinstance(entry, Transition):
                got = entry.to.value
            else:
                got = "drop" if entry.drop else str(entry.rule)
            assert got == SHORT.get(want, want), (state, move)


# -- the generated diagram and the module's examples ----------------------------------


def test_the_diagram_in_the_docs_is_current() -> None:
    spec = importlib.util.spec_from_file_location(
        "gen_lifecycle", ROOT / "tools" / "gen_lifecycle.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    doc = ROOT / "docs" / "connections.md"
    text = doc.read_text()
    assert module.generate(text) == text, "run: uv run python tools/gen_lifecycle.py"
    assert "| `change` |" in text and "ACKNOWLEDGED --> DONE" in text


def test_the_public_modules_examples_run() -> None:
    import mcp_proto.lifecycle

    result = doctest.testmod(mcp_proto.lifecycle)
    assert result.attempted and not result.failed


# -- the server role moves its requests by the table ---------------------------------

WIRE_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def serving(*requests: tuple[int, str, dict[str, Any]]) -> m.ServerConnection:
    caps = t.ServerCapabilities(
        tools=t.ServerCapabilitiesTools(list_changed=True),
        resources=t.ServerCapabilitiesResources(subscribe=True),
    )
    server = m.ServerConnection(capabilities=caps)
    for id, method, params in requests:
        message = {"jsonrpc": "2.0", "id": id, "method": method}
        server.receive_message({**message, "params": {**params, "_meta": WIRE_META}})
        assert isinstance(server.next_event(), m.Request)
    return server


def cancel(server: m.ServerConnection, id: int) -> None:
    params = {"requestId": id}
    server.receive_message(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}
    )
    assert isinstance(server.next_event(), m.Cancelled)


def test_a_servers_requests_go_through_the_states_of_the_table() -> None:
    listen = {"notifications": {"toolsListChanged": True}}
    server = serving((1, "tools/call", {"name": "x"}), (2, "subscriptions/listen", listen))
    assert [server.request_state(i) for i in (1, 2, 3)] == [
        State.OPEN,
        State.LISTENING,
        State.UNKNOWN,
    ]
    ack = t.SubscriptionsAcknowledgedNotificationParams(
        notifications=t.SubscriptionFilter(tools_list_changed=True)
    )
    server.send(
        m.Notification(method="notifications/subscriptions/acknowledged", params=ack, request_id=2)
    )
    assert server.request_state(2) is State.ACKNOWLEDGED
    server.send(m.Result(id=1, result=t.CallToolResult(content=[])))
    end = t.CancelledNotificationParams(request_id=2)
    server.send(m.Notification(method="notifications/cancelled", params=end))  # CANCEL-02
    assert [server.request_state(i) for i in (1, 2)] == [State.DONE, State.DONE]
    assert server.statistics().in_flight == server.statistics().subscriptions == 0


def test_anything_for_a_cancelled_listen_is_dropped_and_counted() -> None:
    listen = {"notifications": {"toolsListChanged": True}}
    server = serving((2, "subscriptions/listen", listen))
    cancel(server, 2)
    assert server.request_state(2) is State.CANCELLED
    change = m.Notification(method="notifications/tools/list_changed", request_id=2)
    end = t.CancelledNotificationParams(request_id=2)
    assert server.send(change) == b""
    assert server.send(m.Notification(method="notifications/cancelled", params=end)) == b""
    assert server.statistics().dropped_sends == 2
    with pytest.raises(LocalProtocolError) as raised:  # a call is not a listen to end
        server = serving((3, "tools/call", {"name": "x"}))
        params = t.CancelledNotificationParams(request_id=3)
        server.send(m.Notification(method="notifications/cancelled", params=params))
    assert raised.value.rule == "CANCEL-03"
