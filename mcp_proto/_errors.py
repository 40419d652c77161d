"""JSON-RPC and MCP error codes, the codec's exceptions, and spec-shaped error builders.

Only the codes the 2026-07-28 revision defines are here (ERR-01..ERR-04, see
``docs/requirements.md``): the library never emits ``-32002`` or ``-32042`` and
allocates nothing in the legacy ``-32000..-32019`` range or the MCP-reserved
``-32020..-32099`` range beyond the three the spec defines.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from .types import Error, JSONRPCErrorResponse, RequestId

__all__ = [
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "LEGACY_RESOURCE_NOT_FOUND",
    "LocalProtocolError",
    "METHOD_NOT_FOUND",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "PARSE_ERROR",
    "ProtocolError",
    "RemoteProtocolError",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "DecodeError",
    "EncodeError",
    "header_mismatch",
    "invalid_params",
    "method_not_found",
    "unsupported_protocol_version",
]

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
HEADER_MISMATCH: Final = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY: Final = -32021
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
#: Sent by servers of 2025-11-25 and earlier; received as "resource not found", never sent.
LEGACY_RESOURCE_NOT_FOUND: Final = -32002


class DecodeError(Exception):
    """Bytes or values from a peer that are not a valid MCP message.

    The one exception the codec raises on bad input.  It carries the JSON-RPC
    error to answer with: ``code``, ``message`` and ``data``, plus ``id`` when
    the request id could be read (``None`` otherwise: answer without an id).
    ``path`` is a JSON pointer to the offending value (``""`` for the whole
    message).  :meth:`error_response` builds the reply.  For a message that
    needs no reply (a notification or a response), the error is informational.
    """

    def __init__(
        self,
        code: int,
        message: str,
        *,
        data: Any = None,
        id: RequestId | None = None,
        path: str = "",
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.id = id
        self.path = path

    def error(self) -> Error:
        """The JSON-RPC ``error`` member to send back."""
        return Error(code=self.code, message=self.message, data=self.data)

    def error_response(self) -> JSONRPCErrorResponse:
        """The whole error response to send back (``id`` omitted when unknown)."""
        return JSONRPCErrorResponse(id=self.id, error=self.error())

    def _key(self) -> tuple[Any, ...]:
        return (self.code, self.message, repr(self.data), self.id, self.path)

    def __eq__(self, other: object) -> bool:
        """Errors with the same code, message, data, id and path are equal."""
        if not isinstance(other, DecodeError):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"DecodeError(code={self.code}, message={self.message!r}, id={self.id!r})"


class EncodeError(ValueError):
    """A local value that cannot be encoded as a valid message (a bug on our side).

    Raised by :func:`mcp_proto.unstructure` and :func:`mcp_proto.encode_message`,
    for instance for a request without ``_meta`` or a string with a lone surrogate.
    """


class ProtocolError(Exception):
    """Base of the connections' errors; never raised itself.

    ``rule`` names the requirement broken (``"PROG-05"``, ``"SUB-04"``...) when
    there is one, so a log line says which part of the spec was violated.
    """

    def __init__(self, message: str, *, rule: str | None = None) -> None:
        super().__init__(f"{message} ({rule})" if rule else message)
        self.rule = rule


class LocalProtocolError(ProtocolError):
    """Our own side tried to do something the protocol forbids.

    Raised by ``send``; the connection's state is left exactly as it was
    before the call, so the caller may fix the event and try again.
    """


class RemoteProtocolError(ProtocolError):
    """The peer broke the framing (an over-long line, end of input mid-line).

    Raised by ``next_event``; the connection cannot be resynchronised and every
    later ``next_event`` raises it again.  Messages that are merely invalid but
    keep the framing intact are events (``InvalidMessage``), not this.
    """


def invalid_params(message: str, *, data: Any = None) -> Error:
    """``-32602``: invalid params, a missing required ``_meta`` field, an unknown tool..."""
    return Error(code=INVALID_PARAMS, message=message, data=data)


def method_not_found(method: str) -> Error:
    """``-32601`` for an unknown method, or one gated behind a capability not offered."""
    return Error(code=METHOD_NOT_FOUND, message=f"Method not found: {method}")


def header_mismatch(message: str) -> Error:
    """``-32020``: HTTP headers missing, malformed or not equal to the body (HTTP 400)."""
    return Error(code=HEADER_MISMATCH, message=message)


def unsupported_protocol_version(requested: str, supported: Iterable[str]) -> Error:
    """``-32022`` with ``data.supported`` and ``data.requested`` (VER-02, ERR-10)."""
    versions = list(supported)
    return Error(
        code=UNSUPPORTED_PROTOCOL_VERSION,
        message=f"Unsupported protocol version {requested!r}; supported: {', '.join(versions)}",
        data={"supported": versions, "requested": requested},
    )
