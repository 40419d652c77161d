"""The validator, keyword family by keyword family (SCHEMA-01..05).

The official JSON-Schema-Test-Suite is not available offline, so each family has its own
table of (schema, instance, valid) cases, written from the 2020-12 specification's wording.
"""

from __future__ import annotations

import doctest
import enum
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcp_proto.schema
from mcp_proto.schema import (
    InvalidSchema,
    SchemaCache,
    UnsupportedDialect,
    ValidationFailed,
    compile_schema,
)

D07 = "http://json-schema.org/draft-07/schema#"
D19 = "https://json-schema.org/draft/2019-09/schema"
D20 = "https://json-schema.org/draft/2020-12/schema"

Case = tuple[Any, Any, bool]

TREE: dict[str, Any] = {
    "$id": "https://example.com/tree",
    "$dynamicAnchor": "node",
    "type": "object",
    "properties": {
        "data": True,
        "children": {"type": "array", "items": {"$dynamicRef": "#node"}},
    },
}
STRICT_TREE = {
    "$id": "https://example.com/strict-tree",
    "$dynamicAnchor": "node",
    "$ref": "tree",
    "unevaluatedProperties": False,
    "$defs": {"tree": TREE},
}
TREE_2019: dict[str, Any] = {
    "$id": "https://example.com/tree.json",
    "$recursiveAnchor": True,
    "type": "object",
    "properties": {
        "data": True,
        "children": {"type": "array", "items": {"$recursiveRef": "#"}},
    },
}
STRICT_TREE_2019 = {
    "$schema": D19,
    "$id": "https://example.com/strict.json",
    "$recursiveAnchor": True,
    "$ref": "tree.json",
    "unevaluatedProperties": False,
    "$defs": {"tree": TREE_2019},
}

