"""JSON value helpers: the JSON type of a Python value, JSON equality, and JSON pointers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["FAST_TYPES", "canon", "escape", "json_type", "pointer"]


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
    """The JSON type name of a decoded value (``"integer"`` for an ``int``, never for a bool).

    A value of no JSON type gets a name no schema type has (``"non-JSON object"``), so it
    matches no ``type`` keyword and the message says what it was.
    """
    found = FAST_TYPES.get(type(value))
    if found is not None:
        return found
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int):  # bool cannot be subclassed, so this is a true int subclass
        return "integer"
    if isinstance(value, float):
        return "number"
    return f"non-JSON {type(value).__name__}"


def canon(value: Any) -> Any:
    """A hashable key, equal for JSON-equal values (``1 == 1.0``, ``true != 1``, any key order).

    Subclasses count as their JSON type: a ``class E(str, Enum)`` member is its string value
    (not ``"E.a"``), an ``IntEnum`` member its number. A value of no JSON type equals only
    itself.
    """
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
        return (
            "o",
            frozenset((k if type(k) is str else _key(k), canon(v)) for k, v in value.items()),
        )
    if isinstance(value, (list, tuple)):
        return ("a", tuple(canon(v) for v in value))
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return ("n", int(value))
    if isinstance(value, float):
        return canon(float(value))
    return ("?", id(value))


def _key(key: Any) -> Any:
    """A mapping key that is not a plain ``str``: a ``str`` subclass as its plain string (an
    Enum hashes by name), anything else (not a JSON key) as itself."""
    return str.__str__(key) if isinstance(key, str) else key


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
