"""The method registry: every fact about each MCP 2026-07-28 method, in one table.

The codec, the connections and the HTTP binding read :data:`METHODS`; nothing
else hard-codes method facts.  There are 21 entries: 10 client requests, 8
notifications and the 3 input requests that travel inside an
``InputRequiredResult`` (MRTR) rather than as JSON-RPC requests.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from types import MappingProxyType

from attrs import frozen

from .. import types as t

__all__ = [
    "LATEST_PROTOCOL_VERSION",
    "METHODS",
    "REMOVED_METHODS",
    "Direction",
    "Kind",
    "MethodInfo",
    "method_info",
]

#: The protocol revision this registry describes, and the one a client asks for by default.
LATEST_PROTOCOL_VERSION = "2026-07-28"


class Kind(Enum):
    """How a method travels."""

    REQUEST = "request"  #: a JSON-RPC request, client to server
    NOTIFICATION = "notification"  #: a JSON-RPC notification
    INPUT_REQUEST = "input_request"  #: an entry of ``InputRequiredResult.inputRequests``


class Direction(Enum):
    """Who sends it."""

    CLIENT_TO_SERVER = "client->server"
    SERVER_TO_CLIENT = "server->client"
    #: ``notifications/cancelled``: clients cancel requests; servers end listen streams.
    BOTH = "both"


@frozen(kw_only=True)
class MethodInfo:
    """Facts about one method.

    ``message_type`` is the whole JSON-RPC message class (``CallToolRequest``),
    ``params_type`` its ``params`` class and ``result_type`` the class of a
    complete result (for input requests: of the client's input response).
    ``server_capability`` / ``client_capability`` name the capability that
    gates the method as a path into the capabilities object (``("resources",
    "subscribe")``).  ``name_field`` is the params field mirrored into the HTTP
    ``Mcp-Name`` header.  ``listen_filter`` is the ``SubscriptionFilter`` key
    that opts a listen stream into this notification.
    """

    method: str
    kind: Kind
    direction: Direction
    message_type: type
    params_type: type | None
    result_type: type | None = None
    server_capability: tuple[str, ...] | None = None
    client_capability: tuple[str, ...] | None = None
    input_required_allowed: bool = False
    cacheable: bool = False
    paginated: bool = False
    name_field: str | None = None
    listen_filter: str | None = None


_C2S, _S2C = Direction.CLIENT_TO_SERVER, Direction.SERVER_TO_CLIENT
_REQ, _NOTE, _INPUT = Kind.REQUEST, Kind.NOTIFICATION, Kind.INPUT_REQUEST


def _entries() -> list[MethodInfo]:
    return [
        # Client requests (RES, PROMPT, TOOL, COMP, DISC, SUB in the digests).
        MethodInfo(method="server/discover", kind=_REQ, direction=_C2S,
                   message_type=t.DiscoverRequest, params_type=t.RequestParams,
                   result_type=t.DiscoverResult, cacheable=True),
        MethodInfo(method="tools/list", kind=_REQ, direction=_C2S,
                   message_type=t.ListToolsRequest, params_type=t.PaginatedRequestParams,
                   result_type=t.ListToolsResult, server_capability=("tools",),
                   cacheable=True, paginated=True),
        MethodInfo(method="tools/call", kind=_REQ, direction=_C2S,
                   message_type=t.CallToolRequest, params_type=t.CallToolRequestParams,
                   result_type=t.CallToolResult, server_capability=("tools",),
                   input_required_allowed=True, name_field="name"),
        MethodInfo(method="prompts/list", kind=_REQ, direction=_C2S,
                   message_type=t.ListPromptsRequest, params_type=t.PaginatedRequestParams,
                   result_type=t.ListPromptsResult, server_capability=("prompts",),
                   cacheable=True, paginated=True),
        MethodInfo(method="prompts/get", kind=_REQ, direction=_C2S,
                   message_type=t.GetPromptRequest, params_type=t.GetPromptRequestParams,
                   result_type=t.GetPromptResult, server_capability=("prompts",),
                   input_required_allowed=True, name_field="name"),
        MethodInfo(method="resources/list", kind=_REQ, direction=_C2S,
                   message_type=t.ListResourcesRequest, params_type=t.PaginatedRequestParams,
                   result_type=t.ListResourcesResult, server_capability=("resources",),
                   cacheable=True, paginated=True),
        MethodInfo(method="resources/templates/list", kind=_REQ, direction=_C2S,
                   message_type=t.ListResourceTemplatesRequest,
                   params_type=t.PaginatedRequestParams,
                   result_type=t.ListResourceTemplatesResult, server_capability=("resources",),
                   cacheable=True, paginated=True),
        MethodInfo(method="resources/read", kind=_REQ, direction=_C2S,
                   message_type=t.ReadResourceRequest, params_type=t.ReadResourceRequestParams,
                   result_type=t.ReadResourceResult, server_capability=("resources",),
                   input_required_allowed=True, cacheable=True, name_field="uri"),
        MethodInfo(method="subscriptions/listen", kind=_REQ, direction=_C2S,
                   message_type=t.SubscriptionsListenRequest,
                   params_type=t.SubscriptionsListenRequestParams,
                   result_type=t.SubscriptionsListenResult),
        MethodInfo(method="completion/complete", kind=_REQ, direction=_C2S,
                   message_type=t.CompleteRequest, params_type=t.CompleteRequestParams,
                   result_type=t.CompleteResult, server_capability=("completions",)),
        # Notifications.
        MethodInfo(method="notifications/cancelled", kind=_NOTE, direction=Direction.BOTH,
                   message_type=t.CancelledNotification,
                   params_type=t.CancelledNotificationParams),
        MethodInfo(method="notifications/progress", kind=_NOTE, direction=_S2C,
                   message_type=t.ProgressNotification,
                   params_type=t.ProgressNotificationParams),
        MethodInfo(method="notifications/message", kind=_NOTE, direction=_S2C,
                   message_type=t.LoggingMessageNotification,
                   params_type=t.LoggingMessageNotificationParams,
                   server_capability=("logging",)),
        MethodInfo(method="notifications/tools/list_changed", kind=_NOTE, direction=_S2C,
                   message_type=t.ToolListChangedNotification, params_type=t.NotificationParams,
                   server_capability=("tools", "listChanged"), listen_filter="toolsListChanged"),
        MethodInfo(method="notifications/prompts/list_changed", kind=_NOTE, direction=_S2C,
                   message_type=t.PromptListChangedNotification,
                   params_type=t.NotificationParams,
                   server_capability=("prompts", "listChanged"),
                   listen_filter="promptsListChanged"),
        MethodInfo(method="notifications/resources/list_changed", kind=_NOTE, direction=_S2C,
                   message_type=t.ResourceListChangedNotification,
                   params_type=t.NotificationParams,
                   server_capability=("resources", "listChanged"),
                   listen_filter="resourcesListChanged"),
        MethodInfo(method="notifications/resources/updated", kind=_NOTE, direction=_S2C,
                   message_type=t.ResourceUpdatedNotification,
                   params_type=t.ResourceUpdatedNotificationParams,
                   server_capability=("resources", "subscribe"),
                   listen_filter="resourceSubscriptions"),
        MethodInfo(method="notifications/subscriptions/acknowledged", kind=_NOTE,
                   direction=_S2C, message_type=t.SubscriptionsAcknowledgedNotification,
                   params_type=t.SubscriptionsAcknowledgedNotificationParams),
        # Input requests (MRTR-05, MRTR-10): carried in InputRequiredResult.inputRequests.
        MethodInfo(method="sampling/createMessage", kind=_INPUT, direction=_S2C,
                   message_type=t.CreateMessageRequest,
                   params_type=t.CreateMessageRequestParams,
                   result_type=t.CreateMessageResult, client_capability=("sampling",)),
        MethodInfo(method="elicitation/create", kind=_INPUT, direction=_S2C,
                   message_type=t.ElicitRequest, params_type=None,
                   result_type=t.ElicitResult, client_capability=("elicitation",)),
        MethodInfo(method="roots/list", kind=_INPUT, direction=_S2C,
                   message_type=t.ListRootsRequest, params_type=None,
                   result_type=t.ListRootsResult, client_capability=("roots",)),
    ]  # fmt: skip


#: method name -> facts, for every method of the 2026-07-28 revision.
METHODS: Mapping[str, MethodInfo] = MappingProxyType({m.method: m for m in _entries()})

#: Methods of 2025-11-25 that 2026-07-28 removed; a modern server answers -32601.
REMOVED_METHODS: frozenset[str] = frozenset({
    "initialize",
    "notifications/initialized",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
    "notifications/roots/list_changed",
    "notifications/elicitation/complete",
    "tasks/get",
    "tasks/result",
    "tasks/list",
    "tasks/cancel",
    "notifications/tasks/status",
})  # fmt: skip


def method_info(method: str) -> MethodInfo | None:
    """The registry entry of ``method``, or None for an unknown or removed method."""
    return METHODS.get(method)