FAMILIES: dict[str, list[Case]] = {
    "type": [
        ({"type": "integer"}, 1, True),
        ({"type": "integer"}, 1.0, True),
        ({"type": "integer"}, 1.5, False),
        ({"type": "integer"}, True, False),
        ({"type": "number"}, 2, True),
        ({"type": "number"}, False, False),
        ({"type": "string"}, "", True),
        ({"type": "null"}, None, True),
        ({"type": "null"}, 0, False),
        ({"type": "boolean"}, 0, False),
        ({"type": "object"}, [], False),
        ({"type": "array"}, {}, False),
        ({"type": ["string", "null"]}, None, True),
        ({"type": ["string", "null"]}, 3, False),
        (True, {"anything": 1}, True),
        (False, None, False),
        ({}, [1, "x"], True),
    ],
    "enum-const": [
        ({"enum": [1, "a", None]}, 1.0, True),
        ({"enum": [1, "a", None]}, True, False),
        ({"enum": [[1, 2], {"a": 1}]}, {"a": 1.0}, True),
        ({"enum": [[1, 2]]}, [2, 1], False),
        ({"const": False}, 0, False),
        ({"const": {"a": [1]}}, {"a": [1]}, True),
    ],
    "numbers": [
        ({"minimum": 1}, 1, True),
        ({"minimum": 1}, 0.99, False),
        ({"exclusiveMinimum": 1}, 1, False),
        ({"maximum": 3}, 3.0, True),
        ({"exclusiveMaximum": 3}, 2.999, True),
        ({"exclusiveMaximum": 3}, 3, False),
        ({"multipleOf": 0.1}, 0.3, True),
        ({"multipleOf": 0.1}, 0.35, False),
        ({"multipleOf": 2}, 7, False),
        ({"multipleOf": 1e-308}, 1e308, False),
        ({"minimum": 5}, "a string is not a number", True),
    ],
    "strings": [
        ({"minLength": 2}, "é€", True),
        ({"minLength": 2}, "a", False),
        ({"maxLength": 1}, "😀", True),
        ({"pattern": "^[a-z]+$"}, "abc", True),
        ({"pattern": "^[a-z]+$"}, "abc\n", False),
        ({"pattern": "b"}, "abc", True),
        ({"pattern": r"^\d+$"}, "١٢", False),
        ({"pattern": "^(?<y>[0-9]{4})$"}, "2026", True),
        ({"format": "email"}, "not an email", True),
        ({"maxLength": 1}, 12345, True),
    ],
    "arrays": [
        ({"items": {"type": "integer"}}, [1, 2], True),
        ({"items": {"type": "integer"}}, [1, "2"], False),
        ({"prefixItems": [{"type": "string"}], "items": False}, ["a"], True),
        ({"prefixItems": [{"type": "string"}], "items": False}, ["a", 1], False),
        ({"prefixItems": [{"type": "string"}]}, [1], False),
        ({"minItems": 1, "maxItems": 2}, [], False),
        ({"minItems": 1, "maxItems": 2}, [1, 2, 3], False),
        ({"uniqueItems": True}, [1, 1.0], False),
        ({"uniqueItems": True}, [1, True], True),
        ({"uniqueItems": True}, [{"a": 1, "b": 2}, {"b": 2, "a": 1}], False),
        ({"contains": {"type": "string"}}, [1, "a"], True),
        ({"contains": {"type": "string"}}, [1, 2], False),
        ({"contains": {"type": "string"}, "minContains": 2}, ["a", 1], False),
        ({"contains": {"type": "string"}, "maxContains": 1}, ["a", "b"], False),
        ({"contains": {"type": "string"}, "minContains": 0}, [], True),
    ],
    "objects": [
        ({"required": ["a"]}, {"a": None}, True),
        ({"required": ["a"]}, {}, False),
        ({"required": ["a"]}, ["a"], True),
        ({"properties": {"a": {"type": "string"}}}, {"a": 1}, False),
        ({"properties": {"a": {"type": "string"}}}, {"b": 1}, True),
        ({"patternProperties": {"^x-": {"type": "integer"}}}, {"x-a": "no"}, False),
        ({"additionalProperties": False, "properties": {"a": {}}}, {"a": 1}, True),
        ({"additionalProperties": False, "properties": {"a": {}}}, {"a": 1, "b": 2}, False),
        (
            {"patternProperties": {"^x-": {}}, "additionalProperties": {"type": "string"}},
            {"x-n": 1, "b": "ok"},
            True,
        ),
        ({"additionalProperties": {"type": "string"}}, {"b": 2}, False),
        ({"minProperties": 1}, {}, False),
        ({"maxProperties": 1}, {"a": 1, "b": 2}, False),
        ({"propertyNames": {"maxLength": 2}}, {"abc": 1}, False),
        ({"dependentRequired": {"a": ["b"]}}, {"a": 1}, False),
        ({"dependentRequired": {"a": ["b"]}}, {"b": 1}, True),
        ({"dependentSchemas": {"a": {"required": ["b"]}}}, {"a": 1}, False),
    ],
    "composition": [
        ({"allOf": [{"type": "integer"}, {"minimum": 2}]}, 1, False),
        ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, "a", True),
        ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, None, False),
        ({"oneOf": [{"type": "integer"}, {"minimum": 2}]}, 3, False),
        ({"oneOf": [{"type": "integer"}, {"minimum": 2}]}, 1, True),
        ({"oneOf": [{"type": "integer"}, {"minimum": 2}]}, 2.5, True),
        ({"not": {"type": "string"}}, "a", False),
        ({"not": {"type": "string"}}, 1, True),
    ],
    "conditionals": [
        ({"if": {"minimum": 10}, "then": {"multipleOf": 10}}, 15, False),
        ({"if": {"minimum": 10}, "then": {"multipleOf": 10}}, 5, True),
        ({"if": {"minimum": 10}, "else": {"const": 1}}, 5, False),
        ({"then": {"const": 1}}, 5, True),
        ({"else": {"const": 1}}, 5, True),
    ],
    "refs": [
        ({"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s"}, 1, False),
        ({"$defs": {"s": {"$anchor": "str", "type": "string"}}, "$ref": "#str"}, "a", True),
        ({"$defs": {"a~b/c": {"type": "string"}}, "$ref": "#/$defs/a~0b~1c"}, 1, False),
        ({"$defs": {"a b": {"type": "string"}}, "$ref": "#/$defs/a%20b"}, 1, False),
        ({"$ref": "#/$defs/s", "$defs": {"s": {"minimum": 1}}, "maximum": 0}, 0.5, False),
        (
            {
                "$id": "https://example.com/root.json",
                "$defs": {"b": {"$id": "b.json", "type": "integer"}},
                "$ref": "https://example.com/b.json",
            },
            "x",
            False,
        ),
        (
            {
                "$id": "https://example.com/root.json",
                "$defs": {"b": {"$id": "sub/b.json", "$defs": {"c": {"type": "null"}}}},
                "$ref": "sub/b.json#/$defs/c",
            },
            None,
            True,
        ),
        (
            {
                "$defs": {
                    "tree": {"type": "object", "properties": {"kid": {"$ref": "#/$defs/tree"}}}
                },
                "$ref": "#/$defs/tree",
            },
            {"kid": {"kid": {"kid": 1}}},
            False,
        ),
        ({"definitions": {"s": {"type": "string"}}, "$ref": "#/definitions/s"}, "a", True),
    ],
    "unevaluated": [
        ({"properties": {"a": {}}, "unevaluatedProperties": False}, {"a": 1, "b": 1}, False),
        (
            {"allOf": [{"properties": {"a": {}}}], "unevaluatedProperties": False},
            {"a": 1},
            True,
        ),
        (
            {
                "anyOf": [{"properties": {"a": {}}, "required": ["a"]}, {"properties": {"b": {}}}],
                "unevaluatedProperties": False,
            },
            {"b": 1},
            True,
        ),
        (
            {
                "if": {"properties": {"k": {"const": 1}}},
                "then": {"properties": {"x": {}}},
                "unevaluatedProperties": False,
            },
            {"k": 2, "x": 1},
            False,
        ),
        (
            {
                "$ref": "#/$defs/a",
                "$defs": {"a": {"properties": {"a": {}}}},
                "unevaluatedProperties": False,
            },
            {"a": 1},
            True,
        ),
        ({"prefixItems": [{}], "unevaluatedItems": False}, [1, 2], False),
        ({"prefixItems": [{}], "unevaluatedItems": False}, [1], True),
        (
            {"contains": {"type": "string"}, "unevaluatedItems": {"type": "integer"}},
            ["a", 1],
            True,
        ),
        (
            {"contains": {"type": "string"}, "unevaluatedItems": {"type": "integer"}},
            ["a", 1.5],
            False,
        ),
        ({"unevaluatedProperties": {"type": "integer"}}, {"a": "x"}, False),
    ],
    "dynamic": [
        # No dynamic anchor at the target: a plain $ref.
        ({"$defs": {"s": {"$anchor": "s", "type": "string"}}, "$dynamicRef": "#s"}, 1, False),
        # The target's dynamic anchor, and no outer resource declaring it: the target.
        (
            {"$defs": {"s": {"$dynamicAnchor": "s", "type": "string"}}, "$dynamicRef": "#s"},
            "a",
            True,
        ),
        (STRICT_TREE, {"children": [{"data": 1}]}, True),
        (STRICT_TREE, {"children": [{"daat": 1}]}, False),  # the strict root, found dynamically
        (TREE, {"children": [{"daat": 1}]}, True),
        (STRICT_TREE_2019, {"children": [{"data": 1}]}, True),
        (STRICT_TREE_2019, {"children": [{"daat": 1}]}, False),
        ({"$schema": D19, **TREE_2019}, {"children": [{"daat": 1}]}, True),
        # $dynamicRef is not a 2019-09 keyword, nor $recursiveRef a 2020-12 one: annotations.
        ({"$schema": D19, "$dynamicRef": "#x"}, 1, True),
        ({"$recursiveRef": "#", "type": "string"}, "a", True),
    ],
    "draft-07": [
        (
            {"$schema": D07, "items": [{"type": "string"}], "additionalItems": False},
            ["a", 1],
            False,
        ),
        ({"$schema": D07, "items": [{"type": "string"}]}, ["a", 1], True),
        ({"$schema": D07, "dependencies": {"a": ["b"]}}, {"a": 1}, False),
        ({"$schema": D07, "dependencies": {"a": {"required": ["c"]}}}, {"a": 1}, False),
        # draft-07: $ref ignores its siblings.
        (
            {
                "$schema": D07,
                "definitions": {"s": {}},
                "$ref": "#/definitions/s",
                "type": "string",
            },
            1,
            True,
        ),
        (
            {"$schema": D07, "definitions": {"s": {"$id": "#s", "type": "string"}}, "$ref": "#s"},
            1,
            False,
        ),
        ({"$schema": D07, "unevaluatedProperties": False}, {"a": 1}, True),
        ({"$schema": D07, "contains": {"const": 1}, "minContains": 5}, [1], True),
    ],
    "2019-09": [
        (
            {"$schema": D19, "items": [{"type": "string"}], "additionalItems": False},
            ["a", 1],
            False,
        ),
        ({"$schema": D19, "$ref": "#/$defs/s", "$defs": {"s": {}}, "type": "string"}, 1, False),
        (
            {"$schema": D19, "properties": {"a": {}}, "unevaluatedProperties": False},
            {"b": 1},
            False,
        ),
    ],
    "2020-12-explicit": [
        ({"$schema": D20, "type": "string"}, 1, False),
        ({"$schema": D20 + "#", "type": "string"}, "a", True),
        ({"x-vendor": {"type": "string"}, "unknownKeyword": 3}, 1, True),
    ],
}

