"""Structuring and unstructuring of the message model, compiled from the classes.

For each attrs class of :mod:`mcp_proto.types` this module writes, once, a pair
of specialised Python functions (the way attrs writes ``__init__``): one turns
a JSON object into an instance, checking every field against its annotation;
the other turns an instance back into plain JSON values.  The source of each
is registered with :mod:`linecache`, so tracebacks show it; :func:`source_of`
returns it.

Rules, uniform over the model:

* a field marked ``metadata["lenient"]`` reads a malformed value as absent;
* a field's wire name is its ``metadata["wire"]``; unknown keys land in
  ``extra`` and are written back after the known ones;
* ``None`` means absent: an optional field that is JSON ``null`` is read as
  absent, and an absent optional field is not written; the one exception is a
  required field marked ``metadata["nullable"]`` (2025-11-25 ``Task.ttl``), where
  ``null`` is a value, read and written as such;
* JSON types are strict: ``int`` accepts no ``bool`` and no ``float``;
  ``float`` fields (the schema's ``number``) accept ``int`` and keep it;
* a ``resultType`` that may be ``"complete"`` is read as ``"complete"`` when
  absent (BASE-15) and always written.

Bad input raises :class:`mcp_proto.DecodeError` (code ``-32602``) with a JSON
pointer to the bad value; nothing else escapes.
"""

from __future__ import annotations

import linecache
import types as pytypes
import typing
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeVar, get_args, get_origin

import attrs

from .._errors import INVALID_PARAMS, DecodeError, EncodeError
from .._model import EMPTY
from ._base import Fn, Invalid, bad, hints_of, strip_none
from ._unions import union_structurer

__all__ = ["structure", "unstructure", "source_of"]

T = TypeVar("T")
_PRIMS: dict[Any, tuple[str, str]] = {
    str: ("type(v) is not str", "a string"),
    int: ("type(v) is not int", "an integer"),
    bool: ("type(v) is not bool", "a boolean"),
    float: ("type(v) is not float and type(v) is not int", "a number"),
}
_structurers: dict[Any, Fn | None] = {}
_unstructurers: dict[Any, Fn | None] = {}
_sources: dict[type, str] = {}


def source_of(cls: type) -> str:
    """The generated structure and unstructure source for a model class (for debugging).

    Raises ``TypeError`` for a type the codec does not support, or one it supports
    that is not a class (``list[Tool]``, ``RequestId``).
    """
    unstructurer(cls)
    structurer(cls)
    try:
        return _sources[cls]
    except KeyError:  # a type the codec supports, but not a class: no source of its own
        raise TypeError(f"{cls!r} is not a model class") from None


def _check_expr(tp: Any) -> tuple[str, str] | None:
    """A cheap inline check for primitive-like types, or None when a function is needed."""
    if tp in _PRIMS:
        return _PRIMS[tp]
    if tp is Any:
        return ("False", "anything")
    origin = get_origin(tp)
    if origin is Literal:
        values = get_args(tp)
        kinds = {type(x) for x in values}
        (kind,) = kinds
        return (
            f"type(v) is not {kind.__name__} or v not in {values!r}",
            "one of " + ", ".join(repr(x) for x in values),
        )
    if origin in (typing.Union, pytypes.UnionType):
        parts = [_check_expr(a) for a in get_args(tp)]
        if all(p is not None and p[0] != "False" for p in parts):
            checks = [p for p in parts if p is not None]
            return (" and ".join(f"({c})" for c, _ in checks), " or ".join(w for _, w in checks))
    return None


def structurer(tp: Any) -> Fn | None:
    """The function that structures a JSON value as ``tp`` (None: the value is kept as is)."""
    try:
        return _structurers[tp]
    except KeyError:
        pass
    fn = _build_structurer(tp)
    _structurers[tp] = fn
    return fn


def unstructurer(tp: Any) -> Fn | None:
    """The function that unstructures a value of ``tp`` (None: it is JSON already)."""
    try:
        return _unstructurers[tp]
    except KeyError:
        pass
    fn = _build_unstructurer(tp)
    _unstructurers[tp] = fn
    return fn


def _checker(check: tuple[str, str]) -> Fn:
    ns: dict[str, Any] = {"bad": bad}
    exec(  # compiled from the model annotations
        f"def check(v):\n    if {check[0]}:\n        raise bad(v, {check[1]!r})\n    return v\n",
        ns,
    )
    fn: Fn = ns["check"]
    return fn


