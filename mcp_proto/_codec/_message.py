"""Whole JSON-RPC messages: bytes to typed messages and back.

:func:`decode_message` is strict and total: any input either gives one of the
message classes below or raises :class:`~mcp_proto.DecodeError` carrying the
error to answer with.  The policy, in the order the checks run:

==========================================  =======  ============================
input                                        code     ``id`` of the error
==========================================  =======  ============================
invalid UTF-8, lone surrogate, bad JSON,     -32700   none
NaN/Infinity, a number out of range
nesting deeper than ``max_depth``            -32700   none
top level not an object (a batch array...)   -32600   none
``jsonrpc`` not ``"2.0"``                    -32600   the id, when valid
``id`` null, boolean, float or other         -32600   none
``method`` not a string, ``params`` not an   -32600   the id, when valid
object, both/neither ``result``/``error``
params that do not fit the method's schema   -32602   the id
==========================================  =======  ============================

Duplicate object keys: the last one wins (as with ``JSON.parse`` and Python's
``json``); the library reads each key once, so the body it validates is the
body it acts on.  Numbers beyond 64-bit integers are read as floats (and so are
refused where an integer is required).

Known request and notification methods give their specific class
(``CallToolRequest`` with ``CallToolRequestParams``); unknown ones give the
generic ``JSONRPCRequest`` / ``JSONRPCNotification`` so the caller can answer
``-32601``.  A result response carries ``InputRequiredResult`` or the generic
``Result`` (unknown keys in ``extra``); the connection that knows the method
turns it into the specific result with :func:`structure_result`.
"""

from __future__ import annotations

from typing import Any, Final, TypeAlias

import orjson

from .. import types as t
from .._errors import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, DecodeError, EncodeError
from ._base import Invalid
from ._compile import _unstructurers, invalid_to_decode_error, structurer, unstructure
from ._methods import METHODS, Kind

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "Message",
    "decode_message",
    "encode_message",
    "loads",
    "message_from_json",
    "structure_result",
]

#: Default bound on JSON nesting (objects and arrays); below orjson's own limits.
DEFAULT_MAX_DEPTH: Final = 128

Message: TypeAlias = (
    t.ClientRequest
    | t.ServerNotification
    | t.JSONRPCRequest
    | t.JSONRPCNotification
    | t.JSONRPCResultResponse
    | t.JSONRPCErrorResponse
)

_REQUESTS = {m: structurer(i.message_type) for m, i in METHODS.items() if i.kind is Kind.REQUEST}
_NOTIFICATIONS = {
    m: structurer(i.message_type) for m, i in METHODS.items() if i.kind is Kind.NOTIFICATION
}
_GENERIC_REQUEST = structurer(t.JSONRPCRequest)
_GENERIC_NOTIFICATION = structurer(t.JSONRPCNotification)
_RESULT_RESPONSE = structurer(t.JSONRPCResultResponse)
_ERROR_RESPONSE = structurer(t.JSONRPCErrorResponse)
_INPUT_REQUIRED = structurer(t.InputRequiredResult)


