"""Schema validation where MCP needs it (TOOL-09/11/27, ELIC-11, SCHEMA-10) and schema
preservation through the model and codec.

The spec's examples are read from ../shared (skipped when absent). The conformance fixture
``json_schema_2020_12_tool`` is rebuilt here from its description in the conformance README
(``$schema`` 2020-12, ``$defs.address`` with ``$anchor: "addressDef"``, a ``$ref`` to it,
``allOf[anyOf[required phone / required email]]``, ``if/then/else`` on ``contactMethod``,
``additionalProperties: false``).
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import mcp_proto
from mcp_proto import types as t
from mcp_proto.schema import (
    InvalidSchema,
    LimitExceeded,
    Limits,
    UnsupportedDialect,
    check_elicitation_schema,
    check_tool_result,
    compile_schema,
    describe_failures,
    elicitation_answer_failures,
    structured_content_failures,
    tool_argument_failures,
    validate_tool_arguments,
)

from .conftest import load_json, needs_spec, spec_examples

CONFORMANCE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            "required": ["street", "city"],
        }
    },
    "properties": {
        "name": {"type": "string"},
        "email": {"type": "string", "format": "email"},
        "phone": {"type": "string", "pattern": "^[+0-9 ()-]{6,20}$"},
        "address": {"$ref": "#/$defs/address"},
        "billing": {"$ref": "#addressDef"},
        "contactMethod": {"type": "string", "enum": ["email", "phone"]},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "email"}}, "required": ["contactMethod"]},
    "then": {"required": ["email"]},
    "else": {"required": ["phone"]},
    "additionalProperties": False,
    "x-unknown-keyword": {"kept": [1, 2.5, None]},
}

TOOL = t.Tool(name="contact", input_schema=CONFORMANCE_SCHEMA)


@pytest.mark.parametrize(
    ("arguments", "valid"),
    [
        ({"name": "A", "email": "a@example.com", "contactMethod": "email"}, True),
        ({"phone": "+33 1 23 45 67"}, True),
        ({"phone": "+33 1 23 45 67", "address": {"street": "x", "city": "y"}}, True),
        ({"email": "a@example.com"}, False),  # else: phone required
        ({"contactMethod": "email", "phone": "+33 1 23 45 67"}, False),  # then: email required
        ({"name": "A"}, False),  # anyOf: neither phone nor email
        ({"phone": "+33 1 23 45 67", "address": {"street": "x"}}, False),
        ({"phone": "+33 1 23 45 67", "billing": {"city": "y"}}, False),
        ({"phone": "+33 1 23 45 67", "extra": 1}, False),
    ],
)
def test_conformance_fixture_schema_validates_schema_10(arguments: Any, valid: bool) -> None:
    assert (tool_argument_failures(TOOL, arguments) == []) is valid


def test_conformance_fixture_failure_details() -> None:
    failures = tool_argument_failures(TOOL, {"email": "a@example.com", "address": {}, "zip": 1})
    assert {(f.instance_path, f.keyword) for f in failures} == {
        ("", "required"),
        ("/address", "required"),
        ("/zip", "additionalProperties"),
    }


def round_trip(tool: t.Tool) -> t.Tool:
    """A tool through every layer: unstructure/structure and a tools/list response's bytes."""
    again = mcp_proto.structure(mcp_proto.unstructure(tool), t.Tool)
    response = t.JSONRPCResultResponse(
        id=1, result=t.ListToolsResult(tools=[again], ttl_ms=0, cache_scope="public")
    )
    raw = mcp_proto.encode_message(response)
    decoded = mcp_proto.decode_message(raw)
    assert mcp_proto.encode_message(decoded) == raw
    result = mcp_proto.structure_result(decoded.result, "tools/list")  # type: ignore[union-attr]
    (out,) = result.tools  # type: ignore[union-attr]
    assert isinstance(out, t.Tool)
    return out