CASES = [(family, *case) for family, cases in FAMILIES.items() for case in cases]


@pytest.mark.parametrize(("family", "schema", "instance", "valid"), CASES)
def test_keyword_family_schema_03(family: str, schema: Any, instance: Any, valid: bool) -> None:
    """SCHEMA-03/04: each case validates by its declared or default dialect."""
    v = compile_schema(schema, cache=None)
    assert v.is_valid(instance) is valid
    failures = v.failures(instance)
    assert (failures == []) is valid


def test_default_dialect_is_2020_12_schema_01() -> None:
    assert compile_schema({"type": "object"}).dialect == "2020-12"
    assert compile_schema({"$schema": D07}).dialect == "draft-07"
    assert compile_schema({"$schema": D19}).dialect == "2019-09"


def test_failures_carry_pointers_and_keywords() -> None:
    schema = {
        "type": "object",
        "properties": {"a/b": {"type": "array", "items": {"minimum": 0}}},
        "required": ["c"],
    }
    failures = compile_schema(schema).failures({"a/b": [1, -1]})
    assert [(f.instance_path, f.keyword, f.schema_path) for f in failures] == [
        ("", "required", "/required"),
        ("/a~1b/1", "minimum", "/properties/a~1b/items/minimum"),
    ]
    assert str(failures[0]) == "/: missing required property 'c'"
    assert str(failures[1]) == "/a~1b/1: must be at least 0, got -1"


