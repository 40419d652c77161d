"""The ``_meta`` key grammar and W3C trace-context values (META-02..04, META-14, META-16, VER-10).

Rules come from ``basic/index.mdx`` §``_meta`` and ``basic/versioning.mdx``; the W3C cases
follow Trace Context (``traceparent``, ``tracestate``) and Baggage.
"""

from __future__ import annotations

import pickle
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_proto.metakeys import (
    RESERVED_META_KEYS,
    MetaKeyError,
    check_baggage,
    check_extension_id,
    check_meta,
    check_meta_key,
    check_traceparent,
    check_tracestate,
    is_reserved_meta_key,
    is_valid_meta_key,
    split_meta_key,
)

W3C_EXAMPLE = "00-0af7651916cd43dd8440b9e96e8d1c79-b7ad6b7169203331-01"
MCP_EXAMPLE = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"
TRACE_ID = "0af7651916cd43dd8440b9e96e8d1c79"
PARENT_ID = "b7ad6b7169203331"

# ---------------------------------------------------------------- META-02: the key grammar

VALID_KEYS = [
    "io.modelcontextprotocol/protocolVersion",
    "com.example/foo",
    "progressToken",
    "foo",
    "x",
    "a/b",  # single-letter label and name
    "A.B9/Z",
    "com.example-corp/my_key.v2-final",
    "io.modelcontextprotocol",  # no slash: a name, and names may hold dots
    "org.modelcontextprotocol.api/x",
    "traceparent",
    "a-b.c_d",
    "0",
    "9lives",  # a name may start with a digit; only labels may not
]


@pytest.mark.parametrize("key", VALID_KEYS)
def test_meta02_valid_keys(key: str) -> None:
    check_meta_key(key)
    assert is_valid_meta_key(key)


@pytest.mark.parametrize("key", ["com.example/", "io.mcp/", ""])
def test_meta02_empty_name_is_allowed_by_the_prose(key: str) -> None:
    """'Unless empty, MUST begin and end with an alphanumeric' — an empty name is valid."""
    assert is_valid_meta_key(key)


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("-com.example/x", "start with a letter"),
        ("com.-example/x", "start with a letter"),
        ("com-.example/x", "end with a letter or digit"),
        ("com.example-/x", "end with a letter or digit"),
        ("1com.example/x", "start with a letter"),
        ("com.9example/x", "start with a letter"),
        ("com..example/x", "empty label"),
        (".com/x", "empty label"),
        ("com./x", "empty label"),
        ("/x", "empty label"),
        ("com_example/x", "letters, digits and '-'"),
        ("com.ex ample/x", "letters, digits and '-'"),
        ("\u00e9t\u00e9.com/x", "start with a letter"),
        ("c\u00f6m.example/x", "letters, digits and '-'"),
    ],
)
def test_meta02_invalid_prefixes(key: str, reason: str) -> None:
    with pytest.raises(MetaKeyError) as info:
        check_meta_key(key)
    assert info.value.key == key
    assert reason in info.value.reason
    assert "META-02" in info.value.reason
    assert not is_valid_meta_key(key)


@pytest.mark.parametrize(
    "key",
    [
        "-foo",
        "foo-",
        "_foo",
        "foo_",
        ".foo",
        "foo.",
        "com.example/-x",
        "com.example/x.",
        "com.example/_",
        "foo bar",
        "foo@bar",
        "foo\n",  # a '$'-anchored regex would let this through
        "\u00fcn\u00efc\u00f6de",
        "caf\u00e9",
        "\uff41",  # fullwidth 'a': alphanumeric to Unicode, not to the spec
        "a/b/c",
        "com.example//x",
    ],
)
def test_meta02_invalid_names(key: str) -> None:
    with pytest.raises(MetaKeyError, match="META-02"):
        check_meta_key(key)
    assert not is_valid_meta_key(key)


def test_meta02_error_is_a_value_error_naming_key_and_rule() -> None:
    with pytest.raises(ValueError, match=r"'a\.\.b/x'.*empty label") as info:
        check_meta_key("a..b/x")
    err = info.value
    assert isinstance(err, MetaKeyError)
    assert (err.key, err.reason) == ("a..b/x", "prefix has an empty label (META-02)")
    clone = pickle.loads(pickle.dumps(err))
    assert (clone.key, clone.reason, str(clone)) == (err.key, err.reason, str(err))


def test_meta02_message_shortens_a_huge_key_but_keeps_it_whole() -> None:
    key = "-" * 10_000
    with pytest.raises(MetaKeyError) as info:
        check_meta_key(key)
    assert info.value.key == key
    assert len(str(info.value)) < 300


