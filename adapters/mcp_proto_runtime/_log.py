"""Where the runtime and the adapters report what they cannot answer on the wire.

One logger hierarchy under ``mcp_proto``, so an application configures it like
any other library's (``logging.getLogger("mcp_proto").setLevel(...)``):

* ``mcp_proto.server``: a handler that raised (ERROR, with its traceback; the client
  gets ``-32603`` or an ``isError`` result and no internals) or gave an invalid or
  no result (ERROR), or answered with an ``McpError`` of its own (DEBUG); a handler
  whose answer the core refused (sent instead as ``-32603``), input framing lost on
  stdio, a handler runner that failed, a subscriber ended for being slow;
* ``mcp_proto.client``: a tool the client left out of a listing because its
  ``x-mcp-header`` declarations are invalid.

Nothing is configured here: with no handler anywhere, Python's last-resort
handler still writes warnings and errors to standard error.
"""

from __future__ import annotations

import logging

__all__ = ["client_log", "server_log"]

server_log = logging.getLogger("mcp_proto.server")
client_log = logging.getLogger("mcp_proto.client")
