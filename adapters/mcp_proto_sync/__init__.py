"""The blocking adapter for mcp_proto: stdlib only, no event loop.

``Server`` runs handlers (``fn(ctx, params) -> result``) on a bounded thread
pool over stdio, any pipe pair or Streamable HTTP; ``Client`` calls a server it
spawns (or any pipe pair), and ``Client.http(url)`` an HTTP endpoint, one call at
a time; ``client.listen(...)`` opens a subscription read on demand.
"""

from mcp_proto_runtime import Handlers, InputRequiredError, McpError

from ._client import Client
from ._handlers import Context, Handler
from ._http_client import HTTPClientSession
from ._listen import Subscription
from ._server import Server

__all__ = [
    "Client",
    "Context",
    "HTTPClientSession",
    "Handler",
    "Handlers",
    "InputRequiredError",
    "McpError",
    "Server",
    "Subscription",
]
