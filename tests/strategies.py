"""Hypothesis strategies for the message model, derived from the classes themselves.

:func:`instances` builds valid values of any model class from its attrs fields,
type hints and field metadata (wire name, ``required``, ``minimum``/``maximum``,
``max_items``, ``json_schema``); :func:`of_type` does the same for any model
annotation (unions, aliases, containers, ``Literal``, ``Any``).  What "valid"
means is what the codec enforces (``mcp_proto/_codec/_compile.py``):

* ``None`` means absent, so optional fields are ``None`` or a value; fields the
  wire requires but Python defaults to ``None`` (request ``_meta``, META-08)
  always get a value;
* JSON types are strict: ``int`` fields get ints (never bools), ``float`` fields
  get finite floats or ints, numbers fit 64 bits (what ``encode_message`` writes);
* bounds from the metadata are respected, and ``json_schema`` fields hold an
  object with the required ``"type"``;
* every class is open (the codec keeps unknown keys of every object in
  ``extra``), so ``extra`` may hold keys; they start with ``x-``, which no wire
  name of the model does, so an extra key can never be read back as a field or
  change which union member a value decodes to;
* a value inside a union is one the union's decoder gives back as the same
  member (see :data:`UNION_MEMBER_FIXES` and :func:`server_results`).

Sizes stay small: containers hold at most 3 items, and below
:data:`MAX_DEPTH` nested objects optional fields are absent and lists empty (the
model itself is not recursive, only JSON values are, and those are bounded by
``st.recursive``).
"""

from __future__ import annotations

import functools
import types as pytypes
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, get_args, get_origin

import attrs
from hypothesis import strategies as st

from mcp_proto import METHODS, REMOVED_METHODS, Kind, types

__all__ = [
    "ALIASES",
    "MAX_DEPTH",
    "MODEL_CLASSES",
    "UNION_MEMBER_FIXES",
    "WIRE_NAMES",
    "extras",
    "instances",
    "json_objects",
    "json_scalars",
    "json_values",
    "messages",
    "method_names",
    "of_type",
    "server_results",
    "texts",
]

S = st.SearchStrategy

#: Every attrs class of ``mcp_proto.types``, by name.
MODEL_CLASSES: list[type] = sorted(
    (v for v in vars(types).values() if isinstance(v, type) and attrs.has(v)),
    key=lambda c: c.__name__,
)

#: The other public names of ``mcp_proto.types``: unions, containers, literals, primitives.
ALIASES: dict[str, Any] = {
    name: getattr(types, name)
    for name in types.__all__
    if not (isinstance(getattr(types, name), type) and attrs.has(getattr(types, name)))
}

#: Every wire name of every class (extra keys must never be one of these).
WIRE_NAMES: frozenset[str] = frozenset(
    f.metadata["wire"] for c in MODEL_CLASSES for f in attrs.fields(c) if "wire" in f.metadata
)
assert not any(w.startswith("x-") for w in WIRE_NAMES)

#: Below this many nested objects, optional fields are absent and lists empty.
MAX_DEPTH = 1
#: Only objects this shallow get unknown keys (deeper ones have the same code path).
EXTRA_DEPTH = 1
MAX_SIZE = 3
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1  # what orjson reads and writes as integers
_NONE = type(None)

# ------------------------------------------------------------------ JSON building blocks

#: Short strings of any non-surrogate code point, biased towards the awkward ones
#: (newlines and other control characters, quotes, backslashes, U+2028, non-BMP).
texts: S[str] = st.one_of(
    st.text(st.characters(codec="utf-8"), max_size=5),
    st.sampled_from(["", "\n", "a\nb\n", "\r\n", "\t", "\x00", '"', "\\", "\u2028", "é", "😀"]),
)
ints: S[int] = st.one_of(
    st.integers(-1000, 1000),
    st.integers(_INT_MIN, _INT_MAX),
    st.sampled_from([_INT_MIN, 2**63 - 1, 2**63, _INT_MAX, 2**53 + 1]),
)
floats: S[float] = st.floats(allow_nan=False, allow_infinity=False)
json_scalars: S[Any] = st.one_of(st.none(), st.booleans(), ints, floats, texts)
json_values: S[Any] = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=2), st.dictionaries(texts, inner, max_size=2)
    ),
    max_leaves=3,
)
json_objects: S[dict[str, Any]] = st.dictionaries(texts, json_values, max_size=2)

