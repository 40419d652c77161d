"""mcp_proto: a sans-I/O protocol core for the Model Context Protocol, revision 2026-07-28.

The public API is re-exported here; the ``_``-prefixed modules are private.
The message model lives in :mod:`mcp_proto.types`.
"""

from . import types
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
    header_mismatch,
    invalid_params,
    method_not_found,
    missing_required_client_capability,
    unsupported_protocol_version,
)
from ._message import (
    DEFAULT_MAX_DEPTH,
    Message,
    decode_message,
    encode_message,
    structure_result,
)
from ._methods import METHODS, REMOVED_METHODS, Direction, Kind, MethodInfo, method_info

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "LEGACY_RESOURCE_NOT_FOUND",
    "METHODS",
    "METHOD_NOT_FOUND",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "PARSE_ERROR",
    "REMOVED_METHODS",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "DecodeError",
    "Direction",
    "EncodeError",
    "Kind",
    "Message",
    "MethodInfo",
    "decode_message",
    "encode_message",
    "header_mismatch",
    "invalid_params",
    "method_info",
    "method_not_found",
    "missing_required_client_capability",
    "source_of",
    "structure",
    "structure_result",
    "types",
    "unstructure",
    "unsupported_protocol_version",
]
