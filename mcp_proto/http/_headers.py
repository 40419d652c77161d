"""HTTP header rules of the Streamable HTTP binding, with no HTTP library behind them.

* :class:`Headers`: an already-parsed header list, looked up case-insensitively
  (HTTP-22); duplicates are kept so a repeated ``Mcp-Method`` can be refused.
* The value encoding of ``Mcp-Name`` and ``Mcp-Param-{Name}`` (HTTP-30/31):
  :func:`encode_header_value` uses the ``=?base64?...?=`` sentinel whenever a
  value is not safe plain ASCII (a character outside 0x20-0x7E, leading or
  trailing whitespace, the empty string) or itself looks like the sentinel;
  :func:`decode_header_value` reverses it and raises :class:`HeaderValueError`
  for a malformed sentinel (bad Base64, not UTF-8, ``=?base64?=``) or a raw
  value with characters a client must have encoded.  The sentinel markers are
  case-sensitive: ``=?BASE64?...?=`` is a plain value.  Base64 is the standard
  alphabet (RFC 4648 section 4) with its padding, written and required (the
  official conformance suite refuses a value without it).
* ``x-mcp-header`` annotations (HTTP-23..27): :func:`header_params` lists the
  annotated properties of a tool's ``inputSchema`` or raises
  :class:`InvalidToolHeaders` naming the broken rule; :func:`param_header_text`
  converts an argument to its header text (strings as-is, integers in decimal,
  booleans lowercase, ``None`` -> no header).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final, TypeAlias

from attrs import frozen

__all__ = [
    "BASE64_PREFIX",
    "BASE64_SUFFIX",
    "MAX_SAFE_INTEGER",
    "HeaderParam",
    "HeaderValueError",
    "Headers",
    "InvalidToolHeaders",
    "RawHeaders",
    "decode_header_value",
    "encode_header_value",
    "header_params",
    "header_value_matches",
    "is_token",
    "param_header_text",
    "tool_header_problem",
    "value_at",
]

BASE64_PREFIX: Final = "=?base64?"
BASE64_SUFFIX: Final = "?="
#: Integers mirrored into headers stay within JavaScript's safe range (HTTP-24).
MAX_SAFE_INTEGER: Final = 2**53 - 1

RawHeaders: TypeAlias = Iterable[tuple[bytes | str, bytes | str]]

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
_PLAIN = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?\Z")
_B64 = re.compile(r"[A-Za-z0-9+/]*={0,2}\Z")
_NUMBER = re.compile(r"(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?\Z")
#: Exponents with more digits than this name no number a decoded JSON body can hold.
_MAX_EXPONENT_DIGITS = 24
_OWS = " \t"
#: JSON Schema keywords whose values are instance data, never subschemas.
_DATA_KEYWORDS = frozenset({"const", "default", "enum", "examples"})
_PRIMITIVES = frozenset({"string", "integer", "boolean"})


class HeaderValueError(ValueError):
    """A header value that is malformed (bad sentinel, characters that needed encoding)."""


class InvalidToolHeaders(ValueError):
    """A tool's ``x-mcp-header`` annotations break HTTP-24/25; ``str(e)`` is the reason."""


def _text(value: bytes | str) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else value


class Headers:
    """Parsed request or response headers, looked up case-insensitively (HTTP-22).

    Built from ``(name, value)`` pairs of ``bytes`` (h11, ASGI) or ``str``;
    bytes are read as Latin-1, so every byte survives and can be judged.
    Values keep their case; :meth:`get` strips surrounding spaces and tabs.
    """

    __slots__ = ("_by_name", "_items")

    def __init__(self, items: RawHeaders | Mapping[str, str] = ()) -> None:
        pairs = items.items() if isinstance(items, Mapping) else items
        self._items = [(_text(n).lower(), _text(v)) for n, v in pairs]
        by_name: dict[str, list[str]] = {}
        for n, v in self._items:  # one pass: every lookup after it is a dict lookup
            by_name.setdefault(n, []).append(v)
        self._by_name = by_name

    @classmethod
    def lowercase(
        cls, items: list[tuple[str, str]], by_name: dict[str, list[str]] | None = None
    ) -> Headers:
        """Headers from ``str`` pairs whose names are lowercase already, kept as given
        (``by_name``: their values by name, if the caller has built it already)."""
        self = cls.__new__(cls)
        self._items = items
        if by_name is None:
            by_name = {}
            for n, v in items:
                by_name.setdefault(n, []).append(v)
        self._by_name = by_name
        return self

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Headers({self._items!r})"

    def get_all(self, name: str) -> list[str]:
        """Every value of ``name`` (surrounding whitespace stripped), in order."""
        return [v.strip(_OWS) for v in self._by_name.get(name.lower(), ())]

    def get(self, name: str, default: str | None = None) -> str | None:
        """The value of ``name``; several values are joined with ``", "`` (RFC 9110)."""
        values = self._by_name.get(name.lower())
        if not values:
            return default
        if len(values) == 1:
            return values[0].strip(_OWS)
        return ", ".join(v.strip(_OWS) for v in values)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._by_name

    def with_prefix(self, prefix: str) -> list[tuple[str, str]]:
        """``(name, value)`` of every header whose lowercase name starts with ``prefix``."""
        key = prefix.lower()
        return [(n, v.strip(_OWS)) for n, v in self._items if n.startswith(key)]