@pytest.mark.parametrize("key", [None, 42, b"foo", ("a",)])
def test_meta02_non_string_keys_are_invalid(key: object) -> None:
    assert not is_valid_meta_key(key)
    with pytest.raises(MetaKeyError, match="must be a string"):
        check_meta_key(key)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("key", "parts"),
    [
        (
            "io.modelcontextprotocol/protocolVersion",
            ("io.modelcontextprotocol", "protocolVersion"),
        ),
        ("com.example/", ("com.example", "")),
        ("progressToken", (None, "progressToken")),
        ("io.modelcontextprotocol", (None, "io.modelcontextprotocol")),
        ("", (None, "")),
    ],
)
def test_meta02_split(key: str, parts: tuple[str | None, str]) -> None:
    assert split_meta_key(key) == parts


def test_meta02_split_rejects_invalid_keys() -> None:
    with pytest.raises(MetaKeyError):
        split_meta_key("a/b/c")


# ---------------------------------------------------------------- META-03/04: reservation


@pytest.mark.parametrize(
    "key",
    [
        "io.modelcontextprotocol/x",
        "dev.mcp/x",
        "org.modelcontextprotocol.api/x",
        "com.mcp.tools/x",
        "io.mcp/",
        "io.MCP/x",  # labels are DNS labels: compared case-insensitively
    ],
)
def test_meta03_second_label_reserves_the_prefix(key: str) -> None:
    assert is_reserved_meta_key(key)


@pytest.mark.parametrize(
    "key",
    [
        "modelcontextprotocol.io/x",  # first label, not second
        "mcp/x",
        "com.example.mcp/x",  # the spec's own counter-example
        "com.example/foo",
        "foo",
        "io.modelcontextprotocol",  # no slash: a plain name
        "io.mcpx/x",
        "io.mcp/-x",  # invalid keys are never reserved
        "ProgressToken",
    ],
)
def test_meta03_not_reserved(key: str) -> None:
    assert not is_reserved_meta_key(key)


@pytest.mark.parametrize("key", sorted(RESERVED_META_KEYS))
def test_meta04_every_table_key_is_valid_and_reserved(key: str) -> None:
    assert is_valid_meta_key(key)
    assert is_reserved_meta_key(key)


def test_meta04_table_includes_unprefixed_keys() -> None:
    assert {"progressToken", "traceparent", "tracestate", "baggage"} <= RESERVED_META_KEYS


# ---------------------------------------------------------------- VER-10 / META-16: extensions


@pytest.mark.parametrize(
    "ext_id",
    ["io.modelcontextprotocol/ui", "io.modelcontextprotocol/tasks", "com.example/my-ext", "a/"],
)
def test_ver10_valid_extension_ids(ext_id: str) -> None:
    check_extension_id(ext_id)


def test_ver10_extension_id_needs_a_prefix() -> None:
    with pytest.raises(MetaKeyError, match="must have a prefix") as info:
        check_extension_id("tasks")
    assert info.value.key == "tasks"


@pytest.mark.parametrize("ext_id", ["com..x/y", "com.example/-ext", "-tasks", ""])
def test_meta16_extension_id_follows_the_key_grammar(ext_id: str) -> None:
    with pytest.raises(MetaKeyError):
        check_extension_id(ext_id)


# ---------------------------------------------------------------- META-14: traceparent


@pytest.mark.parametrize(
    "value",
    [
        W3C_EXAMPLE,
        MCP_EXAMPLE,
        f"00-{TRACE_ID}-{PARENT_ID}-00",
        f"00-{TRACE_ID}-{PARENT_ID}-ff",
        f"cc-{TRACE_ID}-{PARENT_ID}-01",  # a higher version, exactly 55 characters
        f"cc-{TRACE_ID}-{PARENT_ID}-01-what-the-future-holds",
        f"01-{TRACE_ID}-{PARENT_ID}-01-",
    ],
)
def test_meta14_traceparent_valid(value: str) -> None:
    check_traceparent(value)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (f"00-{'0' * 32}-{PARENT_ID}-01", "trace-id must not be all zeros"),
        (f"00-{TRACE_ID}-{'0' * 16}-01", "parent-id must not be all zeros"),
        (W3C_EXAMPLE.upper(), "lowercase hex"),
        (f"00-{TRACE_ID.upper()}-{PARENT_ID}-01", "lowercase hex"),
        (f"00-{TRACE_ID}-{PARENT_ID.upper()}-01", "lowercase hex"),
        (f"00-{TRACE_ID}-{PARENT_ID}-0A", "lowercase hex"),
        (f"ff-{TRACE_ID}-{PARENT_ID}-01", "version 'ff'"),
        (f"0g-{TRACE_ID}-{PARENT_ID}-01", "lowercase hex"),
        (f"00-{TRACE_ID}-{PARENT_ID}-01-extra", "exactly 55"),
        (f"00-{TRACE_ID}-{PARENT_ID}-01 ", "exactly 55"),
        (W3C_EXAMPLE[:-1], "lowercase hex"),
        (f" {W3C_EXAMPLE}", "lowercase hex"),
        (W3C_EXAMPLE.replace("-", "_"), "lowercase hex"),
        (f"00-{TRACE_ID}1-{PARENT_ID[:-1]}-01", "lowercase hex"),
        (f"cc-{TRACE_ID}-{PARENT_ID}-01x", "follow a '-'"),
        (f"cc-{TRACE_ID}-{PARENT_ID}-01-a b", "visible ASCII"),
        ("", "lowercase hex"),
    ],
)
def test_meta14_traceparent_invalid(value: str, reason: str) -> None:
    with pytest.raises(MetaKeyError) as info:
        check_traceparent(value)
    assert info.value.key == "traceparent"
    assert reason in info.value.reason


