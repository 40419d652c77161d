"""The budgets an HTTP server's connections share (``mcp_proto.http.limits``), without I/O.

Listens per client and per server, body bytes past each connection's allowance, who a
client is, and the ``HTTPServerConnection`` that draws on the body budget: refused with
``503`` past it, given back when the exchange ends or the connection closes.  The adapters'
use of them under attack is in ``tests/test_http_attacks.py``.
"""

from __future__ import annotations

from typing import Any

import orjson

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.http import Challenge, Headers, HTTPServerConnection, ProtectedResource, Reply
from mcp_proto.http.limits import BodyAccount, BodyBudget, ListenBudget, client_key
from mcp_proto_runtime import ServerSettings
from tests._http_helpers import body, headers, make_server

KIB = 1024


def refusal_of(reply: Reply | None) -> tuple[int, dict[str, str], Any]:
    assert isinstance(reply, Reply), reply
    return reply.status, dict(reply.headers), orjson.loads(reply.body)


def test_listens_are_bounded_per_client_then_per_server_and_given_back() -> None:
    budget = ListenBudget(total=3, per_client=2)
    assert budget.admit(1, "a") is None and budget.admit(2, "a") is None
    status, hdrs, answer = refusal_of(budget.admit(3, "a"))
    assert status == 429 and hdrs["retry-after"] == "10" and hdrs["connection"] == "close"
    assert answer["id"] == 3 and answer["error"]["code"] == -32603
    assert "limit 2" in answer["error"]["message"]
    assert budget.admit(4, "b") is None
    status, _, answer = refusal_of(budget.admit(5, "c"))  # c has none, but the server is full
    assert status == 503 and answer["id"] == 5 and "limit 3" in answer["error"]["message"]
    budget.release("a")
    assert budget.admit(6, "c") is None
    for client in ("a", "b", "c"):
        budget.release(client)
    assert budget.open == 0 and budget._by_client == {}  # nothing kept for clients gone


def test_a_client_budget_never_exceeds_the_server_budget() -> None:
    assert ListenBudget(total=4, per_client=16).per_client == 4


def test_a_client_is_its_peer_address_or_its_accepted_bearer_token() -> None:
    plain = make_server()
    assert client_key(plain, Headers(), "127.0.0.1") == ("peer", "127.0.0.1")
    assert client_key(plain, Headers(), "::ffff:10.0.0.1") == ("peer", "10.0.0.1")
    one, other = (
        client_key(plain, Headers(), "2001:db8::1"),
        client_key(plain, Headers(), "2001:db8::ff:1"),
    )
    assert one == other == ("peer", "2001:db8::/64")  # one host holds a whole /64
    assert client_key(plain, Headers(), "2001:db8:0:1::1") != one
    bearer = Headers([("authorization", "Bearer tok-1")])
    assert client_key(plain, bearer, "127.0.0.1") == ("peer", "127.0.0.1")  # no auth: no principal
    auth = ProtectedResource(
        resource="http://127.0.0.1/mcp",
        authorization_servers=["https://auth.example"],
        verify=lambda token, _: None if token else Challenge(),
    )
    protected = make_server(auth=auth)
    assert client_key(protected, bearer, "127.0.0.1") == ("bearer", "tok-1")
    assert client_key(protected, Headers(), "127.0.0.1") == ("peer", "127.0.0.1")


def test_body_bytes_past_the_allowance_draw_on_the_shared_budget() -> None:
    budget = BodyBudget(total=10, allowance=4)
    first, second = BodyAccount(budget), BodyAccount(budget)
    assert first.add(4) and budget.used == 0  # within the allowance: nothing drawn
    assert first.add(6) and budget.used == 6
    assert second.add(4) and not second.add(5)  # 6 + 5 > 10: refused, nothing counted
    assert (second.held, second.reserved, budget.used) == (4, 0, 6)
    assert second.add(4) and budget.used == 10
    first.settle()
    assert budget.used == 4 and first.held == 0
    second.settle()
    second.settle()  # twice is harmless
    assert budget.used == 0


def head(length: int, method: str = "tools/call") -> bytes:
    lines = "".join(f"{k}: {v}\r\n" for k, v in headers(method, "echo"))
    return f"POST /mcp HTTP/1.1\r\n{lines}content-length: {length}\r\n\r\n".encode()


