"""Header value encoding (HTTP-30/31), x-mcp-header rules (HTTP-23..27, edge 92) and Headers."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_proto.http import (
    Headers,
    HeaderValueError,
    InvalidToolHeaders,
    decode_header_value,
    encode_header_value,
    header_params,
    header_value_matches,
    param_header_text,
    tool_header_problem,
)

#: The spec's "Encoding examples" table (streamable-http.mdx, Value Encoding).
SPEC_TABLE = [
    ("us-west1", "us-west1"),
    ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
    (" padded ", "=?base64?IHBhZGRlZCA=?="),
    ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
    ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
]


@pytest.mark.parametrize(("value", "encoded"), SPEC_TABLE)
def test_http30_spec_encoding_table(value: str, encoded: str) -> None:
    assert encode_header_value(value) == encoded
    assert decode_header_value(encoded) == value


@settings(max_examples=60, deadline=None)
@given(st.text())
def test_http30_round_trip_and_header_safe(value: str) -> None:
    encoded = encode_header_value(value)
    assert all(0x21 <= ord(c) <= 0x7E or c == " " for c in encoded)
    assert encoded == encoded.strip()
    assert decode_header_value(encoded) == value


@pytest.mark.parametrize(
    "hostile",
    [
        "a\r\nX-Injected: 1",
        "\r\n\r\nGET / HTTP/1.1",
        "tab\there",
        "nul\x00",
        "\x7f",
        "",
        " ",
        "\n",
    ],
)
def test_http30_hostile_values_never_reach_the_wire_raw(hostile: str) -> None:
    encoded = encode_header_value(hostile)
    assert encoded.startswith("=?base64?")
    assert "\r" not in encoded and "\n" not in encoded
    assert decode_header_value(encoded) == hostile


def test_edge85_uppercase_sentinel_is_a_plain_value() -> None:
    assert decode_header_value("=?BASE64?Zm9v?=") == "=?BASE64?Zm9v?="


@pytest.mark.parametrize(
    "raw",
    [
        "=?base64?not base64!?=",  # bad alphabet
        "=?base64?/w==?=",  # not UTF-8
        "=?base64?=",  # prefix and suffix overlap
        "=?base64?Zm9v=Zm9v?=",  # padding in the middle
        "caf\xe9",  # raw non-ASCII (edge 88)
        "a\x01b",  # a control character
    ],
)
def test_edge86_88_malformed_values(raw: str) -> None:
    with pytest.raises(HeaderValueError):
        decode_header_value(raw)


def test_http30_decoding_needs_padding_and_tolerates_whitespace() -> None:
    assert decode_header_value("  =?base64?SGk=?=\t") == "Hi"
    with pytest.raises(HeaderValueError):
        decode_header_value("=?base64?SGVsbG8?=")  # "Hello" without its "=" (conformance)
    assert decode_header_value("=?base64??=") == ""
    assert decode_header_value("  plain  ") == "plain"


def test_edge87_unencoded_sentinel_lookalike_decodes_to_something_else() -> None:
    # A non-conforming client sent the body value "=?base64?abc?=" raw: the server decodes it.
    assert decode_header_value("=?base64?YWJj?=") == "abc"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("s", "s"),
        (42, "42"),
        (-7, "-7"),
        (True, "true"),
        (False, "false"),
        (None, None),
        (3.0, "3"),
    ],
)
def test_http30_type_conversion(value: Any, text: str | None) -> None:
    assert param_header_text(value) == text


@pytest.mark.parametrize("value", [2**53, -(2**53), 1.5, [1], {"a": 1}])
def test_edge93_values_that_cannot_be_mirrored(value: Any) -> None:
    with pytest.raises(ValueError):
        param_header_text(value)


@pytest.mark.parametrize(
    ("text", "body", "equal"),
    [
        ("42", 42, True),
        ("42.0", 42, True),  # edge 90: numeric comparison (HTTP-37)
        ("42", 42.0, True),
        ("4.2e1", 42, True),
        ("042", 42, False),
        ("0.5", 0.5, True),
        ("5e-1", 0.5, True),
        ("0.50", 0.5, True),
        ("1e16", 1e16, True),
        ("10000000000000000", 1e16, True),
        ("1e16", 10**16, True),
        ("-0", 0, True),
        ("0.0", -0.0, True),
        ("-1", 1, False),
        ("0.1", 0.1, True),
        ("0.1", 0.10000000000000002, False),
        # numbers past decimal's exponent range compare, never raise (HTTP-37)
        ("1e-999999999999999999999", 0, False),
        ("0e-999999999999999999999", 0, True),
        ("0e999999999999999999999999999999", 0.0, True),
        ("1e999999999999999999999999999999", 1, False),
        ("1e+" + "0" * 5000 + "1", 10, True),
        ("1e" + "9" * 5000, 1, False),
        ("1", float("inf"), False),
        ("1", float("nan"), False),
        ("x", 42, False),
        ("true", True, True),
        ("True", True, False),  # edge 90: values are case-sensitive
        ("false", False, True),
        ("a", "a", True),
        ("A", "a", False),
        ("a", None, False),
        ("a", ["a"], False),
    ],
)
def test_http35_37_header_matches_body(text: str, body: Any, equal: bool) -> None:
    assert header_value_matches(text, body) is equal


@settings(max_examples=300, deadline=None)
@given(
    text=st.from_regex(
        r"-?(0|[1-9][0-9]{0,5})(\.[0-9]{1,5})?([eE][+-]?[0-9]{1,3})?", fullmatch=True
    ),
    body=st.one_of(st.integers(-(10**6), 10**6), st.floats(allow_nan=False, allow_infinity=False)),
)
def test_http37_numeric_match_agrees_with_decimal(text: str, body: int | float) -> None:
    from decimal import Decimal

    expected = Decimal(text) == Decimal(repr(body) if isinstance(body, float) else body)
    assert header_value_matches(text, body) is expected
    assert header_value_matches(repr(body), body) is True


def test_http37_header_against_an_int_too_long_to_print_matches_nothing() -> None:
    assert header_value_matches("1", 10**5000) is False


def schema(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def test_http24_valid_annotations_with_nested_path() -> None:
    s = schema(
        region={"type": "string", "x-mcp-header": "Region"},
        opts={"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}},
        flag={"type": ["boolean", "null"], "x-mcp-header": "Flag"},
        other={"type": "string", "enum": [{"x-mcp-header": "data, not a schema"}]},
    )
    params = header_params(s)
    assert [(p.name, p.path, p.type) for p in params] == [
        ("Region", ("region",), "string"),
        ("N", ("opts", "n"), "integer"),
        ("Flag", ("flag",), "boolean"),
    ]
    assert params[0].header == "Mcp-Param-Region"


def test_a_property_named_like_the_keyword_is_not_an_annotation() -> None:
    assert header_params(schema(**{"x-mcp-header": {"type": "string"}})) == ()


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (schema(a={"type": "string", "x-mcp-header": ""}), "empty"),
        (schema(a={"type": "string", "x-mcp-header": "Has Space"}), "token"),
        (schema(a={"type": "string", "x-mcp-header": "Bad\r\nX"}), "token"),
        (schema(a={"type": "string", "x-mcp-header": 5}), "empty or not a string"),
        (
            schema(
                a={"type": "string", "x-mcp-header": "Dup"},
                b={"type": "string", "x-mcp-header": "dUP"},
            ),
            "twice",
        ),
        (schema(a={"type": "number", "x-mcp-header": "A"}), "not integer"),
        (schema(a={"type": "object", "x-mcp-header": "A"}), "not integer"),
        (schema(a={"x-mcp-header": "A"}), "not integer"),
        (schema(a={"type": ["string", "integer"], "x-mcp-header": "A"}), "not integer"),
        (
            schema(a={"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}),
            "reachable",
        ),
        (schema(a={"oneOf": [{"type": "string", "x-mcp-header": "A"}]}), "reachable"),
        (
            {"type": "object", "$defs": {"d": {"type": "string", "x-mcp-header": "A"}}},
            "reachable",
        ),
        ({"type": "object", "x-mcp-header": "Root"}, "reachable"),
    ],
)
def test_edge92_invalid_annotations(bad: dict[str, Any], reason: str) -> None:
    with pytest.raises(InvalidToolHeaders, match=reason):
        header_params(bad)
    assert reason in (tool_header_problem({"name": "t", "inputSchema": bad}) or "")


def test_http22_headers_are_case_insensitive_values_are_not() -> None:
    h = Headers([(b"MCP-METHOD", b" tools/call "), ("mcp-name", "A"), ("Mcp-Name", "b")])
    assert h.get("mcp-method") == "tools/call"
    assert h.get_all("MCP-NAME") == ["A", "b"]
    assert "Mcp-Method" in h and "Mcp-Param-X" not in h
    assert h.with_prefix("mcp-n") == [("mcp-name", "A"), ("mcp-name", "b")]
    assert len(h) == 3 and Headers({"A": "1"}).get("a") == "1"
    assert repr(Headers([("a", "1")])) == "Headers([('a', '1')])"
