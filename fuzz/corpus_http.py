"""Seeds of the HTTP, SSE and JSON Schema harnesses, built at run time (see ``fuzz/corpus.py``).

* ``http_server``: raw HTTP/1.1 requests: POSTs built with ``HTTPClient().send(...)`` for
  several methods, every spec example request with the headers it needs, keep-alive pairs,
  notifications, a chunked body, a GET, a HEAD, a bad header, a foreign ``Host``, HTTP/1.0,
  and legacy sessions: ``initialize``, then requests, answers, a GET stream and a DELETE
  with the session's id, an unknown id, a wrong ``MCP-Protocol-Version``, too many sessions;
* ``http1``: the hostile requests of ``tests/http_hostile.py`` (each with a pipelined
  second request), then the ``http_server`` seeds;
* ``http_client``: raw responses to the client harness's POSTs (ids 1-4 in order): each
  example result or error re-addressed, as JSON and as an event stream, keep-alive
  sequences, ``202``, ``400``, ``401``, ``Connection: close``;
* ``sse``: event streams of the example messages, with comments, CR line ends, a BOM,
  several ``data:`` lines, and ``\\xff``-separated text for the round trip;
* ``schema``: ``[schema, instance...]``: each ``$defs`` type of ``schema.json`` (with the
  definitions it reaches) and that type's examples; the schemas inside the examples.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import orjson

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.http import HTTPClient, encode_header_value, sse_event, sse_message
from tests.http_hostile import cases

from .invariants import SPEC

HOST = b"host: localhost:8000\r\n"


def _head(start: bytes, headers: list[tuple[str, str]] | tuple[tuple[str, str], ...]) -> bytes:
    lines = b"".join(f"{k}: {v}\r\n".encode() for k, v in headers)
    return start + b"\r\n" + lines


def raw_post(headers: Any, body: bytes, *, target: str = "/mcp") -> bytes:
    """One HTTP/1.1 POST with a ``Content-Length`` body."""
    head = _head(
        f"POST {target} HTTP/1.1".encode(), [*headers, ("content-length", str(len(body)))]
    )
    return head + HOST + b"\r\n" + body


def _chunked(body: bytes, size: int = 7) -> bytes:
    parts = [body[i : i + size] for i in range(0, len(body), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"


def client_posts() -> list[bytes]:
    """POSTs made by ``HTTPClient`` for several methods (each from a fresh client, id 1)."""
    tool = t.Tool(
        name="sql",
        input_schema={
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        },
    )
    requests: list[Any] = [
        ("tools/call", t.CallToolRequestParams(name="echo", arguments={"text": "hi"})),
        ("tools/call", t.CallToolRequestParams(name="sql", arguments={"region": "Hello, 世界"})),
        ("tools/list", t.PaginatedRequestParams()),
        ("server/discover", t.RequestParams()),
        ("resources/read", t.ReadResourceRequestParams(uri="file:///a b")),
        ("resources/list", t.PaginatedRequestParams()),
        ("prompts/get", t.GetPromptRequestParams(name="p", arguments={"a": "b"})),
        (
            "subscriptions/listen",
            t.SubscriptionsListenRequestParams(
                notifications=t.SubscriptionFilter(tools_list_changed=True)
            ),
        ),
    ]
    out = []
    for method, base in requests:
        client = HTTPClient()
        client.tools["sql"] = tool
        params = base
        if method == "tools/call":
            meta = client.connection.meta(progress_token="p1")
            params = t.CallToolRequestParams(name=base.name, arguments=base.arguments, meta=meta)
        post = client.send(m.Request(id=1, method=method, params=params))
        out.append(raw_post(post.headers, post.body))
    return out


def _example_post(message: dict[str, Any]) -> bytes:
    """A POST for an example request, with the headers its body calls for."""
    params = message.get("params") if type(message.get("params")) is dict else {}
    meta = params.get("_meta") if type(params.get("_meta")) is dict else {}
    version = meta.get("io.modelcontextprotocol/protocolVersion", "2026-07-28")
    headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", str(version)),
        ("mcp-method", str(message["method"])),
    ]
    info = m.METHODS.get(message["method"])
    if info is not None and info.name_field is not None:
        name = params.get(info.name_field)
        if type(name) is str:
            headers.append(("mcp-name", encode_header_value(name)))
    return raw_post(headers, orjson.dumps(message))


def http_server_seeds(messages: list[Any]) -> list[bytes]:
    posts = client_posts()
    examples = [_example_post(v) for v in messages if "method" in v and "id" in v]
    out = [*posts, *examples]
    out += [posts[i] + posts[i + 1] for i in range(0, len(posts) - 1, 2)]  # keep-alive pairs
    out.append(examples[0] + examples[-1] if examples else posts[0] + posts[-1])
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    progress = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": "p", "progress": 1},
    }
    out.append(raw_post([("content-type", "application/json")], orjson.dumps(note)))
    out.append(raw_post([], orjson.dumps(progress)) + posts[0])
    head, _, body = posts[0].partition(b"\r\n\r\n")
    lines = [ln for ln in head.split(b"\r\n") if not ln.startswith(b"content-length")]
    chunked = b"\r\n".join(lines) + b"\r\ntransfer-encoding: chunked\r\n\r\n" + _chunked(body)
    out.append(chunked)
    out.append(b"GET /mcp HTTP/1.1\r\n" + HOST + b"accept: text/event-stream\r\n\r\n")
    out.append(b"HEAD /mcp HTTP/1.1\r\n" + HOST + b"\r\n" + posts[2])
    out.append(b"DELETE /other HTTP/1.1\r\n" + HOST + b"\r\n")
    out.append(posts[0].replace(b"mcp-method: tools/call", b"mcp-method tools/call"))
    out.append(posts[0].replace(b"mcp-method: tools/call", b"mcp-method: tools/list"))
    out.append(posts[0].replace(HOST, b"host: evil.example\r\n"))
    out.append(posts[0].replace(b"content-type: application/json", b"content-type: text/plain"))
    out.append(posts[2].replace(b"HTTP/1.1", b"HTTP/1.0", 1))
    out.append(raw_post([("accept", "application/json")], b'{"jsonrpc":"2.0","id":1,"result":{}}'))
    out.append(raw_post([], b"[{},{}]") + raw_post([], b"{bad json"))
    return out + session_seeds()


def session_seeds() -> list[bytes]:
    """Legacy session traffic on one connection (the harness's first id is ``SESSION_ONE``)."""
    from .invariants_http import MAX_SESSIONS, SESSION_ONE

    def post(message: Any, *extra: tuple[str, str]) -> bytes:
        return raw_post([("content-type", "application/json"),
                         ("accept", "application/json, text/event-stream"), *extra],
                        orjson.dumps(message))  # fmt: skip

    sid = ("mcp-session-id", SESSION_ONE)
    version = ("mcp-protocol-version", "2025-11-25")
    init = post({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
                   "clientInfo": {"name": "fuzz", "version": "1"}},
    })  # fmt: skip
    initialized = post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
    calls = [
        post({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
              "params": {"name": "x", "_meta": {"progressToken": 1}}}, sid, version),
        post({"jsonrpc": "2.0", "id": 2, "method": "ping"}, sid),
        post({"jsonrpc": "2.0", "id": 3, "method": "logging/setLevel",
              "params": {"level": "error"}}, sid),
        post({"jsonrpc": "2.0", "id": 4, "method": "resources/subscribe",
              "params": {"uri": "a://b"}}, sid),
        post({"jsonrpc": "2.0", "id": 9, "result": {}}, sid),
        post({"jsonrpc": "2.0", "method": "notifications/cancelled",
              "params": {"requestId": 1}}, sid),
    ]  # fmt: skip
    get = b"GET /mcp HTTP/1.1\r\n" + HOST + b"accept: text/event-stream\r\n"
    get += b"mcp-session-id: " + SESSION_ONE.encode() + b"\r\n\r\n"
    delete = b"DELETE /mcp HTTP/1.1\r\n" + HOST + b"mcp-session-id: " + SESSION_ONE.encode()
    delete += b"\r\n\r\n"
    detach = post({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                   "params": {"name": "detach"}}, sid, version)  # fmt: skip
    resume = get[:-2] + b"last-event-id: 0.0\r\n\r\n"  # the detached call's stream
    unknown = post({"jsonrpc": "2.0", "id": 5, "method": "ping"}, ("mcp-session-id", "f" * 32))
    wrong = post({"jsonrpc": "2.0", "id": 6, "method": "ping"}, sid,
                 ("mcp-protocol-version", "2025-06-18"))  # fmt: skip
    session = init + initialized + b"".join(calls)
    return [
        init,
        session,
        session + get,
        session + delete + calls[1],
        init + calls[0] + unknown + wrong,
        init * (MAX_SESSIONS + 2) + calls[1],
        init + initialized + detach + resume + resume + calls[1],
    ]


