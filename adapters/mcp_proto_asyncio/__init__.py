"""The asyncio adapter for mcp_proto: stdlib only.

``Server`` runs ``async`` handlers, one task per request, over stdio or any
stream pair; ``Client`` calls a server it spawns (or any stream pair), and
``Client.http(url)`` a Streamable HTTP endpoint, with any number of calls and
listens in flight.
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