def _build_structurer(tp: Any) -> Fn | None:
    if attrs.has(tp):
        return _compile_class(tp)[0]
    check = _check_expr(tp)
    if check is not None:
        return None if check[0] == "False" else _checker(check)
    origin = get_origin(tp)
    if origin in (Sequence, list):
        (item,) = get_args(tp) or (Any,)
        return _seq_structurer(item)
    if origin in (dict, Mapping):
        _, value = get_args(tp) or (str, Any)
        return _map_structurer(value)
    if origin in (typing.Union, pytypes.UnionType):
        return union_structurer(tp, structurer)
    raise TypeError(f"no structurer for {tp!r}")


def _seq_structurer(item: Any) -> Fn:
    inner = structurer(item)

    def structure_seq(v: Any) -> Any:
        if type(v) is not list:
            raise bad(v, "an array")
        if inner is None:
            return v
        out = []
        for i, x in enumerate(v):
            try:
                out.append(inner(x))
            except Invalid as e:
                e.path.append(str(i))
                raise
        return out

    return structure_seq


def _map_structurer(value: Any) -> Fn:
    inner = structurer(value)

    def structure_map(v: Any) -> Any:
        if type(v) is not dict:
            raise bad(v, "an object")
        if inner is None:
            return v
        out = {}
        for k, x in v.items():
            try:
                out[k] = inner(x)
            except Invalid as e:
                e.path.append(k)
                raise
        return out

    return structure_map


def _build_unstructurer(tp: Any) -> Fn | None:
    if attrs.has(tp):
        return _compile_class(tp)[1]
    if _check_expr(tp) is not None:
        return None
    origin = get_origin(tp)
    if origin in (Sequence, list):
        (item,) = get_args(tp) or (Any,)
        inner = unstructurer(item)
        if inner is None:
            return _as_list
        return lambda v: [inner(x) for x in v]
    if origin in (dict, Mapping):
        _, value = get_args(tp) or (str, Any)
        inner_map = unstructurer(value)
        if inner_map is None:
            return None
        return lambda v: {k: inner_map(x) for k, x in v.items()}
    if origin in (typing.Union, pytypes.UnionType):
        return _union_unstructurer(tp)
    raise TypeError(f"no unstructurer for {tp!r}")


def _as_list(v: Any) -> Any:
    return v if type(v) is list else list(v)


class _ByType(dict[type, Fn]):
    """A union's unstructurers by exact class; other values take the general path."""

    def __init__(self, table: dict[type, Fn], fallback: Fn) -> None:
        super().__init__(table)
        self.fallback = fallback

    def __missing__(self, key: type) -> Fn:
        return self.fallback


def _dispatch_table(tp: Any) -> _ByType:
    table = {a: _compile_class(a)[1] for a in get_args(tp) if attrs.has(a)}
    return _ByType(table, _union_unstructurer(tp))


def _is_class_union(tp: Any) -> bool:
    origin = get_origin(tp)
    return origin in (typing.Union, pytypes.UnionType) and any(attrs.has(a) for a in get_args(tp))


def _union_unstructurer(tp: Any) -> Fn:
    by_type: dict[type, Fn | None] = {}
    seq: Fn | None = None
    for arg in get_args(tp):
        if attrs.has(arg):
            by_type[arg] = unstructurer(arg)
        elif get_origin(arg) in (Sequence, list):
            seq = unstructurer(arg)

    plain = tuple(a for a in get_args(tp) if a in _PRIMS or a is type(None))
    names = " or ".join(getattr(a, "__name__", str(a)) for a in get_args(tp))

    def unstructure_union(v: Any) -> Any:
        fn = by_type.get(type(v))
        if fn is not None:
            return fn(v)
        if seq is not None and isinstance(v, list | tuple):
            return seq(v)
        if isinstance(v, dict) or type(v) in plain or attrs.has(type(v)):
            return unstructure(v)  # a JSON object, or another model object: written as is
        raise EncodeError(f"a {type(v).__name__} where the model wants {names}")

    return unstructure_union


