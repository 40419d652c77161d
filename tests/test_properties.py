"""Property tests of the codec: round trips over the whole model, and total decoding.

Values come from ``tests/strategies.py``, which derives a strategy for every model
class from its fields, hints and metadata.  Requirement IDs refer to
``../shared/notes/spec-base.md`` (``docs/requirements.md`` gives their spec pages).

Skipped: nothing from the class and alias round trips (every class of
``mcp_proto.types`` is generated, see :data:`SKIPPED`).  The whole-message round
trip only uses the shapes ``decode_message`` returns; the other message classes
decode, by design, to one of those (``ClientNotification`` is
``CancelledNotification`` on the wire; ``CallToolResultResponse`` and the other
method-specific responses are ``JSONRPCResultResponse``, whose ``result`` is
typed later by ``structure_result``).
"""

from __future__ import annotations

import json
import os
import typing
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mcp_proto
from mcp_proto import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHODS,
    PARSE_ERROR,
    DecodeError,
    decode_message,
    encode_message,
    structure,
    types,
    unstructure,
)

from .strategies import (
    ALIASES,
    MODEL_CLASSES,
    instances,
    json_objects,
    json_scalars,
    json_values,
    messages,
    method_names,
    of_type,
    texts,
)

#: Model classes left out of the round trips, with the reason (none so far).
SKIPPED: dict[type, str] = {}

#: Multiplies every ``max_examples`` (``MCP_PROTO_PROPERTY_SCALE=20`` for a thorough run);
#: the default keeps the file at a few seconds per hundred examples of each kind.
SCALE = max(1, int(os.environ.get("MCP_PROTO_PROPERTY_SCALE", "1")))
_SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


def examples(n: int) -> settings:
    return settings(max_examples=n * SCALE, deadline=None, suppress_health_check=_SLOW)


PER_CLASS = examples(10)

MESSAGE_CLASSES: tuple[type, ...] = typing.get_args(mcp_proto.Message)
ERROR_CODES = frozenset({PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS})


# ------------------------------------------------------------------ helpers


def dumps(value: Any) -> bytes:
    """JSON text of ``value`` (integers of any size: they are part of the input space)."""
    return json.dumps(value, ensure_ascii=False).encode()


def check_error(err: DecodeError) -> None:
    """A DecodeError carries a reply that can be sent as it is."""
    assert err.code in ERROR_CODES, err
    assert type(err.message) is str
    assert err.id is None or type(err.id) in (str, int), err.id
    if err.code == PARSE_ERROR:
        assert err.id is None  # ERR-13: no id could be read
    reply = encode_message(err.error_response())
    assert b"\n" not in reply
    assert decode_message(reply) == err.error_response()


def decode_or_error(raw: bytes | str) -> Any:
    """Decode ``raw``: a message (which re-encodes to itself) or a sane DecodeError.

    Anything else escaping ``decode_message`` fails the test.
    """
    try:
        msg = decode_message(raw)
    except DecodeError as err:
        check_error(err)
        return err
    assert isinstance(msg, MESSAGE_CLASSES), type(msg)
    again = encode_message(msg)
    assert b"\n" not in again
    assert decode_message(again) == msg
    return msg


_DELETE = object()


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if type(value) is dict:
        for k, v in value.items():
            out += _paths(v, (*path, k))
    elif type(value) is list:
        for i, v in enumerate(value):
            out += _paths(v, (*path, i))
    return out


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        value = value[p]
    return value


