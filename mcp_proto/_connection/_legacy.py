"""One ``initialize``-era (2025-11-25, 2025-06-18) session inside a dual-era server.

A legacy session is a translator around a modern connection of its own (the
*inner* one, made by :class:`~mcp_proto.ServerConnection` for the negotiated
version): what the legacy client sends is rewritten into the 2026-07-28 shape and
handed to the inner connection, so every admission rule, the request lifecycle and
the send rules are the modern ones, and the application sees the same events in
both eras.  What the session adds:

* the per-request ``_meta`` a modern request carries, filled from the session: the
  negotiated version, the client's capabilities and info from ``initialize``, and
  the level of ``logging/setLevel`` (``debug`` until the client sets one: a legacy
  server may log at any level until asked not to);
* the requests that change only the session (``ping``, ``logging/setLevel``,
  ``resources/subscribe``/``unsubscribe``), answered ``{}`` here as an
  :class:`AnsweredRequest`;
* on the way out, legacy results: no ``resultType``, no ``ttlMs``/``cacheScope``
  (the inner connection does not stamp ``serverInfo``);
* the MRTR bridge: an ``input_required`` result becomes one JSON-RPC request to the
  client per input request (ids from a per-session counter); when every one is
  answered, the original request comes back to the application with
  ``inputResponses`` and ``requestState`` set, as a modern retry would, under the
  client's original id (``Request.round`` counts the rounds).  An error from the
  client, or an answer that does not decode, ends the original request with an
  error instead;
* session-wide notifications (``request_id=None``): log messages at or above the
  session's level, list changes the server declares ``listChanged`` for, and
  ``notifications/resources/updated`` for a subscribed URI.

No clock, no I/O; the owner (:class:`~mcp_proto.ServerConnection`) routes messages
here (:func:`is_modern` tells the eras apart) and calls :meth:`receive` and
:meth:`prepare`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from .. import types as t
from .._codec import METHODS, REMOVED_METHODS, structure, unstructure
from .._errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    DecodeError,
    refusal_status,
)
from ._base import Commit
from ._capabilities import has_capability
from ._events import (
    NEED_DATA,
    PAUSED,
    AnsweredRequest,
    Cancelled,
    ErrorResponse,
    Event,
    InvalidMessage,
    Notification,
    Request,
    Result,
    ServerEvent,
)
from ._guards import LOG_RANK
from ._requests import RequestTracker, State

if TYPE_CHECKING:
    from ..types import legacy as lt

__all__ = [
    "LEGACY_VERSIONS",
    "SESSION_WIDE",
    "LegacySession",
    "is_modern",
    "legacy_capabilities",
    "negotiate",
]

#: the ``initialize``-era versions served by default, newest first (LEG-05 answers
#: with the first when the client asks for one not listed)
LEGACY_VERSIONS: tuple[str, ...] = ("2025-11-25", "2025-06-18")

_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
_CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"
_INFO_KEY = "io.modelcontextprotocol/clientInfo"
_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
#: result keys 2026-07-28 added that a legacy client is not sent
_MODERN_RESULT_KEYS = ("resultType", "ttlMs", "cacheScope")
#: notifications a server sends a whole legacy session (``request_id=None``)
SESSION_WIDE = frozenset({
    "notifications/message",
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
    "notifications/resources/updated",
})  # fmt: skip
#: what a 2025-11-25 ServerCapabilities announces; other modern keys are not sent
_LEGACY_SERVER_CAPS = frozenset(
    {"experimental", "logging", "completions", "prompts", "resources", "tools"}
)


def legacy_types() -> ModuleType:
    """``mcp_proto.types.legacy``, imported on first use: it is a third of the import time
    of ``mcp_proto`` (88 of 280 ms), and a modern-only program never needs it."""
    from ..types import legacy

    return legacy


def is_modern(obj: dict[str, Any]) -> bool:
    """True when a request or notification carries modern per-request ``_meta`` (VER-17)."""
    params = obj.get("params")
    if type(params) is not dict:
        return False
    meta = params.get("_meta")
    return type(meta) is dict and _VERSION_KEY in meta


def negotiate(requested: object, offered: tuple[str, ...]) -> str:
    """LEG-05: the requested version when offered, else the newest offered one.

    ``2026-07-28`` (or any modern version) in ``initialize`` has no initialize
    semantics, so it too gets the newest legacy version.
    """
    return requested if type(requested) is str and requested in offered else offered[0]


def legacy_capabilities(caps: Mapping[str, Any]) -> dict[str, Any]:
    """The server's capabilities as a 2025-11-25 ``InitializeResult`` states them."""
    return {k: v for k, v in caps.items() if k in _LEGACY_SERVER_CAPS}