def test_ref_failures_point_at_the_target() -> None:
    schema = {"$defs": {"pos": {"exclusiveMinimum": 0}}, "items": {"$ref": "#/$defs/pos"}}
    (failure,) = compile_schema(schema).failures([1, 0])
    assert (failure.instance_path, failure.keyword, failure.schema_path) == (
        "/1",
        "exclusiveMinimum",
        "/$defs/pos/exclusiveMinimum",
    )


def test_validate_raises_with_the_failures() -> None:
    v = compile_schema({"type": "string"})
    v.validate("ok")
    with pytest.raises(ValidationFailed, match="expected string, got integer") as info:
        v.validate(3)
    assert [f.keyword for f in info.value.failures] == ["type"]


def test_formats_assert_only_when_asked() -> None:
    schema = {"type": "object", "properties": {"d": {"format": "date"}, "e": {"format": "email"}}}
    assert compile_schema(schema).is_valid({"d": "2026-13-40"})
    strict = compile_schema(schema, formats=True)
    assert strict.is_valid({"d": "2026-02-28", "e": "a@b.example"})
    assert [f.instance_path for f in strict.failures({"d": "2026-02-30", "e": "a b@c"})] == [
        "/d",
        "/e",
    ]


@pytest.mark.parametrize(
    ("name", "good", "bad"),
    [
        ("date-time", "2026-07-28T10:00:00Z", "2026-07-28 10:00:00"),
        ("date-time", "2026-07-28t10:00:00.5+02:00", "2026-07-28T25:00:00Z"),
        ("time", "23:59:60Z", "23:59"),
        ("uri", "https://example.com/a?b", "/relative"),
        ("uri-reference", "/relative", "has space"),
        ("uuid", "123e4567-e89b-12d3-a456-426614174000", "123e4567"),
        ("ipv4", "192.0.2.1", "256.0.0.1"),
        ("ipv6", "2001:db8::1", "192.0.2.1"),
        ("hostname", "example.com", "-bad-.com"),
    ],
)
def test_format_assertions(name: str, good: str, bad: str) -> None:
    v = compile_schema({"format": name}, formats=True)
    assert v.is_valid(good)
    assert not v.is_valid(bad)


