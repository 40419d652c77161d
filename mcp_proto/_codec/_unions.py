"""Structuring of union types: by tag where the members have one, else by best fit.

A *tag* is a wire key that every member declares with a ``Literal`` type
(``type`` for content blocks, ``method`` for requests, ``mode`` for
elicitation parameters, ``resultType`` for results).  A member whose tag field
is optional also takes values without the tag (an elicitation without
``mode`` is a form; a result without ``resultType`` is complete).

Members that no tag separates (``TextResourceContents`` vs
``BlobResourceContents``, the elicitation schema variants) are told apart by
best fit: every candidate is tried, the one that leaves the fewest unknown keys
wins, ties going to the first in the union.  Those unions are small and not on
the hot path.

``ServerResult`` is the one union read without either: out of context (the
request's method is not known) it is ``InputRequiredResult`` or the generic
``Result``, chosen by ``resultType``.

This module imports only ``_base`` and the model: the structure function of
each member comes from the ``structurer`` the caller passes in (``_compile``'s,
which caches and compiles), so the two modules do not import each other.
"""

from __future__ import annotations

import typing
from collections.abc import Sequence
from typing import Any, Literal, get_args, get_origin

import attrs

from .. import types as model
from ._base import Fn, Invalid, Structurer, bad, hints_of, strip_none

__all__ = ["union_structurer"]


def _tag_values(cls: type, wire: str) -> tuple[tuple[Any, ...], bool] | None:
    """The Literal values of ``cls``'s field at ``wire`` and whether it may be absent."""
    for f in attrs.fields(cls):
        if f.metadata.get("wire") == wire:
            tp = strip_none(hints_of(cls)[f.name])
            if get_origin(tp) is not Literal:
                return None
            required = f.metadata.get("required", f.default is attrs.NOTHING)
            return get_args(tp), not required
    return None


def _find_tag(members: list[type]) -> tuple[str, dict[Any, list[type]], list[type]] | None:
    wires = [f.metadata["wire"] for f in attrs.fields(members[0]) if "wire" in f.metadata]
    for wire in wires:
        table: dict[Any, list[type]] = {}
        absent: list[type] = []
        for cls in members:
            tag = _tag_values(cls, wire)
            if tag is None:
                break
            values, optional = tag
            for value in values:
                table.setdefault(value, []).append(cls)
            if optional:
                absent.append(cls)
        else:
            if len(table) > 1:
                return wire, table, absent
    return None


def _best_fit(candidates: list[type], names: str, structurer: Structurer) -> Fn:
    fns = [(cls, structurer(cls)) for cls in candidates]

    def structure_best(v: Any) -> Any:
        best: Any = None
        first_error: Invalid | None = None
        for _, fn in fns:
            try:
                got = fn(v)  # type: ignore[misc]
            except Invalid as e:
                first_error = first_error or e
                continue
            if not got.extra:
                return got
            if best is None or len(got.extra) < len(best.extra):
                best = got
        if best is None:
            assert first_error is not None
            raise Invalid(f"does not match any of {names}: {first_error.reason}")
        return best

    return structure_best


def union_structurer(tp: Any, structurer: Structurer) -> Fn:
    """The structure function of a union of model classes (and perhaps one array type).

    ``structurer(member)`` gives each member's own structure function.
    """
    if tp == model.ServerResult:  # equality, not identity: the members in any order
        return _server_result_structurer(structurer)
    classes = [a for a in get_args(tp) if attrs.has(a)]
    arrays = [a for a in get_args(tp) if get_origin(a) in (Sequence, list)]
    others = [a for a in get_args(tp) if a not in classes and a not in arrays]
    if len(arrays) > 1 or not (classes or arrays):
        # Two array types cannot be told apart; a union of scalars and mappings alone
        # would come back here (``_compile`` handles the unions of scalars it supports).
        raise TypeError(f"no structurer for {tp!r}")
    array_fn = structurer(arrays[0]) if arrays else None
    object_fn = _objects_structurer(classes, structurer) if classes else None
    scalar_fn = structurer(typing.Union[tuple(others)]) if others else None  # noqa: UP007
    expected = " or ".join(
        w for w, ok in (("an object", classes), ("an array", arrays), ("a scalar", others)) if ok
    )

    def structure_union(v: Any) -> Any:
        if type(v) is dict:
            if object_fn is not None:
                return object_fn(v)
        elif type(v) is list:
            if array_fn is not None:
                return array_fn(v)
        elif scalar_fn is not None:
            return scalar_fn(v)
        raise bad(v, expected)

    return structure_union


def _objects_structurer(classes: list[type], structurer: Structurer) -> Fn:
    names = ", ".join(c.__name__ for c in classes)
    if len(classes) == 1:
        fn = structurer(classes[0])
        assert fn is not None
        return fn
    tag = _find_tag(classes)
    if tag is None:
        return _best_fit(classes, names, structurer)
    wire, table, absent = tag
    by_value = {
        value: (
            _best_fit(members, names, structurer) if len(members) > 1 else structurer(members[0])
        )
        for value, members in table.items()
    }
    if_absent = (
        (_best_fit(absent, names, structurer) if len(absent) > 1 else structurer(absent[0]))
        if absent
        else None
    )
    allowed = ", ".join(repr(v) for v in table)

    def structure_tagged(v: Any) -> Any:
        t = v.get(wire)
        if t is None:
            if if_absent is None:
                e = Invalid("missing required field")
                e.path.append(wire)
                raise e
            return if_absent(v)
        try:
            fn = by_value[t]
        except (KeyError, TypeError):
            e = Invalid(f"unknown value {t!r} (expected one of {allowed})")
            e.path.append(wire)
            raise e from None
        return fn(v)  # type: ignore[misc]

    return structure_tagged


def _server_result_structurer(structurer: Structurer) -> Fn:
    """``ServerResult`` without context: ``InputRequiredResult`` or the generic ``Result``."""
    input_required = typing.cast(Fn, structurer(model.InputRequiredResult))
    result = typing.cast(Fn, structurer(model.Result))

    def structure_server_result(v: Any) -> Any:
        if type(v) is not dict:
            raise bad(v, "an object")
        t = v.get("resultType")
        if t == "input_required":
            return input_required(v)
        if t is None or t == "complete":
            return result(v)
        e = Invalid(f"unknown resultType {t!r}" if type(t) is str else "expected a string")
        e.path.append("resultType")
        raise e

    return structure_server_result
