"""Edge cases of the schema compiler and evaluator that the keyword suites do not reach.

Each test names the rule it holds; together they keep ``mcp_proto.schema`` at full line and
branch coverage without pragmas.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_proto.schema import (
    InvalidSchema,
    LimitExceeded,
    Limits,
    SchemaError,
    check_elicitation_schema,
    compile_schema,
)


@pytest.mark.parametrize(
    ("schema", "keyword"),
    [
        ({"pattern": 5}, "pattern"),
        ({"dependentRequired": []}, "dependentRequired"),
        ({"dependentRequired": {"a": ["b", 1]}}, "dependentRequired"),
    ],
)
def test_malformed_keywords_are_refused_schema_05(schema: Any, keyword: str) -> None:
    with pytest.raises(InvalidSchema) as info:
        compile_schema(schema, cache=None)
    assert info.value.keyword == keyword


@pytest.mark.parametrize(
    ("fmt", "good", "bad"),
    [("date", "2026-12-07", "2026-1-7"), ("time", "12:00:00+23:59", "12:00:00+24:00")],
)
def test_format_shapes_and_ranges(fmt: str, good: str, bad: str) -> None:
    v = compile_schema({"format": fmt}, formats=True, cache=None)
    assert v.is_valid(good) and not v.is_valid(bad)


def test_unevaluated_keywords_in_a_subschema_count_as_evaluating_everything() -> None:
    """An inner ``unevaluatedProperties``/``unevaluatedItems`` evaluates every property or item,
    so the outer one sees nothing left (JSON Schema 2020-12, section 11)."""
    props = {"allOf": [{"unevaluatedProperties": True}], "unevaluatedProperties": False}
    assert compile_schema(props, cache=None).is_valid({"a": 1, "b": 2})
    items = {"allOf": [{"unevaluatedItems": True}], "unevaluatedItems": False}
    assert compile_schema(items, cache=None).is_valid([1, 2])
    neither = {"allOf": [{"unevaluatedItems": True}], "unevaluatedProperties": False}
    assert not compile_schema(neither, cache=None).is_valid({"a": 1})


def test_dependent_schemas_annotate_only_when_their_property_is_present() -> None:
    schema = {
        "dependentSchemas": {"a": {"properties": {"b": True}}},
        "properties": {"a": True},
        "unevaluatedProperties": False,
    }
    v = compile_schema(schema, cache=None)
    assert v.is_valid({"a": 1, "b": 2})
    assert not v.is_valid({"b": 2})


def test_dynamic_ref_falls_back_to_its_static_target_outside_any_candidate_scope() -> None:
    """``$dynamicRef`` resolves to the outermost ``$dynamicAnchor`` of its name in the dynamic
    scope; when no resource in scope declares it, it is the static target (2020-12, 8.2.3.2)."""
    schema = {
        "$id": "https://example.com/root",
        "$defs": {
            "other": {"$id": "https://example.com/other", "$dynamicAnchor": "item"},
            "int": {"$id": "https://example.com/int", "$dynamicAnchor": "n", "type": "integer"},
        },
        "type": "array",
        "items": {"$dynamicRef": "https://example.com/int#n"},
    }
    v = compile_schema(schema, cache=None)
    assert v.is_valid([1, 2])
    assert not v.is_valid(["a"])


def test_dynamic_ref_annotations_reach_unevaluated_properties() -> None:
    """The outermost ``$dynamicAnchor`` in scope is what ``$dynamicRef`` evaluates, and the
    properties it evaluates count for an enclosing ``unevaluatedProperties``."""
    outer = {
        "$id": "https://example.com/outer",
        "$defs": {
            "meta": {"$dynamicAnchor": "meta", "properties": {"a": True}},
            "ext": {
                "$id": "https://example.com/ext",
                "$defs": {"fallback": {"$dynamicAnchor": "meta", "properties": {"z": True}}},
                "$dynamicRef": "#meta",
            },
        },
        "allOf": [{"$ref": "https://example.com/ext"}],
        "unevaluatedProperties": False,
    }
    v = compile_schema(outer, cache=None)
    assert v.is_valid({"a": 1})
    assert not v.is_valid({"z": 1})
    assert not v.is_valid({"a": 1, "b": 2})


def test_evaluation_depth_is_bounded() -> None:
    limits = Limits(max_eval_depth=10)
    v = compile_schema({"items": {"$ref": "#"}}, limits=limits, cache=None)
    nested: Any = []
    for _ in range(20):
        nested = [nested]
    with pytest.raises(LimitExceeded) as info:
        v.is_valid(nested)
    assert info.value.bound == "max_eval_depth"


def test_resolver_schema_errors_pass_through_and_non_schemas_are_refused() -> None:
    class Refused(SchemaError):
        pass

    def strict(uri: str) -> Any:
        raise Refused(f"no {uri}")

    with pytest.raises(Refused):
        compile_schema({"$ref": "https://schemas.example/a.json"}, resolver=strict, cache=None)
    with pytest.raises(InvalidSchema, match="returned a list"):
        compile_schema(
            {"$ref": "https://schemas.example/a.json"}, resolver=lambda uri: [], cache=None
        )


def _form(field: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"f": field}}


@pytest.mark.parametrize(
    ("field", "keyword"),
    [
        ({"type": "string", "oneOf": []}, "oneOf"),
        ({"type": "string", "oneOf": "x"}, "oneOf"),
        ({"type": "string", "enum": ["a", "b"], "enumNames": ["A"]}, "enumNames"),
        ({"type": "array"}, "items"),
    ],
)
def test_malformed_form_fields_are_refused_elic_11(field: dict[str, Any], keyword: str) -> None:
    with pytest.raises(InvalidSchema) as info:
        check_elicitation_schema(_form(field))
    assert info.value.keyword == keyword


def test_dynamic_ref_without_a_dynamic_anchor_is_a_plain_ref() -> None:
    schema = {"$defs": {"n": {"type": "integer"}}, "items": {"$dynamicRef": "#/$defs/n"}}
    v = compile_schema(schema, cache=None)
    assert v.is_valid([1, 2]) and not v.is_valid(["a"])
