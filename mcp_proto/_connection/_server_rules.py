"""What a server may send, checked on ``send``; every refusal names its rule.

What may happen to a request when is the lifecycle table's
(:data:`~mcp_proto._connection._requests.TRANSITIONS`, drawn in
``docs/connections.md``): results and errors only for an in-flight request (dropped
if it was cancelled), with the method's result class (BASE-09), ``input_required``
only where allowed and well formed (MRTR-03/09/10), cache fields on cacheable
results (CACHE-01/07); progress increasing (PROG-05) and never on a listen (SUB-15);
log messages at or above the level the request set (LOG-03/04); a listen
acknowledged first and once (SUB-04), with a subset of its filter (SUB-06), then
changes of the kinds it asked for (SUB-02/16); a server's cancel only for a listen
(CANCEL-02/03).  Checked here, because they are the connection's and not one
request's: the params' class, a progress token's owner (PROG-06), the logging
capability (LOG-02), reserved error codes (ERR-02/03), and the stamps: ``resultType``
and ``serverInfo`` (META-11), a listen result's ``subscriptionId`` (SUB-12).
"""

from __future__ import annotations

from typing import Any, TypeAlias

import attrs

from .. import types as t
from .._codec import unstructure
from .._errors import LocalProtocolError
from ._base import Commit
from ._events import ErrorResponse, Event, InvalidMessage, Notification, Result
from ._extensions import ExtensionRegistry
from ._requests import CHANGES, Move, RequestRecord, RequestTracker, State, matches_filter

__all__ = ["ServerRules"]

_SUB_ID = "io.modelcontextprotocol/subscriptionId"
_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

#: the messages to send and the change to commit once encoded; ``None``: dropped (the
#: request was cancelled, STDIO-13)
Prepared: TypeAlias = "tuple[list[dict[str, Any]], Commit | None] | None"


