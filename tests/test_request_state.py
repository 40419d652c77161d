"""Sealed MRTR ``requestState`` (MRTR-07, MRTR-08, MRTR-17; edge cases 52-54)."""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.request_state import (
    DEFAULT_MAX_REQUEST_STATE_SIZE,
    RequestStateError,
    RequestStateSealer,
    missing_input_responses,
)

from .test_connection import Pair, call

KEY = bytes(range(32))
OLD = b"o" * 32
NOW = 1_000_000.0
BOUND = {"method": "tools/call", "params": {"name": "book", "arguments": {"n": 2}}}


def sealer(**kw: Any) -> RequestStateSealer:
    return RequestStateSealer(keys=kw.pop("keys", KEY), **kw)


def sealed(state: Any = None, **kw: Any) -> str:
    args = {**BOUND, "principal": "alice", "now": NOW, **kw}
    return sealer().seal({"step": 1} if state is None else state, **args)


def check_of(token: Any, keys: Any = KEY, **kw: Any) -> str:
    args = {**BOUND, "principal": "alice", "now": NOW + 1, **kw}
    with pytest.raises(RequestStateError) as info:
        sealer(keys=keys).verify(token, **args)
    assert info.value.code == -32602
    assert info.value.data == {"reason": info.value.check}
    return info.value.check


def test_mrtr07_round_trip_returns_the_state() -> None:
    token = sealed({"cart": [1, 2], "note": "caf\u00e9"})
    assert token.isascii() and token.startswith("v1.")
    state = sealer().verify(token, **BOUND, principal="alice", now=NOW + 299.5)
    assert state == {"cart": [1, 2], "note": "caf\u00e9"}


def test_mrtr07_every_byte_position_is_protected() -> None:
    token = sealed()
    for i, c in enumerate(token):
        for other in {
            "A" if c != "A" else "B",
            "." if c != "." else "x",
            "_" if c != "_" else "-",
        }:
            bad = token[:i] + other + token[i + 1 :]
            check = check_of(bad)
            assert check in ("format", "version", "signature"), (i, other, check)
    assert check_of(token[:-1]) == "signature"
    assert check_of(token + "A") == "signature"


def test_mrtr08_expiry_boundaries() -> None:
    token = sealed(ttl=10)
    verify = sealer().verify
    assert verify(token, **BOUND, principal="alice", now=NOW + 9.999) == {"step": 1}
    assert verify(token, **BOUND, principal="alice", now=NOW - 5) == {"step": 1}
    assert check_of(token, now=NOW + 10) == "expired"  # the expiry instant is already too late
    assert check_of(token, now=NOW + 1e9) == "expired"
    with pytest.raises(ValueError, match="finite"):
        verify(token, **BOUND, principal="alice", now=float("nan"))
    with pytest.raises(ValueError, match="finite"):
        sealer().seal(1, method="tools/call", now=float("inf"))
    with pytest.raises(ValueError, match="ttl"):
        sealer().seal(1, method="tools/call", now=NOW, ttl=0)


def test_mrtr08_default_ttl() -> None:
    token = sealer(ttl=5).seal(None, method="prompts/get", now=0)
    assert sealer().verify(token, method="prompts/get", now=4.9) is None
    with pytest.raises(RequestStateError, match="expired"):
        sealer().verify(token, method="prompts/get", now=5)


def test_mrtr08_method_params_and_principal_are_bound() -> None:
    token = sealed()
    assert check_of(token, method="prompts/get") == "method"
    assert check_of(token, params={"name": "book", "arguments": {"n": 3}}) == "params"
    assert check_of(token, params=None) == "params"
    assert check_of(token, principal="mallory") == "principal"
    assert check_of(token, principal=None) == "principal"
    anonymous = sealed(principal=None)
    assert check_of(anonymous, principal="") == "principal"
    # canonical JSON: key order in the salient params does not matter
    reordered = {"arguments": {"n": 2}, "name": "book"}
    assert sealer().verify(
        token, method="tools/call", params=reordered, principal="alice", now=NOW
    )


def test_key_rotation() -> None:
    old_token = sealer(keys=OLD).seal("s", **BOUND, now=NOW)
    rotated = sealer(keys=[KEY, OLD])
    assert rotated.verify(old_token, **BOUND, now=NOW) == "s"
    new_token = rotated.seal("s", **BOUND, now=NOW)
    assert sealer(keys=KEY).verify(new_token, **BOUND, now=NOW) == "s"
    with pytest.raises(RequestStateError, match="signature") as info:
        sealer(keys=OLD).verify(new_token, **BOUND, now=NOW)
    assert info.value.check == "signature"
    assert check_of(old_token, keys=[KEY], principal=None) == "signature"


def test_keys_are_checked_and_never_shown() -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        RequestStateSealer(keys=b"short")
    with pytest.raises(ValueError, match="at least one"):
        RequestStateSealer(keys=[])
    with pytest.raises(ValueError, match="max_size"):
        RequestStateSealer(keys=KEY, max_size=0)
    text = repr(sealer(keys=[KEY, OLD]))
    assert "ooo" not in text and "keys" not in text
    assert sealer(keys=bytearray(KEY)).keys == (KEY,)


