"""Differential test: our validator agrees with ``jsonschema`` (a dev dependency) on generated
2020-12 schemas and instances, where both implement the same keywords."""

from __future__ import annotations

from typing import Any

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_proto.schema import compile_schema

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([0.5, 1.0, -2.5])
    | st.sampled_from(["", "a", "ab", "abc", "b1"])
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "c", "x-y"]), inner, max_size=3)
    ),
    max_leaves=6,
)
names = st.sampled_from(["a", "b", "c"])
types = st.sampled_from(["null", "boolean", "integer", "number", "string", "array", "object"])


def leaf() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        st.builds(lambda t: {"type": t}, types),
        st.builds(lambda t: {"type": t}, st.lists(types, min_size=1, max_size=3, unique=True)),
        st.builds(lambda v: {"enum": v}, st.lists(scalars, min_size=1, max_size=3)),
        st.builds(lambda v: {"const": v}, values),
        st.builds(lambda n: {"minimum": n}, st.integers(-2, 2)),
        st.builds(lambda n: {"exclusiveMaximum": n}, st.integers(-2, 2)),
        st.builds(lambda n: {"multipleOf": n}, st.sampled_from([1, 2, 0.5])),
        st.builds(lambda n: {"minLength": n}, st.integers(0, 3)),
        st.builds(lambda n: {"maxLength": n}, st.integers(0, 3)),
        st.builds(lambda p: {"pattern": p}, st.sampled_from(["^a", "b$", "[0-9]", "^a+$"])),
        st.builds(lambda n: {"minItems": n}, st.integers(0, 2)),
        st.builds(lambda n: {"maxProperties": n}, st.integers(0, 2)),
        st.just({"uniqueItems": True}),
        st.builds(lambda r: {"required": r}, st.lists(names, max_size=2, unique=True)),
        st.builds(lambda r: {"dependentRequired": {"a": r}}, st.lists(names, max_size=2)),
        st.sampled_from([True, False, {}]),
    )


def extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    subs = st.lists(inner, min_size=1, max_size=3)
    return st.one_of(
        st.builds(lambda s: {"allOf": s}, subs),
        st.builds(lambda s: {"anyOf": s}, subs),
        st.builds(lambda s: {"oneOf": s}, subs),
        st.builds(lambda s: {"not": s}, inner),
        st.builds(lambda i, t, e: {"if": i, "then": t, "else": e}, inner, inner, inner),
        st.builds(lambda p: {"properties": p}, st.dictionaries(names, inner, max_size=2)),
        st.builds(
            lambda p, a: {"properties": p, "additionalProperties": a},
            st.dictionaries(names, inner, max_size=2),
            inner,
        ),
        st.builds(lambda p: {"patternProperties": {"^x-": p}}, inner),
        st.builds(lambda p: {"propertyNames": p}, inner),
        st.builds(lambda i: {"items": i}, inner),
        st.builds(lambda p, i: {"prefixItems": p, "items": i}, st.lists(inner, max_size=2), inner),
        st.builds(lambda c, n: {"contains": c, "minContains": n}, inner, st.integers(0, 2)),
        st.builds(lambda c: {"contains": c, "maxContains": 1}, inner),
        st.builds(lambda d: {"dependentSchemas": {"a": d}}, inner),
        st.builds(
            lambda p, u: {"allOf": [{"properties": p}], "unevaluatedProperties": u},
            st.dictionaries(names, inner, max_size=2),
            inner,
        ),
        st.builds(
            lambda s, u: {"anyOf": s, "unevaluatedProperties": u},
            st.lists(
                st.builds(lambda p: {"properties": p}, st.dictionaries(names, inner, max_size=2)),
                min_size=1,
                max_size=2,
            ),
            inner,
        ),
        st.builds(
            lambda p, u: {"prefixItems": p, "unevaluatedItems": u},
            st.lists(inner, max_size=2),
            inner,
        ),
        st.builds(
            lambda a, b: {**a, **b},
            inner.filter(lambda s: isinstance(s, dict)),
            leaf().filter(lambda s: isinstance(s, dict)),
        ),
    )


nested = st.recursive(leaf(), extend, max_leaves=6)
# "#/..." points from the document root, so $defs are put there.
schemas = nested | st.builds(
    lambda d, s: {"$defs": {"d": d}, "anyOf": [s, {"properties": {"a": {"$ref": "#/$defs/d"}}}]},
    nested,
    nested,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas, values)
def test_agrees_with_jsonschema(schema: Any, instance: Any) -> None:
    expected = jsonschema.Draft202012Validator(schema).is_valid(instance)
    v = compile_schema(schema, cache=None)
    assert v.is_valid(instance) is expected
    assert (v.failures(instance) == []) is expected
