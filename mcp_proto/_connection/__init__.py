"""The connection layer: the sans-I/O MCP connection, server and client roles.

Owns: the event vocabulary (``_events``), newline framing (``_framing``), the
connection base class that turns bytes into events and events into bytes
(``_base``), the request lifecycle both roles share, as a table with its tracker
(``_requests``) and its named guards (``_guards``), the
server role and its send rules (``_server``, ``_server_rules``), the client
role (``_client``, which never imports the server role), capability checks
(``_capabilities``) and the extension registry (``_extensions``).

May import: the kernel (``mcp_proto._model``, ``mcp_proto._util``), ``mcp_proto.metakeys``,
``mcp_proto.types``, ``mcp_proto._errors`` and the codec layer
(``mcp_proto._codec``).  Knows nothing of HTTP, sockets or time.
"""

from ._base import Statistics, StreamConnection
from ._capabilities import (
    has_capability,
    input_capabilities,
    missing_capabilities,
    missing_required_client_capability,
    require_client_capabilities,
    undeclared_input_requests,
)
from ._client import DEFAULT_CLIENT_INFO, ClientConnection
from ._era import MODERN_ERRORS, EraCache, EraOutcome, EraProbe, Incompatible, Legacy, Modern
from ._events import (
    NEED_DATA,
    PAUSED,
    AnsweredRequest,
    Cancelled,
    ClientEvent,
    ConnectionClosed,
    ErrorResponse,
    Event,
    InputRequired,
    InvalidMessage,
    InvalidResponse,
    Notification,
    Request,
    Result,
    ServerEvent,
    ServerRequest,
    SubscriptionAcknowledged,
    SubscriptionEnded,
    VersionNotSupported,
)
from ._extensions import Extension
from ._framing import DEFAULT_MAX_MESSAGE_SIZE
from ._guards import GUARDS, RECEIVED, GuardConfig, narrowed
from ._legacy import is_modern
from ._legacy_listen import LegacyListen
from ._requests import (
    DEFAULT_REFUSAL,
    DROP,
    LOG_LEVELS,
    TERMINAL,
    TRANSITIONS,
    InFlight,
    Move,
    Refusal,
    RequestRecord,
    RequestTracker,
    State,
    Tombstones,
    Transition,
)
from ._server import DEFAULT_SERVER_INFO, LEGACY_VERSIONS, ServerConnection

__all__ = [
    "DEFAULT_REFUSAL",
    "DROP",
    "GUARDS",
    "TERMINAL",
    "TRANSITIONS",
    "GuardConfig",
    "Move",
    "RECEIVED",
    "Refusal",
    "RequestRecord",
    "RequestTracker",
    "State",
    "Tombstones",
    "Transition",
    "Cancelled",
    "ClientConnection",
    "ConnectionClosed",
    "DEFAULT_CLIENT_INFO",
    "DEFAULT_MAX_MESSAGE_SIZE",
    "DEFAULT_SERVER_INFO",
    "LEGACY_VERSIONS",
    "is_modern",
    "MODERN_ERRORS",
    "EraCache",
    "LegacyListen",
    "EraOutcome",
    "EraProbe",
    "Incompatible",
    "Legacy",
    "Modern",
    "ErrorResponse",
    "ClientEvent",
    "Event",
    "ServerEvent",
    "Extension",
    "InFlight",
    "InputRequired",
    "InvalidMessage",
    "AnsweredRequest",
    "InvalidResponse",
    "LOG_LEVELS",
    "NEED_DATA",
    "Notification",
    "PAUSED",
    "Request",
    "Result",
    "ServerConnection",
    "ServerRequest",
    "Statistics",
    "StreamConnection",
    "SubscriptionAcknowledged",
    "SubscriptionEnded",
    "VersionNotSupported",
    "has_capability",
    "narrowed",
    "missing_capabilities",
    "missing_required_client_capability",
    "require_client_capabilities",
    "input_capabilities",
    "undeclared_input_requests",
]