ALL_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://example.com/tool.json",
    "$comment": "every keyword",
    "$anchor": "root",
    "$dynamicAnchor": "meta",
    "$vocabulary": {"https://json-schema.org/draft/2020-12/vocab/core": True},
    "$defs": {"n": {"type": "number", "multipleOf": 0.5, "minimum": 0, "maximum": 10}},
    "type": "object",
    "title": "T",
    "description": "D",
    "default": {},
    "examples": [{}],
    "deprecated": False,
    "readOnly": False,
    "writeOnly": False,
    "properties": {
        "n": {"$ref": "#/$defs/n", "exclusiveMinimum": -1, "exclusiveMaximum": 11},
        "d": {"$dynamicRef": "#meta"},
        "s": {
            "type": "string",
            "minLength": 1,
            "maxLength": 9,
            "pattern": "^a",
            "format": "uri",
            "contentMediaType": "text/plain",
            "contentEncoding": "base64",
            "contentSchema": {"type": "string"},
            "x-mcp-header": "Region",
        },
        "a": {
            "type": "array",
            "prefixItems": [{"const": 1}],
            "items": {"enum": [2, 3]},
            "contains": {"const": 2},
            "minContains": 1,
            "maxContains": 2,
            "minItems": 0,
            "maxItems": 5,
            "uniqueItems": True,
            "unevaluatedItems": False,
        },
    },
    "patternProperties": {"^x-": True},
    "additionalProperties": False,
    "propertyNames": {"maxLength": 20},
    "minProperties": 0,
    "maxProperties": 9,
    "required": [],
    "dependentRequired": {"a": ["n"]},
    "dependentSchemas": {"s": {"required": ["s"]}},
    "allOf": [True],
    "anyOf": [True, False],
    "oneOf": [True, False],
    "not": False,
    "if": {"required": ["n"]},
    "then": {"properties": {"n": {"minimum": 1}}},
    "else": True,
    "unevaluatedProperties": False,
    "x-vendor": {"nested": [1, 2.0, 1e300, "é", None, True, {"$ref": "not-a-ref"}]},
    "nonStandard": 1,
}


@pytest.mark.parametrize("schema", [ALL_2020_12, CONFORMANCE_SCHEMA], ids=["all", "conformance"])
def test_schemas_are_preserved_byte_for_byte(schema: dict[str, Any]) -> None:
    """json-schema-2020-12(-preservation): inputSchema and outputSchema survive verbatim."""
    tool = t.Tool(name="x", input_schema=schema, output_schema=schema)
    out = round_trip(tool)
    assert orjson.dumps(out.input_schema) == orjson.dumps(schema)
    assert orjson.dumps(out.output_schema) == orjson.dumps(schema)
    assert list(out.input_schema) == list(schema)  # key order too


def test_every_keyword_schema_validates() -> None:
    v = compile_schema(ALL_2020_12, cache=None)
    assert v.is_valid({"n": 2, "s": "abc", "a": [1, 2]})
    assert not v.is_valid({"a": [1, 2]})  # dependentRequired
    assert not v.is_valid({"n": 2.25})  # multipleOf through $ref
    assert not v.is_valid({"n": 2, "a": [1, 2, 4]})  # unevaluatedItems after items
    assert not v.is_valid({"x-y": 1, "z": 2})  # additionalProperties


# -- spec examples ------------------------------------------------------------------------------

FIELD_EXAMPLES = [(name, path) for name, path in spec_examples() if name.endswith("Schema")]
TOOL_EXAMPLES = [(name, path) for name, path in spec_examples() if name == "Tool"]
FORM_EXAMPLES = [
    (name, path) for name, path in spec_examples() if name == "ElicitRequestFormParams"
]


@needs_spec
@pytest.mark.parametrize(("name", "path"), FIELD_EXAMPLES, ids=[p.stem for _, p in FIELD_EXAMPLES])
def test_spec_field_schema_examples_elic_11(name: str, path: Any) -> None:
    field = load_json(path)
    form = {"type": "object", "properties": {"f": field}}
    check_elicitation_schema(form)
    if "default" in field:
        assert elicitation_answer_failures(form, {"f": field["default"]}) == []
    assert elicitation_answer_failures(form, {"f": {"nested": 1}}) != []


@needs_spec
@pytest.mark.parametrize(("name", "path"), TOOL_EXAMPLES, ids=[p.stem for _, p in TOOL_EXAMPLES])
def test_spec_tool_examples_tool_09_11(name: str, path: Any) -> None:
    raw = load_json(path)
    tool = mcp_proto.structure(raw, t.Tool)
    dialect = compile_schema(tool.input_schema).dialect
    assert dialect == ("draft-07" if "$schema" in tool.input_schema else "2020-12")
    if tool.output_schema is not None:
        compile_schema(tool.output_schema)
    out = round_trip(tool)
    assert orjson.dumps(mcp_proto.unstructure(out)) == orjson.dumps(mcp_proto.unstructure(tool))
    assert orjson.dumps(out.input_schema) == orjson.dumps(raw["inputSchema"])


@needs_spec
@pytest.mark.parametrize(("name", "path"), FORM_EXAMPLES, ids=[p.stem for _, p in FORM_EXAMPLES])
def test_spec_form_examples_elic_11(name: str, path: Any) -> None:
    params = mcp_proto.structure(load_json(path), t.ElicitRequestFormParams)
    check_elicitation_schema(params.requested_schema)
    answer = {"name": "octocat", "email": "octo@example.com", "age": 30}
    known = {k: v for k, v in answer.items() if k in params.requested_schema["properties"]}
    assert elicitation_answer_failures(params.requested_schema, known) == []
    assert [f.keyword for f in elicitation_answer_failures(params.requested_schema, {})] == [
        "required"
    ]


