"""The client role over a byte stream (stdio, TCP, pipes) or pre-framed messages.

Sending: ids are allocated by :meth:`ClientConnection.next_id` and never reused
(an id in flight is refused, BASE-06); every request gets the per-request
``_meta`` (protocol version, client capabilities, client info, log level) from
the connection's defaults unless its params already carry one (META-05).
``notifications/cancelled`` ends a request: any late response is dropped
(CANCEL-11).

Receiving: each response ends its request with exactly one event --
:class:`Result`, :class:`InputRequired`, :class:`ErrorResponse`,
:class:`VersionNotSupported`, :class:`InvalidResponse` or, for a listen,
:class:`SubscriptionEnded`.  Stream notifications are demultiplexed by
``subscriptionId`` and checked against the acknowledged filter.  Anything the
server should not have sent is an :class:`InvalidMessage` with no reply
(clients never answer, PAT-03).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

import attrs

from .. import types as t
from .._codec import (
    DEFAULT_MAX_DEPTH,
    LATEST_PROTOCOL_VERSION,
    METHODS,
    Direction,
    Kind,
    Message,
    structure,
    structure_result,
    unstructure,
)
from .._errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    UNSUPPORTED_PROTOCOL_VERSION,
    DecodeError,
    LocalProtocolError,
)
from ._base import Commit, StreamConnection
from ._capabilities import undeclared_input_requests
from ._events import (
    ConnectionClosed,
    ErrorResponse,
    Event,
    InputRequired,
    InvalidMessage,
    InvalidResponse,
    Notification,
    Request,
    Result,
    SubscriptionAcknowledged,
    SubscriptionEnded,
    VersionNotSupported,
)
from ._extensions import Extension, ExtensionRegistry
from ._framing import DEFAULT_MAX_MESSAGE_SIZE
from ._requests import State, matches_filter

__all__ = ["DEFAULT_CLIENT_INFO", "ClientConnection"]

DEFAULT_CLIENT_INFO = t.Implementation(name="mcp-proto", version="0.1.0")


class _Pending:
    __slots__ = ("honoured", "last_progress", "request")

    def __init__(self, request: Request) -> None:
        self.request = request
        self.honoured: t.SubscriptionFilter | None = None
        self.last_progress: float | None = None


def _bad(message: str, code: int = INVALID_PARAMS) -> t.Error:
    return t.Error(code=code, message=message)


def _log_level(request: Request) -> str | None:
    meta = request.meta
    return meta.log_level if meta is not None else None


class ClientConnection(StreamConnection):
    """The client side of one MCP connection.

    ``capabilities``, ``client_info``, ``protocol_version`` and ``log_level``
    are the defaults stamped into each request's ``_meta``.  ``max_rounds``
    caps the ``input_required`` rounds of one request chain (MRTR-11 lets a
    server ask forever; the client must not loop forever).
    """

    def __init__(
        self,
        *,
        capabilities: t.ClientCapabilities | None = None,
        client_info: t.Implementation | None = DEFAULT_CLIENT_INFO,
        protocol_version: str = LATEST_PROTOCOL_VERSION,
        log_level: t.LoggingLevel | None = None,
        max_rounds: int = 8,
        extensions: Iterable[Extension] = (),
        first_id: int = 1,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        max_depth: int = DEFAULT_MAX_DEPTH,
        tombstones: int = 4096,
    ) -> None:
        super().__init__(
            max_message_size=max_message_size, max_depth=max_depth, tombstones=tombstones
        )
        self.capabilities = capabilities if capabilities is not None else t.ClientCapabilities()
        self.client_info = client_info
        self.protocol_version = protocol_version
        self.log_level = log_level
        self.max_rounds = max_rounds
        self.extensions = ExtensionRegistry(extensions, None)
        #: the server's capabilities, once a ``server/discover`` result arrived
        self.server_capabilities: t.ServerCapabilities | None = None
        self._ids = itertools.count(first_id)
        self._pending: dict[t.RequestId, _Pending] = {}
        self._by_token: dict[t.ProgressToken, t.RequestId] = {}
        self._listens = 0

    # -- helpers for the caller ---------------------------------------------

    def next_id(self) -> int:
        """A fresh request id (monotonic, so never reused, MRTR-14, CANCEL-15)."""
        while True:
            id = next(self._ids)
            if id not in self._pending:
                return id

    def meta(
        self,
        *,
        progress_token: t.ProgressToken | None = None,
        log_level: t.LoggingLevel | None = None,
        **extra: Any,
    ) -> t.RequestMetaObject:
        """A request ``_meta`` from the defaults, with per-request overrides."""
        return t.RequestMetaObject(
            protocol_version=self.protocol_version,
            client_capabilities=self.capabilities,
            client_info=self.client_info,
            log_level=log_level if log_level is not None else self.log_level,
            progress_token=progress_token,
            extra=extra,
        )

    def discover_request(self) -> Request:
        """A ``server/discover`` probe with a fresh id (STDIO-18)."""
        return Request(id=self.next_id(), method="server/discover", params=t.RequestParams())

    def in_flight(self) -> tuple[t.RequestId, ...]:
        return tuple(self._pending)

    # -- sending ------------------------------------------------------------

    def _prepare(self, event: Any) -> tuple[list[dict[str, Any]], Commit | None]:
        if isinstance(event, Request):
            return self._request(event)
        if isinstance(event, Notification):
            return self._notification(event)
        if isinstance(event, InvalidMessage):
            return [], None  # a client never answers (PAT-03)
        raise LocalProtocolError(f"a client cannot send {type(event).__name__}", rule="PAT-03")

    def _request(self, event: Request) -> tuple[list[dict[str, Any]], Commit | None]:
        if event.id in self._pending:
            raise LocalProtocolError(f"request id {event.id!r} is in flight", rule="BASE-06")
        if type(event.id) is not int and type(event.id) is not str:
            raise LocalProtocolError("a request id is a string or an integer", rule="BASE-04")
        info = METHODS.get(event.method)
        params: Any = event.params
        if info is not None and info.kind is Kind.REQUEST:
            ptype = info.params_type
            if ptype is None or not isinstance(event.params, ptype):
                name = ptype.__name__ if ptype is not None else "no params"
                raise LocalProtocolError(f"{event.method} takes {name}")
            if params.meta is None:
                params = attrs.evolve(params, meta=self.meta())
            body = unstructure(params)
        elif self.extensions.request_types(event.method) is not None:
            body = params if isinstance(params, dict) else unstructure(params)
            body = dict(body or {})
            body.setdefault("_meta", unstructure(self.meta()))
        else:
            raise LocalProtocolError(f"unknown request method {event.method!r}", rule="ERR-07")
        request = Request(id=event.id, method=event.method, params=params, round=event.round)
        message = {"jsonrpc": "2.0", "id": event.id, "method": event.method, "params": body}
        token = body["_meta"].get("progressToken")
        if token is not None and token in self._by_token:
            raise LocalProtocolError(f"progressToken {token!r} is in use", rule="PROG-03")

        def commit() -> None:
            self._pending[event.id] = _Pending(request)
            self._gone.discard(event.id)
            if token is not None:
                self._by_token[token] = event.id
            if event.method == "subscriptions/listen":
                self._listens += 1

        return [message], commit

    def _notification(self, event: Notification) -> tuple[list[dict[str, Any]], Commit | None]:
        if event.method != "notifications/cancelled":
            info = METHODS.get(event.method)
            if info is not None or self.extensions.notification(event.method) is None:
                raise LocalProtocolError(f"a client does not send {event.method}", rule="PAT-02")
            body = unstructure(event.params) if event.params is not None else None
            message = {"jsonrpc": "2.0", "method": event.method}
            return [message if body is None else {**message, "params": body}], None
        params = event.params
        if not isinstance(params, t.CancelledNotificationParams):
            raise LocalProtocolError("cancelled needs CancelledNotificationParams")
        pending = self._pending.get(params.request_id)
        if pending is None:
            raise LocalProtocolError(
                f"request {params.request_id!r} is not in flight", rule="CANCEL-08"
            )
        message = {"jsonrpc": "2.0", "method": event.method, "params": unstructure(params)}

        def commit() -> None:
            self._finish(pending.request.id, cancelled=True)

        return [message], commit

    def cancel(self, id: t.RequestId, reason: str | None = None) -> bytes:
        """The ``notifications/cancelled`` bytes for in-flight ``id`` (CANCEL-05, SUB-11)."""
        params = t.CancelledNotificationParams(request_id=id, reason=reason)
        return self.send(Notification(method="notifications/cancelled", params=params))

    def _finish(self, id: t.RequestId, *, cancelled: bool) -> _Pending:
        pending = self._pending.pop(id)
        self._gone.add(id, State.CANCELLED if cancelled else State.DONE)
        meta = pending.request.meta
        if meta is not None and meta.progress_token is not None:
            self._by_token.pop(meta.progress_token, None)
        if pending.request.method == "subscriptions/listen":
            self._listens -= 1
        return pending

    # -- receiving ----------------------------------------------------------

    def _on_invalid(self, error: DecodeError, obj: Any) -> Event | None:
        id = obj.get("id") if type(obj) is dict else None
        if (type(id) is int or type(id) is str) and id in self._pending and "method" not in obj:
            raw = obj.get("result")
            if self.extensions and type(raw) is dict and "error" not in obj:
                return self._on_result(id, raw)  # maybe an extension's resultType
            request = self._finish(id, cancelled=False).request
            return InvalidResponse(id=id, request=request, error=error.error())
        return InvalidMessage(error=error.error())

    def _on_message(self, message: Message) -> Event | None:
        if isinstance(message, t.JSONRPCResultResponse):
            return self._on_result(message.id, message.result)
        if isinstance(message, t.JSONRPCErrorResponse):
            return self._on_error(message)
        if hasattr(message, "id"):
            error = _bad("servers do not send requests (PAT-03)", INVALID_REQUEST)
            return InvalidMessage(error=error)
        return self._on_notification(message)

    def _late(self, id: t.RequestId | None) -> Event | None:
        if id is not None and self._gone.get(id) is not None:
            self._dropped_messages += 1  # a late response after cancel (CANCEL-11, CANCEL-12)
            return None
        error = _bad(f"response to unknown request {id!r}", INVALID_REQUEST)
        return InvalidMessage(error=error)

    def _on_result(self, id: t.RequestId, raw: Any) -> Event | None:
        if id not in self._pending:
            return self._late(id)
        request = self._finish(id, cancelled=False).request
        try:
            result = self._structure_result(request, raw)
        except DecodeError as e:
            return InvalidResponse(id=id, request=request, error=e.error())
        if isinstance(result, t.InputRequiredResult):
            return self._input_required(id, request, result)
        if request.method == "subscriptions/listen":
            return SubscriptionEnded(id=id, graceful=True, result=result)
        if isinstance(result, t.DiscoverResult):
            self.server_capabilities = result.capabilities
        return Result(id=id, result=result)

    def _structure_result(self, request: Request, raw: Any) -> Any:
        body = unstructure(raw)
        ttl = body.get("ttlMs")
        if type(ttl) is float or (type(ttl) is int and ttl < 0):
            body["ttlMs"] = max(0, int(ttl))  # negative is 0, fractions floored (CACHE-06)
        if "cacheScope" in body and body["cacheScope"] not in ("public", "private"):
            body["cacheScope"] = "private"  # unknown scope: the safe reading (edge 58)
        kind = body.get("resultType", "complete")
        if kind not in ("complete", "input_required"):
            meta = request.meta
            cls = self.extensions.result_type(
                kind,
                meta.client_capabilities if meta is not None else None,
                self.server_capabilities,
            )
            if cls is None:
                raise DecodeError(INVALID_PARAMS, f"unknown resultType {kind!r} (BASE-14)")
            return structure(body, cls)
        types = self.extensions.request_types(request.method)
        if types is not None and request.method not in METHODS:
            if kind == "input_required":
                message = f"input_required is not allowed on {request.method} (MRTR-03)"
                raise DecodeError(INVALID_PARAMS, message)
            return body if types[1] is None else structure(body, types[1])
        return structure_result(body, request.method)

    def _input_required(
        self, id: t.RequestId, request: Request, result: t.InputRequiredResult
    ) -> Event:
        problem = None
        if not result.input_requests and result.request_state is None:
            problem = "input_required without inputRequests or requestState (MRTR-09)"
        else:
            meta = request.meta
            bad = undeclared_input_requests(
                meta.client_capabilities if meta is not None else None, result.input_requests
            )
            if bad:
                problem = f"input requests {bad} need undeclared capabilities (MRTR-10)"
            elif request.round + 1 > self.max_rounds:
                problem = f"more than {self.max_rounds} input_required rounds"
        if problem is not None:
            return InvalidResponse(id=id, request=request, error=_bad(problem))
        return InputRequired(id=id, result=result, request=request, round=request.round + 1)

    def _on_error(self, message: t.JSONRPCErrorResponse) -> Event | None:
        id, error = message.id, message.error
        if id is None:
            return ErrorResponse(id=None, error=error)  # cannot be correlated (BASE-16)
        if id not in self._pending:
            return self._late(id)
        request = self._finish(id, cancelled=False).request
        if error.code == UNSUPPORTED_PROTOCOL_VERSION and isinstance(error.data, dict):
            supported = error.data.get("supported")
            if isinstance(supported, list) and all(type(v) is str for v in supported):
                requested = error.data.get("requested")
                return VersionNotSupported(
                    id=id,
                    request=request,
                    requested=requested if type(requested) is str else self.protocol_version,
                    supported=tuple(supported),
                    error=error,
                )
        return ErrorResponse(id=id, error=error)

    def _on_notification(self, message: Any) -> Event | None:
        method, params = message.method, message.params
        info = METHODS.get(method)
        if info is None or info.direction is Direction.CLIENT_TO_SERVER:
            if self.extensions.notification(method) is not None:
                return Notification(method=method, params=params)
            self._dropped_messages += 1
            return None
        if method == "notifications/progress":
            return self._on_progress(params)
        if method == "notifications/message":
            # No request id on the wire: attribute it only when unambiguous (LOG-05).
            asked = [
                i
                for i, p in self._pending.items()
                if _log_level(p.request) and p.request.method != "subscriptions/listen"
            ]
            owner = asked[0] if len(asked) == 1 else None
            return Notification(method=method, params=params, request_id=owner)
        if method == "notifications/cancelled":
            pending = self._pending.get(params.request_id)
            if pending is None or pending.request.method != "subscriptions/listen":
                self._dropped_messages += 1  # servers cancel only listens (CANCEL-02, edge 66)
                return None
            self._finish(params.request_id, cancelled=False)
            return SubscriptionEnded(id=params.request_id, graceful=True)
        meta = getattr(params, "meta", None)  # list_changed params are optional
        sub = meta.subscription_id if meta is not None else None
        pending = self._pending.get(sub) if sub is not None else None
        if pending is None or pending.request.method != "subscriptions/listen":
            if sub is not None and self._gone.get(sub) is not None:
                self._dropped_messages += 1
                return None
            return InvalidMessage(error=_bad(f"{method} for no open subscription (SUB-09)"))
        if method == "notifications/subscriptions/acknowledged":
            if pending.honoured is not None:
                return InvalidMessage(error=_bad(f"listen {sub!r} acknowledged twice (SUB-04)"))
            pending.honoured = params.notifications
            return SubscriptionAcknowledged(
                id=pending.request.id, notifications=params.notifications
            )
        if pending.honoured is None:
            return InvalidMessage(error=_bad(f"{method} before the acknowledgement (SUB-04)"))
        if not matches_filter(method, params, pending.honoured):
            return InvalidMessage(error=_bad(f"{method} was not asked for (SUB-02)"))
        return Notification(method=method, params=params, request_id=sub)

    def _on_progress(self, params: t.ProgressNotificationParams) -> Event | None:
        id = self._by_token.get(params.progress_token)
        pending = self._pending[id] if id is not None else None
        if pending is not None and pending.request.method == "subscriptions/listen":
            pending = None  # progress is request-scoped, never on a listen (SUB-15, edge 76)
        last = pending.last_progress if pending is not None else None
        if pending is None or (last is not None and not params.progress > last):
            self._dropped_messages += 1  # unknown token or not increasing (PROG-05, PROG-06)
            return None
        pending.last_progress = params.progress
        return Notification(method="notifications/progress", params=params, request_id=id)

    def _on_close(self) -> ConnectionClosed:
        subs = tuple(
            i for i, p in self._pending.items() if p.request.method == "subscriptions/listen"
        )
        rest = tuple(i for i in self._pending if i not in subs)
        return ConnectionClosed(in_flight=rest, subscriptions=subs)

    def _in_flight_count(self) -> int:
        return len(self._pending) - self._listens

    def _subscription_count(self) -> int:
        return self._listens
