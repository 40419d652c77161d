"""The codec layer: model values to and from JSON-RPC messages.

Owns: the compiled structure/unstructure functions for the generated model
(``_compile``), the unions that need a look at the value (``_unions``), the
method registry (``_methods``: direction, kind, params and result types of each
method) and whole-message decode/encode (``_message``).

May import: ``mcp_proto._model``, ``mcp_proto.types``, ``mcp_proto._errors``.
Knows nothing of connections, transports or time.
"""