@pytest.mark.parametrize(
    ("checker", "field"),
    [
        (check_traceparent, "traceparent"),
        (check_tracestate, "tracestate"),
        (check_baggage, "baggage"),
    ],
)
@pytest.mark.parametrize("value", [None, 1, [W3C_EXAMPLE], {"a": "b"}, b"a=b"])
def test_meta14_w3c_values_must_be_strings(checker: object, field: str, value: object) -> None:
    assert callable(checker)
    with pytest.raises(MetaKeyError, match="must be a string") as info:
        checker(value)
    assert info.value.key == field


# ---------------------------------------------------------------- META-14: tracestate


def _members(count: int) -> str:
    return ",".join(f"k{i}=v{i}" for i in range(count))


@pytest.mark.parametrize(
    "value",
    [
        "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",  # the W3C example
        "rojo=00f067aa0ba902b7",
        "",
        " , ,\t,",
        "a@b=1",
        "tenant-1@vendor_x=hello world",
        "0tenant@sys=x",  # a tenant id may start with a digit
        "k/*_-9=v",
        "a= leading space kept",
        "a=1 , b=2",
        "k=" + "~" * 256,
        "k" * 256 + "=v",
        "t" * 241 + "@" + "s" * 14 + "=v",
        _members(32),
        _members(32) + ",,, ,",  # empty members do not count
    ],
)
def test_meta14_tracestate_valid(value: str) -> None:
    check_tracestate(value)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (_members(33), "more than 32"),
        ("Rojo=1", "key"),
        ("1abc=x", "key"),  # a simple key starts with a lowercase letter
        ("a@B=1", "key"),
        ("a@1b=1", "key"),
        ("k" * 257 + "=v", "key"),
        ("t" * 242 + "@s=v", "key"),
        ("t@" + "s" * 15 + "=v", "key"),
        ("k", "key"),
        ("=v", "key"),
        ("k=", "value"),
        ("k=a=b", "value"),
        ("k=\x7f", "value"),
        ("k=caf\u00e9", "value"),
        ("k=a\tb", "value"),
        ("k=" + "~" * 257, "value"),
        ("k=" + "~" * 600, "too long"),
    ],
)
def test_meta14_tracestate_invalid(value: str, reason: str) -> None:
    with pytest.raises(MetaKeyError) as info:
        check_tracestate(value)
    assert info.value.key == "tracestate"
    assert reason in info.value.reason


# ---------------------------------------------------------------- META-14: baggage


@pytest.mark.parametrize(
    "value",
    [
        "userId=alice",
        "userId=alice,serverNode=DF%2028,isProduction=false",  # the W3C example
        "key1=value1;property1;property2=v2",
        "key1 = value1 ; property1 ; p2 = v%3B2 , key2=value2",
        "k=",
        "k=a=b",
        "!#$%&'*+-.^_`|~=v",
        _members(64),
        "k=" + "v" * (8192 - 2),
    ],
)
def test_meta14_baggage_valid(value: str) -> None:
    check_baggage(value)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (_members(65), "more than 64"),
        ("k=" + "v" * (8192 - 1), "8192 bytes"),
        ("", "lacks '='"),
        ("k", "lacks '='"),
        ("k=v,,j=w", "lacks '='"),
        ("=v", "token"),
        ("k w=v", "token"),
        ("(k)=v", "token"),
        ("k\u00e9=v", "token"),
        ("k=v;=p", "token"),
        ("k=a b", "baggage-octets"),
        ("k=%zz", "baggage-octets"),
        ("k=%2", "baggage-octets"),
        ("k=100%", "baggage-octets"),
        ('k=a"b', "baggage-octets"),
        ("k=a\\b", "baggage-octets"),
        ("k=caf\u00e9", "baggage-octets"),
        ("k=v;p=a b", "baggage-octets"),
    ],
)
def test_meta14_baggage_invalid(value: str, reason: str) -> None:
    with pytest.raises(MetaKeyError) as info:
        check_baggage(value)
    assert info.value.key == "baggage"
    assert reason in info.value.reason


