"""The ``legacy_client`` harness: a client in an ``initialize``-era session fed a hostile
server's bytes (issue 16).

The client has opened a 2025-11-25 session (a scripted ``initialize`` answer) and has
four requests in flight (ids 1-4: ``tools/call`` with a progress token, ``tools/list``,
``resources/read``, ``ping``).  Whatever the server sends -- requests of its own, answers
for ids never sent, notifications of any shape -- the invariants are:

* only documented events, never a stray exception; the same events whatever the chunking;
* each of our requests ends at most once, and only ours end;
* every event the application must send back (a ``ServerRequest`` answered, the
  ``AnsweredRequest`` of a ``ping``, the ``InvalidMessage`` refusing a request) gives one
  JSON-RPC response with the server's id, or nothing; a refusal of a message without a
  usable id gives nothing;
* the server's requests waiting for an answer stay within ``MAX_SERVER_REQUESTS``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import orjson

import mcp_proto as m
from mcp_proto import types as t

from .invariants import TERMINAL, _pieces, _run

__all__ = [
    "check_legacy_client_stream",
    "check_legacy_http_client",
    "legacy_client_seeds",
    "legacy_http_client_seeds",
    "new_legacy_client",
]

_MAX_SERVER_REQUESTS = 64  # mcp_proto's MAX_SERVER_REQUESTS (a private module's name)
_CAPS = t.ClientCapabilities(elicitation=t.ClientCapabilitiesElicitation())
_INIT_ANSWER = {
    "jsonrpc": "2.0",
    "id": 0,
    "result": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}, "resources": {"subscribe": True}, "logging": {}},
        "serverInfo": {"name": "fuzz-server", "version": "1"},
    },
}


def new_legacy_client() -> m.ClientConnection:
    """A client in a legacy session with requests 1-4 in flight."""
    client = m.ClientConnection(capabilities=_CAPS, first_id=1)
    init = m.Request(id=0, method="initialize", params={"protocolVersion": "2025-11-25"})
    client.send(init)
    client.receive_message(_INIT_ANSWER)
    assert isinstance(client.next_event(), m.Result) and client.legacy is not None
    client.send(m.Notification(method="notifications/initialized"))
    meta = client.meta(progress_token="p1")
    for request in (
        m.Request(id=1, method="tools/call", params=t.CallToolRequestParams(name="x", meta=meta)),
        m.Request(id=2, method="tools/list", params=t.PaginatedRequestParams()),
        m.Request(id=3, method="resources/read", params=t.ReadResourceRequestParams(uri="x:a")),
        m.Request(id=4, method="ping", params=None),
    ):
        client.send(request)
    return client


def _answer(client: m.ClientConnection, event: Any) -> bytes:
    """What the application sends back for ``event``, checked."""
    if isinstance(event, m.ServerRequest):
        kind = {
            "elicitation/create": t.ElicitResult(action="decline"),
            "sampling/createMessage": None,
            "roots/list": t.ListRootsResult(roots=[]),
        }[event.method]
        if kind is None:  # never: the client declared no sampling (LEG-07)
            raise AssertionError("a sampling request reached the application")
        out = client.send(event.answer(kind))
    elif isinstance(event, m.AnsweredRequest | m.InvalidMessage):
        out = client.send(event)
    else:
        return b""
    if out:
        (reply,) = [orjson.loads(line) for line in out.splitlines()]
        assert "method" not in reply and ("result" in reply) != ("error" in reply), reply
        assert type(reply.get("id")) in (str, int), reply
    return out


def check_legacy_client_stream(data: bytes) -> None:
    """See the module docstring."""
    runs = [_run(new_legacy_client(), chunks) for chunks in _pieces(data)]
    for other in runs[1:]:
        assert other == runs[0], "events depend on how the bytes were chunked"
    client = new_legacy_client()
    ended: Counter[Any] = Counter()

    def tally(event: Any) -> None:
        if isinstance(event, TERMINAL) and event.id is not None:
            ended[event.id] += 1
        _answer(client, event)
        legacy = client.legacy
        assert legacy is not None and len(legacy.asked) <= _MAX_SERVER_REQUESTS

    _run(client, [data], tally)
    assert all(n == 1 for n in ended.values()), ended
    assert set(ended) <= {1, 2, 3, 4}, ended


def _line(value: Any) -> bytes:
    return orjson.dumps(value) + b"\n"


def legacy_client_seeds() -> list[bytes]:
    """A legacy server's traffic for the four requests, and the server's own requests."""
    form = {"message": "?", "requestedSchema": {"type": "object"}}
    answers = [
        {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "ok"}]}},
        {"jsonrpc": "2.0", "id": 2, "result": {"tools": []}},
        {"jsonrpc": "2.0", "id": 3, "result": {"contents": []}},
        {"jsonrpc": "2.0", "id": 4, "result": {}},
        {"jsonrpc": "2.0", "id": 9, "result": {}},  # an id never sent
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "no"}},
    ]
    asks = [
        {"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create", "params": form},
        {"jsonrpc": "2.0", "id": 7, "method": "roots/list"},
        {"jsonrpc": "2.0", "id": 8, "method": "sampling/createMessage",
         "params": {"messages": [], "maxTokens": 1}},
        {"jsonrpc": "2.0", "id": 5, "method": "ping"},
        {"jsonrpc": "2.0", "id": [5], "method": "ping"},
        {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "x"}},
        {"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create", "params": [1]},
    ]  # fmt: skip
    notes = [
        {"jsonrpc": "2.0", "method": "notifications/progress",
         "params": {"progressToken": "p1", "progress": 1}},
        {"jsonrpc": "2.0", "method": "notifications/message",
         "params": {"level": "info", "data": "hi"}},
        {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "a"}},
        {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": 5}},
        {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "e1"}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
    ]  # fmt: skip
    out = [_line(v) for v in answers + asks + notes]
    out.append(b"".join(_line(v) for v in asks[:1] + notes[-2:] + answers))
    out.append(b"".join(_line({**asks[0], "id": n}) for n in range(70)))  # a request storm
    out.append(b"{not json\n" + _line(answers[0]))
    return out


# -- over HTTP: response bytes of one connection -------------------------------


def _http_session(chunks: list[bytes]) -> tuple[list[Any], Any]:
    """A client opening a legacy HTTP session: ``initialize`` (id 1), then, once the
    session is open, ``notifications/initialized``, ``tools/call`` (2) and ``ping`` (3),
    each POSTed when the connection is free; fed ``chunks`` as the server's bytes."""
    from mcp_proto.http import HTTPClient, HTTPClientConnection

    from .invariants_http import drive

    client = m.ClientConnection(capabilities=_CAPS)
    http = HTTPClient(client, max_message_size=1024)
    conn = HTTPClientConnection(http, host="localhost")
    params = t.CallToolRequestParams(name="x", meta=client.meta(progress_token="p1"))
    queue: list[Any] = [
        m.Notification(method="notifications/initialized"),
        m.Request(id=2, method="tools/call", params=params),
        m.Request(id=3, method="ping", params=None),
    ]
    sent = [conn.send(m.Request(id=1, method="initialize",
                                params={"protocolVersion": "2025-11-25"}))]  # fmt: skip
    return drive(conn, chunks, queue, sent, lambda: client.legacy is not None), http


