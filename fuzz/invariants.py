"""The invariants every fuzz harness checks, as plain functions of one input.

Each ``check_*`` takes the fuzzer's bytes and raises ``AssertionError`` (or lets an
undocumented exception escape) when the library breaks a promise:

* only documented exceptions escape (``DecodeError`` from the codec,
  ``RemoteProtocolError`` for lost framing);
* at most one response per received request, never one to a notification or a
  response (BASE-18, PAT-03);
* every message the library emits is valid against the 2026-07-28 schema (a dual-era
  server's: against 2026-07-28 or, for what it sends a legacy session, 2025-11-25);
* the events are the same whether the bytes arrive in one chunk, byte by byte,
  or in two pieces split anywhere.

The same functions run under atheris (``fuzz/fuzz_*.py``) and, over the seed
corpus, in the ordinary test suite (``tests/test_fuzz_seeds.py``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import orjson

import mcp_proto as m
from mcp_proto import types as t

SPEC = Path(__file__).resolve().parent.parent.parent / "shared" / "spec" / "2026-07-28"
LEGACY_SPEC = SPEC.parent / "2025-11-25"
TERMINAL = (
    m.Result,
    m.ErrorResponse,
    m.InputRequired,
    m.InvalidResponse,
    m.VersionNotSupported,
    m.SubscriptionEnded,
)
#: inputs longer than this are split in two pieces instead of fed byte by byte
BYTEWISE_LIMIT = 2048


@cache
def _validator(spec: Path = SPEC) -> Any:
    """A JSON Schema validator for ``JSONRPCMessage``, or ``None`` without the spec data."""
    path = spec / "schema.json"
    if not path.exists():
        return None
    import jsonschema

    schema = json.loads(path.read_text())
    root = {"$ref": "#/$defs/JSONRPCMessage", "$defs": schema["$defs"]}
    return jsonschema.Draft202012Validator(root)


def check_valid_output(data: bytes, *, legacy: bool = False) -> list[Any]:
    """Every line of ``data`` is one compact message valid against the schema.

    ``legacy``: the output of a dual-era server, valid against 2026-07-28 or 2025-11-25.
    """
    if not data:
        return []
    assert data.endswith(b"\n") and data.count(b"\n") == data.count(b"}\n"), data[:200]
    messages = [orjson.loads(line) for line in data[:-1].split(b"\n")]
    validator = _validator()
    for message in messages:
        if validator is not None:
            errors = sorted(validator.iter_errors(message), key=str)
            old = _validator(LEGACY_SPEC) if legacy and errors else None
            if old is not None and not any(old.iter_errors(message)):
                continue
            assert not errors, f"emitted message breaks the schema: {errors[0].message}"
    return messages


# -- the codec --------------------------------------------------------------


def check_decode(data: bytes) -> None:
    """``decode_message`` is total, and what it accepts re-encodes to a fixed point."""
    try:
        message = m.decode_message(data)
    except m.DecodeError as e:
        check_valid_output(m.encode_message(e.error_response()) + b"\n")
        return
    try:
        wire = m.encode_message(message)
    except m.EncodeError:
        return  # a value the codec decodes but refuses to emit (e.g. an integer beyond 64 bits)
    assert b"\n" not in wire
    again = m.decode_message(wire)
    assert again == message, (again, message)
    assert m.encode_message(again) == wire


# -- the stream connections -------------------------------------------------


def _pieces(data: bytes) -> Iterator[list[bytes]]:
    """The same bytes as one chunk, then byte by byte (or split in two when long)."""
    yield [data]
    if len(data) <= BYTEWISE_LIMIT:
        yield [data[i : i + 1] for i in range(len(data))]
    else:
        cut = (len(data) * 7) // 13
        yield [data[:cut], data[cut:]]


def _run(conn: Any, chunks: list[bytes], on_event: Any = None) -> list[Any]:
    """Events from ``chunks`` then end of input; lost framing ends the list with its error.

    ``on_event`` is called with each event as it comes (to answer it at once).
    """
    events: list[Any] = []
    for chunk in [*chunks, b""]:
        conn.receive_data(chunk)
        while True:
            try:
                event = conn.next_event()
            except m.RemoteProtocolError as e:
                events.append(("lost framing", str(e)))
                return events
            if event is m.NEED_DATA:
                break
            events.append(event)
            if on_event is not None:
                on_event(event)
            if isinstance(event, m.ConnectionClosed):
                return events
    raise AssertionError("end of input gave neither ConnectionClosed nor lost framing")


def _request_ids(data: bytes) -> Counter[Any]:
    """How many lines of ``data`` carry each id and are not responses (which are never answered).

    A line with an id but no method, result or error is an invalid request: JSON-RPC
    answers it with ``-32600`` and that id.
    """
    ids: Counter[Any] = Counter()
    for line in data.split(b"\n"):
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        is_response = "result" in obj or "error" in obj if type(obj) is dict else True
        if type(obj) is dict and "id" in obj and ("method" in obj or not is_response):
            key = obj["id"]
            ids[key if type(key) in (str, int) else None] += 1
    return ids


def new_server() -> m.ServerConnection:
    caps = t.ServerCapabilities(
        tools=t.ServerCapabilitiesTools(list_changed=True),
        resources=t.ServerCapabilitiesResources(list_changed=True),
        prompts=t.ServerCapabilitiesPrompts(),
        logging={},
        completions={},
    )
    return m.ServerConnection(capabilities=caps, max_in_flight=16, max_subscriptions=4)


def new_dual_server() -> m.ServerConnection:
    """``new_server``, dual-era: an ``initialize`` in the input opens a legacy session."""
    server = new_server()
    return server.fresh(legacy_versions=m.LEGACY_VERSIONS)


def check_server_stream(data: bytes) -> None:
    """A server fed ``data`` (client bytes) answers correctly and chunking changes nothing."""
    for make in (new_server, new_dual_server):
        runs = [_run(make(), chunks) for chunks in _pieces(data)]
        for other in runs[1:]:
            assert other == runs[0], "events depend on how the bytes were chunked"
        _check_answers(make(), data, legacy=make is new_dual_server)


def _check_answers(server: m.ServerConnection, data: bytes, *, legacy: bool) -> None:
    """At most one response per request; a dual-era server answers nothing it was not
    asked, and nothing for a session before its ``initialize`` (LEG-01)."""
    answered: Counter[Any] = Counter()
    asked = _request_ids(data)

    def answer(event: Any) -> None:
        if isinstance(event, m.InvalidMessage):
            out = server.send(event)
            assert (out == b"") == (event.reply is None)
        elif isinstance(event, m.Request):
            out = server.send(_answer(event))
        elif isinstance(event, m.AnsweredRequest):
            assert legacy, "only a dual-era server answers requests itself"
            out = server.send(event)
            if event.method != "ping":  # ping may come before initialize (LEG-04)
                assert server.legacy is not None, "answered for a session never opened"
        else:
            return
        for message in check_valid_output(out, legacy=legacy):
            assert "method" not in message  # a server only answers here
            answered[message.get("id")] += 1

    _run(server, [data], answer)
    for id, count in answered.items():
        if id is not None:
            assert count <= asked[id], f"{count} responses to id {id!r}, asked {asked[id]}"
    assert sum(answered.values()) <= data.count(b"\n") + 1


def _answer(request: m.Request) -> Any:
    """A valid answer to any admitted request."""
    if request.method == "server/discover":
        return m.Result(
            id=request.id,
            result=t.DiscoverResult(
                supported_versions=["2026-07-28"],
                capabilities=t.ServerCapabilities(),
                ttl_ms=0,
                cache_scope="public",
            ),
        )
    if request.method == "tools/call":
        return m.Result(id=request.id, result=t.CallToolResult(content=[t.TextContent(text="ok")]))
    return m.ErrorResponse(id=request.id, error=t.Error(code=m.INVALID_PARAMS, message="no"))


def new_client() -> tuple[m.ClientConnection, list[bytes]]:
    """A client with four requests in flight (ids 1-4), and the bytes it sent."""
    caps = t.ClientCapabilities(elicitation=t.ClientCapabilitiesElicitation())
    client = m.ClientConnection(capabilities=caps, max_rounds=2)
    flt = t.SubscriptionFilter(tools_list_changed=True, resource_subscriptions=["file:///a"])
    requests = [
        m.Request(
            id=1,
            method="tools/call",
            params=t.CallToolRequestParams(
                name="x", meta=client.meta(progress_token="p1", log_level="debug")
            ),
        ),
        m.Request(id=2, method="tools/list", params=t.PaginatedRequestParams()),
        m.Request(
            id=3,
            method="subscriptions/listen",
            params=t.SubscriptionsListenRequestParams(notifications=flt),
        ),
        m.Request(id=4, method="resources/read", params=t.ReadResourceRequestParams(uri="x:a")),
    ]
    return client, [client.send(r) for r in requests]


def check_client_stream(data: bytes) -> None:
    """A client fed ``data`` (server bytes) ends each request at most once, never answers."""
    runs = []
    for chunks in _pieces(data):
        client, sent = new_client()
        for out in sent:
            check_valid_output(out)
        runs.append(_run(client, chunks))
    for other in runs[1:]:
        assert other == runs[0], "events depend on how the bytes were chunked"
    client, _ = new_client()
    ended: Counter[Any] = Counter()

    def tally(event: Any) -> None:
        # An error without an id ends nothing: it cannot be correlated (BASE-16, edge 25).
        if isinstance(event, TERMINAL) and event.id is not None:
            ended[event.id] += 1
        if isinstance(event, m.InvalidMessage):
            assert client.send(event) == b""  # a client never answers (PAT-03)

    _run(client, [data], tally)
    assert all(n == 1 for n in ended.values()), ended
    assert set(ended) <= {1, 2, 3, 4}
