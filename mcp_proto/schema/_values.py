"""JSON value helpers: the JSON type of a Python value, JSON equality, and JSON pointers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["FAST_TYPES", "canon", "escape", "json_type", "pointer", "type_matches"]


FAST_TYPES: dict[type, str] = {
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    dict: "object",
    list: "array",
    type(None): "null",
}


def json_type(value: Any) -> str:
    """The JSON type name of a decoded value (``"integer"`` for an ``int``, never for a bool)."""
    found = FAST_TYPES.get(type(value))
    if found is not None:
        return found
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return type(value).__name__  # not a JSON value: matches no type


def type_matches(value: Any, kind: str, name: str) -> bool:
    """Whether ``value`` (of JSON type ``kind``) is an instance of the schema type ``name``."""
    if kind == name:
        return True
    if name == "number":
        return kind == "integer"
    return name == "integer" and kind == "number" and float(value).is_integer()


def canon(value: Any) -> Any:
    """A hashable key, equal for JSON-equal values (``1 == 1.0``, ``true != 1``, any key order)."""
    t = type(value)
    if t is str:
        return value
    if t is bool:
        return ("b", value)
    if t is int:
        return ("n", value)
    if t is float:
        return ("n", int(value)) if value.is_integer() else ("n", value)
    if value is None:
        return ("z",)
    if isinstance(value, Mapping):
        return ("o", frozenset((k, canon(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return ("a", tuple(canon(v) for v in value))
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bool):
        return ("b", bool(value))
    if isinstance(value, (int, float)):
        return canon(float(value) if isinstance(value, float) else int(value))
    return ("?", id(value))


def escape(token: object) -> str:
    """One JSON pointer reference token."""
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer(path: tuple[Any, ...]) -> str:
    """The JSON pointer of a linked path ``(parent, token)`` (``()`` is the root)."""
    tokens: list[str] = []
    while path:
        path, token = path
        tokens.append(escape(token))
    return "".join("/" + t for t in reversed(tokens))
