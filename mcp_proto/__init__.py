"""mcp_proto: a sans-I/O protocol core for the Model Context Protocol, revision 2026-07-28.

The public API is re-exported here; the ``_``-prefixed modules are private.
The message model lives in :mod:`mcp_proto.types`.
"""

from . import types
from ._capabilities import (
    has_capability,
    missing_capabilities,
    require_client_capabilities,
    undeclared_input_requests,
)
from ._client import DEFAULT_CLIENT_INFO, ClientConnection
from ._codec import source_of, structure, unstructure
from ._errors import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LEGACY_RESOURCE_NOT_FOUND,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    DecodeError,
    EncodeError,
    LocalProtocolError,
    ProtocolError,
    RemoteProtocolError,
    header_mismatch,
    invalid_params,
    method_not_found,
    missing_required_client_capability,
    unsupported_protocol_version,
)
from ._events import (
    NEED_DATA,
    Cancelled,
    ConnectionClosed,
    ErrorResponse,
    Event,
    InputRequired,
    InvalidMessage,
    InvalidResponse,
    Notification,
    Request,
    Result,
    SubscriptionAcknowledged,
    SubscriptionEnded,
    VersionNotSupported,
)
from ._extensions import Extension
from ._framing import DEFAULT_MAX_MESSAGE_SIZE
from ._message import (
    DEFAULT_MAX_DEPTH,
    Message,
    decode_message,
    encode_message,
    structure_result,
)
from ._metakeys import (
    MetaKeyError,
    check_baggage,
    check_extension_id,
    check_meta,
    check_meta_key,
    check_traceparent,
    check_tracestate,
    is_reserved_meta_key,
    is_valid_meta_key,
    split_meta_key,
)
from ._methods import METHODS, REMOVED_METHODS, Direction, Kind, MethodInfo, method_info
from ._server import DEFAULT_SERVER_INFO, LATEST_PROTOCOL_VERSION, ServerConnection
from ._server_rules import LOG_LEVELS, InFlight
from ._stream import Statistics

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_CLIENT_INFO",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_MESSAGE_SIZE",
    "DEFAULT_SERVER_INFO",
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "LATEST_PROTOCOL_VERSION",
    "LEGACY_RESOURCE_NOT_FOUND",
    "LOG_LEVELS",
    "METHODS",
    "METHOD_NOT_FOUND",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "NEED_DATA",
    "PARSE_ERROR",
    "REMOVED_METHODS",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "Cancelled",
    "check_baggage",
    "check_extension_id",
    "check_meta",
    "check_meta_key",
    "check_traceparent",
    "check_tracestate",
    "ClientConnection",
    "ConnectionClosed",
    "decode_message",
    "DecodeError",
    "Direction",
    "encode_message",
    "EncodeError",
    "ErrorResponse",
    "Event",
    "Extension",
    "has_capability",
    "header_mismatch",
    "InFlight",
    "InputRequired",
    "invalid_params",
    "InvalidMessage",
    "InvalidResponse",
    "is_reserved_meta_key",
    "is_valid_meta_key",
    "Kind",
    "LocalProtocolError",
    "Message",
    "MetaKeyError",
    "method_info",
    "method_not_found",
    "MethodInfo",
    "missing_capabilities",
    "missing_required_client_capability",
    "Notification",
    "ProtocolError",
    "RemoteProtocolError",
    "Request",
    "require_client_capabilities",
    "Result",
    "ServerConnection",
    "source_of",
    "split_meta_key",
    "Statistics",
    "structure",
    "structure_result",
    "SubscriptionAcknowledged",
    "SubscriptionEnded",
    "types",
    "undeclared_input_requests",
    "unstructure",
    "unsupported_protocol_version",
    "VersionNotSupported",
]