_extra_keys: S[str] = texts.map(lambda s: "x-" + s)
#: An ``extra`` mapping: the shared empty one, or a few unknown keys.
extras: S[Mapping[str, Any]] = st.one_of(
    st.just(types.Request.__attrs_attrs__.extra.default),
    st.dictionaries(_extra_keys, json_values, min_size=1, max_size=2),
)

# ------------------------------------------------------------------ model values

#: Union members whose decoding is decided by best fit (fewest unknown keys, ties to
#: the first member) and that, in some shapes, another member fits as well: the
#: override keeps them in the shapes that decode back to the same member.
#: ``LegacyTitledEnumSchema`` without ``enumNames`` is exactly an
#: ``UntitledSingleSelectEnumSchema`` (which comes first in ``EnumSchema`` and
#: ``PrimitiveSchemaDefinition``), so in a union it always has ``enumNames``.
UNION_MEMBER_FIXES: dict[type, Callable[[int], dict[str, S[Any]]]] = {
    types.LegacyTitledEnumSchema: lambda depth: {
        "enum_names": st.lists(texts, max_size=MAX_SIZE),
    },
}


def instances(cls: type, depth: int = 0, **fixed: S[Any]) -> S[Any]:
    """Valid instances of the model class ``cls``; ``fixed`` overrides field strategies."""
    if fixed:
        return _build(cls, depth, tuple(sorted(fixed.items(), key=lambda kv: kv[0])))
    return _class(cls, min(depth, MAX_DEPTH + 1))


@functools.cache
def _class(cls: type, depth: int) -> S[Any]:
    return _build(cls, depth, ())


def _build(cls: type, depth: int, fixed: tuple[tuple[str, S[Any]], ...]) -> S[Any]:
    hints = typing.get_type_hints(cls, include_extras=True)
    overrides = dict(fixed)
    kwargs: dict[str, S[Any]] = {}
    for f in attrs.fields(cls):
        if f.name in overrides:
            kwargs[f.name] = overrides[f.name]
        elif f.name == "extra":
            kwargs[f.name] = extras if depth <= EXTRA_DEPTH else st.just(f.default)
        else:
            kwargs[f.name] = _field(f, hints[f.name], depth)
    return st.builds(cls, **kwargs)


def _field(f: attrs.Attribute[Any], tp: Any, depth: int) -> S[Any]:
    """The strategy of one field, from its annotation and metadata."""
    meta = f.metadata
    wire_required = meta.get("required", f.default is attrs.NOTHING)
    inner, optional = _split_optional(tp)
    if tp is Any:
        # Optional "any" fields: None is absent; required ones keep JSON null.
        return _any(depth)
    if "json_schema" in meta:
        kind = meta["json_schema"]
        value: S[Any] = json_objects.map(lambda d: {**d, "type": kind})
    elif "minimum" in meta or "maximum" in meta:
        lo, hi = meta.get("minimum"), meta.get("maximum")
        if inner is int:
            value = st.integers(lo if lo is not None else 0, hi if hi is not None else 2**63 - 1)
        else:
            value = st.one_of(
                st.floats(lo, hi, allow_nan=False, allow_infinity=False),
                st.integers(
                    int(lo) if lo is not None else -1000, int(hi) if hi is not None else 1000
                ),
            )
    elif "max_items" in meta:
        (item,) = get_args(inner)
        size = min(MAX_SIZE, meta["max_items"]) if depth <= MAX_DEPTH else 0
        value = st.lists(of_type(item, depth), max_size=size)
    else:
        value = of_type(inner, depth)
    if optional and not wire_required:
        return st.none() if depth > MAX_DEPTH else st.one_of(st.none(), value)
    return value


