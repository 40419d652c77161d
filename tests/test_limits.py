"""Every limit of the stream connections: it holds, and traffic under it is untouched.

The defaults are documented in ``docs/limits.md``; each test names the limit it checks.
"""

from __future__ import annotations

import tracemalloc

import orjson
import pytest

import mcp_proto as m
from mcp_proto import types as t
from tests.test_connection import CAPS, META, Pair, call, feed, line, req, server


def test_documented_defaults() -> None:
    assert m.DEFAULT_MAX_MESSAGE_SIZE == 16 * 1024 * 1024
    assert m.DEFAULT_MAX_DEPTH == 128
    srv, client = m.ServerConnection(), m.ClientConnection()
    assert (srv.max_in_flight, srv.max_subscriptions, client.max_rounds) == (1024, 1024, 8)


def test_message_size_limit_holds_and_spares_smaller_messages() -> None:
    srv = server(max_message_size=1024)
    at_limit = req(1, "tools/call", {"name": "x", "arguments": {"pad": ""}})
    at_limit = at_limit.replace(b'"pad":""', b'"pad":"' + b"a" * (1024 - len(at_limit) + 1) + b'"')
    assert len(at_limit) == 1025  # 1024 bytes plus the newline
    (ok,) = feed(srv, at_limit)
    assert isinstance(ok, m.Request)
    srv.receive_data(b"x" * 1026)  # no newline yet: the buffer stops at the limit (+1 for \r)
    with pytest.raises(m.RemoteProtocolError, match="1024"):
        srv.next_event()


def test_nesting_depth_limit_holds_and_spares_shallower_values() -> None:
    def nested(depth: int) -> bytes:
        value = "[" * depth + "]" * depth
        return req(1, "tools/call", {"name": "x", "arguments": {"v": orjson.loads(value)}})

    # the envelope is 3 deep (message, params, arguments): 3 + 17 = 20
    (ok,) = feed(server(max_depth=20), nested(17))
    assert isinstance(ok, m.Request)
    (bad,) = feed(server(max_depth=20), nested(18))
    assert bad.reply.error.code == m.PARSE_ERROR and "deeper than 20" in bad.reply.error.message


LISTED = t.ListToolsResult(tools=[], ttl_ms=0, cache_scope="public")


def test_in_flight_limit_pauses_and_resumes_when_a_request_ends() -> None:
    """``max_in_flight``: one request more is held, not refused; nothing behind it is read."""
    srv = server(max_in_flight=2)
    cancel = line({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 1}})  # fmt: skip
    first, second, paused = feed(srv, *(req(i, "tools/list") for i in (1, 2, 3)), cancel)
    assert isinstance(first, m.Request) and isinstance(second, m.Request)
    assert paused is m.PAUSED and srv.paused
    assert srv.next_event() is m.PAUSED  # every call, until a request ends
    assert srv.in_flight() == (1, 2)  # the held request is not in flight yet
    srv.send(m.Result(id=2, result=LISTED))
    assert not srv.paused
    third, cancelled = feed(srv)
    assert isinstance(third, m.Request) and third.id == 3
    assert isinstance(cancelled, m.Cancelled) and cancelled.id == 1  # read once resumed
    assert feed(srv) == []


def test_base06_a_duplicate_id_is_refused_at_once_even_at_the_limit() -> None:
    """Only a request the connection could admit is held: a duplicate is refused first."""
    srv = server(max_in_flight=1)
    first, duplicate, paused = feed(
        srv, req(1, "tools/list"), req(1, "tools/list"), req(2, "tools/list")
    )
    assert isinstance(first, m.Request)
    assert duplicate.reply.error.code == m.INVALID_REQUEST and paused is m.PAUSED


def test_a_paused_connection_closes_only_after_its_held_request() -> None:
    srv = server(max_in_flight=1)
    first, paused = feed(srv, req(1, "tools/list"), req(2, "tools/list"))
    assert isinstance(first, m.Request) and paused is m.PAUSED
    srv.receive_data(b"")  # the input ends while paused
    assert srv.next_event() is m.PAUSED
    srv.send(m.Result(id=1, result=LISTED))
    second, closed = feed(srv)
    assert isinstance(second, m.Request) and second.id == 2
    assert isinstance(closed, m.ConnectionClosed) and closed.in_flight == (2,)