@pytest.mark.parametrize(
    ("schema", "where", "keyword"),
    [
        ({"type": "text"}, "/type", "type"),
        ({"type": ["string", "string"]}, "/type", "type"),
        ({"minLength": -1}, "/minLength", "minLength"),
        ({"minLength": 1.5}, "/minLength", "minLength"),
        ({"maximum": "3"}, "/maximum", "maximum"),
        ({"multipleOf": 0}, "/multipleOf", "multipleOf"),
        ({"required": "a"}, "/required", "required"),
        ({"allOf": []}, "/allOf", "allOf"),
        ({"properties": []}, "/properties", "properties"),
        ({"properties": {"a": 3}}, "/properties/a", None),
        ({"enum": 3}, "/enum", "enum"),
        ({"$ref": 3}, "/$ref", "$ref"),
        ({"pattern": "("}, "/pattern", "pattern"),
        ({"dependentRequired": {"a": "b"}}, "/dependentRequired", "dependentRequired"),
        ({"items": {"$schema": D07}}, "/items/$schema", "$schema"),
        ({"$dynamicRef": 3}, "/$dynamicRef", "$dynamicRef"),
        ({"$schema": D19, "$recursiveRef": "#/$defs/a"}, "/$recursiveRef", "$recursiveRef"),
        ({"$dynamicRef": "https://example.com/s#node"}, "/$dynamicRef", "$dynamicRef"),
        ({"$defs": {"a": {}}, "$ref": "#/$defs/b"}, "/$ref", "$ref"),
        ({"$ref": "#nowhere"}, "/$ref", "$ref"),
        ({"$defs": {"a": 1}, "$ref": "#/$defs/a"}, "/$ref", "$ref"),
    ],
)
def test_invalid_schemas_are_refused_schema_05(schema: Any, where: str, keyword: Any) -> None:
    """SCHEMA-05: a schema invalid in its dialect is refused, with its location and keyword."""
    with pytest.raises(InvalidSchema) as info:
        compile_schema(schema, cache=None)
    assert (info.value.schema_path, info.value.keyword) == (where, keyword)


def test_schema_must_be_object_or_boolean() -> None:
    with pytest.raises(InvalidSchema, match="object or a boolean, got list"):
        compile_schema([], cache=None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "dialect",
    [
        "http://json-schema.org/draft-04/schema#",
        "http://json-schema.org/draft-06/schema#",
        "https://json-schema.org/draft/2021-01/schema",
        "https://example.com/my-dialect",
        42,
    ],
)
def test_unknown_dialects_are_refused_by_name_schema_04(dialect: Any) -> None:
    with pytest.raises(UnsupportedDialect) as info:
        compile_schema({"$schema": dialect, "type": "object"}, cache=None)
    assert info.value.dialect == dialect
    assert repr(dialect) in str(info.value)
    assert "2020-12" in str(info.value)


def test_cache_compiles_once_per_schema_content() -> None:
    cache = SchemaCache(maxsize=2)
    a = cache.get({"type": "object", "required": ["x"]})
    assert cache.get({"required": ["x"], "type": "object"}) is a  # key order does not matter
    assert cache.get({"type": "object", "required": ["x"]}, formats=True) is not a
    cache.get({"type": "string"})
    assert len(cache) == 2
    assert cache.get({"type": "object", "required": ["x"]}) is not a  # evicted
    cache.clear()
    assert len(cache) == 0


def test_default_cache_is_used() -> None:
    schema = {"type": "object", "properties": {"cached": {"type": "boolean"}}}
    assert compile_schema(schema) is compile_schema(dict(schema))
    assert compile_schema(schema, cache=None) is not compile_schema(schema)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(-5, 5) | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=60, deadline=None)
@given(json_values)
def test_enum_of_a_value_accepts_it_and_is_valid_agrees_with_failures(value: Any) -> None:
    v = compile_schema(
        {"enum": [value], "type": ["null", "boolean", "number", "string", "array", "object"]},
        cache=None,
    )
    assert v.is_valid(value)
    other = compile_schema({"not": {"const": value}}, cache=None)
    assert not other.is_valid(value)
    assert other.failures(value)[0].keyword == "not"


def test_module_docstrings_run() -> None:
    assert doctest.testmod(mcp_proto.schema).failed == 0