def check_legacy_http_client(data: bytes) -> None:
    """Fuzzed responses to a legacy session's POSTs: a hostile ``Mcp-Session-Id``, 404
    storms, streams closed mid-call, the server's requests on a call's stream.  The same
    events whatever the chunking; each request ends at most once; the session id kept is
    visible ASCII or none; nothing escapes but the documented errors."""
    from mcp_proto.http import (
        AuthenticationRequired,
        RequestLost,
        SessionExpired,
        StreamInterrupted,
        UnexpectedResponse,
    )

    runs = [_http_session(chunks) for chunks in _pieces(data)]
    for other in runs[1:]:
        assert other[0] == runs[0][0], "events depend on how the bytes were chunked"
    events, http = runs[0]
    endings = (*TERMINAL, RequestLost, UnexpectedResponse, AuthenticationRequired,
               StreamInterrupted, SessionExpired)  # fmt: skip
    ended = Counter(e.id for e in events if isinstance(e, endings) and e.id is not None)
    assert all(n == 1 for n in ended.values()), ended
    assert set(ended) <= {1, 2, 3}, ended
    sid = http.session_id
    assert sid is None or (len(sid) <= 256 and all(0x21 <= ord(c) <= 0x7E for c in sid)), sid


def legacy_http_client_seeds() -> list[bytes]:
    """Responses to ``initialize``, then to the session's POSTs."""

    def json_response(message: Any, status: int = 200, extra: bytes = b"") -> bytes:
        body = orjson.dumps(message)
        head = b"HTTP/1.1 %d X\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
        return head % (status, len(body)) + extra + b"\r\n" + body

    def sse(frames: bytes) -> bytes:
        head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
        head += b"transfer-encoding: chunked\r\n\r\n"
        return head + b"%x\r\n%s\r\n0\r\n\r\n" % (len(frames), frames)

    init = {**_INIT_ANSWER, "id": 1}
    sid = b"mcp-session-id: s1\r\n"
    opened = json_response(init, extra=sid)
    accepted = b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n"
    done = {"jsonrpc": "2.0", "id": 2, "result": {"content": []}}
    ask = {"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create",
           "params": {"message": "?", "requestedSchema": {"type": "object"}}}  # fmt: skip
    pong = json_response({"jsonrpc": "2.0", "id": 3, "result": {}})
    gone = b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"
    primed = b"id: 0.0\nretry: 1000\ndata: \n\n"
    progress = {"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": "p1", "progress": 1}}  # fmt: skip
    calls = [
        json_response(done),
        json_response({"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "no"}}),
        json_response(
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "x"}}, 400
        ),
        sse(
            primed
            + b"data: "
            + orjson.dumps(ask)
            + b"\n\n"
            + b"id: 0.2\ndata: "
            + orjson.dumps(done)
            + b"\n\n"
        ),
        sse(primed + b"retry: 1000\n\n"),  # closed mid-call: resume
        sse(b"data: " + orjson.dumps(progress) + b"\n\n"),  # ended with no id: lost
        sse(primed + b"id: 0.1\ndata: " + orjson.dumps(progress) + b"\n\n"),
        sse(b"data: " + orjson.dumps({**ask, "method": "roots/list", "params": {}}) + b"\n\n"),
        b"HTTP/1.1 500 Oops\r\ncontent-length: 0\r\n\r\n",
        b"HTTP/1.1 401 No\r\nwww-authenticate: Bearer\r\ncontent-length: 0\r\n\r\n",
        gone,
    ]
    return [
        *(opened + accepted + call + pong for call in calls),
        *(opened + accepted + call for call in calls),
        opened + gone * 3,  # a 404 storm
        json_response(init, extra=b"mcp-session-id: a\x01b\r\n") + accepted,  # control chars
        json_response(init, extra=b"mcp-session-id: " + b"x" * 300 + b"\r\n"),
        json_response({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no"}}),
        opened + accepted + json_response({"jsonrpc": "2.0", "id": 9, "result": {}}),
    ]  # fmt: skip
