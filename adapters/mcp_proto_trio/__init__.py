"""The trio adapter for mcp_proto.

``Server`` runs ``async`` handlers, one task per request, over stdio or any
trio stream; ``Client`` calls a server it spawns (or any stream pair) with any
number of calls and listens in flight, its reader in a nursery the caller owns;
``async with Client.http(url)`` calls a Streamable HTTP endpoint the same way.
"""

from mcp_proto_runtime import Handlers, InputRequiredError, McpError, Subscription

from ._client import Client
from ._handlers import Context, Handler
from ._http_client import HTTPClientSession
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
