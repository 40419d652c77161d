"""The one error model (issue 13): a root that carries the JSON-RPC error to send.

``McpError`` is the base; ``DecodeError`` (and ``RequestStateError``) and the
``ProtocolError`` pair are kinds of it, each with an HTTP status hint; errors are
read-only values that compare by value and pickle.  ``EncodeError`` stays apart.
"""

from __future__ import annotations

import importlib
import pickle
from typing import Any

import orjson
import pytest

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.http import refusal_status, transport_status
from mcp_proto.request_state import RequestStateError
from tests._http_helpers import CAPS, body, headers, make_server, parts_of, post, reply_of

CLASSES = [
    m.McpError,
    m.DecodeError,
    RequestStateError,
    m.ProtocolError,
    m.LocalProtocolError,
    m.RemoteProtocolError,
    m.EncodeError,
]
#: (class, base) -> is it a subclass
HIERARCHY = {
    m.DecodeError: {m.McpError},
    RequestStateError: {m.DecodeError, m.McpError},
    m.ProtocolError: {m.McpError},
    m.LocalProtocolError: {m.ProtocolError, m.McpError},
    m.RemoteProtocolError: {m.ProtocolError, m.McpError},
    m.EncodeError: {ValueError},
    m.McpError: set(),
}


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("base", CLASSES, ids=lambda c: c.__name__)
def test_the_hierarchy(cls: type, base: type) -> None:
    expected = cls is base or base in HIERARCHY[cls]
    assert issubclass(cls, base) is expected


def test_encode_error_is_a_local_bug_not_an_error_to_send() -> None:
    assert issubclass(m.EncodeError, ValueError) and not issubclass(m.EncodeError, m.McpError)


def examples() -> list[m.McpError]:
    return [
        m.McpError(-32602, "Unknown tool: nope", {"name": "nope"}),
        m.McpError(-32601, "Method not found: x", id=3, rule="ERR-07"),
        m.DecodeError(-32602, "Invalid value at /params/x", data={"path": "/params/x"}, id="a"),
        m.DecodeError(-32700, "Parse error", path="/x"),
        RequestStateError("signature", "signature mismatch"),
        m.LocalProtocolError("cannot send a result: request 99 is not in flight", rule="BASE-09"),
        m.LocalProtocolError("this exchange has no request to answer"),
        m.RemoteProtocolError("line longer than 16 bytes"),
    ]


FIELDS = ["code", "message", "data", "id", "http_status", "rule"]


@pytest.mark.parametrize("error", examples(), ids=repr)
@pytest.mark.parametrize("field", FIELDS)
def test_fields_are_read_only(error: m.McpError, field: str) -> None:
    before = getattr(error, field)
    with pytest.raises(AttributeError):
        setattr(error, field, 1)
    assert getattr(error, field) == before


def test_path_and_check_are_read_only_too() -> None:
    decode = m.DecodeError(-32602, "x", path="/params")
    state = RequestStateError("expired", "expired")
    for error, field in [(decode, "path"), (state, "path"), (state, "check")]:
        with pytest.raises(AttributeError):
            setattr(error, field, "other")
    assert (decode.path, state.path, state.check) == ("/params", "/params/requestState", "expired")


@pytest.mark.parametrize(
    ("error", "code", "message", "status"),
    [
        (m.McpError(-32601, "Method not found: x"), -32601, "Method not found: x", 404),
        (m.McpError(-32602, "Unknown tool: x"), -32602, "Unknown tool: x", 200),
        (m.McpError(-32603, "Internal error"), -32603, "Internal error", 200),
        (m.McpError(-32021, "Missing capability"), -32021, "Missing capability", 400),
        (m.McpError(-32602, "x", http_status=422), -32602, "x", 422),
        (m.DecodeError(-32602, "bad params"), -32602, "bad params", 400),
        (m.DecodeError(-32700, "Parse error"), -32700, "Parse error", 400),
        (m.DecodeError(-32601, "Method not found: y"), -32601, "Method not found: y", 404),
        (m.DecodeError(-32603, "too many", http_status=500), -32603, "too many", 500),
        (RequestStateError("expired", "expired"), -32602, "Invalid requestState: expired", 400),
        (m.LocalProtocolError("detail stays here", rule="BASE-09"), -32603, "Internal error", 500),
        (m.RemoteProtocolError("line too long"), -32700, "line too long", 400),
    ],
    ids=repr,
)
def test_the_hints(error: m.McpError, code: int, message: str, status: int) -> None:
    assert (error.code, error.message, error.http_status) == (code, message, status)
    assert error.error() == t.Error(code=code, message=message, data=error.data)


