"""Hostile schemas and instances (SCHEMA-06..09): each ends fast, with an error naming the cause.

Every test here runs with the network cut off: opening or resolving a socket fails the test.
Durations are not asserted tightly (timed tests are flaky) but each case would run for hours,
or forever, without its bound, and a generous ceiling catches that.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mcp_proto.schema import (
    InvalidSchema,
    LimitExceeded,
    Limits,
    UnresolvableRef,
    UnsupportedDialect,
    compile_schema,
)

CEILING = 5.0  # seconds; a bound that fails shows up as minutes or a hang


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"the validator touched the network: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    yield


def timed(fn: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    try:
        return fn()
    finally:
        assert time.perf_counter() - start < CEILING


def nested(keyword: str, depth: int, leaf: Any, *, shared: bool = False) -> Any:
    schema = leaf
    for _ in range(depth):
        schema = {keyword: [schema, schema]} if shared else {keyword: [schema]}
    return schema


def test_network_is_really_cut_off() -> None:
    with pytest.raises(AssertionError, match="touched the network"):
        socket.create_connection(("192.0.2.1", 443))


# -- composition ------------------------------------------------------------------------------


@pytest.mark.parametrize("keyword", ["allOf", "anyOf", "oneOf"])
def test_deeply_nested_composition_schema_09(keyword: str) -> None:
    with pytest.raises(LimitExceeded) as info:
        timed(lambda: compile_schema(nested(keyword, 100_000, {"type": "string"}), cache=None))
    assert info.value.bound == "max_schema_nesting"
    assert "max_schema_nesting=64" in str(info.value)


def test_subschema_depth_bound_schema_09() -> None:
    limits = Limits(max_schema_nesting=1_000)
    with pytest.raises(LimitExceeded) as info:
        compile_schema(nested("allOf", 40, True), limits=limits, cache=None)
    assert info.value.bound == "max_schema_depth"


def test_exponential_shared_schema_is_cut_by_its_size_schema_09() -> None:
    """2**30 logical subschemas made of 30 shared dicts: the size walk stops at the bound."""
    with pytest.raises(LimitExceeded) as info:
        timed(lambda: compile_schema(nested("oneOf", 30, {"type": "string"}, shared=True)))
    assert info.value.bound == "max_schema_values"


@pytest.mark.parametrize("keyword", ["oneOf", "anyOf"])
def test_exponential_evaluation_hits_the_step_budget_schema_09(keyword: str) -> None:
    """A small schema whose evaluation doubles 40 times through $defs: the budget stops it."""
    defs: dict[str, Any] = {"d0": {"type": "string"}}
    for i in range(1, 41):
        ref = {"$ref": f"#/$defs/d{i - 1}"}
        defs[f"d{i}"] = {keyword: [ref, ref]}
    v = compile_schema({"$defs": defs, "$ref": "#/$defs/d40"}, cache=None)
    if keyword == "anyOf":
        assert v.is_valid("fine")  # the first branch succeeds at every level: 41 steps
    with pytest.raises(LimitExceeded) as info:
        timed(lambda: v.is_valid(1))
    assert info.value.bound == "max_steps"
    assert "max_steps=200000" in str(info.value)


def test_too_many_subschemas_schema_09() -> None:
    schema = {"properties": {f"p{i}": {"type": "string"} for i in range(3_000)}}
    with pytest.raises(LimitExceeded) as info:
        compile_schema(schema, cache=None)
    assert info.value.bound == "max_subschemas"


# -- references -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#"},
        {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"},
        {"$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}]}}, "anyOf": [{"$ref": "#/$defs/a"}]},
        {"not": {"$ref": "#"}},
        {"$defs": {"x": {"$anchor": "x", "oneOf": [{"$ref": "#x"}]}}, "$ref": "#x"},
        {
            "type": "object",
            "properties": {
                "a": {"$defs": {"l": {"$ref": "#/properties/a"}}, "$ref": "#/properties/a/$defs/l"}
            },
        },
    ],
)
def test_ref_loops_are_refused_schema_09(schema: Any) -> None:
    with pytest.raises(InvalidSchema, match=r"\$ref loop") as info:
        timed(lambda: compile_schema(schema, cache=None))
    assert info.value.keyword == "$ref"


def test_recursion_through_the_instance_is_bounded_by_its_depth() -> None:
    v = compile_schema({"type": "object", "additionalProperties": {"$ref": "#"}}, cache=None)
    deep: Any = {}
    for _ in range(60):
        deep = {"k": deep}
    assert v.is_valid(deep)
    for _ in range(10):
        deep = {"k": deep}
    with pytest.raises(LimitExceeded) as info:
        v.is_valid(deep)
    assert info.value.bound == "max_instance_depth"


@pytest.mark.parametrize(
    "ref",
    [
        "https://example.com/schemas/address.json",
        "http://example.com/schema#/definitions/a",
        "https://json-schema.org/draft/2020-12/schema",
        "file:///etc/passwd",
        "file://localhost/c:/schema.json",
        "other.json",
        "../secrets.json#/a",
        "urn:example:schema",
        "//example.com/x.json",
    ],
)
def test_remote_refs_are_refused_never_fetched_schema_06_08(ref: str) -> None:
    with pytest.raises(UnresolvableRef) as info:
        timed(lambda: compile_schema({"properties": {"a": {"$ref": ref}}}, cache=None))
    assert info.value.ref == ref
    assert info.value.schema_path == "/properties/a/$ref"
    assert "never followed" in str(info.value)


def test_id_relative_refs_stay_in_the_document_unless_missing() -> None:
    base = {"$id": "https://example.com/tool.json", "$ref": "defs.json"}
    with pytest.raises(UnresolvableRef):
        compile_schema(base, cache=None)


def test_opt_in_resolver_is_asked_and_can_refuse_schema_07() -> None:
    asked: list[str] = []

    def resolver(uri: str) -> Any:
        asked.append(uri)
        if uri == "https://schemas.example/name.json":
            return {"$defs": {"n": {"type": "string", "minLength": 1}}}
        raise PermissionError("host not on the allowlist")

    schema = {"properties": {"n": {"$ref": "https://schemas.example/name.json#/$defs/n"}}}
    v = compile_schema(schema, resolver=resolver)
    assert asked == ["https://schemas.example/name.json"]
    assert not v.is_valid({"n": ""})
    (failure,) = v.failures({"n": ""})
    assert failure.schema_path == "https://schemas.example/name.json#/$defs/n/minLength"
    with pytest.raises(UnresolvableRef, match="not on the allowlist"):
        compile_schema({"$ref": "https://evil.example/x.json"}, resolver=resolver)


def test_dynamic_refs_in_fetched_documents_are_refused() -> None:
    def resolver(uri: str) -> Any:
        return {"$dynamicRef": "#x"}

    with pytest.raises(InvalidSchema, match="fetched by the resolver"):
        compile_schema({"$ref": "https://schemas.example/d.json"}, resolver=resolver)


def test_dynamic_ref_loops_are_refused() -> None:
    with pytest.raises(InvalidSchema, match=r"\$ref loop"):
        compile_schema({"$dynamicAnchor": "a", "$dynamicRef": "#a"}, cache=None)


def test_resolver_answers_are_bounded_too() -> None:
    def resolver(uri: str) -> Any:
        return {"enum": list(range(50_000))}

    with pytest.raises(LimitExceeded) as info:
        compile_schema({"$ref": "https://schemas.example/big.json"}, resolver=resolver)
    assert info.value.bound == "max_schema_values"


# -- values -----------------------------------------------------------------------------------


def test_huge_enum_is_refused_schema_09() -> None:
    with pytest.raises(LimitExceeded) as info:
        timed(lambda: compile_schema({"enum": list(range(1_000_000))}, cache=None))
    assert info.value.bound == "max_schema_values"


def test_large_enum_within_bounds_is_a_hash_lookup() -> None:
    v = compile_schema({"enum": [f"v{i}" for i in range(9_000)]}, cache=None)
    assert timed(lambda: all(v.is_valid(f"v{i}") for i in range(0, 9_000, 7)))
    assert not v.is_valid("v9000")


def test_huge_instance_is_refused_before_validation() -> None:
    v = compile_schema({"type": "array"}, cache=None)
    with pytest.raises(LimitExceeded) as info:
        v.is_valid(list(range(200_000)))
    assert info.value.bound == "max_instance_values"


def test_step_budget_on_a_large_instance() -> None:
    v = compile_schema({"items": {"type": "integer"}}, limits=Limits(max_steps=100), cache=None)
    assert v.is_valid(list(range(50)))
    with pytest.raises(LimitExceeded, match="max_steps=100"):
        v.failures(list(range(500)))


def test_unique_items_is_linear_and_charged() -> None:
    v = compile_schema({"uniqueItems": True}, limits=Limits(max_steps=1_000), cache=None)
    with pytest.raises(LimitExceeded):
        v.is_valid([[i] for i in range(5_000)])


# -- regular expressions ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "pattern",
    [
        r"^(a+)+$",
        r"(a|a)*b",
        r"^(\w+\s?)*$",
        r"(x+x+)+y",
        r"^([a-z]+\.)+$",
        r"(a|aa){2,}",
        r"(.*a){12}",
    ],
)
def test_backtracking_regexes_are_refused(pattern: str) -> None:
    with pytest.raises(InvalidSchema, match="backtrack") as info:
        timed(lambda: compile_schema({"pattern": pattern}, cache=None))
    assert (info.value.keyword, info.value.schema_path) == ("pattern", "/pattern")


def test_backtracking_pattern_properties_are_refused() -> None:
    with pytest.raises(InvalidSchema) as info:
        compile_schema({"patternProperties": {"^(a+)+$": {}}}, cache=None)
    assert info.value.keyword == "patternProperties"


@pytest.mark.parametrize("pattern", [r"(a)\1", r"(?<x>a)\k<x>", r"\p{L}+", r"(", r"a)", r"[a-"])
def test_regexes_re_cannot_run_safely_are_refused(pattern: str) -> None:
    with pytest.raises(InvalidSchema, match="refused"):
        compile_schema({"pattern": pattern}, cache=None)


def test_safe_regexes_compile() -> None:
    patterns = [r"^\d{4}-\d{2}-\d{2}$", r"^(\d{3}-)*\d{4}$", r"^[^@\s]+@[^@\s]+$", r"^(\+|-)?\d+$"]
    for pattern in patterns:
        compile_schema({"pattern": pattern}, cache=None)


def test_polynomial_regex_gets_a_length_bound() -> None:
    """``a*a*a*b`` is cubic: strings it may see are bounded by max_regex_work (215 chars)."""
    v = compile_schema({"pattern": "a*a*b"}, cache=None)
    assert not timed(lambda: v.is_valid("a" * 215))
    with pytest.raises(LimitExceeded) as info:
        timed(lambda: v.is_valid("a" * 10_000))
    assert info.value.bound == "max_regex_work"
    anchored = compile_schema({"pattern": "^[a-z]+$"}, cache=None)
    assert anchored.is_valid("a" * 10_000)
    with pytest.raises(LimitExceeded) as info:
        anchored.is_valid("a" * 10_001)
    assert info.value.bound == "max_pattern_subject"


def test_lazy_quantifiers_count_as_repeats() -> None:
    v = compile_schema({"pattern": "^<.+?>$"}, cache=None)
    assert v.is_valid("<a>") and not v.is_valid("<>")
    bounded = compile_schema({"pattern": "a+?a+?b"}, cache=None)  # exponent 3
    with pytest.raises(LimitExceeded):
        bounded.is_valid("a" * 216)


def test_a_larger_work_budget_lets_max_pattern_subject_bind() -> None:
    limits = Limits(max_regex_work=10**12, max_pattern_subject=500)
    v = compile_schema({"pattern": "a*b"}, limits=limits, cache=None)  # 500**2 < 10**12
    assert not v.is_valid("a" * 500)
    with pytest.raises(LimitExceeded) as info:
        v.is_valid("a" * 501)
    assert info.value.bound == "max_pattern_subject"


def test_long_regex_is_refused() -> None:
    with pytest.raises(LimitExceeded) as info:
        compile_schema({"pattern": "a" * 1_001}, cache=None)
    assert info.value.bound == "max_pattern_length"


@pytest.mark.parametrize(
    ("pattern", "matching", "not_matching"),
    [
        ("^a[]b", [], ["ab", "a]b", "a b"]),  # [] matches nothing
        ("^a[^]b$", ["a]b", "a\nb", "axb"], ["ab"]),  # [^] is any character
        ("^[]a]$", [], ["a", "]", "]a", "a]"]),  # an empty class, then "a]"
        ("^x[]a]$", [], ["xa]", "xa"]),
        ("^[^]a]$", ["xa]", "]a]"], ["a", "xa"]),
        ("^[[]$", ["["], ["]", "[]"]),  # "[" is a literal inside a class
        ("^[a&&b]$", ["a", "&", "b"], ["ab", "c"]),  # no set operations in ECMA-262
        ("^[~~|]+$", ["~|~"], ["a"]),
        ("^[$]$", ["$"], [""]),
        ("^[\\]x]$", ["]", "x"], ["]x"]),
        ("^a$", ["a"], ["a\n"]),  # $ is the end, not before a final newline
    ],
)
def test_regex_classes_read_as_ecma_262(
    pattern: str, matching: list[str], not_matching: list[str]
) -> None:
    v = compile_schema({"pattern": pattern}, cache=None)
    for text in matching:
        assert v.is_valid(text), (pattern, text)
    for text in not_matching:
        assert not v.is_valid(text), (pattern, text)


@pytest.mark.parametrize("pattern", ["[", "[^", "a[bc", "[\\]"])
def test_unterminated_regex_classes_are_refused(pattern: str) -> None:
    with pytest.raises(InvalidSchema, match="refused"):
        compile_schema({"pattern": pattern}, cache=None)


# -- dialects ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dialect",
    ["http://json-schema.org/draft-04/schema#", "https://evil.example/dialect", ""],
)
def test_unknown_dialects_fail_loudly_schema_04(dialect: str) -> None:
    with pytest.raises(UnsupportedDialect, match="unsupported JSON Schema dialect"):
        compile_schema({"$schema": dialect}, cache=None)


@pytest.mark.parametrize("index", ["01", "00", "+1", "-0", "1 ", "\u0661", "\uff11", "9" * 5000])
def test_ref_pointer_array_indexes_are_rfc_6901(index: str) -> None:
    """An array index is "0" or ASCII digits with no leading zero; anything else resolves to
    nothing (and a 5000-digit index costs no int conversion)."""
    schema = {"$defs": {"list": [{"type": "string"}, {"type": "integer"}]}}
    schema["$ref"] = f"#/$defs/list/{index}"
    with pytest.raises(UnresolvableRef, match="no value at that pointer"):
        timed(lambda: compile_schema(schema, cache=None))


def test_ref_pointer_array_indexes_that_resolve() -> None:
    items = [{"type": "string"}] + [{"type": "integer"}] * 10
    for index, good in (("0", "a"), ("1", 1), ("10", 2)):
        v = compile_schema({"$defs": {"list": items}, "$ref": f"#/$defs/list/{index}"}, cache=None)
        assert v.is_valid(good) and not v.is_valid([])


def test_ref_pointer_past_the_end_of_an_array_says_so() -> None:
    schema = {"$defs": {"list": [{"type": "string"}]}, "$ref": "#/$defs/list/1"}
    with pytest.raises(UnresolvableRef, match="has no item 1"):
        compile_schema(schema, cache=None)
