"""Request checks of the server binding that need only the headers and the parsed body.

:func:`mirrored_header_problem` implements Server Validation (HTTP-15..39):
``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` and the tool's
``Mcp-Param-{Name}`` headers are present once, well formed (the Base64 sentinel
decoded first) and equal to the body.  It returns the ``-32020`` message, or
``None``.  A body value of the wrong JSON type is left to the core (``-32602``).
:func:`admits` reads ``Accept``; ``Host`` and ``Origin`` are :mod:`mcp_proto.http.host`'s.
"""

from __future__ import annotations

import functools
from typing import Any

from .. import types as t
from .._codec import METHODS
from ._headers import (
    Headers,
    HeaderValueError,
    InvalidToolHeaders,
    decode_header_value,
    header_params,
    header_value_matches,
    value_at,
)

__all__ = ["admits", "mirrored_header_problem"]

_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"


class _Problem(Exception):
    """A header check failed; the message is the ``-32020`` message."""


def admits(accept: str | None, wanted: str) -> bool:
    """Whether an ``Accept`` value admits ``wanted`` (the most specific range decides)."""
    if accept is None:
        return True
    if len(accept) <= _CACHEABLE:
        return _admits_cached(accept, wanted)
    return _admits(accept, wanted)


#: Accept values up to this length are remembered (clients send the same one every time)
_CACHEABLE = 256


@functools.lru_cache(maxsize=64)
def _admits_cached(accept: str, wanted: str) -> bool:
    return _admits(accept, wanted)


def _admits(accept: str, wanted: str) -> bool:
    main = wanted.split("/", maxsplit=1)[0]
    best: tuple[int, float] = (-1, 0.0)
    for item in accept.split(","):
        kind, *params = (p.strip() for p in item.split(";"))
        rank = {wanted: 2, f"{main}/*": 1, "*/*": 0}.get(kind.lower())
        if rank is None or rank < best[0]:
            continue
        q = 1.0
        for p in params:
            name, _, value = p.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        best = (rank, q) if rank > best[0] else (rank, max(q, best[1]))
    return best[1] > 0


def _one(headers: Headers, name: str) -> str | None:
    values = headers.get_all(name)
    if len(values) > 1:
        raise _Problem(f"Header mismatch: {name} header given more than once")
    return values[0] if values else None


def _equal(name: str, header: str | None, body: Any) -> None:
    if header is None:
        raise _Problem(f"Header mismatch: missing {name} header")
    if type(body) is str and header != body:
        raise _Problem(
            f"Header mismatch: {name} header value {header!r} does not match body value {body!r}"
        )


def _mirrored(headers: Headers, name: str, body: Any, required: bool) -> None:
    raw = _one(headers, name)
    if raw is None:
        if required or body is not None:
            raise _Problem(f"Header mismatch: missing {name} header")
        return
    try:
        text = decode_header_value(raw)
    except HeaderValueError as e:
        raise _Problem(f"Header mismatch: {name} header: {e}") from None
    if body is None and not required:
        raise _Problem(f"Header mismatch: {name} header has no value in the body")
    if isinstance(body, str | int | float) and header_value_matches(text, body):
        return
    if required and not isinstance(body, str):
        return  # the body itself is wrong: the core answers -32602
    raise _Problem(
        f"Header mismatch: {name} header value {text!r} does not match body value {body!r}"
    )


def mirrored_header_problem(
    headers: Headers, message: dict[str, Any], tool: t.Tool | None
) -> str | None:
    """Why the mirrored headers of request ``message`` are refused (``-32020``), or None.

    ``tool`` is the server's definition of the tool a ``tools/call`` names,
    when known: its ``x-mcp-header`` annotations say which ``Mcp-Param-*``
    headers must be there (HTTP-35/36).
    """
    method = message.get("method")
    raw = message.get("params")
    params: dict[str, Any] = raw if type(raw) is dict else {}
    meta = params.get("_meta")
    try:
        version = _one(headers, "MCP-Protocol-Version")
        body_version = meta.get(_PROTOCOL_VERSION) if type(meta) is dict else None
        _equal("MCP-Protocol-Version", version, body_version)
        _equal("Mcp-Method", _one(headers, "Mcp-Method"), method)
        info = METHODS.get(method) if type(method) is str else None
        if info is not None and info.name_field is not None:
            _mirrored(headers, "Mcp-Name", params.get(info.name_field), True)
        if method != "tools/call" or tool is None:
            return None
        try:
            specs = header_params(tool.input_schema)
        except InvalidToolHeaders:
            return None  # the server's own definition is invalid: clients drop the tool
        arguments = params.get("arguments")
        for spec in specs:
            _mirrored(headers, spec.header, value_at(arguments, spec.path), False)
    except _Problem as e:
        return str(e)
    return None