def loads(data: bytes | bytearray | memoryview | str, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """Parse JSON text strictly; raise :class:`DecodeError` (-32700) on anything invalid."""
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        raise DecodeError(PARSE_ERROR, f"Parse error: {e}") from None
    if type(obj) is dict or type(obj) is list:
        # Cheap bound first: nesting cannot exceed the number of brackets.
        if isinstance(data, str):
            opens = data.count("{") + data.count("[")
        else:
            raw = data if isinstance(data, bytes) else bytes(data)
            opens = raw.count(b"{") + raw.count(b"[")
        if opens > max_depth and _depth_exceeds(obj, max_depth):
            raise DecodeError(PARSE_ERROR, f"Parse error: nesting deeper than {max_depth}")
    return obj


def _depth_exceeds(obj: Any, limit: int) -> bool:
    stack = [(obj, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return True
        children = value.values() if type(value) is dict else value
        stack.extend((c, depth + 1) for c in children if type(c) is dict or type(c) is list)
    return False


def decode_message(
    data: bytes | bytearray | memoryview | str, *, max_depth: int = DEFAULT_MAX_DEPTH
) -> Message:
    """Decode one JSON-RPC message (see the module docs for the exact policy)."""
    return message_from_json(loads(data, max_depth))


def _invalid(message: str, id: Any = None) -> DecodeError:
    return DecodeError(INVALID_REQUEST, f"Invalid request: {message}", id=id)


def message_from_json(obj: Any) -> Message:
    """Classify and structure an already-parsed JSON value as a message."""
    if type(obj) is not dict:
        what = (
            "a batch (array) is not a valid MCP message"
            if type(obj) is list
            else ("the message must be a JSON object")
        )
        raise _invalid(what)
    raw_id = obj.get("id")
    id = raw_id if type(raw_id) is str or type(raw_id) is int else None
    if obj.get("jsonrpc") != "2.0":
        raise _invalid('"jsonrpc" must be "2.0"', id)
    if "id" in obj and id is None and ("method" in obj or "result" in obj or raw_id is not None):
        raise _invalid('"id" must be a string or an integer')
    method = obj.get("method")
    try:
        if method is not None:
            if type(method) is not str:
                raise _invalid('"method" must be a string', id)
            params = obj.get("params")
            if params is not None and type(params) is not dict:
                raise _invalid('"params" must be an object', id)
            if "id" in obj:
                fn = _REQUESTS.get(method, _GENERIC_REQUEST)
            else:
                fn = _NOTIFICATIONS.get(method, _GENERIC_NOTIFICATION)
            return fn(obj)  # type: ignore[misc, no-any-return]
        if "result" in obj:
            if "error" in obj:
                raise _invalid('a response has "result" or "error", not both', id)
            if id is None:
                raise _invalid('a result response needs an "id"')
            return _RESULT_RESPONSE(obj)  # type: ignore[misc, no-any-return]
        if "error" in obj:
            return _ERROR_RESPONSE(obj)  # type: ignore[misc, no-any-return]
    except Invalid as e:
        # A bad envelope (not under params) of a request or notification is -32600.
        envelope = method is not None and not e.pointer().startswith("/params")
        code = INVALID_REQUEST if envelope else INVALID_PARAMS
        raise invalid_to_decode_error(e, id=id, code=code) from None
    raise _invalid(
        'not a request, notification or response (no "method", "result" or "error")', id
    )


def structure_result(result: Any, method: str) -> Any:
    """Structure a result object (plain JSON or a generic ``Result``) for ``method``.

    ``resultType`` absent or ``"complete"`` gives the method's result class
    (``CallToolResult`` for ``tools/call``); ``"input_required"`` gives
    ``InputRequiredResult`` on the three methods that allow it (MRTR-03).  Any
    other value is invalid (BASE-14).  Raises :class:`DecodeError` (-32602).
    """
    if isinstance(result, t.Result):
        result = unstructure(result)
    info = METHODS.get(method)
    if info is None or info.result_type is None or info.kind is not Kind.REQUEST:
        raise DecodeError(INVALID_PARAMS, f"no result type for method {method!r}")
    kind = result.get("resultType") if type(result) is dict else None
    try:
        if kind == "input_required":
            if not info.input_required_allowed:
                raise DecodeError(
                    INVALID_PARAMS, f"input_required is not allowed on {method} (MRTR-03)"
                )
            return _INPUT_REQUIRED(result)  # type: ignore[misc]
        fn = structurer(info.result_type)
        assert fn is not None
        return fn(result)
    except Invalid as e:
        raise invalid_to_decode_error(e) from None


def encode_message(message: Any) -> bytes:
    """Encode a message as compact UTF-8 JSON, with no newline anywhere in it.

    Raises :class:`EncodeError` when the value cannot be a valid message
    (a missing required field, a lone surrogate, an integer beyond 64 bits).
    """
    fn = _unstructurers.get(type(message))
    try:
        obj = fn(message) if fn is not None else unstructure(message)
        return orjson.dumps(obj)
    except (orjson.JSONEncodeError, TypeError, AttributeError, KeyError) as e:
        # (the last two: an optional field of the wrong type, which is not checked)
        raise EncodeError(f"cannot encode {type(message).__name__}: {e}") from None
