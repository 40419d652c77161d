"""JSON-RPC and MCP error codes, the one error model, and spec-shaped error builders.

Every error the library raises about the protocol is an :class:`McpError`: it
carries the JSON-RPC error to send (``code``, ``message``, ``data``), the
request ``id`` when known, an HTTP status hint and the ``rule`` broken::

    McpError                  raised by handlers; clients raise it for error responses
    +-- DecodeError           the peer sent something invalid (the codec's one exception)
    |   +-- RequestStateError a requestState that failed verification
    +-- ProtocolError         a side broke a rule of the protocol; never raised itself
        +-- LocalProtocolError   our side (``send``): -32603, 500
        +-- RemoteProtocolError  the peer lost the framing (``next_event``): -32700, 400

:class:`EncodeError` is apart: a local value that cannot be written is a bug,
a ``ValueError``, with nothing to send.  :func:`transport_status` is the one
code-to-status rule of Streamable HTTP.  Errors are values: read-only, equal
by value, picklable; events carry the :class:`~mcp_proto.types.Error` value,
never an exception object.

Only the codes the 2026-07-28 revision defines are here (ERR-01..ERR-04, see
``docs/requirements.md``): the library never emits ``-32002`` or ``-32042`` and
allocates nothing in the legacy ``-32000..-32019`` range or the MCP-reserved
``-32020..-32099`` range beyond the three the spec defines.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar, Final, Self

from .types import Error, JSONRPCErrorResponse, RequestId

__all__ = [
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "LEGACY_RESOURCE_NOT_FOUND",
    "LocalProtocolError",
    "McpError",
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
    "refusal_status",
    "transport_status",
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


def transport_status(code: int) -> int:
    """The HTTP status of a JSON-RPC error with ``code`` on Streamable HTTP.

    The one rule of the transport, and the only place the library maps codes
    to statuses: ``404`` for ``-32601`` (HTTP-18); ``400`` for ``-32020``
    (ERR-11), ``-32021`` (ERR-09) and ``-32022`` (ERR-10); ``200`` for any
    other code, a JSON-RPC error in a successful HTTP exchange (the spec leaves
    their statuses open).  A refusal made before any application ran is never
    ``200``: see :func:`refusal_status`.
    """
    return _TRANSPORT_STATUS.get(code, 200)


def refusal_status(code: int) -> int:
    """The status of a message refused before any application saw it.

    :func:`transport_status` when that is an error status, else ``400``: the
    peer sent something the protocol does not accept (``-32700``, ``-32600``,
    ``-32602`` for a missing ``_meta`` field, META-08).
    """
    return max(400, transport_status(code))


_TRANSPORT_STATUS: Final = {
    METHOD_NOT_FOUND: 404,
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
}


def _rebuild(cls: type[McpError], args: tuple[Any, ...], state: dict[str, Any]) -> McpError:
    """Unpickle an error without calling its constructor (whose signature varies)."""
    error = cls.__new__(cls, *args)
    error.args = args
    error.__dict__.update(state)
    return error


class McpError(Exception):
    """An error that carries a JSON-RPC error to send: the root of the library's errors.

    Raise it from a handler to answer the request with :meth:`error`; the
    adapters' clients raise it for an error response.  ``code``, ``message``
    and ``data`` are the JSON-RPC error; ``id`` is the request it answers when
    known (``None``: answer without an id, as :meth:`error_response` does);
    ``http_status`` is the status an HTTP binding gives it when this error is
    the whole answer (default: :func:`transport_status` of ``code``); ``rule``
    names the requirement broken, when there is one (``str()`` then ends with
    it).  All are read-only: an error is never changed once made, so build
    another (``from_error(e.error(), id=...)``).  Errors compare by value and
    pickle.

    >>> McpError(-32602, "Unknown tool: nope").error()
    Error(code=-32602, message='Unknown tool: nope', data=None, extra=mappingproxy({}))
    """

    def __init__(
        self,
        code: int,
        message: str,
        data: Any = None,
        *,
        id: RequestId | None = None,
        http_status: int | None = None,
        rule: str | None = None,
    ) -> None:
        super().__init__(f"{message} ({rule})" if rule else message)
        self._set(code, message, data, id=id, http_status=http_status, rule=rule)

    def _set(
        self,
        code: int,
        message: str,
        data: Any,
        *,
        id: RequestId | None,
        http_status: int | None,
        rule: str | None,
    ) -> None:
        self._code = code
        self._message = message
        self._data = data
        self._id = id
        self._http_status = self._default_status(code) if http_status is None else http_status
        self._rule = rule

    @staticmethod
    def _default_status(code: int) -> int:
        return transport_status(code)

    @property
    def code(self) -> int:
        """The JSON-RPC error code."""
        return self._code

    @property
    def message(self) -> str:
        """The JSON-RPC error message (what the peer reads)."""
        return self._message

    @property
    def data(self) -> Any:
        """The JSON-RPC error data, or ``None``."""
        return self._data

    @property
    def id(self) -> RequestId | None:
        """The id of the request this error answers, when it is known."""
        return self._id

    @property
    def http_status(self) -> int:
        """The HTTP status a binding answers with when this error is the whole answer."""
        return self._http_status

    @property
    def rule(self) -> str | None:
        """The requirement broken (``"PROG-05"``, ``"SUB-04"``...), when there is one."""
        return self._rule

    @classmethod
    def from_error(
        cls, error: Error, *, id: RequestId | None = None, http_status: int | None = None
    ) -> Self:
        """The exception for a JSON-RPC error the core built (``require_client_capabilities``...).

        For the classes whose constructor takes the code and message first
        (:class:`McpError`, :class:`DecodeError`).
        """
        return cls(error.code, error.message, data=error.data, id=id, http_status=http_status)

    def error(self) -> Error:
        """The JSON-RPC ``error`` member to send back."""
        return Error(code=self._code, message=self._message, data=self._data)

    def error_response(self) -> JSONRPCErrorResponse:
        """The whole error response to send back (``id`` omitted when unknown)."""
        return JSONRPCErrorResponse(id=self._id, error=self.error())

    def _key(self) -> tuple[Any, ...]:
        return (
            type(self),
            str(self),
            self._code,
            self._message,
            repr(self._data),
            self._id,
            self._http_status,
            self._rule,
        )

    def __eq__(self, other: object) -> bool:
        """Errors of the same class whose every field is equal are equal."""
        if not isinstance(other, McpError):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        extra = "" if self._data is None else f", data={self._data!r}"
        if self._http_status != self._default_status(self._code):
            extra += f", http_status={self._http_status}"
        if self._rule is not None:
            extra += f", rule={self._rule!r}"
        return (
            f"{type(self).__name__}(code={self._code}, message={self._message!r}, "
            f"id={self._id!r}{extra})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.args, dict(self.__dict__)))


class DecodeError(McpError):
    """Bytes or values from a peer that are not a valid MCP message.

    The one exception the codec raises on bad input.  It carries the JSON-RPC
    error to answer with: ``code``, ``message`` and ``data``, plus ``id`` when
    the request id could be read (``None`` otherwise: answer without an id).
    ``path`` is a JSON pointer to the offending value (``""`` for the whole
    message).  :meth:`error_response` builds the reply.  For a message that
    needs no reply (a notification or a response), the error is informational.
    ``http_status`` defaults to :func:`refusal_status` of ``code`` (``400`` for
    every code the codec uses).
    """

    def __init__(
        self,
        code: int,
        message: str,
        *,
        data: Any = None,
        id: RequestId | None = None,
        path: str = "",
        http_status: int | None = None,
    ) -> None:
        super().__init__(code, message, data, id=id, http_status=http_status)
        self._path = path

    @staticmethod
    def _default_status(code: int) -> int:
        return refusal_status(code)

    @property
    def path(self) -> str:
        """A JSON pointer to the offending value (``""``: the whole message)."""
        return self._path

    def _key(self) -> tuple[Any, ...]:
        return (*super()._key(), self._path)


class EncodeError(ValueError):
    """A local value that cannot be encoded as a valid message (a bug on our side).

    Raised by :func:`mcp_proto.unstructure` and :func:`mcp_proto.encode_message`,
    for instance for a request without ``_meta`` or a string with a lone surrogate.
    """


class ProtocolError(McpError):
    """Base of the connections' errors; never raised itself.

    ``str()`` is the description, followed by ``rule`` -- the requirement
    broken (``"PROG-05"``, ``"SUB-04"``...) -- when there is one, so a log line
    says which part of the spec was violated.  As an :class:`McpError` it also
    carries what a peer would be told, fixed by the class: ``code``,
    ``message`` and ``http_status``.
    """

    #: the JSON-RPC code, the message sent (``None``: the description) and the HTTP status
    _hint: ClassVar[tuple[int, str | None, int]] = (INTERNAL_ERROR, "Internal error", 500)

    def __init__(self, message: str, *, rule: str | None = None) -> None:
        code, sent, status = self._hint
        Exception.__init__(self, f"{message} ({rule})" if rule else message)
        self._set(
            code, message if sent is None else sent, None, id=None, http_status=status, rule=rule
        )

    def __repr__(self) -> str:
        text = str(self)
        if self._rule is not None:
            text = text.removesuffix(f" ({self._rule})")
        rule = "" if self._rule is None else f", rule={self._rule!r}"
        return f"{type(self).__name__}({text!r}{rule})"


class LocalProtocolError(ProtocolError):
    """Our own side tried to do something the protocol forbids.

    Raised by ``send``; the connection's state is left exactly as it was
    before the call, so the caller may fix the event and try again.  Its hint
    is ``-32603 Internal error`` and ``500``: the description stays on this
    side (LOG-08).
    """


class RemoteProtocolError(ProtocolError):
    """The peer broke the framing (an over-long line, end of input mid-line).

    Raised by ``next_event``; the connection cannot be resynchronised and every
    later ``next_event`` raises it again.  Messages that are merely invalid but
    keep the framing intact are events (``InvalidMessage``), not this.  Its
    hint is ``-32700`` with the description, and ``400``.
    """

    _hint = (PARSE_ERROR, None, 400)


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
