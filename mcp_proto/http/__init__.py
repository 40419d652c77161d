"""The Streamable HTTP binding of MCP 2026-07-28 (see ``docs/http.md``).

Two layers:

* the h11-free binding -- :class:`HTTPServer` / :class:`ServerExchange` turn an
  already-parsed request into response parts, :class:`HTTPClient` /
  :class:`ClientExchange` build POSTs and read responses -- for ASGI, WSGI and
  serverless hosts;
* :class:`HTTPServerConnection` / :class:`HTTPClientConnection`: the same over
  the bytes of one TCP connection; the server side with its own strict
  HTTP/1.1 reader and writer (:mod:`mcp_proto.http.wire`), the client side with h11.

Also here: the header value encoding, ``x-mcp-header`` checks, the SSE writer
and parser, the authorization hooks, and the transport's error-code-to-status rule
(:func:`transport_status` for an error response, :func:`refusal_status` for a
refusal), and :class:`ProxyTunnel`, the ``CONNECT`` handshake through an HTTP proxy.
``h11`` is imported only when :class:`HTTPClientConnection` or :class:`ProxyTunnel` is
first used.

Three lower-level submodules are public for hosts, tests and differential
fuzzing: :mod:`mcp_proto.http.wire` (the server's HTTP/1.1 reader and writer),
:mod:`mcp_proto.http.host` (the ``Host``/``Origin``/request-target grammar and
allow-lists) and :mod:`mcp_proto.http.limits` (the listen and body budgets a
server's connections share).

May import: the kernel, ``mcp_proto.types``, ``mcp_proto._errors``, and the
codec and connection layers; never an event loop.
"""

from typing import TYPE_CHECKING, Any

from .._errors import refusal_status, transport_status
from ._auth import (
    WELL_KNOWN_PRM,
    AuthChallenge,
    Challenge,
    ProtectedResource,
    bearer_token,
    parse_www_authenticate,
)
from ._client import (
    ACCEPT,
    AuthenticationRequired,
    ClientExchange,
    Era,
    HTTPClient,
    HTTPPost,
    RequestLost,
    ResponseEvent,
    ToolRejected,
    UnexpectedResponse,
    detect_era,
)
from ._client_legacy import SessionExpired, StreamInterrupted
from ._headers import (
    MAX_SAFE_INTEGER,
    HeaderParam,
    Headers,
    HeaderValueError,
    InvalidToolHeaders,
    decode_header_value,
    encode_header_value,
    header_params,
    header_value_matches,
    param_header_text,
    tool_header_problem,
)
from ._replay import DEFAULT_REPLAY_LIMIT
from ._server import (
    DEFAULT_ALLOWED_HOSTS,
    DEFAULT_MAX_BODY_SIZE,
    HTTPServer,
    Reply,
    ResponseData,
    ResponseEnd,
    ResponsePart,
    ResponseStart,
    ServerExchange,
)
from ._server_connection import HTTPServerConnection
from ._sessions import DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_SESSIONS, HTTPSession, SessionTable
from ._sse import KEEPALIVE, SSEEvent, SSEParser, sse_event, sse_message

if TYPE_CHECKING:
    from ._client_connection import HTTPClientConnection
    from ._tunnel import ProxyTunnel, TunnelOpen, TunnelRefused

_LAZY = {  # what needs h11, imported on first use: the rest needs no h11
    "HTTPClientConnection": "_client_connection",
    "ProxyTunnel": "_tunnel",
    "TunnelOpen": "_tunnel",
    "TunnelRefused": "_tunnel",
}


def __getattr__(name: str) -> Any:
    """The h11 client connection and proxy tunnel, imported on first use."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ACCEPT",
    "AuthChallenge",
    "AuthenticationRequired",
    "Challenge",
    "ClientExchange",
    "DEFAULT_ALLOWED_HOSTS",
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_BODY_SIZE",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_REPLAY_LIMIT",
    "Era",
    "HTTPClient",
    "HTTPClientConnection",
    "ProxyTunnel",
    "TunnelOpen",
    "TunnelRefused",
    "HTTPPost",
    "HTTPServer",
    "HTTPServerConnection",
    "HTTPSession",
    "HeaderParam",
    "HeaderValueError",
    "Headers",
    "InvalidToolHeaders",
    "KEEPALIVE",
    "MAX_SAFE_INTEGER",
    "ProtectedResource",
    "Reply",
    "RequestLost",
    "ResponseData",
    "ResponseEnd",
    "ResponseEvent",
    "ResponsePart",
    "ResponseStart",
    "SSEEvent",
    "SSEParser",
    "ServerExchange",
    "SessionExpired",
    "SessionTable",
    "StreamInterrupted",
    "ToolRejected",
    "UnexpectedResponse",
    "WELL_KNOWN_PRM",
    "bearer_token",
    "decode_header_value",
    "detect_era",
    "encode_header_value",
    "header_params",
    "header_value_matches",
    "param_header_text",
    "parse_www_authenticate",
    "refusal_status",
    "sse_event",
    "sse_message",
    "tool_header_problem",
    "transport_status",
]