def is_token(name: str) -> bool:
    """Whether ``name`` is an RFC 9110 token (``1*tchar``): no spaces, no controls."""
    return _TOKEN.match(name) is not None


def _is_sentinel(value: str) -> bool:
    return value.startswith(BASE64_PREFIX) and value.endswith(BASE64_SUFFIX)


def encode_header_value(value: str) -> str:
    """The header text for ``value``: itself if it is safe plain ASCII, else the sentinel.

    >>> encode_header_value("us-west1"), encode_header_value(" padded ")
    ('us-west1', '=?base64?IHBhZGRlZCA=?=')
    """
    if _PLAIN.match(value) and not _is_sentinel(value):
        return value
    payload = base64.b64encode(value.encode("utf-8", "surrogatepass")).decode("ascii")
    return f"{BASE64_PREFIX}{payload}{BASE64_SUFFIX}"


def decode_header_value(raw: str) -> str:
    """The value a header carries: the sentinel decoded, a plain value as it is.

    ``raw`` is the received value; surrounding spaces and tabs are ignored.
    Raises :class:`HeaderValueError` for a malformed sentinel or a plain value
    with a character outside 0x20-0x7E (a client must have encoded it).
    """
    value = raw.strip(_OWS)
    if not _is_sentinel(value):
        if value and not _PLAIN.match(value):
            raise HeaderValueError("the value has characters a client must Base64-encode")
        return value
    payload = value[len(BASE64_PREFIX) : -len(BASE64_SUFFIX)]
    short = len(value) < len(BASE64_PREFIX) + len(BASE64_SUFFIX)
    if short or len(payload) % 4 or not _B64.match(payload):  # padding is required (RFC 4648)
        raise HeaderValueError("malformed =?base64?...?= value")
    try:
        data = base64.b64decode(payload, validate=True)
        return data.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise HeaderValueError("malformed =?base64?...?= value") from None


def param_header_text(value: Any) -> str | None:
    """The text of an argument mirrored into ``Mcp-Param-{Name}`` (HTTP-30), or None.

    Strings as-is, booleans ``true``/``false``, integers in decimal (a float
    with an integral value counts as an integer); ``None`` means no header.
    Raises ``ValueError`` for any other value and for integers outside
    JavaScript's safe range (HTTP-24).
    """
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise ValueError(f"{value} is outside the safe integer range (HTTP-24)")
        return str(value)
    raise ValueError(f"a {type(value).__name__} cannot be mirrored into a header (HTTP-24)")


def header_value_matches(text: str, body: Any) -> bool:
    """Whether decoded header ``text`` equals body value ``body`` (HTTP-35, HTTP-37).

    Strings compare exactly, booleans as lowercase ``true``/``false``, numbers
    numerically (``42.0`` equals ``42``, ``0e-99999`` equals ``0``). A number compares
    in time linear in its text, whatever its exponent; infinities and NaN match nothing.
    """
    if isinstance(body, str):
        return text == body
    if isinstance(body, bool):
        return text == ("true" if body else "false")
    if isinstance(body, int | float):
        if isinstance(body, float) and not math.isfinite(body):
            return False
        try:
            mirror = str(body) if isinstance(body, int) else repr(body)
        except ValueError:  # an int past the interpreter's digit limit: no header holds it
            return False
        wanted = _number_key(mirror)
        return wanted is not None and _number_key(text) == wanted
    return False