#: The status the Streamable HTTP transport gives each code it names (HTTP-18, ERR-09/10/11).
SPEC_STATUS = {-32601: 404, -32020: 400, -32021: 400, -32022: 400}
CODES = [*range(-32768, -31999), -1, 0, 1, 42, -32002, -32042]


def test_transport_status_is_the_spec_rule_for_every_code() -> None:
    got = {code: transport_status(code) for code in CODES}
    assert got == {code: SPEC_STATUS.get(code, 200) for code in CODES}


def test_a_refusal_is_never_a_success() -> None:
    for code in CODES:
        status = transport_status(code)
        assert refusal_status(code) == (status if status >= 400 else 400)
        assert m.DecodeError(code, "x").http_status == refusal_status(code)
        assert m.McpError(code, "x").http_status == status


def test_protocol_error_str_is_the_description_and_rule() -> None:
    assert str(m.LocalProtocolError("no such request", rule="BASE-09")) == (
        "no such request (BASE-09)"
    )
    assert str(m.RemoteProtocolError("line too long")) == "line too long"
    assert m.LocalProtocolError("x", rule="PAT-03").rule == "PAT-03"
    assert m.LocalProtocolError("x").rule is None


def test_mcp_error_keeps_its_positional_constructor() -> None:
    error = m.McpError(-32602, "Resource not found: a:b", {"uri": "a:b"})
    assert (error.code, error.message, error.data, error.id) == (
        -32602,
        "Resource not found: a:b",
        {"uri": "a:b"},
        None,
    )
    assert str(error) == "Resource not found: a:b"
    assert str(m.McpError(-32602, "x", rule="ERR-12")) == "x (ERR-12)"


def test_error_response_and_from_error() -> None:
    built = m.unsupported_protocol_version("2099-01-01", ["2026-07-28"])
    error = m.McpError.from_error(built, id=5)
    assert error.error() == built and error.http_status == 400
    assert error.error_response() == t.JSONRPCErrorResponse(id=5, error=built)
    assert m.McpError.from_error(built).error_response().id is None
    decode = m.DecodeError.from_error(t.Error(code=-32602, message="x"), id="r")
    assert type(decode) is m.DecodeError and decode.id == "r" and decode.http_status == 400


@pytest.mark.parametrize("error", examples(), ids=repr)
def test_pickle_round_trip(error: m.McpError) -> None:
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error) and back == error and str(back) == str(error)
    assert [getattr(back, f) for f in FIELDS] == [getattr(error, f) for f in FIELDS]
    assert back.args == error.args
    if isinstance(error, RequestStateError):
        assert back.check == error.check and back.path == error.path


def test_value_equality_and_hash() -> None:
    for a, b in zip(examples(), examples(), strict=True):
        assert a == b and hash(a) == hash(b)
    first, *others = examples()
    assert all(first != other for other in others)
    differ: list[tuple[Any, Any]] = [
        (m.DecodeError(-32602, "x", id=1), m.DecodeError(-32602, "x", id=2)),
        (m.DecodeError(-32602, "x", path="/a"), m.DecodeError(-32602, "x", path="/b")),
        (m.McpError(-32602, "x"), m.DecodeError(-32602, "x")),
        (m.McpError(-32602, "x"), m.McpError(-32602, "x", http_status=400)),
        (m.LocalProtocolError("a"), m.LocalProtocolError("b")),
        (m.LocalProtocolError("a"), m.LocalProtocolError("a", rule="PAT-03")),
    ]
    for a, b in differ:
        assert a != b
    assert m.McpError(-32602, "x") != t.Error(code=-32602, message="x")


