"""The server role over a byte stream (stdio, TCP, pipes) or pre-framed messages.

Receiving: every request is checked before the application sees it, in this
order (each refusal is an :class:`InvalidMessage` whose ``reply`` the caller
sends): the message decodes (``-32700``/``-32600``/``-32602``, META-08); a
removed method (``initialize``, ``ping``...) gets ``-32601``; the protocol
version is one this server serves (``-32022``, VER-02); the method exists and
its server capability is offered (``-32601``, ERR-07); the id is not already in
flight (``-32600``, BASE-06); the in-flight and subscription limits are not
reached (``-32603``).  ``notifications/cancelled`` for an in-flight request
gives :class:`Cancelled`.  Responses from a client and unknown notifications are
dropped without a reply (PAT-03, BASE-18).

Sending: the rules of :mod:`mcp_proto._connection._server_rules` are checked and the result
stamped (``resultType``, ``io.modelcontextprotocol/serverInfo``,
``subscriptionId``); anything for a cancelled request is dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from .. import types as t
from .._codec import (
    DEFAULT_MAX_DEPTH,
    LATEST_PROTOCOL_VERSION,
    METHODS,
    REMOVED_METHODS,
    Kind,
    Message,
    structure,
    unstructure,
)
from .._errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    DecodeError,
    refusal_status,
    unsupported_protocol_version,
)
from ._base import UNROUTED, Commit, StreamConnection
from ._capabilities import checked_capabilities, has_capability
from ._events import (
    PAUSED,
    AnsweredRequest,
    Cancelled,
    ConnectionClosed,
    ErrorResponse,
    Event,
    InvalidMessage,
    Notification,
    Request,
    Result,
    ServerEvent,
)
from ._extensions import Extension, ExtensionRegistry
from ._framing import DEFAULT_MAX_MESSAGE_SIZE
from ._guards import GuardConfig
from ._legacy import (
    LEGACY_VERSIONS,
    SESSION_WIDE,
    LegacySession,
    is_modern,
    legacy_capabilities,
    legacy_types,
    negotiate,
)
from ._requests import Move, Refusal, RequestRecord, RequestTracker, State
from ._server_rules import ServerRules

__all__ = ["DEFAULT_SERVER_INFO", "LEGACY_VERSIONS", "ServerConnection"]

DEFAULT_SERVER_INFO = t.Implementation(name="mcp-proto", version="0.1.0")

_META_ONLY = t.RequestParams


def _served(legacy_versions: Iterable[str]) -> tuple[str, ...]:
    """The legacy versions to offer, refused at configuration if one cannot be honoured."""
    versions = tuple(legacy_versions)
    unknown = [v for v in versions if v not in LEGACY_VERSIONS]
    if unknown:
        raise ValueError(
            f"legacy versions {unknown} are not served (the ones served: "
            f"{', '.join(LEGACY_VERSIONS)}; see docs/dual-era.md)"
        )
    return versions


def _refusal(error: t.Error, id: t.RequestId | None, http_status: int) -> InvalidMessage:
    """A refused request: the event carries the error response to send."""
    reply = t.JSONRPCErrorResponse(id=id, error=error)
    return InvalidMessage(error=error, reply=reply, http_status=http_status)


#: what :meth:`ServerConnection.fresh` shares: set once in ``__init__``, never changed
_CONFIGURATION = (
    "capabilities",
    "server_info",
    "supported_versions",
    "legacy_versions",
    "instructions",
    "cache_hints",
    "extensions",
    "max_in_flight",
    "max_subscriptions",
    "_caps_json",
    "_legacy_caps",
    "_guards",
)


class ServerConnection(StreamConnection[ServerEvent]):
    """The server side of one MCP connection.

    ``supported_versions`` are the revisions served (``data.supported`` of a
    ``-32022`` lists exactly these).  ``capabilities`` gate methods: a request
    for ``tools/call`` when ``tools`` is not offered is ``-32601``.
    ``server_info`` is stamped into every result's ``_meta`` unless
    ``stamp_server_info`` is false (META-11).  ``cache_hints`` (``ttlMs``,
    ``cacheScope``) go into :meth:`discover_result`.  ``max_in_flight`` bounds
    the requests in flight: one more is held and :meth:`next_event` returns
    :data:`PAUSED` until a request ends (:attr:`paused`).  ``max_subscriptions``
    bounds the open listens: one more is refused (``-32603``), since listens end
    only when cancelled.  ``tombstones`` bounds the memory of finished and
    cancelled ids.

    ``legacy_versions`` (default none: modern only) makes the connection dual-era
    (VER-17, LEG-20): an ``initialize`` request opens one ``initialize``-era session
    at a version negotiated from these (LEG-05; offer :data:`LEGACY_VERSIONS`), and
    every later message without modern per-request ``_meta`` belongs to it, while
    requests with modern ``_meta`` are still served statelessly beside it, with no
    state shared.  ``docs/dual-era.md`` has the whole mapping.  Modern only, an
    ``initialize`` is answered ``-32601`` naming the supported versions (LEG-22).
    """

    def __init__(
        self,
        *,
        capabilities: t.ServerCapabilities | None = None,
        server_info: t.Implementation = DEFAULT_SERVER_INFO,
        supported_versions: Iterable[str] = (LATEST_PROTOCOL_VERSION,),
        instructions: str | None = None,
        cache_hints: tuple[int, Literal["private", "public"]] = (0, "public"),
        stamp_server_info: bool = True,
        extensions: Iterable[Extension] = (),
        max_in_flight: int = 1024,
        max_subscriptions: int = 1024,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        max_depth: int = DEFAULT_MAX_DEPTH,
        tombstones: int = 4096,
        legacy_versions: Iterable[str] = (),
    ) -> None:
        super().__init__(
            max_message_size=max_message_size, max_depth=max_depth, tombstones=tombstones
        )
        self.capabilities = checked_capabilities(capabilities, t.ServerCapabilities)
        self.server_info = server_info
        self.supported_versions = tuple(supported_versions)
        self.legacy_versions = _served(legacy_versions)
        self.instructions = instructions
        if cache_hints[1] not in ("private", "public"):
            raise ValueError(f"cache scope must be 'private' or 'public', not {cache_hints[1]!r}")
        self.cache_hints = cache_hints
        self.extensions = ExtensionRegistry(extensions, self.capabilities.extensions or {})
        if max_in_flight < 1:
            raise ValueError(f"max_in_flight must be at least 1, not {max_in_flight}")
        self.max_in_flight = max_in_flight
        self.max_subscriptions = max_subscriptions
        self._caps_json = unstructure(self.capabilities)
        self._legacy_caps = legacy_capabilities(self._caps_json)
        self._guards = GuardConfig(extensions=self.extensions)
        self._requests = RequestTracker(self._gone, self._guards)
        self._rules = ServerRules(
            self._requests,
            unstructure(server_info) if stamp_server_info else None,
            self.extensions,
            logging=self.capabilities.logging is not None,
        )
        self._legacy: LegacySession | None = None
        if self.legacy_versions:
            self._router = self._route

    def fresh(self, *, legacy_versions: Iterable[str] | None = None) -> ServerConnection:
        """A new connection with this one's configuration and none of its state.

        What :meth:`__init__` would build from the same arguments, without
        converting the capabilities and server info again: for servers that
        make one connection per HTTP request from a template.  ``legacy_versions``
        replaces the template's (``()``: a modern-only copy).
        """
        new = ServerConnection.__new__(ServerConnection)
        StreamConnection.__init__(
            new,
            max_message_size=self._lines._max,
            max_depth=self._max_depth,
            tombstones=self._gone._limit,
        )
        for name in _CONFIGURATION:
            setattr(new, name, getattr(self, name))
        new._requests = RequestTracker(new._gone, self._guards)
        rules = self._rules
        new._rules = ServerRules(
            new._requests, rules.server_info, rules.extensions, logging=rules.logging
        )
        new._legacy = None
        if legacy_versions is not None:
            new.legacy_versions = _served(legacy_versions)
        if new.legacy_versions:
            new._router = new._route
        return new

    @property
    def legacy(self) -> LegacySession | None:
        """The ``initialize``-era session this connection serves, once one opened."""
        return self._legacy

    # -- configuration answers ---------------------------------------------

    def discover_result(self) -> t.DiscoverResult:
        """The ``server/discover`` answer from this connection's configuration (VER-05)."""
        ttl, scope = self.cache_hints
        return t.DiscoverResult(
            supported_versions=list(self.supported_versions),
            capabilities=self.capabilities,
            instructions=self.instructions,
            ttl_ms=ttl,
            cache_scope=scope,
        )

    def in_flight(self) -> tuple[t.RequestId, ...]:
        """Ids of the requests received and not yet answered or cancelled (both eras)."""
        legacy = self._legacy.in_flight() if self._legacy is not None else ()
        return (*self._requests.live, *legacy)

    def subscriptions(self) -> tuple[t.RequestId, ...]:
        """Ids of the open ``subscriptions/listen`` requests (what a server may end, SUB-12)."""
        return tuple(r.id for r in self._requests.live.values() if r.listen is not None)

    @property
    def paused(self) -> bool:
        """True while :meth:`next_event` returns :data:`PAUSED`.

        That is: a request arrived while ``max_in_flight`` requests were in flight
        (open subscriptions do not count), and none has ended since.  The request
        is held, not refused, and nothing behind it is read, so a client that
        pipelines many requests is slowed by pipe or TCP backpressure as its
        reader stops; the connection resumes when one of its requests ends.
        """
        held = self._held
        if type(held) is dict:  # a legacy request, held by the session's connection
            return self._legacy is not None and self._legacy.inner.paused
        return held is not None and self._requests.calls >= self.max_in_flight

    def request_info(self, id: t.RequestId) -> RequestRecord | None:
        """What the connection tracks for in-flight request ``id``."""
        return self._requests.live.get(id)

    def request_state(self, id: t.RequestId) -> State:
        """Where request ``id`` is in its lifecycle (``UNKNOWN`` once forgotten)."""
        return self._requests.state(id)

    # -- receiving ----------------------------------------------------------

    def _on_invalid(self, error: DecodeError, obj: Any) -> ServerEvent | None:
        no_reply = type(obj) is dict and ("id" not in obj or "method" not in obj)
        if no_reply and ("method" in obj or "result" in obj or "error" in obj):
            # A notification or a response: never answered (BASE-18, PAT-03).
            return InvalidMessage(error=error.error(), http_status=error.http_status)
        return _refusal(error.error(), error.id, error.http_status)

    def _refuse(
        self,
        code: int,
        message: str,
        id: t.RequestId,
        data: Any = None,
        *,
        http_status: int | None = None,
    ) -> ServerEvent:
        status = refusal_status(code) if http_status is None else http_status
        return _refusal(t.Error(code=code, message=message, data=data), id, status)

    def _on_message(self, message: Message) -> ServerEvent | type[PAUSED] | None:
        if isinstance(message, dict):  # a held legacy request (see _route), offered again
            assert self._legacy is not None
            return self._legacy.resume()
        msg: Any = message
        method = getattr(msg, "method", None)
        if method is None:  # a response: clients do not send them (PAT-03)
            error = t.Error(code=INVALID_REQUEST, message="clients do not send responses (PAT-03)")
            return InvalidMessage(error=error)
        if not hasattr(msg, "id"):
            return self._on_notification(msg, method)
        id: t.RequestId = msg.id
        info = METHODS.get(method)
        if info is None or info.kind is not Kind.REQUEST:
            return self._on_other_request(msg, method, id)
        params = msg.params
        return self._admit(id, method, params, params.meta, info.server_capability)

    def _on_other_request(
        self, message: Any, method: str, id: t.RequestId
    ) -> ServerEvent | type[PAUSED]:
        known = METHODS.get(method)
        if known is not None and known.kind is Kind.NOTIFICATION:  # not acted on (edge case 20)
            return self._refuse(INVALID_REQUEST, f"{method} is a notification (BASE-18)", id)
        removed = method in REMOVED_METHODS and self.extensions.request_types(method) is None
        if removed or method in METHODS:
            if method == "initialize":  # LEG-22, VER-16: name what is served instead
                versions = ", ".join(self.supported_versions)
                message = (
                    "Method not found: initialize (this server speaks only per-request "
                    f"protocol versions: {versions})"
                )
                data = {"supported": list(self.supported_versions)}
                return self._refuse(METHOD_NOT_FOUND, message, id, data)
            return self._refuse(METHOD_NOT_FOUND, f"Method not found: {method}", id)
        raw = message.params if message.params is not None else {}
        try:
            meta: t.RequestMetaObject | None = structure(raw, _META_ONLY).meta
        except DecodeError as e:
            return _refusal(e.error(), id, e.http_status)
        refused = self._check_version(meta, id)
        if refused is not None:
            return refused
        ext = self.extensions.for_request(method, meta)
        if ext is None:
            return self._refuse(METHOD_NOT_FOUND, f"Method not found: {method}", id)
        try:
            params = ext.structure_params(method, raw)
        except DecodeError as e:
            return _refusal(e.error(), id, e.http_status)
        return self._admit(id, method, params, meta, None, checked=True)

    def _check_version(
        self, meta: t.RequestMetaObject | None, id: t.RequestId
    ) -> ServerEvent | None:
        assert meta is not None  # the codec requires _meta on every request (META-08)
        if meta.protocol_version in self.supported_versions:
            return None
        error = unsupported_protocol_version(meta.protocol_version, self.supported_versions)
        return self._refuse(error.code, error.message, id, error.data)

    def _admit(
        self,
        id: t.RequestId,
        method: str,
        params: Any,
        meta: t.RequestMetaObject | None,
        capability: tuple[str, ...] | None,
        *,
        checked: bool = False,
    ) -> ServerEvent | type[PAUSED]:
        if not checked:
            refused = self._check_version(meta, id)
            if refused is not None:
                return refused
        if capability is not None and not has_capability(self._caps_json, capability):
            return self._refuse(METHOD_NOT_FOUND, f"Method not found: {method}", id)
        requests = self._requests
        listen = method == "subscriptions/listen"
        if id in requests.live:  # the table opens a request on any id that is not live
            entry = requests.entry(id, Move.LISTEN if listen else Move.REQUEST)
            assert isinstance(entry, Refusal)  # BASE-06
            message = entry.why.format(id=id, method=method, what=method)
            return self._refuse(INVALID_REQUEST, f"{message} ({entry.rule})", id)
        if listen and requests.listens >= self.max_subscriptions:
            message = f"too many open subscriptions (limit {self.max_subscriptions})"
            return self._refuse(INTERNAL_ERROR, message, id, http_status=500)
        if requests.calls >= self.max_in_flight and not listen:
            return PAUSED  # held until a request ends: backpressure, not a refusal
        assert meta is not None
        requests.open(RequestRecord(id, method, meta, params if listen else None))
        return Request(id=id, method=method, params=params)

    def _on_notification(self, message: Any, method: str) -> ServerEvent | None:
        if method != "notifications/cancelled":
            ext = self.extensions.notification(method)
            if ext is None:
                self._dropped_messages += 1  # unknown or server-bound only (BASE-18)
                return None
            return Notification(method=method, params=message.params)
        id = message.params.request_id
        record = self._requests.live.get(id)
        if record is None:  # unknown or finished: ignored (CANCEL-10, CANCEL-14)
            self._dropped_messages += 1
            return None
        self._requests.apply(record, State.CANCELLED)
        return Cancelled(id=id, reason=message.params.reason)

    # -- the legacy era ----------------------------------------------------

    def _route(self, obj: Any) -> Any:
        """Which era a parsed message belongs to (VER-17, LEG-20); see the class docs."""
        if type(obj) is not dict:
            return UNROUTED
        legacy = self._legacy
        method = obj.get("method")
        if method is None:  # a response: only a legacy session's input requests have them
            return legacy.receive(obj) if legacy is not None else UNROUTED
        if is_modern(obj):
            if legacy is not None and "id" in obj and legacy.owns(obj["id"]):
                id = obj["id"]
                message = f"request id {id!r} is already in flight (BASE-06)"
                return self._refuse(INVALID_REQUEST, message, id)
            return UNROUTED
        if method == "initialize" and "id" in obj and legacy is None:
            return self._initialize(obj)
        if legacy is not None:
            if method == "notifications/cancelled":
                params = obj.get("params")
                target = params.get("requestId") if type(params) is dict else None
                if type(target) in (str, int) and not legacy.owns(target):
                    return UNROUTED  # it cancels a modern request
            id = obj.get("id")
            if (type(id) is str or type(id) is int) and id in self._requests.live:
                message = f"request id {id!r} is already in flight (BASE-06)"
                return self._refuse(INVALID_REQUEST, message, id)
            return legacy.receive(obj)
        if method == "ping" and "id" in obj and type(obj["id"]) in (str, int):
            # LEG-04: ping is allowed before initialize
            reply = {"jsonrpc": "2.0", "id": obj["id"], "result": {}}
            return AnsweredRequest(id=obj["id"], method=method, params=None, reply=reply)
        return UNROUTED

    def _initialize(self, obj: dict[str, Any]) -> ServerEvent:
        """Open the legacy session (LEG-01, LEG-02, LEG-05)."""
        try:
            request: Any = structure(obj, legacy_types().InitializeRequest)
        except DecodeError as e:
            id = obj.get("id")
            return _refusal(e.error(), id if type(id) in (str, int) else None, e.http_status)
        version = negotiate(request.params.protocol_version, self.legacy_versions)
        inner = self.fresh(legacy_versions=())
        inner.supported_versions = (version,)
        inner._rules.server_info = None  # legacy results carry no serverInfo stamp
        caps = self._legacy_caps
        self._legacy = LegacySession(
            inner, version=version, params=obj["params"], server_caps=caps
        )
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": caps,
            "serverInfo": unstructure(self.server_info),
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        reply = {"jsonrpc": "2.0", "id": request.id, "result": result}
        return AnsweredRequest(
            id=request.id, method="initialize", params=request.params, reply=reply
        )

    def _on_close(self) -> ConnectionClosed:
        subs = self.subscriptions()
        rest = tuple(r.id for r in self._requests.live.values() if r.listen is None)
        if self._legacy is not None:
            rest += self._legacy.in_flight()
        return ConnectionClosed(in_flight=rest, subscriptions=subs)

    # -- sending ------------------------------------------------------------

    def _prepare(self, event: Event) -> tuple[list[dict[str, Any]], Commit | None]:
        legacy = self._legacy
        if legacy is not None or isinstance(event, AnsweredRequest):
            routed = self._prepare_dual(event, legacy)
            if routed is not None:
                return routed
        prepared = self._rules.prepare(event)
        if prepared is None:  # for a cancelled request: dropped (STDIO-13)
            self._dropped_sends += 1
            return [], None
        return prepared

    def _prepare_dual(
        self, event: Event, legacy: LegacySession | None
    ) -> tuple[list[dict[str, Any]], Commit | None] | None:
        """What the legacy session sends for ``event``; ``None``: the modern path's alone."""
        if isinstance(event, AnsweredRequest):
            if legacy is None:  # a ping before initialize
                return [dict(event.reply)], None
            return legacy.prepare(event)
        assert legacy is not None
        if isinstance(event, Result | ErrorResponse):
            return legacy.prepare(event) if self._is_legacy(legacy, event.id) else None
        if not isinstance(event, Notification):
            return None
        if event.request_id is not None:
            return legacy.prepare(event) if self._is_legacy(legacy, event.request_id) else None
        params = event.params
        if event.method == "notifications/progress":
            token = getattr(params, "progress_token", None)
            return legacy.prepare(event) if legacy.owns_token(token) else None
        if event.method == "notifications/message":
            return legacy.prepare(event)  # a modern log needs its request (LOG-05)
        if event.method not in SESSION_WIDE:
            return None
        out, commit = self._rules.prepare(event) or ([], None)
        note = legacy.session_notification(event)
        return ([*out, note] if note is not None else out), commit

    def _is_legacy(self, legacy: LegacySession, id: t.RequestId | None) -> bool:
        """A send about request ``id`` is the session's: in flight there, or only there
        remembered (so a send for a cancelled legacy request is dropped, STDIO-13)."""
        if legacy.owns(id):
            return True
        return id not in self._requests.live and legacy.knows(id)

    def _in_flight_count(self) -> int:
        if self._legacy is not None:
            return self._requests.calls + self._legacy.inner._requests.calls
        return self._requests.calls

    def _subscription_count(self) -> int:
        return self._requests.listens
