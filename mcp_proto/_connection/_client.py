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

The requests live in the same :class:`~._requests.RequestTracker` the server
uses, moved by the same table: what arrives is checked with
``check(..., received=True)``, which runs only the guards a receiver acts on
(``_guards.RECEIVED``); a refusal becomes the event above, naming its rule, or a
counted drop where the spec says to ignore the message (``docs/connections.md``).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

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
from ._capabilities import checked_capabilities
from ._events import (
    NEED_DATA,
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
    SubscriptionAcknowledged,
    SubscriptionEnded,
    VersionNotSupported,
)
from ._extensions import Extension, ExtensionRegistry
from ._framing import DEFAULT_MAX_MESSAGE_SIZE
from ._guards import GuardConfig, narrowed
from ._legacy import legacy_types
from ._legacy_client import LEGACY_CLIENT_METHODS, LegacyClientSession
from ._requests import TERMINAL, Move, Refusal, RequestRecord, RequestTracker, State

__all__ = ["DEFAULT_CLIENT_INFO", "ClientConnection"]

DEFAULT_CLIENT_INFO = t.Implementation(name="mcp-proto", version="0.1.0")


def _bad(message: str, code: int = INVALID_PARAMS) -> t.Error:
    return t.Error(code=code, message=message)


def _sent(record: RequestRecord) -> Request:
    """The request the client sent for ``record``."""
    request: Request = record.sent
    return request


def _refused(refusal: Refusal) -> t.Error:
    return _bad(f"{refusal.why} ({refusal.rule})")


