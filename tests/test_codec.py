"""structure/unstructure over classes, aliases and containers; error paths and pointers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

import mcp_proto
from mcp_proto import DecodeError, structure, types, unstructure


def bad(obj: Any, tp: Any) -> DecodeError:
    with pytest.raises(DecodeError) as info:
        structure(obj, tp)
    assert info.value.code == mcp_proto.INVALID_PARAMS
    return info.value


def test_containers_and_aliases() -> None:
    tools = structure([{"name": "a", "inputSchema": {"type": "object"}}], list[types.Tool])
    assert tools[0].name == "a"
    assert structure({"k": {"type": "text", "text": "x"}}, dict[str, types.ContentBlock]) == {
        "k": types.TextContent(text="x")
    }
    assert structure("id-1", types.RequestId) == "id-1"
    assert structure({"any": [1]}, types.JSONObject) == {"any": [1]}
    assert unstructure([types.TextContent(text="x"), {"a": (1, 2)}, None, 1.5]) == [
        {"text": "x", "type": "text"},
        {"a": [1, 2]},
        None,
        1.5,
    ]


def test_pointers_reach_into_arrays_and_maps() -> None:
    err = bad(
        {"content": [{"type": "text", "text": "ok"}, {"type": "text"}]}, types.CallToolResult
    )
    assert err.path == "/content/1/text"
    err = bad({"a": {"action": "nope"}}, types.InputResponses)
    assert err.path == "/a"
    assert "does not match any of" in err.message
    err = bad([1], Sequence[types.Tool])
    assert err.path == "/0"
    assert bad({"x": 1}, dict[str, str]).path == "/x"
    assert bad(["a", 2], Sequence[str]).path == "/1"


def test_json_types_are_strict() -> None:
    """BASE-04 style strictness: no bool for int, no float for int, null reported as null."""
    base = {"progressToken": 1, "progress": 1}
    assert structure(base, types.ProgressNotificationParams).progress == 1
    assert bad({**base, "progressToken": True}, types.ProgressNotificationParams).path == (
        "/progressToken"
    )
    assert (
        "got a number"
        in bad({**base, "progressToken": 1.5}, types.ProgressNotificationParams).message
    )
    assert (
        "must not be null"
        in bad({"progress": 1, "progressToken": None}, types.ProgressNotificationParams).message
    )
    assert "got null" in bad(None, types.Tool).message
    assert "got a string" in bad({"values": "x"}, types.CompleteResultCompletion).message
    assert "got an object" in bad({"values": {}}, types.CompleteResultCompletion).message
    assert (
        bad({"text": "x", "type": "text", "annotations": {"priority": 2}}, types.TextContent).path
        == "/annotations/priority"
    )
    assert bad({"values": ["v"] * 101}, types.CompleteResultCompletion).path == "/values"


def test_tagged_unions() -> None:
    assert isinstance(
        structure({"type": "image", "data": "", "mimeType": "image/png"}, types.ContentBlock),
        types.ImageContent,
    )
    assert bad({"type": "video"}, types.ContentBlock).path == "/type"
    assert bad({"text": "x"}, types.ContentBlock).path == "/type"
    assert bad({"type": ["text"]}, types.ContentBlock).path == "/type"
    assert "an object" in bad([1], types.ContentBlock).message
    form = structure(
        {"message": "m", "requestedSchema": {"type": "object", "properties": {}}},
        types.ElicitRequestParams,
    )
    assert isinstance(form, types.ElicitRequestFormParams)  # absent mode means form
    url = structure({"mode": "url", "message": "m", "url": "https://x"}, types.ElicitRequestParams)
    assert isinstance(url, types.ElicitRequestURLParams)


def test_best_fit_unions_prefer_the_most_specific_member() -> None:
    legacy = {"type": "string", "enum": ["a"], "enumNames": ["A"]}
    assert isinstance(
        structure(legacy, types.PrimitiveSchemaDefinition), types.LegacyTitledEnumSchema
    )
    untitled = {"type": "string", "enum": ["a"]}
    assert isinstance(
        structure(untitled, types.PrimitiveSchemaDefinition), types.UntitledSingleSelectEnumSchema
    )
    plain = {"type": "string", "x-hint": 1, "y": 2}
    assert isinstance(structure(plain, types.PrimitiveSchemaDefinition), types.StringSchema)
    titled = {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}}
    assert isinstance(
        structure(titled, types.MultiSelectEnumSchema), types.TitledMultiSelectEnumSchema
    )
    embedded = {"type": "resource", "resource": {"uri": "u", "blob": "AA=="}}
    assert isinstance(
        structure(embedded, types.EmbeddedResource).resource, types.BlobResourceContents
    )
    embedded["resource"] = {"uri": "u", "text": "t"}
    assert isinstance(
        structure(embedded, types.EmbeddedResource).resource, types.TextResourceContents
    )


def test_scalar_and_array_unions() -> None:
    content = {"a": "x", "b": 1, "c": True, "d": ["p", "q"]}
    result = structure({"action": "accept", "content": content}, types.ElicitResult)
    assert result.content == content
    assert bad({"action": "accept", "content": {"a": {}}}, types.ElicitResult).path == "/content/a"
    assert (
        bad({"action": "accept", "content": {"a": [1]}}, types.ElicitResult).path == "/content/a/0"
    )
    msg = structure(
        {"role": "user", "content": [{"type": "text", "text": "x"}]}, types.SamplingMessage
    )
    assert isinstance(msg.content, list)
    assert bad({"role": "user", "content": "x"}, types.SamplingMessage).path == "/content"


def test_server_result_without_context() -> None:
    assert isinstance(structure({}, types.ServerResult), types.Result)
    assert bad({"resultType": 3}, types.ServerResult).path == "/resultType"
    assert "an object" in bad([], types.ServerResult).message
    out = unstructure(types.JSONRPCResultResponse(id=1, result=types.Result(extra={"k": 1})))
    assert out == {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "k": 1}}


def test_extra_never_overrides_known_fields() -> None:
    text = types.TextContent(text="real", extra={"text": "fake", "x": 1})
    assert unstructure(text) == {"text": "real", "type": "text", "x": 1}


def test_sequences_given_as_tuples_are_written_as_lists() -> None:
    icon = types.Icon(src="https://x/i.png", sizes=("48x48",))
    assert unstructure(icon) == {"src": "https://x/i.png", "sizes": ["48x48"]}
    union_list = types.SamplingMessage(role="user", content=(types.TextContent(text="t"),))
    assert unstructure(union_list)["content"] == [{"text": "t", "type": "text"}]


def test_source_of_shows_the_generated_code() -> None:
    src = mcp_proto.source_of(types.Implementation)
    assert "def structure(d):" in src and "def unstructure(o):" in src


def test_unsupported_annotations_are_a_type_error() -> None:
    with pytest.raises(TypeError):
        structure([1], set[int])
    with pytest.raises(TypeError):
        mcp_proto.source_of(set[int])  # the unstructurer refuses it first