def events(conn: HTTPServerConnection, data: bytes) -> list[Any]:
    conn.receive_data(data)
    out = []
    while (event := conn.next_event()) is not m.NEED_DATA:
        out.append(event)
        if isinstance(event, (Reply, m.Request, m.ConnectionClosed)):
            break
    return out


def test_a_body_past_the_budget_is_refused_503_and_others_go_on() -> None:
    server = make_server(max_body_size=256 * KIB)
    budget = BodyBudget(total=64 * KIB, allowance=16 * KIB)
    stalled, refused, small = (HTTPServerConnection(server, budget=budget) for _ in range(3))
    assert events(stalled, head(200 * KIB) + b" " * (70 * KIB)) == []  # stalls, holding 54 KiB
    assert budget.used == 54 * KIB
    (reply,) = events(refused, head(200 * KIB) + b" " * (40 * KIB))
    status, hdrs, answer = refusal_of(reply)
    assert status == 503 and int(hdrs["retry-after"]) > 0 and hdrs["connection"] == "close"
    assert answer["error"]["code"] == -32603 and "id" not in answer
    refused.send(reply)
    assert refused.must_close and budget.used == 54 * KIB  # the refused one holds nothing
    call = body("tools/call", {"name": "echo"})
    (request,) = events(small, head(len(call)) + call)  # under its allowance: served
    assert isinstance(request, m.Request)
    stalled.close()  # the host closed the socket: its bytes are given back
    assert budget.used == 0


def test_413_wins_over_503_and_a_finished_exchange_gives_its_budget_back() -> None:
    server = make_server(max_body_size=64 * KIB)
    budget = BodyBudget(total=8 * KIB, allowance=16 * KIB)
    conn = HTTPServerConnection(server, budget=budget)
    chunked = head(0).replace(b"content-length: 0", b"transfer-encoding: chunked")
    (reply,) = events(conn, chunked + b"12000\r\n" + b" " * 0x12000 + b"\r\n")
    assert reply.status == 413 and budget.used == 0  # too large whatever the budget says
    conn = HTTPServerConnection(server, budget=budget)
    call = body("tools/call", {"name": "echo", "arguments": {"pad": "x" * (20 * KIB)}})
    (request,) = events(conn, head(len(call)) + call)
    assert isinstance(request, m.Request) and budget.used > 0  # held while it is answered
    conn.send(m.Result(id=request.id, result=t.CallToolResult(content=[])))
    assert budget.used == 0  # at once, not when the connection reads on


def test_a_listen_body_never_draws_on_the_budget_past_the_allowance_413() -> None:
    """A listen's exchange lasts as long as the listen: open listens must not pin the budget.

    Sixteen padded listens from one client (its whole listen budget) once held 63 MiB of
    the 64 MiB body budget for as long as they stayed open, and every other client's body
    over the allowance got ``503`` (found in review).
    """
    server = make_server(max_body_size=256 * KIB)
    budget = BodyBudget(total=64 * KIB, allowance=16 * KIB)
    listen = body("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    lines = "".join(f"{k}: {v}\r\n" for k, v in headers("subscriptions/listen"))

    def post(data: bytes) -> bytes:
        return f"POST /mcp HTTP/1.1\r\n{lines}content-length: {len(data)}\r\n\r\n".encode() + data

    conn = HTTPServerConnection(server, budget=budget)
    padded = listen[:-1] + b" " * (20 * KIB) + b"}"
    (reply,) = events(conn, post(padded))
    assert isinstance(reply, Reply) and reply.status == 413, reply
    assert ("connection", "close") in reply.headers and budget.used == 0
    conn.send(reply)
    assert conn.must_close
    conn = HTTPServerConnection(server, budget=budget)
    (request,) = events(conn, post(listen[:-1] + b" " * (15 * KIB) + b"}"))
    assert isinstance(request, m.Request) and request.method == "subscriptions/listen"
    assert budget.used == 0  # under the allowance: the shared budget is untouched


def test_server_settings_defaults_for_the_http_budgets() -> None:
    settings: ServerSettings[Any] = ServerSettings()
    listens, bodies = settings.budgets()
    assert (listens.total, listens.per_client) == (128, 16)  # half of max_connections
    assert (bodies.total, bodies.allowance) == (64 * 1024 * 1024, 64 * 1024)
    small: ServerSettings[Any] = ServerSettings(max_connections=10)
    assert small.max_listens == 5
