"""The connection layer: the sans-I/O MCP connection, server and client roles.

Owns: the event vocabulary (``_events``), newline framing (``_framing``), the
connection base class that turns bytes into events and events into bytes
(``_base``), the server role and its send rules (``_server``,
``_server_rules``), the client role (``_client``), capability checks
(``_capabilities``) and the extension registry (``_extensions``).

May import: the kernel (``mcp_proto._model``), ``mcp_proto.metakeys``,
``mcp_proto.types``, ``mcp_proto._errors`` and the codec layer
(``mcp_proto._codec``).  Knows nothing of HTTP, sockets or time.
"""
