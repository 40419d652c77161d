"""The codec layer: model values to and from JSON-RPC messages.

Owns: the internal decode failure and the type helpers that ``_compile`` and
``_unions`` share (``_base``), the compiled structure/unstructure functions for
the generated model (``_compile``), the unions that need a look at the value
(``_unions``: it imports only ``_base`` and the model, and ``_compile`` passes
it the structurer, so neither imports the other), the
method registry (``_methods``: direction, kind, params and result types of each
method) and whole-message decode/encode (``_message``).

May import: ``mcp_proto._model``, ``mcp_proto.types``, ``mcp_proto._errors``.
Knows nothing of connections, transports or time.
"""

from ._compile import source_of, structure, unstructure
from ._message import (
    DEFAULT_MAX_DEPTH,
    Message,
    decode_message,
    encode_message,
    loads,
    message_from_json,
    structure_result,
)
from ._methods import (
    LATEST_PROTOCOL_VERSION,
    METHODS,
    REMOVED_METHODS,
    Direction,
    Kind,
    MethodInfo,
    method_info,
)

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "Direction",
    "Kind",
    "LATEST_PROTOCOL_VERSION",
    "METHODS",
    "Message",
    "MethodInfo",
    "REMOVED_METHODS",
    "decode_message",
    "encode_message",
    "loads",
    "message_from_json",
    "method_info",
    "source_of",
    "structure",
    "structure_result",
    "unstructure",
]