class ServerRules:
    """Checks and builds what a server sends, moving its requests by the lifecycle table.

    Per-request rules are the table's (``_requests.TRANSITIONS`` and its guards);
    what is left here is what a server builds (``serverInfo`` and ``subscriptionId``
    stamps, fan-out) and the rules of the connection, not of one request: the
    params' class, the logging capability (LOG-02), reserved error codes (ERR-03).
    """

    def __init__(
        self,
        tracker: RequestTracker,
        server_info: dict[str, Any] | None,
        extensions: ExtensionRegistry,
        *,
        logging: bool,
    ) -> None:
        self.tracker = tracker
        self.server_info = server_info
        self.extensions = extensions
        self.logging = logging

    def prepare(self, event: Event) -> Prepared:
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

    def _ending(self, record: RequestRecord, to: State) -> Commit:
        return lambda: self.tracker.apply(record, to)

    # -- responses ----------------------------------------------------------

    def _result(self, event: Result) -> Prepared:
        result = event.result
        move = Move.INPUT_REQUIRED if isinstance(result, t.InputRequiredResult) else Move.RESULT
        stepped = self.tracker.step(move, event.id, result, what="a result")
        if stepped is None:
            return None
        record, to = stepped
        if record.listen is not None and getattr(result, "meta", 0) is None:
            meta = t.SubscriptionsListenResultMetaObject(subscription_id=record.id)
            result = attrs.evolve(result, meta=meta)  # the core stamps it (SUB-12)
        body = unstructure(result)
        if self.server_info is not None or record.listen is not None:
            stamped: dict[str, Any] = dict(body.get("_meta") or {})
            if self.server_info is not None:
                stamped.setdefault(_SERVER_INFO, self.server_info)
            if record.listen is not None:
                stamped[_SUB_ID] = record.id
            body["_meta"] = stamped
        message = {"jsonrpc": "2.0", "id": record.id, "result": body}
        return [message], self._ending(record, to)

    def _error(self, event: ErrorResponse) -> Prepared:
        code = event.error.code
        if -32099 <= code <= -32000 and code not in (-32020, -32021, -32022):
            raise LocalProtocolError(f"error code {code} is reserved", rule="ERR-03")
        if event.id is None:
            return [{"jsonrpc": "2.0", "error": unstructure(event.error)}], None
        stepped = self.tracker.step(Move.ERROR, event.id, what="an error")
        if stepped is None:
            return None
        record, to = stepped
        message = {"jsonrpc": "2.0", "id": record.id, "error": unstructure(event.error)}
        return [message], self._ending(record, to)

    # -- notifications ------------------------------------------------------

    def _notification(self, event: Notification) -> Prepared:
        method, params = event.method, event.params
        if method == "notifications/progress":
            return self._progress(event)
        if method == "notifications/message":
            return self._log(event)
        if method == "notifications/subscriptions/acknowledged":
            return self._ack(event)
        if method == "notifications/cancelled":
            return self._end_listen(event)
        if method in CHANGES:
            return self._change(event)
        if self.extensions.notification(method) is None:
            raise LocalProtocolError(f"unknown notification {method!r}", rule="BASE-18")
        note = event.request_id
        if note is not None and self.tracker.step(Move.NOTE, note, what=method) is None:
            return None
        return [_note(method, params)], None

    def _for(self, event: Notification, rule: str) -> t.RequestId:
        if event.request_id is None:
            raise LocalProtocolError(f"{event.method} needs the request it belongs to", rule=rule)
        return event.request_id

    def _progress(self, event: Notification) -> Prepared:
        params = event.params
        if not isinstance(params, t.ProgressNotificationParams):
            raise LocalProtocolError("progress needs ProgressNotificationParams", rule="PROG-04")
        owner = self.tracker.by_token.get(params.progress_token)
        if owner is None:
            gone = event.request_id
            if gone is not None and self.tracker.state(gone) is State.CANCELLED:
                return None
            raise LocalProtocolError(
                f"no in-flight request has progressToken {params.progress_token!r}",
                rule="PROG-06",
            )
        if event.request_id is not None and event.request_id != owner.id:
            raise LocalProtocolError(
                f"progressToken belongs to request {owner.id!r}, not {event.request_id!r}",
                rule="PROG-06",
            )
        stepped = self.tracker.step(Move.PROGRESS, owner.id, params, what="progress")
        assert stepped is not None  # the owner is live: nothing drops it
        record, _ = stepped

        def commit() -> None:
            record.last_progress = params.progress

        return [_note(event.method, params)], commit

    def _log(self, event: Notification) -> Prepared:
        params = event.params
        if not isinstance(params, t.LoggingMessageNotificationParams):
            raise LocalProtocolError("a log message needs LoggingMessageNotificationParams")
        if not self.logging:
            raise LocalProtocolError(
                "log messages need the logging capability in the server's capabilities",
                rule="LOG-02",
            )
        id = self._for(event, "LOG-05")
        if self.tracker.step(Move.LOG, id, params, what=event.method) is None:
            return None
        return [_note(event.method, params)], None

    def _ack(self, event: Notification) -> Prepared:
        params = event.params
        if not isinstance(params, t.SubscriptionsAcknowledgedNotificationParams):
            raise LocalProtocolError(
                "an acknowledgement needs SubscriptionsAcknowledgedNotificationParams"
            )
        id = self._for(event, "SUB-04")
        stepped = self.tracker.step(Move.ACK, id, params.notifications, what=event.method)
        if stepped is None:
            return None
        record, to = stepped

        def commit() -> None:
            record.honoured = params.notifications
            self.tracker.apply(record, to)

        return [_note(event.method, params, record.id)], commit

    def _end_listen(self, event: Notification) -> Prepared:
        params = event.params
        if not isinstance(params, t.CancelledNotificationParams):
            raise LocalProtocolError("cancelled needs CancelledNotificationParams")
        stepped = self.tracker.step(Move.END_LISTEN, params.request_id, what=event.method)
        if stepped is None:
            return None
        return [_note(event.method, params)], self._ending(*stepped)

    def _change(self, event: Notification) -> Prepared:
        method, params = event.method, event.params
        if event.request_id is not None:
            change = (method, params)
            stepped = self.tracker.step(Move.CHANGE, event.request_id, change, what=method)
            if stepped is None:
                return None
            return [_note(method, params, event.request_id)], None
        out = [
            _note(method, params, r.id)
            for r in self.tracker.acknowledged()
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