@pytest.mark.parametrize(
    ("token", "check"),
    [
        (None, "format"),
        (42, "format"),
        (b"v1.a.b", "format"),
        ("", "format"),
        ("v1.abc", "format"),
        ("v1.a.b.c", "format"),
        ("v1.\u00e9.b", "format"),
        ("v1.\x00.b", "signature"),
        ("v2.e30.AAAA", "version"),
        ("V1.e30.AAAA", "version"),
        (".e30.AAAA", "version"),
        ("v1.e30.not base64!", "signature"),
        ("v1.e30.", "signature"),
        ("x" * (DEFAULT_MAX_REQUEST_STATE_SIZE + 1), "size"),
        ("\u00e9" * (DEFAULT_MAX_REQUEST_STATE_SIZE + 1), "size"),
    ],
)
def test_hostile_inputs(token: Any, check: str) -> None:
    assert check_of(token) == check


def test_size_is_checked_before_anything_else() -> None:
    small = sealer(max_size=200)
    with pytest.raises(RequestStateError) as info:
        small.verify("v1." + "A" * 300, **BOUND, now=NOW)
    assert info.value.check == "size"
    with pytest.raises(ValueError, match="over 200"):
        small.seal("x" * 500, **BOUND, now=NOW)


def forge(payload: Any) -> str:
    """A correctly signed token around a payload this module would not write."""
    body = "v1." + base64.urlsafe_b64encode(orjson.dumps(payload)).rstrip(b"=").decode()
    return f"{body}.{sealer()._mac(KEY, body)}"


@pytest.mark.parametrize(
    "payload",
    [
        [1],
        {"m": "tools/call"},
        {"m": "tools/call", "p": "", "u": None, "e": "soon", "s": 1},
        {"m": "tools/call", "p": "", "u": None, "e": 5, "s": 1},
        {"m": "tools/call", "p": "", "u": None, "e": 5.0, "s": 1, "x": 0},
    ],
)
def test_signed_but_unreadable_payload(payload: Any) -> None:
    assert check_of(forge(payload)) == "payload"


def test_signed_but_undecodable_payload() -> None:
    body = "v1.AAAAA"  # 5 chars: not a base64 length
    assert check_of(f"{body}.{sealer()._mac(KEY, body)}") == "payload"
    body = "v1.bm90IGpzb24"  # "not json"
    assert check_of(f"{body}.{sealer()._mac(KEY, body)}") == "payload"


def test_seal_refuses_what_is_not_json() -> None:
    with pytest.raises(TypeError, match="state"):
        sealer().seal({1j}, **BOUND, now=NOW)
    with pytest.raises(TypeError, match="salient params"):
        sealer().seal(1, method="tools/call", params=object(), now=NOW)
    with pytest.raises(TypeError, match="principal"):
        sealer().seal(1, **BOUND, principal=7, now=NOW)  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300) | st.from_regex(r"v1\.[A-Za-z0-9_-]{0,40}\.[A-Za-z0-9_-]{43}"))
def test_verify_is_total(token: str) -> None:
    with pytest.raises(RequestStateError):
        sealer().verify(token, **BOUND, now=NOW)


def test_error_is_a_decode_error_with_the_reply() -> None:
    with pytest.raises(m.DecodeError) as info:
        sealer().verify("nope", **BOUND, now=NOW)
    error = info.value
    assert isinstance(error, RequestStateError) and error.path == "/params/requestState"
    reply = m.encode_message(m.types.JSONRPCErrorResponse(id=7, error=error.error()))
    assert orjson.loads(reply)["error"] == {
        "code": -32602,
        "message": "Invalid requestState: not a sealed state",
        "data": {"reason": "format"},
    }


# -- MRTR-17: inputResponses --------------------------------------------------


def test_mrtr17_missing_keys_extra_ignored() -> None:
    answers = {"name": t.ElicitResult(action="accept"), "extra": t.ListRootsResult(roots=[])}
    assert missing_input_responses(answers, ["name"]) == []
    assert missing_input_responses(answers, ["name", "roots", "age"]) == ["roots", "age"]
    assert missing_input_responses(None, ("a",)) == ["a"]
    assert missing_input_responses({}, []) == []
    typed = {"name": t.ElicitResult, "extra": t.CreateMessageResult}
    assert missing_input_responses(answers, typed) == ["extra"]  # wrong class counts as missing
    either = {"extra": (t.ListRootsResult, t.ElicitResult)}
    assert missing_input_responses(answers, either) == []


def test_edge52_53_mrtr_flow_over_a_connection_pair() -> None:
    """The server seals state, the client echoes it, tampering gets -32602."""
    pair = Pair()
    seal = sealer()
    (got,) = pair.to_server(call(pair, "book"))
    salient = {"name": got.params.name, "arguments": got.params.arguments}
    state = seal.seal({"round": 1}, method=got.method, params=salient, principal="u", now=NOW)
    elicit = t.ElicitRequest(
        params=t.ElicitRequestFormParams(message="seats?", requested_schema={"type": "object"})
    )
    ir = t.InputRequiredResult(input_requests={"seats": elicit}, request_state=state)
    (ev,) = pair.to_client(m.Result(id=got.id, result=ir))
    retry = ev.retry(
        id=pair.client.next_id(), input_responses={"seats": t.ElicitResult(action="accept")}
    )
    (again,) = pair.to_server(retry)
    p = again.params
    salient = {"name": p.name, "arguments": p.arguments}
    assert missing_input_responses(p.input_responses, {"seats": t.ElicitResult}) == []
    kept = seal.verify(
        p.request_state, method=again.method, params=salient, principal="u", now=NOW
    )
    assert kept == {"round": 1}
    with pytest.raises(RequestStateError) as info:
        seal.verify(p.request_state, method=again.method, params=salient, principal="v", now=NOW)
    (answer,) = pair.to_client(m.ErrorResponse(id=again.id, error=info.value.error()))
    assert isinstance(answer, m.ErrorResponse) and answer.code == -32602
    assert answer.error.data == {"reason": "principal"}
