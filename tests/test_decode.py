"""decode_message is strict and total: a message, or one DecodeError carrying the reply.

IDs refer to ../shared/notes/spec-base.md; ``docs/requirements.md`` gives their spec pages.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import mcp_proto
from mcp_proto import DecodeError, types

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def call(**over: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"_meta": META, "name": "echo", "arguments": {"x": 1}},
    }
    msg.update(over)
    return msg


def fails(data: bytes | str | dict[str, Any], code: int) -> DecodeError:
    raw = json.dumps(data) if isinstance(data, dict) else data
    with pytest.raises(DecodeError) as info:
        mcp_proto.decode_message(raw)
    assert info.value.code == code, info.value.message
    return info.value


def test_tools_call_gets_its_typed_params() -> None:
    msg = mcp_proto.decode_message(json.dumps(call()))
    assert isinstance(msg, types.CallToolRequest)
    assert isinstance(msg.params, types.CallToolRequestParams)
    assert msg.params.meta is not None
    assert msg.params.meta.protocol_version == "2026-07-28"
    assert msg.params.arguments == {"x": 1}


@pytest.mark.parametrize(
    "raw",
    [b"{", b"", b"nul", b'{"a":NaN}', b"\xff\xfe", b'"\\ud800"', b"1e999", b"{} {}"],
    ids=["truncated", "empty", "bad-literal", "nan", "bad-utf8", "lone-surrogate", "inf", "two"],
)
def test_unparseable_input_is_a_parse_error_without_id(raw: bytes) -> None:
    """ERR-13 / TRANS-02: -32700 with no id."""
    err = fails(raw, mcp_proto.PARSE_ERROR)
    assert err.id is None
    assert err.error_response().id is None


def test_lone_surrogate_in_a_str_input_is_a_parse_error() -> None:
    fails('{"jsonrpc":"2.0","method":"x\ud800"}', mcp_proto.PARSE_ERROR)


def test_nesting_beyond_the_bound_is_refused() -> None:
    deep = {"x": 1}
    for _ in range(mcp_proto.DEFAULT_MAX_DEPTH + 5):
        deep = {"x": deep}
    fails(call(params={"_meta": META, "name": "n", "arguments": deep}), mcp_proto.PARSE_ERROR)


def test_nesting_within_the_bound_is_accepted() -> None:
    deep: Any = 1
    for _ in range(mcp_proto.DEFAULT_MAX_DEPTH - 5):
        deep = [deep]
    msg = mcp_proto.decode_message(
        json.dumps(call(params={"_meta": META, "name": "n", "arguments": {"d": deep}}))
    )
    assert isinstance(msg, types.CallToolRequest)


def test_many_brackets_in_strings_do_not_count_as_depth() -> None:
    text = "[" * 10_000
    msg = mcp_proto.decode_message(json.dumps(call(params={"_meta": META, "name": text})))
    assert isinstance(msg, types.CallToolRequest)


@pytest.mark.parametrize("top", ["[]", "[1]", "1", '"x"', "null", "true"])
def test_non_object_top_level_is_an_invalid_request(top: str) -> None:
    """BASE-20: batches are not MCP messages."""
    err = fails(top, mcp_proto.INVALID_REQUEST)
    assert err.id is None


@pytest.mark.parametrize("version", [None, "1.0", 2.0, "2.1"])
def test_wrong_jsonrpc_is_an_invalid_request_with_the_id(version: Any) -> None:
    """BASE-03."""
    msg = call(jsonrpc=version)
    if version is None:
        del msg["jsonrpc"]
    err = fails(msg, mcp_proto.INVALID_REQUEST)
    assert err.id == 7


@pytest.mark.parametrize("bad_id", [None, True, False, 1.5, 1.0, [], {}])
def test_bad_ids_are_refused(bad_id: Any) -> None:
    """BASE-04 / BASE-05: ids are strings or integers, never null, booleans or floats."""
    err = fails(call(id=bad_id), mcp_proto.INVALID_REQUEST)
    assert err.id is None


def test_string_and_negative_ids_are_fine() -> None:
    for good in ["a", "", -3, 2**62]:
        assert mcp_proto.decode_message(json.dumps(call(id=good))).id == good  # type: ignore[union-attr]


def test_method_and_params_must_have_the_right_json_types() -> None:
    fails(call(method=3), mcp_proto.INVALID_REQUEST)
    assert fails(call(params=[1]), mcp_proto.INVALID_REQUEST).id == 7


def test_params_that_do_not_fit_the_method_are_invalid_params_with_id_and_pointer() -> None:
    err = fails(call(params={"_meta": META, "name": 5}), mcp_proto.INVALID_PARAMS)
    assert err.id == 7
    assert err.path == "/params/name"
    assert err.data == {"path": "/params/name", "reason": "expected a string, got an integer"}


def test_missing_required_meta_fields_are_invalid_params() -> None:
    """META-08: a request missing protocolVersion or clientCapabilities gets -32602."""
    for key in META:
        meta = {k: v for k, v in META.items() if k != key}
        err = fails(call(params={"_meta": meta, "name": "n"}), mcp_proto.INVALID_PARAMS)
        assert err.path == "/params/_meta/" + key.replace("/", "~1")
    fails(call(params={"name": "n"}), mcp_proto.INVALID_PARAMS)
    fails(call(params=None), mcp_proto.INVALID_PARAMS)


def test_unknown_methods_decode_generically_so_the_caller_can_answer_32601() -> None:
    msg = mcp_proto.decode_message(json.dumps(call(method="ping", params={"a": 1})))
    assert type(msg) is types.JSONRPCRequest
    assert msg.method == "ping"
    assert msg.params == {"a": 1}
    note = mcp_proto.decode_message('{"jsonrpc":"2.0","method":"x/y"}')
    assert type(note) is types.JSONRPCNotification


def test_a_notification_method_sent_with_an_id_is_a_request() -> None:
    msg = mcp_proto.decode_message(
        json.dumps(call(method="notifications/cancelled", params={"requestId": 1}))
    )
    assert type(msg) is types.JSONRPCRequest


def test_notifications_carry_typed_params() -> None:
    raw = '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r1"}}'
    msg = mcp_proto.decode_message(raw)
    assert isinstance(msg, types.CancelledNotification)
    assert msg.params.request_id == "r1"


def test_responses() -> None:
    ok = mcp_proto.decode_message('{"jsonrpc":"2.0","id":1,"result":{"x":1}}')
    assert isinstance(ok, types.JSONRPCResultResponse)
    assert isinstance(ok.result, types.Result)
    assert ok.result.result_type == "complete"  # BASE-15
    assert ok.result.extra == {"x": 1}
    mrtr = mcp_proto.decode_message(
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"s"}}'
    )
    assert isinstance(mrtr, types.JSONRPCResultResponse)
    assert isinstance(mrtr.result, types.InputRequiredResult)
    err = mcp_proto.decode_message('{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"m"}}')
    assert isinstance(err, types.JSONRPCErrorResponse)
    assert err.id is None  # BASE-16: null and absent ids are both accepted


def test_unknown_result_type_is_an_error() -> None:
    """BASE-14."""
    fails('{"jsonrpc":"2.0","id":1,"result":{"resultType":"mystery"}}', mcp_proto.INVALID_PARAMS)


def test_malformed_responses() -> None:
    fails('{"jsonrpc":"2.0","result":{}}', mcp_proto.INVALID_REQUEST)
    fails('{"jsonrpc":"2.0","id":1,"result":{},"error":{}}', mcp_proto.INVALID_REQUEST)
    fails('{"jsonrpc":"2.0","id":1}', mcp_proto.INVALID_REQUEST)
    fails('{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}', mcp_proto.INVALID_PARAMS)


def test_duplicate_keys_last_one_wins() -> None:
    raw = '{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}'
    assert mcp_proto.decode_message(raw).id == 2  # type: ignore[union-attr]


def test_unknown_keys_survive_at_every_level() -> None:
    msg = call(extra_top=1)
    msg["params"] = {
        **msg["params"],
        "vendor": {"k": [1]},
        "_meta": {**META, "com.example/trace": "t", "traceparent": "x"},
    }
    decoded = mcp_proto.decode_message(json.dumps(msg))
    assert json.loads(mcp_proto.encode_message(decoded)) == msg


def test_structure_result_picks_the_class_by_method_and_result_type() -> None:
    """MRTR-03: input_required only on tools/call, prompts/get, resources/read."""
    done = mcp_proto.structure_result({"content": []}, "tools/call")
    assert isinstance(done, types.CallToolResult)
    asked = mcp_proto.structure_result({"resultType": "input_required"}, "prompts/get")
    assert isinstance(asked, types.InputRequiredResult)
    with pytest.raises(DecodeError):
        mcp_proto.structure_result({"resultType": "input_required"}, "tools/list")
    with pytest.raises(DecodeError):
        mcp_proto.structure_result({"resultType": "other", "content": []}, "tools/call")
    with pytest.raises(DecodeError):
        mcp_proto.structure_result({}, "notifications/progress")
    generic = mcp_proto.decode_message('{"jsonrpc":"2.0","id":1,"result":{"content":[]}}')
    assert isinstance(generic, types.JSONRPCResultResponse)
    again = mcp_proto.structure_result(generic.result, "tools/call")
    assert isinstance(again, types.CallToolResult)


def test_encode_refuses_invalid_values() -> None:
    params = types.CallToolRequestParams(name="n")  # no _meta
    with pytest.raises(mcp_proto.EncodeError, match="_meta"):
        mcp_proto.encode_message(types.CallToolRequest(id=1, params=params))
    bad_text = types.TextContent(text="\ud800")
    with pytest.raises(mcp_proto.EncodeError):
        mcp_proto.encode_message(
            types.JSONRPCResultResponse(id=1, result=types.CallToolResult(content=[bad_text]))
        )
    with pytest.raises(mcp_proto.EncodeError):
        mcp_proto.unstructure(object())


def test_encoded_output_has_no_raw_newline() -> None:
    """STDIO-03."""
    text = types.TextContent(text="line1\nline2\r\n\u2028")
    out = mcp_proto.encode_message(
        types.JSONRPCResultResponse(id=1, result=types.CallToolResult(content=[text]))
    )
    assert b"\n" not in out and b"\r" not in out