class ClientConnection(StreamConnection[ClientEvent]):
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
        self.capabilities = checked_capabilities(capabilities, t.ClientCapabilities)
        self.client_info = client_info
        self.protocol_version = protocol_version
        self.log_level = log_level
        self.max_rounds = max_rounds
        self.extensions = ExtensionRegistry(extensions, None)
        #: the server's capabilities, once a ``server/discover`` result arrived
        self.server_capabilities: t.ServerCapabilities | None = None
        self._ids = itertools.count(first_id)
        self._requests = RequestTracker(self._gone, GuardConfig(extensions=self.extensions))
        #: the ``initialize``-era session, once an ``initialize`` was answered (issue 16)
        self.legacy: LegacyClientSession | None = None

    # -- helpers for the caller ---------------------------------------------

    if TYPE_CHECKING:  # the same method, typed for this role: a client is never paused

        def next_event(self) -> ClientEvent | type[NEED_DATA]: ...

    def next_id(self) -> int:
        """A fresh request id (monotonic, so never reused, MRTR-14, CANCEL-15)."""
        while True:
            id = next(self._ids)
            if id not in self._requests.live:
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
        return tuple(self._requests.live)

    def request_state(self, id: t.RequestId) -> State:
        """Where request ``id`` is in its lifecycle (:mod:`mcp_proto.lifecycle`)."""
        return self._requests.state(id)

    # -- sending ------------------------------------------------------------

    def _prepare(self, event: Event) -> tuple[list[dict[str, Any]], Commit | None]:
        if self.legacy is not None:
            return self.legacy.prepare(event)
        if isinstance(event, Request) and event.method == "initialize":
            return self._legacy_request(event)
        return self._prepare_modern(event)

    def _prepare_modern(self, event: Event) -> tuple[list[dict[str, Any]], Commit | None]:
        if isinstance(event, Request):
            return self._request(event)
        if isinstance(event, Notification):
            return self._notification(event)
        if isinstance(event, InvalidMessage):
            return [], None  # a client never answers (PAT-03)
        raise LocalProtocolError(f"a client cannot send {type(event).__name__}", rule="PAT-03")

    def _request(self, event: Request) -> tuple[list[dict[str, Any]], Commit | None]:
        if type(event.id) is not int and type(event.id) is not str:
            raise LocalProtocolError("a request id is a string or an integer", rule="BASE-04")
        requests = self._requests
        listen = event.method == "subscriptions/listen"
        move = Move.LISTEN if listen else Move.REQUEST
        if event.id in requests.live:  # the table opens a request on any id that is not live
            refused = requests.entry(event.id, move)
            assert isinstance(refused, Refusal)  # BASE-06
            why = refused.why.format(id=event.id, method=event.method, what=event.method)
            raise LocalProtocolError(why, rule=refused.rule)
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
        if token is not None and token in requests.by_token:
            raise LocalProtocolError(f"progressToken {token!r} is in use", rule="PROG-03")
        record = RequestRecord(event.id, event.method, request.meta, params if listen else None)
        record.sent = request
        record.progress_token = token  # as sent, also for an extension's dict _meta

        def commit() -> None:
            requests.open(record)

        return [message], commit

    def _legacy_request(self, event: Request) -> tuple[list[dict[str, Any]], Commit]:
        """``initialize`` (the EraProbe's), or a request only a legacy session has:
        its params are the 2025-11-25 ones (``mcp_proto.types.legacy``) or a dict."""
        if type(event.id) is not int and type(event.id) is not str:
            raise LocalProtocolError("a request id is a string or an integer", rule="BASE-04")
        if event.id in self._requests.live:
            raise LocalProtocolError(f"request id {event.id!r} is in flight", rule="BASE-06")
        if event.method == "initialize" and any(
            r.method == "initialize" for r in self._requests.live.values()
        ):
            raise LocalProtocolError("initialize is in flight already (LEG-01)")
        params = event.params
        body = params if isinstance(params, dict) or params is None else unstructure(params)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": event.id, "method": event.method}
        if body is not None:
            message["params"] = body
        record = RequestRecord(event.id, event.method, None, None)
        record.sent = event

        def commit() -> None:
            self._requests.open(record)

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
        record = self._requests.live.get(params.request_id)
        if record is None:
            raise LocalProtocolError(
                f"request {params.request_id!r} is not in flight", rule="CANCEL-08"
            )
        message = {"jsonrpc": "2.0", "method": event.method, "params": unstructure(params)}

        def commit() -> None:
            self._requests.apply(record, State.CANCELLED)

        return [message], commit

    def cancel(self, id: t.RequestId, reason: str | None = None) -> bytes:
        """The ``notifications/cancelled`` bytes for in-flight ``id`` (CANCEL-05, SUB-11)."""
        params = t.CancelledNotificationParams(request_id=id, reason=reason)
        return self.send(Notification(method="notifications/cancelled", params=params))

    def _finish(self, record: RequestRecord, to: State = State.DONE) -> Request:
        """End ``record`` (a response came, or a broken one): the request it was."""
        self._requests.apply(record, to)
        return _sent(record)

    # -- receiving ----------------------------------------------------------

    def _on_invalid(self, error: DecodeError, obj: Any) -> ClientEvent | None:
        id = obj.get("id") if type(obj) is dict else None
        record = self._requests.live.get(id) if type(id) is int or type(id) is str else None
        if record is not None and "method" not in obj:
            raw = obj.get("result")
            if self.extensions and type(raw) is dict and "error" not in obj:
                return self._on_result(record.id, raw)  # maybe an extension's resultType
            return InvalidResponse(id=record.id, request=self._finish(record), error=error.error())
        return InvalidMessage(error=error.error())

    def _on_message(self, message: Message) -> ClientEvent | None:
        if isinstance(message, t.JSONRPCResultResponse):
            return self._on_result(message.id, message.result)
        if isinstance(message, t.JSONRPCErrorResponse):
            return self._on_error(message)
        if hasattr(message, "id"):
            error = _bad("servers do not send requests (PAT-03)", INVALID_REQUEST)
            return InvalidMessage(error=error)
        return self._on_notification(message)

    def _late(self, id: t.RequestId | None) -> ClientEvent | None:
        if id is not None and self._requests.state(id) in TERMINAL:
            # after our cancel (CANCEL-11, CANCEL-12), or a second answer: dropped
            self._dropped_messages += 1
            return None
        error = _bad(f"response to unknown request {id!r}", INVALID_REQUEST)
        return InvalidMessage(error=error)

    def _on_result(self, id: t.RequestId, raw: Any) -> ClientEvent | None:
        record = self._requests.live.get(id)
        if record is None:
            return self._late(id)
        request: Request = record.sent
        try:
            if record.method == "initialize":
                result = structure(unstructure(raw), legacy_types().InitializeResult)
            elif record.method in LEGACY_CLIENT_METHODS and self.legacy is not None:
                result = None  # they answer {} (the codec checked it is an object)
            else:
                result = self._structure_result(request, raw)
        except DecodeError as e:
            return InvalidResponse(id=id, request=self._finish(record), error=e.error())
        if record.method == "initialize":  # the legacy session starts (issue 16)
            self._finish(record)
            self.legacy = LegacyClientSession(self, result)
            self._router = self.legacy.route
            return Result(id=id, result=result)
        if isinstance(result, t.InputRequiredResult):
            return self._input_required(record, result)
        self._finish(record)
        if record.listen is not None:
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
            if kind == "input_required":  # the lifecycle refuses it (MRTR-03)
                return structure(body, t.InputRequiredResult)
            return body if types[1] is None else structure(body, types[1])
        return structure_result(body, request.method)

    def _input_required(self, record: RequestRecord, result: t.InputRequiredResult) -> ClientEvent:
        request = _sent(record)
        checked = self._requests.check(Move.INPUT_REQUIRED, record.id, result, received=True)
        if isinstance(checked, Refusal):  # MRTR-03, MRTR-09, MRTR-10: the lifecycle's guards
            self._finish(record)
            return InvalidResponse(id=record.id, request=request, error=_refused(checked))
        if request.round + 1 > self.max_rounds:  # the client's own cap (MRTR-11)
            self._finish(record)
            problem = f"more than {self.max_rounds} input_required rounds"
            return InvalidResponse(id=record.id, request=request, error=_bad(problem))
        self._finish(record, checked[1])
        return InputRequired(id=record.id, result=result, request=request, round=request.round + 1)

    def _on_error(self, message: t.JSONRPCErrorResponse) -> ClientEvent | None:
        id, error = message.id, message.error
        if id is None:
            return ErrorResponse(id=None, error=error)  # cannot be correlated (BASE-16)
        record = self._requests.live.get(id)
        if record is None:
            return self._late(id)
        request = self._finish(record)
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

    def _on_notification(self, message: Any) -> ClientEvent | None:
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
                r.id
                for r in self._requests.live.values()
                if r.log_rank is not None and r.listen is None
            ]
            owner = asked[0] if len(asked) == 1 else None
            return Notification(method=method, params=params, request_id=owner)
        if method == "notifications/cancelled":
            ended = self._requests.check(Move.END_LISTEN, params.request_id, received=True)
            if isinstance(ended, Refusal):
                self._dropped_messages += 1  # servers cancel only listens (CANCEL-02, edge 66)
                return None
            self._finish(*ended)
            return SubscriptionEnded(id=params.request_id, graceful=True)
        return self._on_stream(method, params)

    def _on_stream(self, method: str, params: Any) -> ClientEvent | None:
        """An acknowledgement or a change on a listen stream, by its ``subscriptionId``."""
        meta = getattr(params, "meta", None)  # list_changed params are optional
        sub = meta.subscription_id if meta is not None else None
        if sub is None:
            why = f"{method} without a subscriptionId names no open subscription (SUB-09)"
            return InvalidMessage(error=_bad(why))
        requests = self._requests
        state = requests.state(sub)
        if state in TERMINAL:
            self._dropped_messages += 1  # after the listen ended (ours or the server's end)
            return None
        if state is State.UNKNOWN:
            return InvalidMessage(error=_bad(f"{method} for no open subscription (SUB-09)"))
        if method == "notifications/subscriptions/acknowledged":
            acked = requests.check(Move.ACK, sub, params.notifications, received=True)
            if isinstance(acked, Refusal):  # twice, or not a listen (SUB-04)
                return InvalidMessage(error=_refused(acked))
            record, to = acked
            assert record.listen is not None  # only a listen moves on an ack
            record.honoured = narrowed(params.notifications, record.listen)  # SUB-07
            requests.apply(record, to)
            return SubscriptionAcknowledged(id=sub, notifications=record.honoured)
        changed = requests.check(Move.CHANGE, sub, (method, params), received=True, what=method)
        if isinstance(changed, Refusal):  # before the ack (SUB-04), not asked for (SUB-02)
            return InvalidMessage(error=_refused(changed))
        return Notification(method=method, params=params, request_id=sub)

    def _on_progress(self, params: t.ProgressNotificationParams) -> ClientEvent | None:
        record = self._requests.by_token.get(params.progress_token)
        checked = (
            self._requests.check(Move.PROGRESS, record.id, params, received=True)
            if record is not None
            else None
        )
        if checked is None or isinstance(checked, Refusal):
            # unknown token, on a listen, or not increasing (PROG-05, PROG-06, SUB-15)
            self._dropped_messages += 1
            return None
        record, _ = checked
        record.last_progress = params.progress
        return Notification(method="notifications/progress", params=params, request_id=record.id)

    def _on_close(self) -> ConnectionClosed:
        live = self._requests.live.values()
        subs = tuple(r.id for r in live if r.listen is not None)
        rest = tuple(r.id for r in live if r.listen is None)
        return ConnectionClosed(in_flight=rest, subscriptions=subs)

    def _in_flight_count(self) -> int:
        return self._requests.calls

    def _subscription_count(self) -> int:
        return self._requests.listens
