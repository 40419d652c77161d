"""What a server may send, checked on ``send``; every refusal names its rule.

==================  ==========================================================
event               rules
==================  ==========================================================
``Result``          only for an in-flight request (dropped if cancelled);
                    the method's result class, or ``InputRequiredResult`` on
                    ``tools/call``/``prompts/get``/``resources/read`` only
                    (MRTR-03) with ``inputRequests`` or ``requestState``
                    (MRTR-09) and only input requests the client declared
                    (MRTR-10); cacheable complete results carry ``ttlMs`` >= 0
                    and ``cacheScope`` (CACHE-01, CACHE-07); ``resultType`` and
                    ``serverInfo`` stamped (META-11); a listen result gets its
                    ``subscriptionId`` (SUB-12)
``ErrorResponse``   only for an in-flight request; never a code of the legacy
                    or reserved ranges beyond -32020/-32021/-32022 (ERR-02/03)
progress            the request's own ``progressToken`` (PROG-06), ``progress``
                    increasing (PROG-05), never for a listen (SUB-15)
log message         the server offers ``logging`` (LOG-02), the request set
                    ``logLevel`` (LOG-03), the level is at or above it (LOG-04)
acknowledged        first and once per listen (SUB-04), a subset of the
                    request's filter (SUB-06)
change              on a listen after its ack, of a type it asked for (SUB-02,
                    SUB-16); ``request_id=None`` fans out to every match
cancelled           only for an open listen (CANCEL-02, CANCEL-03)
==================  ==========================================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from .. import types as t
from .._codec import METHODS, unstructure
from .._errors import LocalProtocolError
from ._base import Commit
from ._capabilities import undeclared_input_requests
from ._events import ErrorResponse, InvalidMessage, Notification, Result
from ._extensions import ExtensionRegistry

if TYPE_CHECKING:
    from ._server import ServerConnection

__all__ = ["LOG_LEVELS", "InFlight", "ServerRules", "matches_filter"]

#: RFC 5424 severities in ascending order (LOG-04).
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_RANK = {name: i for i, name in enumerate(LOG_LEVELS)}
_SUB_ID = "io.modelcontextprotocol/subscriptionId"
_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
_FILTER_ATTRS = {
    f.metadata["wire"]: f.name for f in attrs.fields(t.SubscriptionFilter) if f.metadata
}
#: change notification -> the SubscriptionFilter attribute that opts into it (from the registry)
_CHANGES = {m: _FILTER_ATTRS[i.listen_filter] for m, i in METHODS.items() if i.listen_filter}


class InFlight:
    """One request the server received and has not finished.

    ``listen`` holds the ``SubscriptionFilter`` a ``subscriptions/listen``
    asked for (``None`` for other methods); ``honoured`` the acknowledged one.
    """

    __slots__ = (
        "capabilities",
        "honoured",
        "id",
        "last_progress",
        "listen",
        "log_rank",
        "method",
        "progress_token",
    )

    def __init__(
        self,
        id: t.RequestId,
        method: str,
        meta: t.RequestMetaObject,
        params: Any,
    ) -> None:
        self.id = id
        self.method = method
        self.capabilities = meta.client_capabilities
        self.progress_token = meta.progress_token
        self.log_rank = _RANK[meta.log_level] if meta.log_level is not None else None
        self.last_progress: float | None = None
        self.listen: t.SubscriptionFilter | None = (
            params.notifications if params is not None else None
        )
        self.honoured: t.SubscriptionFilter | None = None


def matches_filter(method: str, params: Any, honoured: t.SubscriptionFilter) -> bool:
    """Whether a change notification is one the acknowledged filter covers (SUB-02, SUB-16).

    ``notifications/resources/updated`` matches a listed URI exactly, or a
    sub-resource of it (the listed URI followed by ``/``, ``#`` or ``?``).
    """
    attr = _CHANGES.get(method)
    if attr is None:
        return False
    if attr != "resource_subscriptions":
        return bool(getattr(honoured, attr))
    uri = getattr(params, "uri", None)
    if not isinstance(uri, str):
        return False
    for listed in honoured.resource_subscriptions or ():
        if uri == listed or (uri.startswith(listed) and uri[len(listed)] in "/#?"):
            return True
        if listed.endswith("/") and uri.startswith(listed):
            return True
    return False


def _subset(honoured: t.SubscriptionFilter, asked: t.SubscriptionFilter) -> str | None:
    for name in ("tools_list_changed", "prompts_list_changed", "resources_list_changed"):
        if getattr(honoured, name) and not getattr(asked, name):
            return name
    extra = set(honoured.resource_subscriptions or ()) - set(asked.resource_subscriptions or ())
    return f"resourceSubscriptions {sorted(extra)}" if extra else None


class ServerRules:
    """Checks and builds what a :class:`ServerConnection` sends."""

    def __init__(
        self,
        conn: ServerConnection,
        server_info: dict[str, Any] | None,
        extensions: ExtensionRegistry,
    ) -> None:
        self.conn = conn
        self.server_info = server_info
        self.extensions = extensions
        self.by_token: dict[t.ProgressToken, t.RequestId] = {}

    def prepare(self, event: Any) -> tuple[list[dict[str, Any]], Commit | None]:
        if isinstance(event, Result):
            return self._result(event)
        if isinstance(event, ErrorResponse):
            return self._error(event)
        if isinstance(event, Notification):
            return self._notification(event)
        if isinstance(event, InvalidMessage):
            reply = [unstructure(event.reply)] if event.reply is not None else []
            return reply, None
        raise LocalProtocolError(f"a server cannot send {type(event).__name__}", rule="PAT-03")

    # -- responses ----------------------------------------------------------

    def _target(self, id: t.RequestId, what: str) -> Any:
        record = self.conn._in_flight.get(id)
        if record is None:
            gone = self.conn._gone.get(id)
            if gone:
                return None  # cancelled: dropped
            state = "was already answered" if gone is False else "is not in flight"
            raise LocalProtocolError(f"cannot send {what}: request {id!r} {state}", rule="BASE-09")
        return record

    def _finisher(self, record: InFlight) -> Commit:
        return lambda: self.conn._finish(record, cancelled=False)

    def _result(self, event: Result) -> tuple[list[dict[str, Any]], Commit | None]:
        record = self._target(event.id, "a result")
        if record is None:
            return self.conn._drop()
        result = event.result
        method = record.method
        info = METHODS.get(method)
        if isinstance(result, t.InputRequiredResult):
            self._check_input_required(record, result, info)
        elif info is not None and info.result_type is not None:
            if not isinstance(result, info.result_type):
                raise LocalProtocolError(
                    f"{method} answers with {info.result_type.__name__}, "
                    f"not {type(result).__name__}",
                    rule="BASE-09",
                )
        else:
            self.extensions.check_result(method, result)
        if record.listen is not None and getattr(result, "meta", 0) is None:
            meta = t.SubscriptionsListenResultMetaObject(subscription_id=record.id)
            result = attrs.evolve(result, meta=meta)  # the core stamps it (SUB-12)
        body = unstructure(result)
        if info is not None and info.cacheable and body.get("resultType") == "complete":
            ttl, scope = body.get("ttlMs"), body.get("cacheScope")
            if type(ttl) is not int or ttl < 0 or scope not in ("public", "private"):
                raise LocalProtocolError(
                    f"a {method} result needs ttlMs >= 0 and cacheScope", rule="CACHE-01"
                )
        if self.server_info is not None or record.listen is not None:
            stamped: dict[str, Any] = dict(body.get("_meta") or {})
            if self.server_info is not None:
                stamped.setdefault(_SERVER_INFO, self.server_info)
            if record.listen is not None:
                stamped[_SUB_ID] = record.id
            body["_meta"] = stamped
        message = {"jsonrpc": "2.0", "id": record.id, "result": body}
        return [message], self._finisher(record)

    def _check_input_required(
        self, record: InFlight, result: t.InputRequiredResult, info: Any
    ) -> None:
        if info is None or not info.input_required_allowed:
            raise LocalProtocolError(
                f"input_required is not allowed on {record.method}", rule="MRTR-03"
            )
        if not result.input_requests and result.request_state is None:
            raise LocalProtocolError(
                "an InputRequiredResult needs inputRequests or requestState", rule="MRTR-09"
            )
        bad = undeclared_input_requests(record.capabilities, result.input_requests)
        if bad:
            raise LocalProtocolError(
                f"input requests {bad} need client capabilities this request did not declare",
                rule="MRTR-10",
            )

    def _error(self, event: ErrorResponse) -> tuple[list[dict[str, Any]], Commit | None]:
        code = event.error.code
        if -32099 <= code <= -32000 and code not in (-32020, -32021, -32022):
            raise LocalProtocolError(f"error code {code} is reserved", rule="ERR-03")
        if event.id is None:
            return [{"jsonrpc": "2.0", "error": unstructure(event.error)}], None
        record = self._target(event.id, "an error")
        if record is None:
            return self.conn._drop()
        message = {"jsonrpc": "2.0", "id": record.id, "error": unstructure(event.error)}
        return [message], self._finisher(record)

    # -- notifications ------------------------------------------------------

    def _notification(self, event: Notification) -> tuple[list[dict[str, Any]], Commit | None]:
        method, params = event.method, event.params
        if method == "notifications/progress":
            return self._progress(event)
        if method == "notifications/message":
            return self._log(event)
        if method == "notifications/subscriptions/acknowledged":
            return self._ack(event)
        if method == "notifications/cancelled":
            return self._cancel(event)
        if method in _CHANGES:
            return self._change(event)
        if self.extensions.notification(method) is None:
            raise LocalProtocolError(f"unknown notification {method!r}", rule="BASE-18")
        record = self._target(event.request_id, method) if event.request_id is not None else None
        if event.request_id is not None and record is None:
            return self.conn._drop()
        return [_note(method, params)], None

    def _scoped(self, event: Notification, rule: str) -> InFlight | None:
        if event.request_id is None:
            raise LocalProtocolError(f"{event.method} needs the request it belongs to", rule=rule)
        record: InFlight | None = self._target(event.request_id, event.method)
        if record is not None and record.listen is not None:
            raise LocalProtocolError(
                f"{event.method} is request-scoped, not for a listen stream", rule="SUB-15"
            )
        return record

    def _progress(self, event: Notification) -> tuple[list[dict[str, Any]], Commit | None]:
        params = event.params
        if not isinstance(params, t.ProgressNotificationParams):
            raise LocalProtocolError("progress needs ProgressNotificationParams", rule="PROG-04")
        id = self.by_token.get(params.progress_token)
        if id is None:
            if event.request_id is not None and self.conn._gone.get(event.request_id):
                return self.conn._drop()
            raise LocalProtocolError(
                f"no in-flight request has progressToken {params.progress_token!r}",
                rule="PROG-06",
            )
        if event.request_id is not None and event.request_id != id:
            raise LocalProtocolError(
                f"progressToken belongs to request {id!r}, not {event.request_id!r}",
                rule="PROG-06",
            )
        record = self.conn._in_flight[id]
        if record.listen is not None:
            raise LocalProtocolError(
                "progress is request-scoped, not for a listen stream", rule="SUB-15"
            )
        last = record.last_progress
        if last is not None and not params.progress > last:
            raise LocalProtocolError(
                f"progress must increase ({params.progress} after {last})", rule="PROG-05"
            )

        def commit() -> None:
            record.last_progress = params.progress

        return [_note(event.method, params)], commit

    def _log(self, event: Notification) -> tuple[list[dict[str, Any]], Commit | None]:
        params = event.params
        if not isinstance(params, t.LoggingMessageNotificationParams):
            raise LocalProtocolError("a log message needs LoggingMessageNotificationParams")
        if self.conn.capabilities.logging is None:
            raise LocalProtocolError(
                "log messages need the logging capability in the server's capabilities",
                rule="LOG-02",
            )
        record = self._scoped(event, "LOG-05")
        if record is None:
            return self.conn._drop()
        if record.log_rank is None:
            raise LocalProtocolError(
                f"request {record.id!r} did not set io.modelcontextprotocol/logLevel",
                rule="LOG-03",
            )
        if _RANK[params.level] < record.log_rank:
            raise LocalProtocolError(
                f"level {params.level!r} is below the requested {LOG_LEVELS[record.log_rank]!r}",
                rule="LOG-04",
            )
        return [_note(event.method, params)], None

    def _listen(self, event: Notification, rule: str) -> InFlight | None:
        if event.request_id is None:
            raise LocalProtocolError(f"{event.method} needs the listen request id", rule=rule)
        record: InFlight | None = self._target(event.request_id, event.method)
        if record is not None and record.listen is None:
            raise LocalProtocolError(
                f"request {record.id!r} is not a subscriptions/listen", rule=rule
            )
        return record

    def _ack(self, event: Notification) -> tuple[list[dict[str, Any]], Commit | None]:
        params = event.params
        if not isinstance(params, t.SubscriptionsAcknowledgedNotificationParams):
            raise LocalProtocolError(
                "an acknowledgement needs SubscriptionsAcknowledgedNotificationParams"
            )
        record = self._listen(event, "SUB-04")
        if record is None:
            return self.conn._drop()
        if record.honoured is not None:
            raise LocalProtocolError(
                f"listen {record.id!r} is already acknowledged", rule="SUB-04"
            )
        assert record.listen is not None
        extra = _subset(params.notifications, record.listen)
        if extra is not None:
            raise LocalProtocolError(f"the client did not ask for {extra}", rule="SUB-06")

        def commit() -> None:
            record.honoured = params.notifications

        return [_note(event.method, params, record.id)], commit

    def _cancel(self, event: Notification) -> tuple[list[dict[str, Any]], Commit | None]:
        params = event.params
        if not isinstance(params, t.CancelledNotificationParams):
            raise LocalProtocolError("cancelled needs CancelledNotificationParams")
        event = Notification(method=event.method, params=params, request_id=params.request_id)
        record = self._listen(event, "CANCEL-03")
        if record is None:
            return self.conn._drop()
        return [_note(event.method, params)], self._finisher(record)

    def _change(self, event: Notification) -> tuple[list[dict[str, Any]], Commit | None]:
        method, params = event.method, event.params
        if event.request_id is not None:
            record = self._listen(event, "SUB-08")
            if record is None:
                return self.conn._drop()
            if record.honoured is None:
                raise LocalProtocolError(
                    f"listen {record.id!r} must be acknowledged first", rule="SUB-04"
                )
            if not matches_filter(method, params, record.honoured):
                raise LocalProtocolError(
                    f"listen {record.id!r} did not ask for this {method}", rule="SUB-02"
                )
            return [_note(method, params, record.id)], None
        out = [
            _note(method, params, r.id)
            for r in self.conn._in_flight.values()
            if r.honoured is not None and matches_filter(method, params, r.honoured)
        ]
        return out, None


def _note(method: str, params: Any, subscription: t.RequestId | None = None) -> dict[str, Any]:
    body = unstructure(params) if params is not None else None
    if subscription is not None:
        body = dict(body or {})
        body["_meta"] = {**(body.get("_meta") or {}), _SUB_ID: subscription}
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if body is not None:
        message["params"] = body
    return message