def _compile_class(cls: type) -> tuple[Fn, Fn]:
    """Write, exec and cache the structure/unstructure pair of an attrs class."""
    if cls in _sources:
        return _structurers[cls], _unstructurers[cls]  # type: ignore[return-value]
    marks = [(cache, len(cache)) for cache in (_structurers, _unstructurers, _sources)]
    # Register placeholders first: recursive types refer to themselves.
    ns: dict[str, Any] = {
        "MISSING": "missing required field",
        "cls": cls,
        "Invalid": Invalid,
        "bad": bad,
        "EMPTY": EMPTY,
        "EncodeError": EncodeError,
        # the builtins the checks name, as globals: one dict lookup, not two
        **{b.__name__: b for b in (type, str, int, float, bool, dict, list, tuple, bytes)},
        "isinstance": isinstance,
        "hasattr": hasattr,
    }
    pending: list[Any] = []
    for a in attrs.fields(cls):
        ns[f"set_{a.name}"] = getattr(cls, a.name).__set__
    ns["new"] = object.__new__
    hints = hints_of(cls)
    fields = [f for f in attrs.fields(cls) if f.name != "extra"]
    known = tuple(f.metadata["wire"] for f in fields)
    ns["KNOWN"] = frozenset(known)
    s_lines = [
        "def structure(d):",
        "    if type(d) is not dict:",
        "        raise bad(d, 'an object')",
    ]
    if all(f.default is not attrs.NOTHING and not f.metadata.get("required") for f in fields):
        # An empty object (``clientCapabilities: {}`` on every request) is one shared instance.
        ns["DEFAULT"] = cls()
        s_lines += ["    if not d:", "        return DEFAULT"]
    s_lines += [
        "    k = None",
        "    n = 0",
        "    try:",
    ]
    u_lines = ["def unstructure(o):", "    d = {}"]
    args = []
    required_lines: list[str] = []
    optional_lines: list[str] = []
    absent_lines: list[str] = []
    for f in fields:
        tp = strip_none(hints[f.name])
        wire_required = f.metadata.get("required", f.default is attrs.NOTHING)
        block = _field_block(f, tp, pending, wire_required)
        if wire_required:
            required_lines += ["        " + line for line in block]
        else:
            optional_lines += ["            " + line for line in block]
            absent_lines.append(f"            f_{f.name} = {f.default!r}")
        args.append(f.name)
        u_lines += _field_unstructure(cls, f, tp, pending, wire_required)
    s_lines += required_lines
    if optional_lines:
        # Sparse objects are the rule: when only the required keys are there, skip the rest.
        s_lines += ["        if len(d) == n:", *absent_lines, "        else:", *optional_lines]
    if not fields:
        s_lines.append("        pass")
    s_lines += [
        "    except Invalid as e:",
        "        if k is not None:",
        "            e.path.append(k)",
        "        raise",
        "    if len(d) == n:",
        "        extra = EMPTY",
        "    else:",
        "        extra = {x: y for x, y in d.items() if x not in KNOWN} or EMPTY",
        # Instances are built slot by slot: the same result as the attrs __init__
        # (the model has no validators or converters) at half the cost.
        "    o = new(cls)",
        *[f"    set_{a}(o, f_{a})" for a in args],
        "    set_extra(o, extra)",
        "    return o",
    ]
    u_lines += [
        "    if o.extra:",
        "        for x, y in o.extra.items():",
        "            if x not in d:",
        "                d[x] = y",
        "    return d",
    ]
    source = "\n".join(s_lines) + "\n\n\n" + "\n".join(u_lines) + "\n"
    filename = f"<mcp_proto codec {cls.__qualname__}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), ns)
    s_fn: Fn = ns["structure"]
    u_fn: Fn = ns["unstructure"]
    _sources[cls] = source
    _structurers[cls] = s_fn
    _unstructurers[cls] = u_fn
    # Nested functions are bound after registering this class, so recursion terminates.
    try:
        for name, build, tp in pending:
            ns[name] = build(tp)
    except Exception:
        # An unsupported annotation (TypeError): forget what this call registered, the
        # half-bound functions, so the next use raises the same error, not a NameError.
        for cache, mark in marks:
            for key in list(cache)[mark:]:
                del cache[key]
        raise
    return s_fn, u_fn


def _field_block(
    f: attrs.Attribute[Any], tp: Any, pending: list[Any], wire_required: bool
) -> list[str]:
    """Structure code for one field: reads ``d``, leaves the value in ``f_<name>``."""
    w = f.metadata["wire"]
    lines = [f"k = {w!r}"]
    if tp is Any and wire_required:
        lines += [f"if {w!r} not in d:", "    raise Invalid(MISSING)", f"v = d[{w!r}]", "n += 1"]
    elif f.metadata.get("nullable"):  # required, and null is a value (2025-11-25 Task.ttl)
        lines += [f"if {w!r} not in d:", "    raise Invalid(MISSING)", f"v = d[{w!r}]", "n += 1"]
        lines += ["if v is not None:", *("    " + b for b in _field_structure(f, tp, pending))]
    else:
        lines.append(f"v = d.get({w!r})")
        if wire_required:
            lines += [
                "if v is None:",
                f"    raise Invalid('must not be null' if {w!r} in d else MISSING)",
            ]
            indent = ""
        elif f.default is not None:
            lines += ["if v is None:", f"    v = {f.default!r}", "else:"]
            indent = "    "
        else:
            lines.append("if v is not None:")
            indent = "    "
        body = _field_structure(f, tp, pending)
        if f.metadata.get("lenient"):  # malformed: read as absent (display-only data)
            body = ["try:", *("    " + b for b in body), "except Invalid:", "    v = None"]
        lines += [indent + line for line in body]
        lines.append(indent + "n += 1")
    lines.append(f"f_{f.name} = v")
    return lines


