"""What a server answers for a request: from what its handler returned or raised, or
with no handler at all (``-32601``, ``server/discover``, a listen's acknowledgement).

Every adapter's server sends these; the connection encodes them.
"""

from __future__ import annotations

from typing import Any

import attrs

from mcp_proto import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    METHODS,
    DecodeError,
    ErrorResponse,
    McpError,
    Notification,
    ProtocolError,
    Request,
    Result,
    ServerConnection,
    input_capabilities,
    missing_required_client_capability,
    structure,
    undeclared_input_requests,
)
from mcp_proto import types as t

from ._log import server_log

__all__ = [
    "acknowledgement",
    "answer",
    "default_answer",
    "internal_error",
    "no_handler",
    "unknown_tool",
]


def answer(
    request: Request,
    value: Any = None,
    error: BaseException | None = None,
    *,
    cache_hints: tuple[int, str] = (0, "private"),
) -> Result | ErrorResponse:
    """The response for what a handler returned (``value``) or raised (``error``).

    * a result object, or a plain dict structured as the method's result class;
      a cacheable result without ``ttlMs``/``cacheScope`` gets ``cache_hints``
      (CACHE-01);
    * :class:`McpError` (a :class:`DecodeError` too) -> that error;
    * an ``input_required`` result asking for input the request's client capabilities
      do not declare -> ``-32021`` whose ``requiredCapabilities`` names what it needs
      (MRTR-10, META-10), rather than a refused send;
    * a :class:`ProtocolError` (an ``McpError`` too, but a broken rule, not an answer) or
      any other exception from ``tools/call`` -> a ``CallToolResult`` with
      ``isError: true`` naming it (a tool execution error, which the model can
      act on); from any other method -> ``-32603 Internal error``, with no
      detail (LOG-08: internals stay on the server).

    What is not an answer of the handler's choosing is logged on ``mcp_proto.server``
    at ERROR (an exception with its traceback, an invalid or missing result); an
    ``McpError`` it raised, at DEBUG.
    """
    id = request.id
    if error is not None:
        if isinstance(error, McpError) and not isinstance(error, ProtocolError):
            server_log.debug("handler for %s (id %r) answered %s", request.method, id, error)
            return ErrorResponse(id=id, error=error.error())
        server_log.error(
            "handler for %s (id %r) raised", request.method, id, exc_info=error
        )  # the traceback stays here: the client gets no internals (LOG-08)
        if request.method == "tools/call":
            text = f"{type(error).__name__}: {error}"
            result = t.CallToolResult(content=[t.TextContent(text=text)], is_error=True)
            return Result(id=id, result=result)
        return ErrorResponse(id=id, error=t.Error(code=INTERNAL_ERROR, message="Internal error"))
    info = METHODS.get(request.method)
    if isinstance(value, dict) and info is not None and info.result_type is not None:
        cls = info.result_type
        if value.get("resultType") == "input_required":
            cls = t.InputRequiredResult
        try:
            value = structure(value, cls)
        except DecodeError as e:
            message = f"the handler's result is invalid: {e}"
            server_log.error("handler for %s (id %r): %s", request.method, id, message)
            return ErrorResponse(id=id, error=t.Error(code=INTERNAL_ERROR, message=message))
    if isinstance(value, t.InputRequiredResult) and value.input_requests:
        meta = request.meta
        caps = meta.client_capabilities if meta is not None else None
        lacking = undeclared_input_requests(caps, value.input_requests)
        if lacking:  # MRTR-10: never ask for it; -32021 says what it needs (META-10)
            need = input_capabilities(value.input_requests, lacking)
            refusal = missing_required_client_capability(need)
            server_log.debug("handler for %s asked for %s: not declared", request.method, lacking)
            return ErrorResponse(id=id, error=refusal)
    if value is None:
        message = "Internal error: the handler returned no result"
        server_log.error("handler for %s (id %r) returned no result", request.method, id)
        return ErrorResponse(id=id, error=t.Error(code=INTERNAL_ERROR, message=message))
    if info is not None and info.cacheable and not isinstance(value, t.InputRequiredResult):
        ttl, scope = cache_hints
        if getattr(value, "ttl_ms", 0) is None or getattr(value, "cache_scope", "") is None:
            value = attrs.evolve(
                value,
                ttl_ms=value.ttl_ms if value.ttl_ms is not None else ttl,
                cache_scope=value.cache_scope if value.cache_scope is not None else scope,
            )
    return Result(id=id, result=value)


def no_handler(request: Request) -> ErrorResponse:
    """The answer to a request no handler takes (``-32601``, ERR-07)."""
    message = f"Method not found: {request.method}"
    return ErrorResponse(id=request.id, error=t.Error(code=METHOD_NOT_FOUND, message=message))


def unknown_tool(name: str) -> McpError:
    """The error for a ``tools/call`` naming no tool the server has (``-32602``, ERR-12)."""
    return McpError(INVALID_PARAMS, f"Unknown tool: {name}")


def acknowledgement(request: Request, capabilities: t.ServerCapabilities) -> Notification:
    """The acknowledgement of a listen: what it asked for that ``capabilities`` offer (SUB-06).

    List changes are honoured where the matching capability has ``listChanged``,
    resource updates where ``resources.subscribe`` is offered.
    """
    asked: t.SubscriptionFilter = request.params.notifications
    tools, prompts, resources = capabilities.tools, capabilities.prompts, capabilities.resources
    honoured = t.SubscriptionFilter(
        tools_list_changed=bool(asked.tools_list_changed and tools and tools.list_changed) or None,
        prompts_list_changed=bool(asked.prompts_list_changed and prompts and prompts.list_changed)
        or None,
        resources_list_changed=bool(
            asked.resources_list_changed and resources and resources.list_changed
        )
        or None,
        resource_subscriptions=list(asked.resource_subscriptions)
        if asked.resource_subscriptions and resources and resources.subscribe
        else None,
    )
    params = t.SubscriptionsAcknowledgedNotificationParams(notifications=honoured)
    return Notification(
        method="notifications/subscriptions/acknowledged", params=params, request_id=request.id
    )


def default_answer(
    conn: ServerConnection, request: Request
) -> Result | ErrorResponse | Notification:
    """What a request no handler takes gets, without running anything.

    ``server/discover`` is answered from ``conn``'s configuration (VER-04); a
    listen is acknowledged with what the capabilities offer and then stays
    open until the client cancels it or the stream ends (its result is sent
    only by a handler that ends it); anything else is ``-32601``.
    """
    if request.method == "server/discover":
        return Result(id=request.id, result=conn.discover_result())
    if request.method == "subscriptions/listen":
        return acknowledgement(request, conn.capabilities)
    return no_handler(request)


def internal_error(request: Request) -> ErrorResponse:
    """``-32603`` with no detail: what to send when a handler's answer broke a send rule."""
    return ErrorResponse(
        id=request.id, error=t.Error(code=INTERNAL_ERROR, message="Internal error")
    )