def _number_key(text: str) -> tuple[bool, str, int] | None:
    """``(negative, significant digits, exponent)`` of a JSON number, equal for equal values.

    ``None`` when ``text`` is not a JSON number. Zero is ``(False, "", 0)`` whatever its
    sign or exponent; an exponent too long to name a representable value keeps its text
    digits in the key, so it equals no body number.
    """
    match = _NUMBER.match(text)
    if match is None:
        return None
    sign, whole, fraction, exponent = match.groups()
    fraction = fraction or ""
    digits = (whole + fraction).lstrip("0")
    if not digits:
        return (False, "", 0)
    trimmed = digits.rstrip("0")
    exponent = exponent or "0"
    magnitude = exponent.lstrip("+-").lstrip("0") or "0"
    if len(magnitude) > _MAX_EXPONENT_DIGITS:
        return (bool(sign), trimmed + "e" + exponent, 0)
    shift = -int(magnitude) if exponent.startswith("-") else int(magnitude)
    return (bool(sign), trimmed, shift - len(fraction) + len(digits) - len(trimmed))


@frozen(kw_only=True)
class HeaderParam:
    """One ``x-mcp-header`` annotation: the header ``Mcp-Param-{name}`` and its argument path."""

    name: str
    path: tuple[str, ...]
    type: str

    @property
    def header(self) -> str:
        return f"Mcp-Param-{self.name}"


def _primitive(schema: Mapping[str, Any]) -> str | None:
    kind = schema.get("type")
    kinds = [kind] if isinstance(kind, str) else kind
    if not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds):
        return None
    rest = [k for k in kinds if k != "null"]
    if len(rest) == 1 and rest[0] in _PRIMITIVES and len(kinds) <= 2:
        return str(rest[0])
    return None


def _walk(node: Any, path: tuple[str, ...], reachable: bool, out: list[Any]) -> None:
    if isinstance(node, list):
        for item in node:
            _walk(item, path, False, out)
        return
    if not isinstance(node, Mapping):
        return
    for key, value in node.items():
        if key == "x-mcp-header":
            out.append((node, path, reachable, value))
        elif key == "properties" and isinstance(value, Mapping):
            for prop, sub in value.items():
                _walk(sub, (*path, prop), reachable, out)
        elif key not in _DATA_KEYWORDS:
            _walk(value, path, False, out)


def header_params(input_schema: Any) -> tuple[HeaderParam, ...]:
    """The ``x-mcp-header`` annotations of a tool's ``inputSchema``, checked (HTTP-24/25).

    Raises :class:`InvalidToolHeaders` when any annotation is empty, not a
    token, a case-insensitive duplicate, on a property that is not a single
    ``integer``/``string``/``boolean`` (``"null"`` may be added), or not
    reachable from the root through ``properties`` alone.
    """
    found: list[Any] = []
    _walk(input_schema, (), True, found)
    params: list[HeaderParam] = []
    seen: set[str] = set()
    for schema, path, reachable, name in found:
        where = "/".join(path) or "the schema root"
        if not isinstance(name, str) or not name:
            raise InvalidToolHeaders(f"x-mcp-header at {where} is empty or not a string")
        if not is_token(name):
            raise InvalidToolHeaders(f"x-mcp-header {name!r} is not an HTTP token")
        if name.lower() in seen:
            raise InvalidToolHeaders(f"x-mcp-header {name!r} is used twice (case-insensitively)")
        seen.add(name.lower())
        if not reachable or not path:
            raise InvalidToolHeaders(
                f"x-mcp-header {name!r} is not reachable through properties alone"
            )
        kind = _primitive(schema)
        if kind is None:
            raise InvalidToolHeaders(
                f"x-mcp-header {name!r} is on a property that is not integer, string or boolean"
            )
        params.append(HeaderParam(name=name, path=path, type=kind))
    return tuple(params)


def tool_header_problem(tool: Any) -> str | None:
    """Why ``tool`` (a ``Tool`` or its JSON) cannot be used over HTTP, or None (HTTP-27)."""
    schema = tool.get("inputSchema") if isinstance(tool, Mapping) else tool.input_schema
    try:
        header_params(schema)
    except InvalidToolHeaders as e:
        return str(e)
    return None


def value_at(arguments: Any, path: tuple[str, ...]) -> Any:
    """The instance value at ``path`` in ``arguments``, or ``None`` when absent (HTTP-26)."""
    node = arguments
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node