def _is_plain(tp: Any) -> bool:
    """True when values of ``tp`` are JSON already (nothing to convert on the way out).

    Raises ``TypeError`` for an annotation the codec does not support (before the
    class is registered: its structurer would refuse the same type).
    """
    if _check_expr(tp) is not None:
        return True
    if attrs.has(tp):
        return False
    origin = get_origin(tp)
    if origin in (Sequence, list, dict, Mapping):
        return all(_is_plain(a) for a in get_args(tp)[-1:])
    if origin in (typing.Union, pytypes.UnionType):
        return all(_is_plain(a) for a in get_args(tp))
    raise TypeError(f"no unstructurer for {tp!r}")


def _field_structure(f: attrs.Attribute[Any], tp: Any, pending: list[Any]) -> list[str]:
    lines: list[str] = []
    check = _check_expr(tp)
    if check is not None:
        if check[0] != "False":
            lines += [f"if {check[0]}:", f"    raise bad(v, {check[1]!r})"]
    elif get_origin(tp) in (dict, Mapping) and get_args(tp)[1] is Any:
        lines += ["if type(v) is not dict:", "    raise bad(v, 'an object')"]
    else:
        pending.append((f"S_{f.name}", structurer, tp))
        lines.append(f"v = S_{f.name}(v)")
    schema_kind = f.metadata.get("json_schema")
    if schema_kind:
        lines += [
            f"if v.get('type') != {schema_kind!r}:",
            f"    raise Invalid({f'a schema of type {schema_kind!r} is required'!r})",
        ]
    for key, op in (("minimum", "<"), ("maximum", ">")):
        if key in f.metadata:
            limit = f.metadata[key]
            lines += [f"if v {op} {limit!r}:", f"    raise Invalid('the {key} is {limit}')"]
    if "max_items" in f.metadata:
        limit = f.metadata["max_items"]
        lines += [f"if len(v) > {limit}:", f"    raise Invalid('at most {limit} items allowed')"]
    return lines


def _field_unstructure(
    cls: type, f: attrs.Attribute[Any], tp: Any, pending: list[Any], wire_required: bool
) -> list[str]:
    w = f.metadata["wire"]
    origin, args = get_origin(tp), get_args(tp)
    if _is_class_union(tp):
        pending.append((f"U_{f.name}", _dispatch_table, tp))
        value = f"U_{f.name}[type(v)](v)"
    elif origin in (Sequence, list) and _is_class_union(args[0]):
        pending.append((f"U_{f.name}", _dispatch_table, args[0]))
        value = f"[U_{f.name}[type(y)](y) for y in v]"
    elif origin in (Sequence, list) and attrs.has(args[0]):
        pending.append((f"U_{f.name}", unstructurer, args[0]))
        value = f"[U_{f.name}(y) for y in v]"
    elif not _is_plain(tp):
        pending.append((f"U_{f.name}", unstructurer, tp))
        value = f"U_{f.name}(v)"
    elif get_origin(tp) in (Sequence, list):
        value = "v if type(v) is list else list(v)"
    else:
        value = "v"
    if tp is Any and wire_required:
        return [f"    d[{w!r}] = o.{f.name}"]
    if f.metadata.get("nullable"):
        return [f"    v = o.{f.name}", f"    d[{w!r}] = None if v is None else {value}"]
    # a required field of the wrong type would be written as it is: schema-invalid JSON
    # (issue 17); those with a default (a discriminator, "2.0") and optional ones are left
    # to the caller, so that writing stays cheap
    required = f.default is attrs.NOTHING
    check = _type_check(tp, f.name, pending) if required else None
    typed = (
        [f"    if {check[0]}:", f"        raise EncodeError({_wrong(cls, f.name, w, check[1])})"]
        if check is not None
        else []
    )
    if f.default is attrs.NOTHING:
        return [f"    v = o.{f.name}", *typed, f"    d[{w!r}] = {value}"]
    lines = [f"    v = o.{f.name}"]
    if wire_required:
        lines += [
            "    if v is None:",
            f"        raise EncodeError('{cls.__name__}.{f.name} ({w}) is required')",
            f"    d[{w!r}] = {value}",
        ]
    else:
        lines += ["    if v is not None:", f"        d[{w!r}] = {value}"]
    return lines