# ---------------------------------------------------------------- check_meta


def test_meta14_check_meta_accepts_a_full_request_meta() -> None:
    check_meta(
        {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "progressToken": 7,
            "com.example/foo": None,
            "traceparent": MCP_EXAMPLE,
            "tracestate": "rojo=00f067aa0ba902b7",
            "baggage": "userId=alice",
        }
    )
    check_meta({})


def test_meta01_check_meta_does_not_check_other_values() -> None:
    """META-01: no assumptions about values; a wrong type at a reserved key passes here."""
    check_meta({"io.modelcontextprotocol/protocolVersion": 42, "progressToken": [], "x": {}})


def test_meta02_check_meta_rejects_a_bad_key() -> None:
    with pytest.raises(MetaKeyError) as info:
        check_meta({"ok": 1, "-bad": 2})
    assert info.value.key == "-bad"


@pytest.mark.parametrize(
    ("field", "value"),
    [("traceparent", "00-zz"), ("tracestate", "Bad=1"), ("baggage", "k=a b"), ("baggage", 3)],
)
def test_meta14_check_meta_checks_w3c_values(field: str, value: object) -> None:
    with pytest.raises(MetaKeyError) as info:
        check_meta({field: value})
    assert info.value.key == field


def test_meta14_exemption_is_case_sensitive() -> None:
    """``Traceparent`` is an ordinary (valid) key; its value is not checked."""
    check_meta({"Traceparent": "garbage", "BAGGAGE": 1})


@pytest.mark.parametrize("meta", [None, [], "a=b", 3])
def test_meta02_check_meta_needs_a_mapping(meta: object) -> None:
    with pytest.raises(MetaKeyError, match="JSON object"):
        check_meta(meta)  # type: ignore[arg-type]


def test_meta02_check_meta_non_string_key() -> None:
    with pytest.raises(MetaKeyError, match="must be a string"):
        check_meta({1: "x"})  # type: ignore[dict-item]


# ---------------------------------------------------------------- linear time on hostile input

MB = 1_000_000


@pytest.mark.parametrize(
    "key",
    [
        "a" * MB + "!",
        "a" * MB + "-/x",
        "a-" * (MB // 2) + "/x",
        "a." * (MB // 2) + "/x",
        "a1-" * (MB // 3) + "./x",
        "com.example/" + "a" * MB + "-",
        "com.example/" + "a." * (MB // 2),
        "com.example/" + "a_-." * (MB // 4) + "/",
        "/" * MB,
    ],
)
def test_meta02_hostile_megabyte_keys_are_rejected(key: str) -> None:
    assert not is_valid_meta_key(key)


def test_meta02_megabyte_valid_key_is_accepted() -> None:
    assert is_valid_meta_key("a" * MB)
    assert is_valid_meta_key("a." * (MB // 2) + "a/" + "b-" * (MB // 2) + "b")


@pytest.mark.parametrize(
    ("checker", "value"),
    [
        (check_traceparent, W3C_EXAMPLE + "-" + "a" * MB),
        (check_tracestate, "a=b," * MB),
        (check_tracestate, "," * MB + "k=" + "v" * MB),
        (check_baggage, "k=" + "%2" * MB),
    ],
)
def test_meta14_hostile_megabyte_values_are_rejected(checker: object, value: str) -> None:
    assert callable(checker)
    with pytest.raises(MetaKeyError):
        checker(value)


# ---------------------------------------------------------------- properties

_KEYISH = st.text(alphabet=string.ascii_letters[:4] + "Z09-_./@ \u00e9", max_size=40)


@given(st.one_of(st.text(), _KEYISH))
def test_meta02_is_valid_never_raises_and_agrees_with_check(key: str) -> None:
    valid = is_valid_meta_key(key)
    try:
        check_meta_key(key)
    except MetaKeyError as err:
        assert not valid
        assert err.key == key
    else:
        assert valid


_LABEL = st.from_regex(r"\A[A-Za-z]([A-Za-z0-9-]{0,8}[A-Za-z0-9])?\Z")
_NAME = st.from_regex(r"\A([A-Za-z0-9]([A-Za-z0-9._-]{0,8}[A-Za-z0-9])?)?\Z")


@given(st.lists(_LABEL, max_size=4), _NAME)
def test_meta02_grammar_keys_are_valid_and_split_back(labels: list[str], name: str) -> None:
    prefix = ".".join(labels) if labels else None
    key = name if prefix is None else f"{prefix}/{name}"
    assert is_valid_meta_key(key)
    assert split_meta_key(key) == (prefix, name)
    if prefix is not None:
        check_extension_id(key)
