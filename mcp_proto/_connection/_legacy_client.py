"""The client side of one ``initialize``-era session (issue 16; LEG-01..09).

Once a :class:`~mcp_proto.ClientConnection` has sent ``initialize`` and read its
``InitializeResult`` (the :class:`~mcp_proto.EraProbe` says when), the connection speaks
to a legacy server through this translator, so the application keeps the modern API:

* requests are built by the modern rules, then lose the modern per-request ``_meta``
  keys (``io.modelcontextprotocol/...``) a legacy server does not know; a
  ``progressToken`` stays.  ``server/discover`` and ``subscriptions/listen`` have no
  legacy form and are refused (:class:`~mcp_proto.LocalProtocolError`); ``ping``,
  ``logging/setLevel`` and ``resources/subscribe``/``unsubscribe`` are sent as the
  legacy requests they are (params from ``mcp_proto.types.legacy``, or a dict), and
  their ``{}`` answer is a :class:`~mcp_proto.Result` with ``None``;
* results need no ``resultType`` (a legacy result is complete);
* the server's own requests -- ``elicitation/create``, ``sampling/createMessage``,
  ``roots/list`` -- become :class:`~mcp_proto.ServerRequest` events whose ``request``
  is the same ``ElicitRequest``/``CreateMessageRequest``/``ListRootsRequest`` an MRTR
  round carries, so one callback answers both eras; answer with
  ``send(Result(id=event.id, result=...))`` (or an ``ErrorResponse``).  Only what the
  client declared in ``initialize`` may be asked (LEG-07): anything else, like an
  unknown method, gets a JSON-RPC error the application sends (an
  :class:`~mcp_proto.InvalidMessage` with its ``reply``).  ``ping`` is an
  :class:`~mcp_proto.AnsweredRequest`: send it.  At most :data:`MAX_SERVER_REQUESTS`
  wait for an answer at once;
* session-wide notifications (``notifications/message``, ``.../resources/updated``,
  list changes) are plain :class:`~mcp_proto.Notification` events (``request_id``
  ``None``); a ``notifications/cancelled`` for one of the server's requests is a
  :class:`~mcp_proto.Cancelled` (its answer is then not sent: dropped).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from .. import types as t
from .._codec import METHODS, structure, unstructure
from .._errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    DecodeError,
    LocalProtocolError,
)
from ._base import UNROUTED, Commit
from ._capabilities import has_capability
from ._events import (
    AnsweredRequest,
    Cancelled,
    ErrorResponse,
    Event,
    InvalidMessage,
    Notification,
    Request,
    Result,
    ServerRequest,
)

if TYPE_CHECKING:
    from ._client import ClientConnection

__all__ = ["LEGACY_CLIENT_METHODS", "MAX_SERVER_REQUESTS", "LegacyClientSession"]

#: requests a client sends only in a legacy session, answered ``{}``
LEGACY_CLIENT_METHODS: Final = frozenset(
    {"ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}
)
#: the server's requests that may wait for the application's answer at once
MAX_SERVER_REQUESTS: Final = 64
_MODERN_META_PREFIX = "io.modelcontextprotocol/"
#: the server's requests: their 2026-07-28 type, and the client capability they need
_ASKS: Final = {
    "elicitation/create": (t.ElicitRequest, ("elicitation",)),
    "sampling/createMessage": (t.CreateMessageRequest, ("sampling",)),
    "roots/list": (t.ListRootsRequest, ("roots",)),
}
_SESSION_NOTES: Final = {
    "notifications/resources/updated": t.ResourceUpdatedNotificationParams,
    "notifications/tools/list_changed": t.NotificationParams,
    "notifications/prompts/list_changed": t.NotificationParams,
    "notifications/resources/list_changed": t.NotificationParams,
}


def _error(code: int, message: str, id: t.RequestId | None = None) -> InvalidMessage:
    error = t.Error(code=code, message=message)
    reply = t.JSONRPCErrorResponse(id=id, error=error) if id is not None else None
    return InvalidMessage(error=error, reply=reply)


class LegacyClientSession:
    """One legacy session of a client connection; see the module docs."""

    def __init__(self, owner: ClientConnection, result: Any) -> None:
        self._owner = owner
        #: the server's ``InitializeResult`` (``mcp_proto.types.legacy``)
        self.result = result
        #: the negotiated version (LEG-05)
        self.version: str = result.protocol_version
        #: ``notifications/initialized`` was sent (LEG-03)
        self.initialized = False
        #: the server's requests waiting for the application's answer: id -> method
        self.asked: dict[t.RequestId, str] = {}
        self._declared = unstructure(owner.capabilities)

    # -- receiving -------------------------------------------------------------

    def route(self, obj: Any) -> Any:
        """A message of the session, before the modern decoding: an event, ``None``
        (dropped), or ``UNROUTED`` (responses and progress: the modern path reads them)."""
        if type(obj) is not dict or type(obj.get("method")) is not str:
            return UNROUTED
        method = obj["method"]
        if "id" in obj:
            return self._server_request(obj, method)
        if method == "notifications/cancelled":
            params = obj.get("params")
            target = params.get("requestId") if type(params) is dict else None
            if (type(target) is str or type(target) is int) and target in self.asked:
                del self.asked[target]  # the server gave up: its answer is not sent
                reason = params.get("reason")  # type: ignore[union-attr]
                return Cancelled(id=target, reason=reason if type(reason) is str else None)
            return UNROUTED  # a listen's end, or nothing: the modern path decides
        kind = _SESSION_NOTES.get(method)
        if kind is None:
            return UNROUTED  # progress, log messages: the modern path
        try:
            params = structure(obj.get("params") or {}, kind)
        except DecodeError as e:
            return InvalidMessage(error=e.error())
        return Notification(method=method, params=params)

    def _server_request(self, obj: dict[str, Any], method: str) -> Any:
        id = obj["id"]
        if type(id) is not str and type(id) is not int:
            return InvalidMessage(error=t.Error(code=INVALID_REQUEST, message="a bad request id"))
        if id in self.asked:
            return _error(INVALID_REQUEST, f"request id {id!r} is already waiting (BASE-06)", id)
        params = obj.get("params")
        if params is not None and type(params) is not dict:
            return _error(INVALID_PARAMS, f"{method}: params must be an object", id)
        if method == "ping":
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "result": {}}
            return AnsweredRequest(id=id, method=method, params=params, reply=reply)
        ask = _ASKS.get(method)
        if ask is None:
            return _error(METHOD_NOT_FOUND, f"Method not found: {method}", id)
        kind, needs = ask
        if not has_capability(self._declared, needs):  # LEG-07: only what was negotiated
            why = f"{method} needs the {needs[0]} capability, which this client did not declare"
            return _error(METHOD_NOT_FOUND, why, id)
        if len(self.asked) >= MAX_SERVER_REQUESTS:
            why = f"more than {MAX_SERVER_REQUESTS} requests of the server wait for answers"
            return _error(INTERNAL_ERROR, why, id)
        try:
            request: Any = structure({"method": method, "params": params or {}}, kind)
        except DecodeError as e:
            return _error(e.code, e.message, id)
        self.asked[id] = method
        return ServerRequest(id=id, request=request)

    # -- sending ---------------------------------------------------------------

    def prepare(self, event: Event) -> tuple[list[dict[str, Any]], Commit | None]:
        """The legacy messages for ``event`` (see the module docs)."""
        if isinstance(event, AnsweredRequest):
            return [dict(event.reply)], None
        if isinstance(event, InvalidMessage):  # a refusal of a server's request: answered
            reply = event.reply
            return ([unstructure(reply)] if reply is not None else []), None
        if isinstance(event, Result | ErrorResponse):
            return self._answer(event)
        if isinstance(event, Notification) and event.method == "notifications/initialized":
            if self.initialized:
                raise LocalProtocolError("notifications/initialized was sent already (LEG-03)")

            def commit() -> None:
                self.initialized = True

            return [{"jsonrpc": "2.0", "method": event.method}], commit
        if isinstance(event, Request):
            return self._request(event)
        return self._owner._prepare_modern(event)

    def _answer(self, event: Result | ErrorResponse) -> tuple[list[dict[str, Any]], Commit]:
        id = event.id
        method = self.asked.get(id) if id is not None else None
        if method is None:
            raise LocalProtocolError(f"the server asked nothing with id {id!r}", rule="PAT-03")
        if isinstance(event, ErrorResponse):
            error: dict[str, Any] = {"code": event.error.code, "message": event.error.message}
            if event.error.data is not None:
                error["data"] = event.error.data
            message = {"jsonrpc": "2.0", "id": id, "error": error}
        else:
            result = unstructure(event.result)
            if type(result) is not dict:
                raise LocalProtocolError(f"the answer to {method} must be an object")
            result.pop("resultType", None)
            message = {"jsonrpc": "2.0", "id": id, "result": result}

        def commit() -> None:
            self.asked.pop(id, None)  # type: ignore[arg-type]

        return [message], commit

    def _request(self, event: Request) -> tuple[list[dict[str, Any]], Commit | None]:
        method = event.method
        if method in ("server/discover", "subscriptions/listen"):
            raise LocalProtocolError(f"{method} has no legacy form (a legacy session)")
        if method == "initialize":
            raise LocalProtocolError("the session is initialized already (LEG-01)")
        if method in LEGACY_CLIENT_METHODS:
            return self._owner._legacy_request(event)
        if method not in METHODS:
            raise LocalProtocolError(f"unknown request method {method!r}", rule="ERR-07")
        out, commit = self._owner._prepare_modern(event)
        for message in out:  # (the modern rules always stamp a ``_meta`` object)
            params = message["params"]
            meta = params["_meta"]
            kept = {k: v for k, v in meta.items() if not k.startswith(_MODERN_META_PREFIX)}
            if kept:
                params["_meta"] = kept
            else:
                del params["_meta"]
        return out, commit