#: the inline check of a required field's value, by its annotation: the exact type first
#: (the fast path), then ``isinstance`` (a ``StrEnum``, an ``IntEnum``, a ``dict``
#: subclass), so that nothing the writer used to take is refused
_FIELD_CHECKS: dict[Any, tuple[str, str]] = {
    str: ("type(v) is not str and not isinstance(v, str)", "a string"),
    int: ("type(v) is not int and (type(v) is bool or not isinstance(v, int))", "an integer"),
    bool: ("type(v) is not bool", "a boolean"),
    float: (
        "type(v) is not float and type(v) is not int"
        " and (type(v) is bool or not isinstance(v, (int, float)))",
        "a number",
    ),
}


def _type_check(tp: Any, name: str, pending: list[Any]) -> tuple[str, str] | None:
    """The inline check that a required field's value is of ``tp`` before it is written,
    and what ``tp`` is in words; ``None`` for what needs none (``Any``, a union: a union
    of classes checks in its dispatch)."""
    if tp in _FIELD_CHECKS:
        return _FIELD_CHECKS[tp]
    origin = get_origin(tp)
    if origin is Literal:
        values = get_args(tp)
        return (f"v not in {values!r}", "one of " + ", ".join(repr(x) for x in values))
    if origin in (dict, Mapping):
        return ("type(v) is not dict and not isinstance(v, dict)", "an object (a dict)")
    if origin in (Sequence, list):
        return (
            "type(v) is not list and type(v) is not tuple"
            " and (isinstance(v, (str, bytes, dict)) or not hasattr(v, '__iter__'))",
            "an array (a list)",
        )
    if attrs.has(tp):
        pending.append((f"C_{name}", lambda x: x, tp))
        return (f"type(v) is not C_{name} and not isinstance(v, C_{name})", f"a {tp.__name__}")
    return None


def _wrong(cls: type, name: str, wire: str, what: str) -> str:
    """The source of the message for a field of ``cls`` holding a value not ``what``."""
    text = f"{cls.__name__}.{name} ({wire}) must be {what}, not "
    return f"{text!r} + repr(v)[:60]"


def structure(obj: Any, tp: type[T] | Any) -> T:
    """Structure plain JSON values (``dict``, ``list``, ``str``...) as the model type ``tp``.

    ``tp`` is any model class, model alias (``ContentBlock``, ``RequestId``) or
    container of them (``list[Tool]``); another type raises ``TypeError``.
    Raises :class:`DecodeError` (``-32602``, with a JSON pointer in ``path`` and
    ``data``) when ``obj`` does not fit.
    """
    fn = structurer(tp)
    if fn is None:
        return typing.cast(T, obj)
    try:
        return typing.cast(T, fn(obj))
    except Invalid as e:
        raise invalid_to_decode_error(e) from None


def invalid_to_decode_error(
    e: Invalid, prefix: str = "", id: Any = None, code: int = INVALID_PARAMS
) -> DecodeError:
    pointer = prefix + e.pointer()
    message = f"Invalid value at {pointer or '/'}: {e.reason}"
    return DecodeError(
        code, message, data={"path": pointer, "reason": e.reason}, id=id, path=pointer
    )


def _held(e: AttributeError | KeyError) -> str:
    """What a generated unstructurer's ``AttributeError``/``KeyError`` means."""
    return f"a field holds a value the model cannot write ({type(e).__name__}: {e})"


def unstructure(value: Any) -> Any:
    """Turn a model value (or a list/dict of them) into plain JSON-compatible values.

    The result may share lists and dicts with ``value`` (schemas, ``arguments``...):
    treat it as read-only.  Raises :class:`EncodeError` for a value the model
    cannot write, such as a request without its required ``_meta``.
    """
    tp = type(value)
    if attrs.has(tp):
        fn = _compile_class(tp)[1]
        try:
            return fn(value)
        except (AttributeError, KeyError) as e:  # an optional field of the wrong type
            raise EncodeError(f"cannot unstructure a {tp.__name__}: {_held(e)}") from None
    if tp is list or tp is tuple:
        return [unstructure(x) for x in value]
    if tp is dict:
        return {k: unstructure(x) for k, x in value.items()}
    if value is None or tp in (str, int, float, bool):
        return value
    raise EncodeError(f"cannot unstructure a {tp.__name__}")