def _split_optional(tp: Any) -> tuple[Any, bool]:
    """``(X, True)`` for ``X | None``, else ``(tp, False)``."""
    if get_origin(tp) in (typing.Union, pytypes.UnionType):
        args = get_args(tp)
        rest = [a for a in args if a is not _NONE]
        if len(rest) < len(args):
            return (rest[0] if len(rest) == 1 else typing.Union[tuple(rest)]), True  # noqa: UP007
    return tp, False


def _any(depth: int) -> S[Any]:
    return json_values if depth <= MAX_DEPTH else json_scalars


def of_type(tp: Any, depth: int = 0) -> S[Any]:
    """Valid values of any model annotation (class, alias, union, container, primitive)."""
    if tp is Any:
        return _any(depth)
    if isinstance(tp, type) and attrs.has(tp):
        return st.deferred(lambda: instances(tp, depth + 1))
    if tp == types.ServerResult:
        return server_results(depth + 1)
    if tp is str:
        return texts
    if tp is bool:
        return st.booleans()
    if tp is int:
        return ints
    if tp is float:
        return st.one_of(floats, ints)
    origin = get_origin(tp)
    if origin is Literal:
        return st.sampled_from(get_args(tp))
    if origin in (typing.Union, pytypes.UnionType):
        inner, optional = _split_optional(tp)
        if optional:
            return st.one_of(st.none(), of_type(inner, depth))
        return st.one_of([_member(a, depth) for a in get_args(tp)])
    size = MAX_SIZE if depth <= MAX_DEPTH else 0
    if origin in (Sequence, list):
        (item,) = get_args(tp) or (Any,)
        return st.lists(of_type(item, depth), max_size=size)
    if origin in (dict, Mapping):
        _, value = get_args(tp) or (str, Any)
        return st.dictionaries(texts, of_type(value, depth), max_size=size)
    raise TypeError(f"no strategy for {tp!r}")


def _member(tp: Any, depth: int) -> S[Any]:
    fix = UNION_MEMBER_FIXES.get(tp)
    if fix is not None:
        return st.deferred(lambda: instances(tp, depth + 1, **fix(depth + 1)))
    return of_type(tp, depth)


def server_results(depth: int = 1) -> S[Any]:
    """``ServerResult`` values that decode back as themselves.

    Without the method at hand, a result decodes as ``InputRequiredResult`` or the
    generic ``Result`` (docs/model.md; ``structure_result`` gives the specific class),
    whose ``resultType`` must then be ``"complete"`` (BASE-12, BASE-14).
    """
    return st.one_of(
        instances(types.Result, depth, result_type=st.just("complete")),
        instances(types.InputRequiredResult, depth),
    )


# ------------------------------------------------------------------ whole messages

REQUEST_METHODS = frozenset(m for m, i in METHODS.items() if i.kind is Kind.REQUEST)
NOTIFICATION_METHODS = frozenset(m for m, i in METHODS.items() if i.kind is Kind.NOTIFICATION)
#: Method names: registered, removed in 2026-07-28, or anything.
method_names: S[str] = st.one_of(
    st.sampled_from(sorted(METHODS)), st.sampled_from(sorted(REMOVED_METHODS)), texts
)


def _methods_other_than(known: frozenset[str]) -> S[str]:
    return method_names.filter(lambda m: m not in known)


def messages() -> S[Any]:
    """JSON-RPC messages of every kind ``decode_message`` gives back as themselves.

    Typed requests and notifications of every registered method, generic requests
    and notifications of other methods (unknown, removed, or of the other kind),
    result responses (``InputRequiredResult`` or generic ``Result``) and error
    responses, with or without an id.
    """
    typed = [
        instances(i.message_type)
        for _, i in sorted(METHODS.items())
        if i.kind in (Kind.REQUEST, Kind.NOTIFICATION)
    ]
    return st.one_of(
        *typed,
        instances(types.JSONRPCRequest, method=_methods_other_than(REQUEST_METHODS)),
        instances(types.JSONRPCNotification, method=_methods_other_than(NOTIFICATION_METHODS)),
        instances(types.JSONRPCResultResponse),
        instances(types.JSONRPCErrorResponse),
    )