def test_repr_names_the_class_and_what_differs_from_the_defaults() -> None:
    assert repr(m.DecodeError(-32602, "bad", id=1)) == (
        "DecodeError(code=-32602, message='bad', id=1)"
    )
    assert repr(m.McpError(-32602, "x", {"a": 1}, http_status=400, rule="ERR-12")) == (
        "McpError(code=-32602, message='x', id=None, data={'a': 1}, http_status=400,"
        " rule='ERR-12')"
    )
    assert repr(m.LocalProtocolError("no request", rule="BASE-09")) == (
        "LocalProtocolError('no request', rule='BASE-09')"
    )


@pytest.mark.parametrize("adapter", ["mcp_proto_sync", "mcp_proto_asyncio", "mcp_proto_trio"])
def test_the_adapters_mcp_error_is_the_core_one(adapter: str) -> None:
    assert importlib.import_module(adapter).McpError is m.McpError


# -- the HTTP binding: every status comes from a hint or transport_status ----------------------


def _listen() -> dict[str, Any]:
    return {"notifications": {"toolsListChanged": True}}


def _version(version: str) -> list[tuple[str, str]]:
    hdrs = [(k, v) for k, v in headers("tools/list") if k != "mcp-protocol-version"]
    return [*hdrs, ("mcp-protocol-version", version)]