class _Inner(Protocol):
    """What the session uses of its inner (modern) server connection."""

    _requests: RequestTracker

    @property
    def paused(self) -> bool: ...
    def _handle_item(self, item: Any) -> Any: ...
    def request_state(self, id: t.RequestId) -> State: ...
    def next_event(self) -> Any: ...
    def _prepare(self, event: Event) -> tuple[list[dict[str, Any]], Commit | None]: ...


@attrs.define(slots=True)
class _Round:
    """A request waiting for the client's answers to its input requests."""

    method: str
    params: Any  #: the params of the round that asked
    result: dict[str, Any]  #: the input_required result body (inputRequests, requestState)
    waiting: dict[int, str]  #: server request id -> input request key
    answers: dict[str, Any] = attrs.field(factory=dict)
    round: int = 1


def _error_reply(
    code: int, message: str, id: t.RequestId | None, data: Any = None
) -> InvalidMessage:
    error = t.Error(code=code, message=message, data=data)
    reply = t.JSONRPCErrorResponse(id=id, error=error)
    return InvalidMessage(error=error, reply=reply, http_status=refusal_status(code))


class LegacySession:
    """The state of one ``initialize``-era session; see the module docs."""

    def __init__(
        self,
        inner: _Inner,
        *,
        version: str,
        params: dict[str, Any],
        server_caps: Mapping[str, Any],
    ) -> None:
        self.inner = inner
        #: the negotiated version (LEG-05)
        self.version = version
        self._params = params
        #: ``notifications/initialized`` arrived (LEG-03)
        self.initialized = False
        #: the level of the last ``logging/setLevel``; ``None``: never set
        self.log_level: str | None = None
        #: URIs of ``resources/subscribe`` not yet unsubscribed
        self.subscriptions: set[str] = set()
        self._server_caps = server_caps
        self._meta = {
            _VERSION_KEY: version,
            _CAPS_KEY: params.get("capabilities") or {},
            _INFO_KEY: params.get("clientInfo"),
        }
        self._next_id = 0
        #: retry-capable requests in flight: id -> (method, params, round), for the next round
        self._live_params: dict[t.RequestId, tuple[str, Any, int]] = {}
        self._rounds: dict[t.RequestId, _Round] = {}
        #: server request id -> the client request it asks for
        self._asking: dict[int, t.RequestId] = {}

    @property
    def params(self) -> lt.InitializeRequestParams:
        """The client's ``initialize`` params (2025-11-25), structured on each access: the
        session keeps only their JSON (``client_info``, ``capabilities``...)."""
        params: lt.InitializeRequestParams = structure(
            self._params, legacy_types().InitializeRequestParams
        )
        return params

    # -- what the owner asks -------------------------------------------------

    def owns(self, id: object) -> bool:
        """Request ``id`` is this session's: in flight in it, or waiting for input."""
        if type(id) is not str and type(id) is not int:  # from the peer: maybe unhashable
            return False
        return id in self.inner._requests.live or id in self._rounds

    def knows(self, id: object) -> bool:
        """Request ``id`` was this session's and is remembered (answered or cancelled)."""
        if type(id) is not str and type(id) is not int:
            return False
        return self.inner.request_state(id) is not State.UNKNOWN

    def in_flight(self) -> tuple[t.RequestId, ...]:
        return (*self.inner._requests.live, *self._rounds)

    def owns_token(self, token: object) -> bool:
        return token in self.inner._requests.by_token

    # -- receiving -------------------------------------------------------------

    def receive(self, obj: dict[str, Any]) -> ServerEvent | type[PAUSED] | None:
        """The event for one message of this session (``None``: nothing to do)."""
        method = obj.get("method")
        if method is None:
            return self._on_response(obj)
        if type(method) is not str or obj.get("jsonrpc") != "2.0":
            return self._to_inner(obj)  # the codec words the refusal (-32600)
        if "id" not in obj:
            return self._on_notification(obj, method)
        id = obj["id"]
        if type(id) is not str and type(id) is not int:  # let the codec word the refusal
            return self._to_inner(obj)
        if method == "initialize":
            return _error_reply(INVALID_REQUEST, "the session is already initialized", id)
        if method in ("ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"):
            return self._answer_here(obj, method, id)
        if id in self._rounds:
            return _error_reply(
                INVALID_REQUEST, f"request id {id!r} is already in flight (BASE-06)", id
            )
        if method in REMOVED_METHODS or method == "subscriptions/listen":
            # tasks/* and the like are not served; a listen is modern-only
            return _error_reply(METHOD_NOT_FOUND, f"Method not found: {method}", id)
        params = obj.get("params")
        if params is not None and type(params) is not dict:
            return self._to_inner(obj)
        params = dict(params or ())
        meta = params.get("_meta")
        params["_meta"] = {
            **(meta if type(meta) is dict else {}),
            **self._meta,
            _LEVEL_KEY: self.log_level or "debug",
        }
        return self._to_inner({"jsonrpc": obj.get("jsonrpc"), "id": id, "method": method,
                               "params": params})  # fmt: skip

    def resume(self) -> ServerEvent | type[PAUSED] | None:
        """Offer the held request again (the inner connection was at ``max_in_flight``)."""
        return self._event(self.inner.next_event())

    def _to_inner(self, obj: dict[str, Any], round: int = 0) -> ServerEvent | type[PAUSED] | None:
        # straight to the message handling: no inbox, no framing (the owner framed it)
        return self._event(self.inner._handle_item(obj), round)

    def _event(self, event: Any, round: int = 0) -> ServerEvent | type[PAUSED] | None:
        if event is None or event is NEED_DATA:  # dropped by the inner connection
            return None
        if isinstance(event, Request) and METHODS[event.method].input_required_allowed:
            if round:
                event = attrs.evolve(event, round=round)
            self._live_params[event.id] = (event.method, event.params, round)
        return event  # type: ignore[no-any-return]

    def _answer_here(self, obj: dict[str, Any], method: str, id: t.RequestId) -> ServerEvent:
        lt = legacy_types()
        kind = {
            "ping": lt.PingRequest,
            "logging/setLevel": lt.SetLevelRequest,
            "resources/subscribe": lt.SubscribeRequest,
            "resources/unsubscribe": lt.UnsubscribeRequest,
        }[method]
        needs = {"logging/setLevel": ("logging",)}.get(method, ("resources", "subscribe"))
        if method != "ping" and not has_capability(self._server_caps, needs):
            return _error_reply(METHOD_NOT_FOUND, f"Method not found: {method}", id)
        try:
            request: Any = structure(obj, kind)
        except DecodeError as e:
            return _error_reply(e.code, e.message, id, e.data)
        params = request.params
        if method == "logging/setLevel":
            self.log_level = params.level
        elif method == "resources/subscribe":
            self.subscriptions.add(params.uri)
        elif method == "resources/unsubscribe":
            self.subscriptions.discard(params.uri)
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "result": {}}
        return AnsweredRequest(id=id, method=method, params=params, reply=reply)

    def _on_notification(self, obj: dict[str, Any], method: str) -> ServerEvent | None:
        if method == "notifications/initialized":
            self.initialized = True
            return None
        if method == "notifications/roots/list_changed":
            return Notification(method=method, params=obj.get("params"))
        if method == "notifications/cancelled":
            params = obj.get("params")
            target = params.get("requestId") if type(params) is dict else None
            if (type(target) is str or type(target) is int) and self._drop_round(target):
                # cancelled while the client was asked for input: no handler runs, the
                # round is dropped; the event ends whatever serves the request's stream
                reason = params.get("reason")  # type: ignore[union-attr]
                return Cancelled(id=target, reason=reason if type(reason) is str else None)
        event = self._to_inner(obj)
        return None if event is PAUSED else event  # type: ignore[return-value]

    def _drop_round(self, owner: t.RequestId) -> bool:
        """Forget ``owner``'s round and what it asked; False when it had none."""
        if self._rounds.pop(owner, None) is None:
            return False
        self._asking = {k: v for k, v in self._asking.items() if v != owner}
        self._live_params.pop(owner, None)
        return True

    def _on_response(self, obj: dict[str, Any]) -> ServerEvent | type[PAUSED] | None:
        """The client's answer to one of the session's input requests (LEG-21 inverse)."""
        asked = obj.get("id")
        owner = self._asking.pop(asked, None) if type(asked) is int else None
        if owner is None:
            return None  # late (its round was cancelled) or never asked: dropped
        round = self._rounds[owner]
        key = round.waiting.pop(asked)  # type: ignore[arg-type]
        request = round.result["inputRequests"][key]
        if "error" in obj or "result" not in obj:
            return self._fail(owner, f"the client answered {request['method']} with an error",
                              obj.get("error"))  # fmt: skip
        kind = METHODS[request["method"]].result_type
        try:
            round.answers[key] = structure(obj["result"], kind)
        except DecodeError as e:
            return self._fail(owner, f"the client's answer to {request['method']} is invalid",
                              e.message)  # fmt: skip
        if round.waiting:
            return None
        del self._rounds[owner]
        params = attrs.evolve(
            round.params,
            input_responses=round.answers,
            request_state=round.result.get("requestState"),
        )
        body = unstructure(params)
        message = {"jsonrpc": "2.0", "id": owner, "method": round.method, "params": body}
        return self._to_inner(message, round.round)

    def _fail(self, owner: t.RequestId, message: str, data: Any) -> ServerEvent:
        self._drop_round(owner)
        return _error_reply(INTERNAL_ERROR, message, owner, data)

    # -- sending ---------------------------------------------------------------

    def prepare(self, event: Event) -> tuple[list[dict[str, Any]], Commit | None]:
        """The legacy messages for ``event`` and the change to commit once encoded."""
        if isinstance(event, AnsweredRequest):
            return [dict(event.reply)], None
        if (
            isinstance(event, Notification)
            and event.request_id is None
            and event.method in SESSION_WIDE
        ):
            note = self.session_notification(event)
            return ([note] if note is not None else []), None
        out, commit = self.inner._prepare(event)
        if not out or not isinstance(event, Result | ErrorResponse):
            return out, commit
        message = out[0]
        result = message.get("result")
        if type(result) is dict:
            if result.get("resultType") == "input_required":
                return self._ask(message["id"], result, commit)
            for key in _MODERN_RESULT_KEYS:  # LEG-02: no resultType in legacy results
                result.pop(key, None)
        answered = message["id"]

        def commit_answer() -> None:
            assert commit is not None  # an answer to a request always moves it
            commit()
            self._live_params.pop(answered, None)

        return out, commit_answer

    def _ask(
        self, owner: t.RequestId, result: dict[str, Any], commit: Commit | None
    ) -> tuple[list[dict[str, Any]], Commit]:
        requests = result["inputRequests"]
        first = self._next_id
        waiting = {first + i: key for i, key in enumerate(requests)}
        out = [
            {"jsonrpc": "2.0", "id": n, "method": requests[key]["method"],
             **({"params": requests[key]["params"]} if "params" in requests[key] else {})}
            for n, key in waiting.items()
        ]  # fmt: skip

        def commit_round() -> None:
            assert commit is not None
            commit()
            self._next_id = first + len(waiting)
            method, params, number = self._live_params.pop(owner)
            self._rounds[owner] = _Round(method, params, result, dict(waiting), round=number + 1)
            self._asking.update(dict.fromkeys(waiting, owner))

        return out, commit_round

    def session_notification(self, event: Notification) -> dict[str, Any] | None:
        """A notification of :data:`SESSION_WIDE` for the whole session
        (``request_id=None``), or ``None`` when the session does not take it: it asked
        for a higher log level, it did not subscribe to the URI, the server does not
        declare the list change."""
        method, params = event.method, event.params
        gate = METHODS[method].server_capability  # logging, listChanged, subscribe
        if gate is not None and not has_capability(self._server_caps, gate):
            return None
        level = self.log_level
        if method == "notifications/message":
            if level is not None and LOG_RANK[params.level] < LOG_RANK[level]:
                return None
        elif method == "notifications/resources/updated" and params.uri not in self.subscriptions:
            return None
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = unstructure(params)
        return message
