"""The ``_meta`` key grammar (``basic/index.mdx`` §``_meta``) and the W3C trace-context values.

Contract:

* ``check_meta_key`` accepts exactly ``key = [prefix "/"] name`` (META-02): the prefix is
  one or more dot-separated labels, each starting with an ASCII letter, ending with a
  letter or digit, with letters, digits and ``-`` in between; the name is empty or begins
  and ends with ``[A-Za-z0-9]``, with ``-``, ``_``, ``.`` and alphanumerics in between.
  The prose says "unless empty", so an empty name (``"com.example/"``, and even ``""``)
  is valid. A key holds at most one ``/``. The spec sets no length limit, so none is added.
* ``is_reserved_meta_key`` is true for a valid key whose prefix's *second* label is
  ``modelcontextprotocol`` or ``mcp`` (META-03; compared case-insensitively, as labels are
  reverse-DNS labels) and for the unprefixed keys of the reserved table (META-04).
* ``check_extension_id`` is the key grammar plus a mandatory prefix (VER-10, META-16).
* ``check_traceparent`` / ``check_tracestate`` / ``check_baggage`` check the W3C formats
  (META-14); values are ``_meta`` strings, not HTTP fields, so only the whitespace the
  W3C grammars allow around list separators (and at the ends of a list) is accepted.
* ``check_meta`` checks every key's grammar, and the values of ``traceparent``,
  ``tracestate`` and ``baggage`` when present. It does NOT check any other value: not the
  types of ``io.modelcontextprotocol/*`` fields, not ``progressToken``, not whether
  required fields are present (META-05/08 belong to the request layer), and it does not
  reject reserved keys (META-01 only forbids assumptions about their values).

Everything is pure and runs in time linear in the input: labels and names are matched
with single character-class regexes, and every other regex runs on a piece whose length
is bounded first. Every failure raises ``MetaKeyError`` (a ``ValueError``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

__all__ = [
    "RESERVED_META_KEYS",
    "MetaKeyError",
    "check_baggage",
    "check_extension_id",
    "check_meta",
    "check_meta_key",
    "check_traceparent",
    "check_tracestate",
    "is_reserved_meta_key",
    "is_valid_meta_key",
    "split_meta_key",
]

#: The reserved-keys table of ``basic/index.mdx`` (META-04), plus the result key ``serverInfo``.
RESERVED_META_KEYS: frozenset[str] = frozenset(
    {
        "progressToken",
        "io.modelcontextprotocol/protocolVersion",
        "io.modelcontextprotocol/clientInfo",
        "io.modelcontextprotocol/clientCapabilities",
        "io.modelcontextprotocol/logLevel",
        "io.modelcontextprotocol/subscriptionId",
        "io.modelcontextprotocol/serverInfo",
        "traceparent",
        "tracestate",
        "baggage",
    }
)
_RESERVED_UNPREFIXED = frozenset(k for k in RESERVED_META_KEYS if "/" not in k)
_RESERVED_SECOND_LABELS = frozenset({"modelcontextprotocol", "mcp"})
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_LETTERS = frozenset(c for c in _ALNUM if c.isalpha())

_LABEL_CHARS = re.compile(r"[A-Za-z0-9-]*", re.ASCII)
_NAME_CHARS = re.compile(r"[A-Za-z0-9._-]*", re.ASCII)
_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}", re.ASCII)
_VISIBLE = re.compile(r"[\x21-\x7e]*", re.ASCII)
_TS_KEY = re.compile(
    r"[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13}", re.ASCII
)
_TS_VALUE = re.compile(r"[\x20-\x2b\x2d-\x3c\x3e-\x7e]{1,256}", re.ASCII)
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+", re.ASCII)
# baggage-octet without "%", or a percent-escape: the two branches never start alike.
_BAGGAGE_VALUE = re.compile(
    r"(?:[\x21\x23\x24\x26-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]|%[0-9A-Fa-f]{2})*", re.ASCII
)
_OWS = " \t"
_TRACESTATE_MAX_MEMBERS = 32
_TRACESTATE_MEMBER_MAX = 256 + 1 + 256  # key "=" value
_BAGGAGE_MAX_MEMBERS = 64
_BAGGAGE_MAX_BYTES = 8192
_KEY_RULE = "a key: an RFC 7230 token"
_VALUE_RULE = "a value: percent-encoded baggage-octets"


class MetaKeyError(ValueError):
    """A ``_meta`` key (or a W3C value at ``key``) breaks a rule; ``reason`` names the rule."""

    def __init__(self, key: str, reason: str) -> None:
        self.key = key
        self.reason = reason
        shown = key if len(key) <= 80 else key[:77] + "..."
        super().__init__(f"_meta key {shown!r}: {reason}")

    def __reduce__(self) -> tuple[type[MetaKeyError], tuple[str, str]]:
        return (type(self), (self.key, self.reason))


def _check_label(key: str, label: str) -> None:
    if not label:
        rule = "prefix has an empty label"
    elif label[0] not in _LETTERS:
        rule = f"prefix label {label[:40]!r} must start with a letter"
    elif label[-1] not in _ALNUM:
        rule = f"prefix label {label[:40]!r} must end with a letter or digit"
    elif _LABEL_CHARS.fullmatch(label) is None:
        rule = f"prefix label {label[:40]!r} may hold only letters, digits and '-'"
    else:
        return
    raise MetaKeyError(key, f"{rule} (META-02)")


def _check_name(key: str, name: str) -> None:
    if not name:
        return
    if "/" in name:
        rule = "a key holds at most one '/'"
    elif _NAME_CHARS.fullmatch(name) is None:
        rule = "name may hold only letters, digits, '-', '_' and '.'"
    elif name[0] not in _ALNUM or name[-1] not in _ALNUM:
        rule = "name must begin and end with [A-Za-z0-9]"
    else:
        return
    raise MetaKeyError(key, f"{rule} (META-02)")


def check_meta_key(key: object) -> None:
    """Raise ``MetaKeyError`` unless ``key`` is a string that follows the ``_meta`` key
    grammar (META-02)."""
    if not isinstance(key, str):
        raise MetaKeyError(repr(key), "a _meta key must be a string")
    prefix, slash, name = key.partition("/")
    if slash:
        for label in prefix.split("."):
            _check_label(key, label)
    else:
        name = key
    _check_name(key, name)


def is_valid_meta_key(key: object) -> bool:
    """Whether ``key`` follows the ``_meta`` key grammar (META-02); never raises."""
    try:
        check_meta_key(key)
    except MetaKeyError:
        return False
    return True


def split_meta_key(key: str) -> tuple[str | None, str]:
    """``(prefix without the "/", or None; name)`` of a valid key; ``MetaKeyError`` if invalid."""
    check_meta_key(key)
    prefix, slash, name = key.partition("/")
    return (prefix, name) if slash else (None, key)


def is_reserved_meta_key(key: str) -> bool:
    """Whether a valid ``key`` is reserved for MCP (META-03, META-04); false for invalid keys.

    Reserved: any prefix whose second label is ``modelcontextprotocol`` or ``mcp`` (so
    ``dev.mcp/x`` is, ``modelcontextprotocol.io/x`` and ``com.example.mcp/x`` are not), and
    the unprefixed table keys ``progressToken``, ``traceparent``, ``tracestate``, ``baggage``.
    """
    if not is_valid_meta_key(key):
        return False
    prefix, name = split_meta_key(key)
    if prefix is None:
        return name in _RESERVED_UNPREFIXED
    labels = prefix.split(".", 2)
    return len(labels) >= 2 and labels[1].lower() in _RESERVED_SECOND_LABELS


def check_extension_id(ext_id: str) -> None:
    """Raise ``MetaKeyError`` unless ``ext_id`` is a ``_meta`` key with a prefix (VER-10, META-16).

    The name part is the extension's name; like any ``_meta`` name it may be empty.
    """
    check_meta_key(ext_id)
    if "/" not in ext_id:
        raise MetaKeyError(ext_id, "an extension identifier must have a prefix (VER-10, META-16)")


def _require_str(field: str, value: object) -> str:
    if not isinstance(value, str):
        raise MetaKeyError(field, f"value must be a string, not {type(value).__name__} (META-14)")
    return value


def check_traceparent(value: object) -> None:
    """Raise ``MetaKeyError`` unless ``value`` is a W3C Trace Context ``traceparent`` (META-14).

    ``version-traceid-parentid-flags`` in lowercase hex (2-32-16-2); version ``ff`` and
    all-zero ids are invalid; version ``00`` is exactly 55 characters; a higher version may
    carry more after a further ``-``.
    """
    text = _require_str("traceparent", value)
    match = _TRACEPARENT.fullmatch(text[:55])
    if match is None:
        raise MetaKeyError(
            "traceparent", "value must be 2-32-16-2 lowercase hex fields joined by '-' (META-14)"
        )
    version, trace_id, parent_id = match.groups()
    if version == "ff":
        raise MetaKeyError("traceparent", "version 'ff' is invalid (META-14)")
    if trace_id == "0" * 32:
        raise MetaKeyError("traceparent", "trace-id must not be all zeros (META-14)")
    if parent_id == "0" * 16:
        raise MetaKeyError("traceparent", "parent-id must not be all zeros (META-14)")
    if len(text) == 55:
        return
    if version == "00":
        raise MetaKeyError("traceparent", "a version 00 value has exactly 55 characters (META-14)")
    if text[55] != "-" or _VISIBLE.fullmatch(text, 56) is None:
        raise MetaKeyError(
            "traceparent",
            "fields after the flags must follow a '-' and be visible ASCII (META-14)",
        )


def check_tracestate(value: object) -> None:
    """Raise ``MetaKeyError`` unless ``value`` is a W3C Trace Context ``tracestate`` (META-14).

    Up to 32 ``key=value`` members joined by ``,`` (empty members and spaces or tabs around
    commas allowed, and not counted); keys are simple (``[a-z][a-z0-9_-*/]{0,255}``) or
    ``tenant@system``; values are 1-256 printable ASCII characters without ``,`` or ``=``,
    not ending in a space (spaces before a ``,`` or the end are read as whitespace).
    """
    text = _require_str("tracestate", value)
    count = 0
    for raw in text.split(","):
        member = raw.strip(_OWS)
        if not member:
            continue
        count += 1
        if count > _TRACESTATE_MAX_MEMBERS:
            raise MetaKeyError("tracestate", "more than 32 list-members (META-14)")
        if len(member) > _TRACESTATE_MEMBER_MAX:
            raise MetaKeyError("tracestate", "a list-member is too long (META-14)")
        key, eq, val = member.partition("=")
        if not eq or _TS_KEY.fullmatch(key) is None:
            raise MetaKeyError("tracestate", f"bad list-member key in {member[:40]!r} (META-14)")
        if _TS_VALUE.fullmatch(val) is None:
            raise MetaKeyError("tracestate", f"bad list-member value in {member[:40]!r} (META-14)")


def _check_baggage_part(pattern: re.Pattern[str], text: str, rule: str) -> None:
    if pattern.fullmatch(text) is None:
        raise MetaKeyError("baggage", f"{text[:40]!r} is not {rule} (META-14)")


def check_baggage(value: object) -> None:
    """Raise ``MetaKeyError`` unless ``value`` is a W3C ``baggage`` string (META-14).

    One to 64 list-members ``key=value[;property]*`` joined by ``,``, a property being
    ``key[=value]``; keys are RFC 7230 tokens; values are baggage-octets with ``%`` only in
    ``%XX`` escapes; spaces or tabs allowed around ``,``, ``;`` and ``=``; at most 8192 bytes.
    """
    text = _require_str("baggage", value)
    if len(text) > _BAGGAGE_MAX_BYTES:  # valid baggage is ASCII: one character, one byte
        raise MetaKeyError("baggage", "value is longer than 8192 bytes (META-14)")
    members = text.split(",")
    if len(members) > _BAGGAGE_MAX_MEMBERS:
        raise MetaKeyError("baggage", "more than 64 list-members (META-14)")
    for member in members:
        head, *properties = member.split(";")
        key, eq, val = head.partition("=")
        if not eq:
            raise MetaKeyError("baggage", f"list-member {member[:40]!r} lacks '=' (META-14)")
        _check_baggage_part(_TOKEN, key.strip(_OWS), _KEY_RULE)
        _check_baggage_part(_BAGGAGE_VALUE, val.strip(_OWS), _VALUE_RULE)
        for prop in properties:
            pkey, peq, pval = prop.partition("=")
            _check_baggage_part(_TOKEN, pkey.strip(_OWS), _KEY_RULE)
            if peq:
                _check_baggage_part(_BAGGAGE_VALUE, pval.strip(_OWS), _VALUE_RULE)


_W3C_CHECKERS: Mapping[str, Callable[[object], None]] = {
    "traceparent": check_traceparent,
    "tracestate": check_tracestate,
    "baggage": check_baggage,
}


def check_meta(meta: Mapping[str, object]) -> None:
    """Raise ``MetaKeyError`` for the first bad key of ``meta``, or a bad W3C value (META-14).

    Values of keys other than ``traceparent``, ``tracestate`` and ``baggage`` are not checked.
    """
    if not isinstance(meta, Mapping):
        raise MetaKeyError("_meta", "must be a JSON object")
    for key, value in meta.items():
        checker = _W3C_CHECKERS.get(key) if isinstance(key, str) else None
        if checker is None:
            check_meta_key(key)
        else:
            checker(value)