@needs_spec
def test_spec_composition_example_tool_argument_check() -> None:
    from .conftest import SPEC

    raw = load_json(SPEC / "examples" / "Tool" / "tool-with-composition-input-schema.json")
    tool = mcp_proto.structure(raw, t.Tool)
    assert validate_tool_arguments(tool, {"id": "r1"}) is None
    assert validate_tool_arguments(tool, {"id": "r1", "name": "n"}) is not None  # oneOf: both


# -- tools ------------------------------------------------------------------------------------

WEATHER = t.Tool(
    name="get_weather",
    input_schema={
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
        "required": ["city"],
    },
    output_schema={
        "type": "object",
        "properties": {"temperature": {"type": "number"}},
        "required": ["temperature"],
    },
)


def test_valid_arguments_let_the_handler_run_tool_27() -> None:
    assert validate_tool_arguments(WEATHER, {"city": "Paris", "days": 2}) is None


def test_invalid_arguments_become_a_tool_error_result_tool_27() -> None:
    result = validate_tool_arguments(WEATHER, {"days": 0})
    assert result is not None and result.is_error is True
    (content,) = result.content
    assert isinstance(content, t.TextContent)
    assert content.text == (
        "Invalid arguments for tool 'get_weather':\n"
        "/: missing required property 'city'\n"
        "/days: must be at least 1, got 0"
    )
    wire = mcp_proto.unstructure(result)
    assert wire["isError"] is True and wire["resultType"] == "complete"


def test_absent_arguments_are_an_empty_object() -> None:
    no_params = t.Tool(name="n", input_schema={"type": "object", "additionalProperties": False})
    assert validate_tool_arguments(no_params, None) is None
    assert validate_tool_arguments(no_params, {"x": 1}) is not None
    assert validate_tool_arguments(WEATHER, None) is not None


def test_arguments_over_a_bound_become_a_tool_error() -> None:
    result = validate_tool_arguments(
        WEATHER, {"city": "x" * 10, "deep": [[[[1]]]]}, limits=Limits(max_instance_depth=3)
    )
    assert result is not None and result.is_error
    assert "max_instance_depth=3" in result.content[0].text  # type: ignore[union-attr]


def test_a_tool_with_an_invalid_schema_raises() -> None:
    bad = t.Tool(name="b", input_schema={"type": "object", "$ref": "https://example.com/s.json"})
    with pytest.raises(InvalidSchema):
        validate_tool_arguments(bad, {})


def test_structured_content_is_checked_server_side() -> None:
    good = t.CallToolResult(content=[], structured_content={"temperature": 21.5})
    assert check_tool_result(WEATHER, good) is good
    bad = t.CallToolResult(content=[], structured_content={"temperature": "warm"})
    replaced = check_tool_result(WEATHER, bad)
    assert replaced.is_error is True
    assert "/temperature: expected number, got string" in replaced.content[0].text  # type: ignore[union-attr]
    missing = t.CallToolResult(content=[t.TextContent(text="21.5")])
    assert check_tool_result(WEATHER, missing).is_error is True
    error = t.CallToolResult(content=[t.TextContent(text="API down")], is_error=True)
    assert check_tool_result(WEATHER, error) is error
    huge = t.CallToolResult(content=[], structured_content={"temperature": 1, "x": [[[[[1]]]]]})
    assert check_tool_result(WEATHER, huge, limits=Limits(max_instance_depth=3)).is_error


def test_structured_content_is_checked_client_side() -> None:
    decoded = mcp_proto.structure(
        {"content": [], "structuredContent": [{"id": "1", "name": "a"}]}, t.CallToolResult
    )
    users = t.Tool(
        name="list_users",
        input_schema={"type": "object"},
        output_schema={"type": "array", "items": {"type": "object", "required": ["id", "email"]}},
    )
    failures = structured_content_failures(users, decoded)
    assert [(f.instance_path, f.keyword) for f in failures] == [("/0", "required")]
    assert structured_content_failures(WEATHER.__class__(name="x", input_schema={}), decoded) == []
    assert describe_failures(failures) == "/0: missing required property 'email'"


def test_describe_failures_is_bounded() -> None:
    v = compile_schema({"items": {"type": "string"}})
    text = describe_failures(v.failures(list(range(15))), limit=3)
    assert text.splitlines()[-1] == "... and 12 more"


# -- elicitation ------------------------------------------------------------------------------

FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "title": "Name"},
        "email": {"type": "string", "format": "email"},
        "age": {"type": "integer", "minimum": 18, "default": 30},
        "ok": {"type": "boolean", "default": False},
        "color": {"type": "string", "enum": ["Red", "Green"], "enumNames": ["R", "G"]},
        "hex": {"type": "string", "oneOf": [{"const": "#f00", "title": "Red"}]},
        "tags": {
            "type": "array",
            "minItems": 1,
            "maxItems": 2,
            "items": {"type": "string", "enum": ["a", "b", "c"]},
        },
        "titled": {"type": "array", "items": {"anyOf": [{"const": "x", "title": "X"}]}},
    },
    "required": ["name"],
}


def test_form_schema_accepted_elic_11() -> None:
    check_elicitation_schema(FORM)


@pytest.mark.parametrize(
    ("schema", "where"),
    [
        ({"type": "object", "properties": {"a": {"type": "object"}}}, "/properties/a"),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "array", "items": {"type": "object"}}},
            },
            "/properties/a/items",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string", "format": "ipv4"}}},
            "/properties/a/format",
        ),
        ({"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}}, "/properties/a"),
        (
            {"type": "object", "properties": {"a": {"type": "string", "pattern": "x"}}},
            "/properties/a",
        ),
        (
            {"type": "object", "properties": {}, "additionalProperties": False},
            "/additionalProperties",
        ),
        ({"type": "object", "properties": {}, "required": ["b"]}, "/required"),
        ({"type": "array", "properties": {}}, "/type"),
        ({"type": "object"}, "/properties"),
        (
            {"type": "object", "properties": {"a": {"type": "string", "enum": []}}},
            "/properties/a/enum",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string", "oneOf": [{"const": 1}]}}},
            "/properties/a/oneOf/0",
        ),
        ({"type": "object", "properties": {"a~/": 3}}, "/properties/a~0~1"),
        ([], ""),
    ],
)
def test_form_schema_refusals_elic_11(schema: Any, where: str) -> None:
    with pytest.raises(InvalidSchema) as info:
        check_elicitation_schema(schema)
    assert info.value.schema_path == where
    assert "not an elicitation form schema" in str(info.value)


def test_form_schema_dialect() -> None:
    check_elicitation_schema(
        {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {}}
    )
    with pytest.raises(UnsupportedDialect):
        check_elicitation_schema(
            {"$schema": "https://example.com/s", "type": "object", "properties": {}}
        )


@pytest.mark.parametrize(
    ("answer", "problems"),
    [
        (
            {
                "name": "Ada",
                "email": "ada@example.com",
                "age": 36,
                "ok": True,
                "color": "Red",
                "hex": "#f00",
                "tags": ["a", "c"],
                "titled": ["x"],
            },
            [],
        ),
        ({"name": ""}, [("/name", "minLength")]),
        ({}, [("", "required")]),
        ({"name": "A", "email": "not-an-email"}, [("/email", "format")]),
        ({"name": "A", "age": 17}, [("/age", "minimum")]),
        ({"name": "A", "age": 18.5}, [("/age", "type")]),
        ({"name": "A", "ok": "yes"}, [("/ok", "type")]),
        ({"name": "A", "color": "Blue"}, [("/color", "enum")]),
        ({"name": "A", "hex": "#0f0"}, [("/hex", "oneOf")]),
        ({"name": "A", "tags": []}, [("/tags", "minItems")]),
        ({"name": "A", "tags": ["a", "b", "c"]}, [("/tags", "maxItems")]),
        ({"name": "A", "tags": ["z"]}, [("/tags/0", "enum")]),
        ({"name": "A", "titled": ["y"]}, [("/titled/0", "anyOf")]),
        ({"name": "A", "unknown": 1}, [("/unknown", "properties")]),
    ],
)
def test_form_answers_validated_before_sending_elic_11(answer: Any, problems: Any) -> None:
    failures = elicitation_answer_failures(FORM, answer)
    assert [(f.instance_path, f.keyword) for f in failures] == problems


def test_server_validates_the_answer_again_on_retry() -> None:
    """The retry carries the answer as an ElicitResult; the server checks it the same way."""
    wire = {"action": "accept", "content": {"name": "Ada", "age": "36"}}
    result = mcp_proto.structure(wire, t.ElicitResult)
    failures = elicitation_answer_failures(FORM, result.content)
    assert [(f.instance_path, f.keyword) for f in failures] == [("/age", "type")]
    assert elicitation_answer_failures(FORM, None) != []


def test_answer_bounds_apply() -> None:
    with pytest.raises(LimitExceeded):
        elicitation_answer_failures(
            FORM, {"name": "A", "tags": ["a"] * 50}, limits=Limits(max_instance_values=10)
        )