#: name -> (server options, headers, body, status, code): every refusal the binding makes
#: before an application runs, with the status each had before the error model.
REFUSALS: dict[str, tuple[dict[str, Any], list[tuple[str, str]], bytes, int, int]] = {
    "bad JSON": ({}, headers("tools/list"), b'{"jsonrpc":', 400, -32700),
    "too deep": ({"max_depth": 3}, headers("tools/list"), body("tools/list", {}), 400, -32700),
    "a response (HTTP-08)": (
        {},
        headers("x"),
        b'{"jsonrpc":"2.0","id":1,"result":{}}',
        400,
        -32600,
    ),
    "jsonrpc 1.0": (
        {},
        headers("tools/list"),
        body("tools/list", {}).replace(b'"2.0"', b'"1.0"'),
        400,
        -32600,
    ),
    "a _meta field missing (META-08)": (
        {},
        headers("tools/list"),
        body("tools/list", {}).replace(b'"io.modelcontextprotocol/clientCapabilities"', b'"x"'),
        400,
        -32602,
    ),
    "an unknown method (HTTP-18)": ({}, headers("frob"), body("frob", {}), 404, -32601),
    "a removed method": ({}, headers("ping"), body("ping", {}), 404, -32601),
    "a capability not offered (ERR-07)": (
        {"connection": m.ServerConnection},
        headers("tools/list"),
        body("tools/list", {}),
        404,
        -32601,
    ),
    "an unsupported version (HTTP-17)": (
        {},
        _version("2099-01-01"),
        body("tools/list", {}, **{"io.modelcontextprotocol/protocolVersion": "2099-01-01"}),
        400,
        -32022,
    ),
    "a header mismatch (HTTP-38)": (
        {},
        headers("tools/call"),
        body("tools/list", {}),
        400,
        -32020,
    ),
    "over the subscription limit": (
        {"connection": lambda: m.ServerConnection(capabilities=CAPS, max_subscriptions=0)},
        headers("subscriptions/listen"),
        body("subscriptions/listen", _listen()),
        500,
        -32603,
    ),
    "an invalid notification (HTTP-10)": (
        {},
        headers("notifications/cancelled"),
        body("notifications/cancelled", {"requestId": {}}, id=None),
        400,
        -32602,
    ),
    "a notification whose params are no object": (
        {},
        headers("notifications/cancelled"),
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":3}',
        400,
        -32600,
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_every_refusal_keeps_its_status(case: str) -> None:
    options, hdrs, data, status, code = REFUSALS[case]
    ex, event = post(make_server(**options), data, hdrs)
    got, _, message = reply_of(ex, event)
    assert (got, message["error"]["code"]) == (status, code)
    assert event.error == t.Error(**message["error"])


@pytest.mark.parametrize("code", [*sorted(SPEC_STATUS), -32700, -32600, -32602, -32603, -32100, 7])
def test_an_application_error_gets_the_transport_status(code: int) -> None:
    ex, event = post(make_server(), body("tools/list", {}), headers("tools/list"))
    assert isinstance(event, m.Request)
    status, _, raw, ended = parts_of(
        ex, m.ErrorResponse(id=event.id, error=t.Error(code=code, message="x"))
    )
    assert (status, orjson.loads(raw)["error"]["code"], ended) == (
        SPEC_STATUS.get(code, 200),
        code,
        True,
    )


# -- events carry values --------------------------------------------------------------------


def _request(method: str, id: int = 1, **params: Any) -> bytes:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    message = {"jsonrpc": "2.0", "id": id, "method": method, "params": {**params, "_meta": meta}}
    return orjson.dumps(message) + b"\n"


#: bytes a client sends -> (code, the refusal's HTTP status hint, whether it is answered)
SERVER_REFUSALS = {
    "bad JSON": (b'{"jsonrpc":\n', -32700, 400, True),
    "a removed method": (_request("ping"), -32601, 404, True),
    "an unknown method": (_request("frob"), -32601, 404, True),
    "a capability not offered": (_request("prompts/list"), -32601, 404, True),
    "bad params": (_request("tools/call", name=3), -32602, 400, True),
    "a notification": (
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":3}\n',
        -32600,
        400,
        False,
    ),
    "a response": (b'{"jsonrpc":"2.0","id":1,"result":{}}\n', -32600, 400, False),
    "over the subscription limit": (
        _request("subscriptions/listen", 1, notifications={})
        + _request("subscriptions/listen", 2, notifications={}),
        -32603,
        500,
        True,
    ),
}


@pytest.mark.parametrize("case", sorted(SERVER_REFUSALS))
def test_a_server_refusal_is_a_value_with_its_status_hint(case: str) -> None:
    data, code, status, answered = SERVER_REFUSALS[case]
    caps = t.ServerCapabilities(tools=t.ServerCapabilitiesTools())
    server = m.ServerConnection(capabilities=caps, max_subscriptions=1)
    server.receive_data(data)
    event = server.next_event()
    while isinstance(event, m.Request):
        event = server.next_event()
    assert isinstance(event, m.InvalidMessage)
    assert type(event.error) is t.Error and (event.error.code, event.http_status) == (code, status)
    assert (event.reply is not None) is answered
    if event.reply is not None:
        assert event.reply.error == event.error
        assert orjson.loads(server.send(event))["error"]["code"] == code


def test_the_client_events_carry_the_error_value() -> None:
    client = m.ClientConnection()
    call = m.Request(id=1, method="tools/call", params=t.CallToolRequestParams(name="x"))
    client.send(call)
    client.receive_data(b'{"jsonrpc":"2.0","id":1,"result":{"content":3}}\n')
    invalid = client.next_event()
    assert isinstance(invalid, m.InvalidResponse) and type(invalid.error) is t.Error
    assert invalid.error.code == -32602 and invalid.error.data["path"] == "/content"
    client.receive_data(b'{"jsonrpc":"2.0","id":9,"result":{}}\n')
    stray = client.next_event()
    assert isinstance(stray, m.InvalidMessage) and type(stray.error) is t.Error
    assert stray.error.code == -32600 and stray.reply is None