def test_whole_messages_pause_too() -> None:
    srv = server(max_in_flight=1)
    for i in (1, 2, 3):
        srv.receive_message(orjson.loads(req(i, "tools/list")))
    first, paused = feed(srv)
    assert isinstance(first, m.Request) and paused is m.PAUSED
    srv.send(m.ErrorResponse(id=1, error=t.Error(code=-32603, message="x")))
    second, paused = feed(srv)
    assert second.id == 2 and paused is m.PAUSED


def test_max_in_flight_must_admit_a_request() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        server(max_in_flight=0)


def test_subscription_limit_holds_and_does_not_count_calls() -> None:
    srv = server(max_subscriptions=1, max_in_flight=1)
    listen = {"notifications": {"toolsListChanged": True}}
    ok, refused, call_ok = feed(
        srv,
        req(1, "subscriptions/listen", listen),
        req(2, "subscriptions/listen", listen),
        req(3, "tools/list"),
    )
    assert isinstance(ok, m.Request) and isinstance(call_ok, m.Request)
    assert refused.reply.error.code == m.INTERNAL_ERROR


def test_mrtr_round_cap_holds_and_spares_shorter_chains() -> None:
    pair = Pair()
    pair.client.max_rounds = 2
    (got,) = pair.to_server(call(pair))
    state = t.InputRequiredResult(request_state="s")
    for round in (1, 2):
        (ev,) = pair.to_client(m.Result(id=got.id, result=state))
        assert isinstance(ev, m.InputRequired) and ev.round == round
        (got,) = pair.to_server(ev.retry(id=pair.client.next_id()))
    (over,) = pair.to_client(m.Result(id=got.id, result=state))
    assert isinstance(over, m.InvalidResponse) and "more than 2" in over.error.message


def test_tombstones_are_bounded_and_recent_ones_still_drop_late_answers() -> None:
    client = m.ClientConnection(tombstones=4)
    for id in range(1, 11):
        client.send(m.Request(id=id, method="tools/list", params=t.PaginatedRequestParams()))
        client.cancel(id)
    assert len(client._gone) == 4
    late = line({"jsonrpc": "2.0", "id": 10, "result": {"tools": []}})
    assert feed(client, late) == []  # recent: dropped silently (CANCEL-11)
    forgotten = line({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}})
    (stray,) = feed(client, forgotten)  # too old to remember: reported, not crashed
    assert isinstance(stray, m.InvalidMessage)


def test_finished_requests_leave_no_memory_behind() -> None:
    srv = m.ServerConnection(capabilities=CAPS, tombstones=64)

    def cycle(first: int, count: int) -> None:
        for id in range(first, first + count):
            srv.receive_data(req(id, "tools/call", {"name": "x"}))
            event = srv.next_event()
            assert isinstance(event, m.Request)
            srv.send(m.Result(id=id, result=t.CallToolResult(content=[])))

    cycle(0, 200)  # warm up caches and the tombstone ring
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    cycle(200, 2000)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    assert grown < 64 * 1024, f"{grown} bytes kept after 2000 finished requests"
    assert srv.in_flight() == () and META  # nothing left in flight


def _http_head(extra: str) -> bytes:
    body = orjson.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}}
    )
    head = (
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        "accept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\n"
        f"mcp-method: server/discover\r\ncontent-length: {len(body)}\r\n{extra}\r\n"
    )
    return head.encode() + body


@pytest.mark.parametrize(
    "extra",
    [
        "x-big: " + "a" * (70 * 1024) + "\r\n",  # one huge header
        "".join(f"x-h{i}: v\r\n" for i in range(8000)),  # very many small ones
    ],
    ids=["size", "count"],
)
def test_http_head_limit_holds_and_spares_ordinary_requests(extra: str) -> None:
    from mcp_proto.http import HTTPServer, HTTPServerConnection, Reply

    conn = HTTPServerConnection(HTTPServer(connection=server))
    conn.receive_data(_http_head(extra))
    refused = conn.next_event()
    assert isinstance(refused, Reply) and refused.status == 431  # h11's 64 KiB head bound
    assert b" 431 " in conn.send(refused) and conn.must_close
    ordinary = HTTPServerConnection(HTTPServer(connection=server))
    ordinary.receive_data(_http_head("x-small: 1\r\n"))
    assert isinstance(ordinary.next_event(), m.Request)