def test_instances_may_be_other_mappings_and_sequences() -> None:
    """Values built in Python (tuples, read-only mappings) validate like their JSON forms."""
    from collections import OrderedDict
    from types import MappingProxyType

    schema = {
        "type": "object",
        "properties": {"t": {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}},
        "required": ["t"],
    }
    v = compile_schema(schema)
    assert v.is_valid(MappingProxyType({"t": (1, 2)}))
    assert v.is_valid(OrderedDict(t=[1, 2]))
    assert not v.is_valid(MappingProxyType({"t": (1, 1.0)}))
    assert [f.keyword for f in v.failures(OrderedDict(t=(1, "2")))] == ["type"]
    assert compile_schema({"enum": [{"a": [1]}]}).is_valid(MappingProxyType({"a": (1.0,)}))


def test_non_json_values_match_no_type() -> None:
    v = compile_schema({"type": ["string", "number", "object", "array", "null", "boolean"]})
    assert not v.is_valid({1, 2})
    assert not v.is_valid(b"bytes")
    assert compile_schema({"not": {"const": 1}}).is_valid(object())


class _Colour(str, enum.Enum):  # noqa: UP042 - the mixin, whose str() is "_Colour.RED"
    RED = "red"
    BLUE = "blue"


class _Level(enum.IntEnum):
    LOW = 1


class _Real(float):
    pass


def test_str_enum_members_compare_as_their_values() -> None:
    """A ``str`` Enum member is its string value on either side (not ``"_Colour.RED"``)."""
    assert compile_schema({"enum": [_Colour.RED]}, cache=None).is_valid("red")
    assert compile_schema({"enum": ["red"]}, cache=None).is_valid(_Colour.RED)
    assert not compile_schema({"enum": ["_Colour.RED"]}, cache=None).is_valid(_Colour.RED)
    assert compile_schema({"const": {"red": 1}}, cache=None).is_valid({_Colour.RED: 1})
    unique = compile_schema({"uniqueItems": True}, cache=None)
    assert not unique.is_valid([_Colour.RED, "red"])
    assert not unique.is_valid([{_Colour.RED: 1}, {"red": 1}])
    assert compile_schema({"type": "string"}, cache=None).is_valid(_Colour.BLUE)


def test_number_subclasses_compare_as_numbers() -> None:
    assert compile_schema({"const": 1}, cache=None).is_valid(_Level.LOW)
    assert compile_schema({"const": 1.5}, cache=None).is_valid(_Real(1.5))
    assert compile_schema({"const": 2}, cache=None).is_valid(_Real(2.0))
    assert compile_schema({"type": "integer"}, cache=None).is_valid(_Level.LOW)
    assert compile_schema({"type": "integer"}, cache=None).is_valid(_Real(3.0))
    assert not compile_schema({"type": "integer"}, cache=None).is_valid(_Real(3.5))
    assert compile_schema({"type": "number"}, cache=None).is_valid(_Real(3.5))
    assert not compile_schema({"type": "boolean"}, cache=None).is_valid(_Level.LOW)


def test_mapping_and_tuple_instances_are_objects_and_arrays() -> None:
    from types import MappingProxyType

    proxy = MappingProxyType({"a": [1, 2]})
    assert compile_schema({"type": "object"}, cache=None).is_valid(proxy)
    assert compile_schema({"const": {"a": [1, 2]}}, cache=None).is_valid(proxy)
    assert compile_schema({"const": [1, 2]}, cache=None).is_valid((1, 2.0))
    assert compile_schema({"type": "array"}, cache=None).is_valid((1,))


def test_values_of_no_json_type_match_no_type() -> None:
    """A Python ``object()`` is not a JSON object, and equals only itself."""
    thing = object()
    for name in ("object", "array", "string", "number", "integer", "boolean", "null"):
        assert not compile_schema({"type": name}, cache=None).is_valid(thing)
    (failure,) = compile_schema({"type": "object"}, cache=None).failures(thing)
    assert "non-JSON object" in failure.message
    assert not compile_schema({"const": None}, cache=None).is_valid(thing)
    assert not compile_schema({"const": {"1": "a"}}, cache=None).is_valid({1: "a"})  # not JSON
    assert not compile_schema({"uniqueItems": True}, cache=None).is_valid([thing, thing])
    assert compile_schema({"uniqueItems": True}, cache=None).is_valid([thing, object()])