def _put(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    """A copy of ``value`` with the node at ``path`` replaced (or deleted: ``_DELETE``)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    out: Any = dict(value) if type(value) is dict else list(value)
    if rest or new is not _DELETE:
        out[head] = _put(value[head], rest, new)
    elif type(out) is dict:
        del out[head]
    else:
        out.pop(head)
    return out


def _retyped(node: Any) -> Any:
    """The same datum in a neighbouring JSON type (what strict decoding must notice)."""
    if type(node) is bool:
        return int(node)
    if type(node) is int:
        return float(node)
    if type(node) is float:
        return int(node) if node.is_integer() and abs(node) < 2**63 else str(node)
    if type(node) is str:
        return [node]
    if node is None:
        return False
    if type(node) is list:
        return {str(i): v for i, v in enumerate(node)}
    return list(node.values())


@st.composite
def mutated_json(draw: st.DrawFn, value: Any, max_edits: int = 3) -> Any:
    """``value`` after a few edits: delete, replace, null, wrap, retype or add a key."""
    for _ in range(draw(st.integers(1, max_edits))):
        path = draw(st.sampled_from(_paths(value)))
        node = _get(value, path)
        ops = ["replace", "null", "wrap", "retype"]
        if path:
            ops.append("delete")
        if type(node) is dict:
            ops.append("add")
        op = draw(st.sampled_from(ops))
        if op == "delete":
            value = _put(value, path, _DELETE)
        elif op == "replace":
            value = _put(value, path, draw(json_values))
        elif op == "null":
            value = _put(value, path, None)
        elif op == "wrap":
            value = _put(value, path, [node])
        elif op == "retype":
            value = _put(value, path, _retyped(node))
        else:
            value = _put(value, path, {**node, draw(texts): draw(json_values)})
    return value


def _pick(draw: st.DrawFn, *options: st.SearchStrategy[Any]) -> Any:
    """Draw from one of ``options`` (repeat an option to weight it)."""
    return draw(draw(st.sampled_from(options)))


_ABSENT = st.just(_DELETE)


@st.composite
def jsonrpc_like(draw: st.DrawFn) -> dict[str, Any]:
    """JSON objects that look like JSON-RPC: mostly right, with typed or random members."""
    method = draw(method_names)
    info = METHODS.get(method)
    typed_params = json_objects
    typed_result = json_objects
    if info is not None and info.params_type is not None:
        typed_params = instances(info.params_type).map(unstructure)
    if info is not None and info.result_type is not None:
        typed_result = instances(info.result_type).map(unstructure)
    members = {
        "jsonrpc": _pick(draw, *[st.just("2.0")] * 6, _ABSENT, st.sampled_from(["1.0", 2.0])),
        "id": _pick(
            draw,
            *[_ABSENT] * 2,
            texts,
            st.integers(-(2**70), 2**70),
            st.sampled_from([None, True, 1.0, 1.5, [], {}]),
        ),
        "method": _pick(draw, *[st.just(method)] * 4, _ABSENT, json_scalars),
        "params": _pick(
            draw,
            *[typed_params] * 3,
            typed_params.flatmap(mutated_json),
            json_objects,
            _ABSENT,
            json_values,
        ),
        "result": _pick(
            draw,
            *[_ABSENT] * 4,
            typed_result,
            typed_result.flatmap(mutated_json),
            json_values,
        ),
        "error": _pick(
            draw,
            *[_ABSENT] * 4,
            instances(types.Error).map(unstructure),
            json_values,
        ),
    }
    obj = {k: v for k, v in members.items() if v is not _DELETE}
    obj.update(draw(st.dictionaries(texts, json_values, max_size=2)))
    return obj


def _shuffled(value: Any, rnd: Any) -> Any:
    """``value`` with the keys of every object, at every depth, in a random order."""
    if type(value) is dict:
        items = list(value.items())
        rnd.shuffle(items)
        return {k: _shuffled(v, rnd) for k, v in items}
    if type(value) is list:
        return [_shuffled(v, rnd) for v in value]
    return value


# ------------------------------------------------------------------ 1-2: the model round trip


def test_every_model_class_is_generated() -> None:
    """The parametrisation below covers all of ``mcp_proto.types`` (155 schema names)."""
    assert len(MODEL_CLASSES) + len(ALIASES) == len(types.__all__)
    assert not set(SKIPPED) - set(MODEL_CLASSES)


@pytest.mark.parametrize(
    "cls", [c for c in MODEL_CLASSES if c not in SKIPPED], ids=lambda c: c.__name__
)
@PER_CLASS
@given(data=st.data())
def test_model_class_round_trip(cls: type, data: st.DataObject) -> None:
    """structure(unstructure(x)) == x, also through the JSON text, for every class."""
    x = data.draw(instances(cls), label="x")
    plain = unstructure(x)
    back = structure(plain, cls)
    assert type(back) is cls
    assert back == x
    assert unstructure(back) == plain
    wire = orjson.loads(orjson.dumps(plain))
    assert structure(wire, cls) == x


@pytest.mark.parametrize("name", sorted(ALIASES))
@PER_CLASS
@given(data=st.data())
def test_model_alias_round_trip(name: str, data: st.DataObject) -> None:
    """Unions decode to the member they were made from (by tag or by best fit)."""
    tp = ALIASES[name]
    x = data.draw(of_type(tp), label="x")
    plain = unstructure(x)
    back = structure(plain, tp)
    assert type(back) is type(x)
    assert back == x
    assert unstructure(back) == plain


@pytest.mark.parametrize("cls", MODEL_CLASSES[::4], ids=lambda c: c.__name__)
@PER_CLASS
@given(data=st.data())
def test_structure_is_total(cls: type, data: st.DataObject) -> None:
    """Bad values give DecodeError (-32602) only; what structures round-trips again."""
    plain = unstructure(data.draw(instances(cls), label="x"))
    bad = data.draw(st.one_of(mutated_json(plain), json_values), label="bad")
    try:
        got = structure(bad, cls)
    except DecodeError as err:
        assert err.code == INVALID_PARAMS
        assert err.path == "" or err.path.startswith("/")
        return
    assert type(got) is cls
    assert structure(unstructure(got), cls) == got


# ------------------------------------------------------------------ 3: whole messages


@examples(100)
@given(msg=messages())
def test_message_round_trip(msg: Any) -> None:
    """decode(encode(m)) == m for requests, notifications, results and errors.

    BASE-02/03 (``"jsonrpc": "2.0"``), BASE-04 (string or integer ids), BASE-11/15
    (``resultType`` always written), BASE-16 (error ids may be absent); STDIO-03:
    the encoding is one line.
    """
    data = encode_message(msg)
    assert b"\n" not in data
    assert orjson.loads(data) == unstructure(msg)
    back = decode_message(data)
    assert type(back) is type(msg)
    assert back == msg
    if hasattr(msg, "id"):
        assert type(back.id) is type(msg.id)  # ids are echoed exactly (BASE-04)


_newline_text = st.text(st.sampled_from('\n\r\u2028\u2029\x85a\\"'), min_size=1, max_size=6)


@examples(50)
@given(
    method=_newline_text,
    key=_newline_text,
    value=st.lists(_newline_text, max_size=3),
    id=st.one_of(_newline_text, st.integers()),
)
def test_encoded_messages_have_no_raw_newline(
    method: str, key: str, value: list[str], id: str | int
) -> None:
    """STDIO-03: messages never contain a raw newline, whatever their strings hold."""
    id = id if type(id) is str else id % 2**63
    for msg in [
        types.JSONRPCRequest(id=id, method=method, params={key: value}),
        types.JSONRPCNotification(method=method, params={key: value}, extra={"x-" + key: key}),
        types.JSONRPCErrorResponse(id=id, error=types.Error(code=1, message=key, data=value)),
    ]:
        data = encode_message(msg)
        assert b"\n" not in data
        assert b"\r" not in data
        assert decode_message(data) == msg


# ------------------------------------------------------------------ 4: decode is total


@examples(200)
@given(raw=st.binary(max_size=64))
def test_decode_is_total_on_bytes(raw: bytes) -> None:
    """Any bytes: a message or DecodeError (ERR-13: -32700 without id)."""
    decode_or_error(raw)


@examples(200)
@given(raw=st.text(max_size=40))
def test_decode_is_total_on_text(raw: str) -> None:
    """Any str, lone surrogates included: a message or DecodeError."""
    decode_or_error(raw)


_any_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=5)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@examples(100)
@given(value=_any_json)
def test_decode_is_total_on_json_values(value: Any) -> None:
    """Any JSON text (big numbers, NaN, surrogate escapes, batches: BASE-20)."""
    got = decode_or_error(json.dumps(value))
    if type(value) is not dict:
        assert isinstance(got, DecodeError)
        assert got.id is None


@examples(150)
@given(obj=jsonrpc_like())
def test_decode_is_total_on_jsonrpc_like_objects(obj: dict[str, Any]) -> None:
    """Objects with plausible members: a message or the error to answer with.

    BASE-03 (``jsonrpc``), BASE-04/05 (ids), BASE-08 (params), BASE-10/17 (result
    or error), META-08 (missing ``_meta``: -32602).
    """
    got = decode_or_error(dumps(obj))
    if obj.get("jsonrpc") != "2.0":
        assert isinstance(got, DecodeError)
        assert got.code == INVALID_REQUEST


@examples(50)
@given(obj=jsonrpc_like(), data=st.data())
def test_key_order_does_not_matter(obj: dict[str, Any], data: st.DataObject) -> None:
    """The same object with its members in another order decodes the same way."""
    items = data.draw(st.permutations(list(obj.items())), label="order")
    assert decode_or_error(dumps(dict(items))) == decode_or_error(dumps(obj))


@examples(50)
@given(obj=jsonrpc_like(), rnd=st.randoms(use_true_random=False))
def test_nested_key_order_does_not_matter(obj: dict[str, Any], rnd: Any) -> None:
    """Reordering keys at every depth keeps the outcome: the same message, or an error
    with the same code and id (which of two bad values is reported may differ)."""
    a = decode_or_error(dumps(obj))
    b = decode_or_error(dumps(_shuffled(obj, rnd)))
    if isinstance(a, DecodeError):
        assert isinstance(b, DecodeError)
        assert (a.code, a.id) == (b.code, b.id)
    else:
        assert a == b


# ------------------------------------------------------------------ 5: mutations


@st.composite
def mutated_bytes(draw: st.DrawFn) -> bytes:
    """A valid encoded message after a few byte flips, deletions, insertions or cuts."""
    data = bytearray(encode_message(draw(messages())))
    for _ in range(draw(st.integers(1, 4))):
        if not data:
            break
        i = draw(st.integers(0, len(data) - 1))
        op = draw(st.sampled_from(["flip", "set", "delete", "insert", "truncate", "repeat"]))
        if op == "flip":
            data[i] ^= draw(st.integers(1, 255))
        elif op == "set":
            data[i] = draw(st.sampled_from(b'{}[]",:\\0 \n\x00\x80\xff-eE.'))
        elif op == "delete":
            del data[i]
        elif op == "insert":
            data.insert(i, draw(st.integers(0, 255)))
        elif op == "truncate":
            del data[i:]
        else:
            j = draw(st.integers(i, len(data)))
            data[i:i] = data[i:j]
    return bytes(data)


@examples(150)
@given(raw=mutated_bytes())
def test_decode_is_total_on_mutated_bytes(raw: bytes) -> None:
    """Corrupted messages: still a message or one DecodeError."""
    decode_or_error(raw)


@examples(100)
@given(data=st.data())
def test_decode_is_total_on_mutated_messages(data: st.DataObject) -> None:
    """Valid messages with members deleted, retyped or replaced: a message or DecodeError."""
    obj = unstructure(data.draw(messages(), label="msg"))
    bad = data.draw(mutated_json(obj), label="bad")
    decode_or_error(dumps(bad))