# -- responses for the client harness ----------------------------------------


def json_response(message: Any, status: int = 200, extra: bytes = b"") -> bytes:
    body = orjson.dumps(message)
    head = b"HTTP/1.1 %d X\r\ncontent-type: application/json\r\ncontent-length: %d\r\n" % (
        status,
        len(body),
    )
    return head + extra + b"\r\n" + body


def sse_response(messages: list[Any]) -> bytes:
    head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
    return head + b"\r\n" + _chunked(b"".join(sse_message(orjson.dumps(v)) for v in messages), 40)


def _result(id: int, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "result": result}


def http_client_seeds(messages: list[Any]) -> list[bytes]:
    answers = [v for v in messages if "id" in v and "method" not in v]
    complete = {"content": [], "resultType": "complete"}
    r2 = json_response(_result(2, {"tools": [], "resultType": "complete"}))
    out = []
    for v in answers:
        one = {**v, "id": 1}
        out.append(json_response(one))
        out.append(sse_response([one]) + r2)
    progress = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": "p1", "progress": 0.5},
    }
    log = {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "info", "data": "x"},
    }
    ack = {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 3}},
    }
    change = {
        "jsonrpc": "2.0",
        "method": "notifications/tools/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 3}},
    }
    for v in messages:
        if v.get("method") == "notifications/subscriptions/acknowledged":
            ack = {**v, "params": {**v.get("params", {}), **ack["params"]}}
    r4 = json_response(_result(4, {"contents": [], "resultType": "complete"}))
    full = sse_response([progress, log, _result(1, complete)]) + r2
    out.append(full + sse_response([ack, change, change]) + r4)
    out.append(full + sse_response([ack]) + r4)
    error = {"jsonrpc": "2.0", "error": {"code": -32022, "message": "version"}}
    out.append(json_response(error, 400) + r2)
    out.append(json_response({**error, "id": 1, "error": {"code": -32020, "message": "h"}}, 400))
    # a legacy server's refusal of a modern request (HTTP-42): the official SDKs' body
    refusal = {"code": -32600, "message": "Bad Request: Missing session ID"}
    out.append(json_response({**error, "id": "server-error", "error": refusal}, 400) + r2)
    out.append(json_response({**error, "id": 1, "error": {"code": -32601, "message": "m"}}, 404))
    out.append(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n" + r2)
    out.append(
        b'HTTP/1.1 401 U\r\nwww-authenticate: Bearer resource_metadata="https://a/b", '
        b'scope="files:read"\r\ncontent-length: 0\r\n\r\n'
    )
    out.append(json_response(_result(1, complete), extra=b"connection: close\r\n") + r2)
    out.append(b"HTTP/1.1 500 E\r\ncontent-type: text/html\r\ncontent-length: 4\r\n\r\n<h1>" + r2)
    out.append(sse_response([progress])[:-5])
    return out


# -- SSE ----------------------------------------------------------------------


def sse_seeds(messages: list[Any]) -> list[bytes]:
    frames = [sse_message(orjson.dumps(v)) for v in messages]
    out = [b"".join(frames[i : i + 2]) for i in range(0, len(frames), 2)]
    out.append(b': comment\r\ndata: {"a":\r\ndata: 1}\r\r\nevent: x\rdata: y\r\r')
    out.append(b"\xef\xbb\xbfid: 7\nretry: 10\ndata:no space\n\nevent\ndata\n\n")
    out.append(sse_event("line1\nline2\r\nline3", event="other") + b"data: open")
    out.append("a\xffb\r\nc\xff\xff: not a comment\xffdata: x".encode("utf-8", "surrogateescape"))
    out.append(b"data: " + b"x" * 300 + b"\n\n" + b": " + b"y" * 300 + b"\n")
    return out


# -- schemas --------------------------------------------------------------------


def _refs(value: Any) -> set[str]:
    if type(value) is dict:
        found = {value["$ref"][8:]} if type(value.get("$ref")) is str else set()
        return found.union(*(_refs(v) for v in value.values()))
    if type(value) is list:
        return set().union(*(_refs(v) for v in value))
    return set()


def _closure(defs: dict[str, Any], name: str) -> dict[str, Any]:
    seen, todo = {}, [name]
    while todo:
        n = todo.pop()
        if n in seen or n not in defs:
            continue
        seen[n] = defs[n]
        todo += _refs(defs[n])
    return seen


def _schemas_inside(value: Any) -> list[Any]:
    if type(value) is dict:
        found = [
            value[k] for k in ("inputSchema", "outputSchema", "requestedSchema") if k in value
        ]
        return found + [s for v in value.values() for s in _schemas_inside(v)]
    if type(value) is list:
        return [s for v in value for s in _schemas_inside(v)]
    return []


def schema_seeds(messages: list[Any]) -> list[bytes]:
    out = [
        b'[{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"]},'
        b'{"n":0},{"n":2},{}]',
        b'[{"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/a"},{"type":"string"}]}},"items":'
        b'{"$ref":"#/$defs/a"},"uniqueItems":true},["x","x"],[1]]',
        b'[{"pattern":"^[a-z]+$","format":"email","maxLength":5},"abc","a@b.c","toolongvalue"]',
        b'[{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"null"}],'
        b'"additionalItems":false,"dependencies":{"a":["b"]}},[null,1],{"a":1}]',
        b'[{"unevaluatedProperties":false,"properties":{"a":true},"if":{"required":["a"]},'
        b'"then":{"minProperties":2},"else":{"const":{}}},{"a":1},{"b":1},{}]',
        b'[{"$dynamicAnchor":"n","oneOf":[{"type":"array","items":{"$dynamicRef":"#n"}},'
        b'{"type":"number","multipleOf":0.5}]},[[1.5],2],[[[1.25]]]]',
    ]
    folder = SPEC / "examples"
    if not folder.is_dir():
        return out
    defs = json.loads((SPEC / "schema.json").read_text())["$defs"]
    for name in sorted(defs):
        schema = {"$ref": f"#/$defs/{name}", "$defs": _closure(defs, name)}
        examples = [json.loads(p.read_text()) for p in sorted(folder.glob(f"{name}/*.json"))]
        seed = orjson.dumps([schema, *examples[:3]])
        if len(seed) <= 8192:
            out.append(seed)
    for path in sorted(folder.glob("*/*.json")):
        for schema in _schemas_inside(json.loads(path.read_text())):
            out.append(orjson.dumps([schema, {}, {"a": 1}]))
    return out


def http1_seeds(messages: list[Any]) -> list[bytes]:
    """The differential test's hostile requests, then the ``http_server`` seeds."""
    return [data for _, data in cases()] + http_server_seeds(messages)


KINDS: dict[str, Callable[[list[Any]], list[bytes]]] = {
    "http_server": http_server_seeds,
    "http1": http1_seeds,
    "http_client": http_client_seeds,
    "sse": sse_seeds,
    "schema": schema_seeds,
}
