"""The pieces every codec module shares: the internal decode failure and type helpers.

Imports only the standard library, so ``_compile`` and ``_unions`` both build
on it without importing each other's internals.  :class:`Invalid` never leaves
the codec: ``structure`` and ``decode_message`` turn it into a
:class:`mcp_proto.DecodeError`.
"""

from __future__ import annotations

import types as pytypes
import typing
from collections.abc import Callable
from typing import Any, get_args, get_origin

__all__ = ["Fn", "Invalid", "Structurer", "bad", "hints_of", "strip_none"]

#: A compiled conversion: one JSON value in, one model value out (or the reverse).
Fn = Callable[[Any], Any]
#: Finds (compiling once) the conversion for a type; ``None``: values are kept as they are.
Structurer = Callable[[Any], Fn | None]


class Invalid(Exception):
    """Internal: a value that does not fit; ``path`` collects segments inner-first."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path: list[str] = []

    def pointer(self) -> str:
        """The JSON pointer (RFC 6901) of the value, from the outermost segment in."""
        return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in reversed(self.path))


_JSON_KIND = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if type(v) is int:
        return "an integer"
    if type(v) is float:
        return "a number"
    return _JSON_KIND.get(type(v), type(v).__name__)


def bad(v: Any, expected: str) -> Invalid:
    """The failure for a value of the wrong JSON type: "expected ..., got ..."."""
    return Invalid(f"expected {expected}, got {_kind(v)}")


def strip_none(tp: Any) -> Any:
    """``tp`` without ``None`` among its union members (``X | None`` is ``X``)."""
    if get_origin(tp) in (typing.Union, pytypes.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) < len(get_args(tp)):
            return args[0] if len(args) == 1 else typing.Union[tuple(args)]  # noqa: UP007
    return tp


_hints: dict[type, dict[str, Any]] = {}


def hints_of(cls: type) -> dict[str, Any]:
    """The resolved field annotations of a model class, computed once per class."""
    hints = _hints.get(cls)
    if hints is None:
        hints = typing.get_type_hints(cls)
        _hints[cls] = hints
    return hints
