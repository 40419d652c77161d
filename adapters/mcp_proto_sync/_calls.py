"""The calls every blocking client offers (stdio and HTTP), over its transport's primitives.

:class:`_Calls` is the base of :class:`~mcp_proto_sync._client.Client` and
:class:`~mcp_proto_sync._http_client.HTTPClientSession`: ``request`` (with MRTR
rounds, progress and cancellation on any abandonment), ``listen``, ``probe`` and the
convenience calls.  Neither client module imports the other for it.
"""

from __future__ import annotations

import contextlib
import inspect
import time
from collections import deque
from collections.abc import Iterator, Mapping
from typing import Any

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.http import ResponseEvent
from mcp_proto_runtime import (
    LISTS,
    Call,
    Done,
    InputHandler,
    Pages,
    ProbeOutcome,
    ProgressHandler,
    blocking,
    build_request,
    completion_params,
    legacy_reply,
    outcome_of,
    probe_outcome,
    prompt_params,
)

from ._listen import QUEUED, Subscription

__all__ = ["InputHandler", "ProgressHandler", "SessionLost"]


class SessionLost(Exception):
    """Raised by a transport's ``_await_end`` when the server ended the legacy session a
    call was made in (HTTP ``404``, LEG-16): the transport has made ready for a new one
    and :meth:`_Calls.request` sends the call again, once."""


class _Calls:
    """The calls every blocking client offers, over three primitives of its transport.

    ``_send`` writes a request, ``_await_end`` waits for the event that ends it
    (``None`` at the deadline), ``_cancel`` cancels it; ``conn`` is the
    :class:`mcp_proto.ClientConnection`.
    """

    conn: m.ClientConnection
    timeout: float | None
    #: the call being made, while one is (a legacy server's requests are answered for it)
    _calling: Call | None = None

    #: what the era probe found (``None`` until the first request; issue 16)
    outcome: m.Modern | m.Legacy | None = None

    _era_mode: str = "modern"  #: ``"auto"``, ``"modern"`` or ``"legacy"``

    #: the listens of a legacy session: what each takes, and what came for it
    _legacy_listens: dict[t.RequestId, tuple[m.LegacyListen, deque[m.Notification]]]
    _legacy_count = 0

    def _ensure_era(self, deadline: float | None = None) -> None:
        """Find the server's era before the first request (``era="modern"``: nothing to
        find); ``TimeoutError`` when ``deadline`` (the first call's) passes first."""
        if self.outcome is not None:
            return
        if self._era_mode == "modern":
            self.outcome = m.Modern(version=self.conn.protocol_version)
            return
        self.outcome = self._find_era(deadline)

    def _find_era(self, deadline: float | None) -> m.Modern | m.Legacy:
        """The transport's probe (see :class:`mcp_proto.EraProbe`)."""
        raise NotImplementedError

    @property
    def era(self) -> str:
        """``"modern"`` or ``"legacy"``: the server's era, found now if need be."""
        self._ensure_era()
        return "legacy" if isinstance(self.outcome, m.Legacy) else "modern"

    @property
    def protocol_version(self) -> str:
        """The version this client speaks with the server, found now if need be."""
        self._ensure_era()
        return self.outcome.version if self.outcome is not None else self.conn.protocol_version

    def connect(self, timeout: float | None = None) -> m.Modern | m.Legacy:
        """Find the server's era now (the first call does it otherwise): the outcome."""
        limit = self.timeout if timeout is None else timeout
        self._ensure_era(None if limit is None else time.monotonic() + limit)
        assert self.outcome is not None
        return self.outcome

    def _reply_to(self, event: Any) -> m.Event | None:
        """What answers a legacy server's request (with the current call's ``on_input``),
        its ``ping`` or a refusal of one; ``None`` for any other event."""
        return blocking(legacy_reply(self.conn, event, self._calling))

    def _send(self, request: m.Request) -> None:
        raise NotImplementedError

    def _await_end(
        self, id: t.RequestId, deadline: float | None, on_progress: ProgressHandler | None
    ) -> ResponseEvent | None:
        raise NotImplementedError

    def _cancel(self, id: t.RequestId, reason: str) -> None:
        raise NotImplementedError

    def _probe_end(self, id: t.RequestId, deadline: float) -> ResponseEvent | None:
        """The event that ends probe ``id``, as ``_await_end``; a transport whose failures
        can say "legacy server" (HTTP) returns those instead of raising."""
        return self._await_end(id, deadline, None)

    def _listen_event(self, id: t.RequestId, deadline: float | None) -> ResponseEvent | None:
        """The next notification or ``SubscriptionEnded`` of listen ``id``; ``None`` at
        the deadline."""
        raise NotImplementedError

    def _end_listen(self, id: t.RequestId) -> None:
        raise NotImplementedError

    # -- calls --------------------------------------------------------------

    def request(
        self,
        method: str,
        params: Any = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressHandler | None = None,
        on_input: InputHandler | None = None,
    ) -> Any:
        """Send one request and return its result object, following MRTR rounds.

        ``params`` is the method's params object or a plain dict.  With
        ``on_progress`` the request asks for progress and the callback sees
        each notification.  ``on_input`` answers ``input_required`` rounds
        (it gets the :class:`mcp_proto.InputRequired` event and returns the
        ``inputResponses``); without it such a round raises ``InputRequiredError``.
        A call that ends any other way than with its answer (a timeout, a callback
        that raised, an interrupt) is cancelled on the server.  A legacy session
        the server ended (HTTP ``404``) is opened again and the call sent once more.
        """
        for callback in (on_input, on_progress):
            if inspect.iscoroutinefunction(callback):
                raise TypeError(
                    f"{callback!r} is an async def: the blocking client calls plain "
                    "functions (use mcp_proto_asyncio or mcp_proto_trio for async ones)"
                )
        limit = self.timeout if timeout is None else timeout
        deadline = None if limit is None else time.monotonic() + limit
        for attempt in (1, 2):
            self._ensure_era(deadline)
            call = Call(self.conn, method, params, on_progress=on_progress, on_input=on_input)
            try:
                return self._call(call, deadline, limit)
            except SessionLost:
                self.outcome = None  # found again: initialize, then the call once more
                if attempt == 2:
                    raise ConnectionError(
                        f"{method}: the new session was lost too (404), or the era changed again"
                    ) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _call(self, call: Call, deadline: float | None, limit: float | None) -> Any:
        self._send(call.request)
        self._calling = call
        try:
            while True:
                event = self._await_end(call.request.id, deadline, call.on_progress)
                if event is None:
                    raise TimeoutError(f"{call.method} got no answer within {limit} s")
                step = blocking(call.feed(event))
                if isinstance(step, Done):
                    return step.result
                if step is not None:
                    self._send(step.request)
        except SessionLost:
            raise  # nothing of it is left on the server
        except BaseException:  # a timeout, a callback that raised, Ctrl-C: cancel it
            if call.request.id in call.conn.in_flight():
                with contextlib.suppress(OSError, ConnectionError):  # server gone: nobody to tell
                    self._cancel(call.request.id, "abandoned")
            raise
        finally:
            self._calling = None

    def listen(
        self, notifications: t.SubscriptionFilter, *, timeout: float | None = None
    ) -> Subscription:
        """Open a ``subscriptions/listen`` stream; returns once the server acknowledged it.

        Iterate the :class:`Subscription` for the notifications (``sub.next(timeout)``
        to wait a bounded time) and close it, or use it in a ``with`` block.  Other
        calls may be made while it is open.  An acknowledgement that does not come
        within ``timeout`` (the client's by default) cancels the listen and raises
        ``TimeoutError``; a refusal raises as a call does.
        """
        limit = self.timeout if timeout is None else timeout
        deadline = None if limit is None else time.monotonic() + limit
        for attempt in (1, 2):
            self._ensure_era(deadline)
            if isinstance(self.outcome, m.Legacy):
                return self._listen_legacy(notifications, self.outcome, limit)
            try:
                return self._listen_modern(notifications, deadline, limit)
            except SessionLost:  # a cached modern era the server contradicts: found again
                self.outcome = None
                if attempt == 2:
                    raise ConnectionError("listen: the era changed again") from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _listen_modern(
        self, notifications: t.SubscriptionFilter, deadline: float | None, limit: float | None
    ) -> Subscription:
        params = t.SubscriptionsListenRequestParams(notifications=notifications)
        request = build_request(self.conn, "subscriptions/listen", params)
        self._send(request)
        try:
            first = self._await_end(request.id, deadline, None)
            if first is None:
                raise TimeoutError(f"subscriptions/listen not acknowledged within {limit} s")
        except BaseException:
            if request.id in self.conn.in_flight():
                with contextlib.suppress(OSError, ConnectionError):  # server gone: nobody to tell
                    self._cancel(request.id, "listen abandoned")
            raise
        if not isinstance(first, m.SubscriptionAcknowledged):
            outcome_of(first)  # raises for an error; a result ends it at once
            raise ConnectionError("the subscription ended before it was acknowledged")
        self._opened(request.id)
        return Subscription(self, request.id, first.notifications)

    def _opened(self, id: t.RequestId) -> None:
        """Listen ``id`` was acknowledged: keep what arrives for it."""

    # -- listens in a legacy session (issue 16) ------------------------------

    def _listen_legacy(
        self, wanted: t.SubscriptionFilter, outcome: m.Legacy, limit: float | None
    ) -> Subscription:
        """A listen mapped on the session (:class:`mcp_proto.LegacyListen`): a
        ``resources/subscribe`` for each resource the server lets us subscribe to, then
        the session's notifications that belong to it, kept for it (the oldest dropped
        past :data:`QUEUED`).  Its id is the client's own (no request carries it)."""
        plan = m.LegacyListen(wanted, outcome.result.capabilities)
        for uri in plan.subscribe:
            self.request("resources/subscribe", {"uri": uri}, timeout=limit)
        self._legacy_count += 1
        id = f"legacy-listen-{self._legacy_count}"
        self._legacy_listens[id] = (plan, deque(maxlen=QUEUED))
        return Subscription(self, id, plan.honoured)

    def _deliver(self, event: Any) -> None:
        """A session notification: kept for each legacy listen it belongs to."""
        if isinstance(event, m.Notification) and event.request_id is None:
            for plan, kept in self._legacy_listens.values():
                if plan.matches(event):
                    kept.append(event)

    def _legacy_event(self, id: t.RequestId, deadline: float | None) -> m.Notification | None:
        """The next notification of legacy listen ``id``; ``None`` at the deadline."""
        kept = self._legacy_listens[id][1]
        while not kept:
            if not self._session_wait(deadline):
                return None
        return kept.popleft()

    def _session_wait(self, deadline: float | None) -> bool:
        """Read what the server sends outside any call, once (``False`` at the deadline)."""
        raise NotImplementedError

    def _end_legacy_listen(self, id: t.RequestId) -> bool:
        """End legacy listen ``id`` (``resources/unsubscribe`` for its resources, best
        effort); ``False`` when ``id`` is not one."""
        entry = self._legacy_listens.pop(id, None)
        if entry is None:
            return False
        for uri in entry[0].subscribe:
            gone = (OSError, ConnectionError, TimeoutError, m.McpError)
            with contextlib.suppress(*gone):  # best effort: the listen is over anyway
                self.request("resources/unsubscribe", {"uri": uri})
        return True

    def probe(self, timeout: float = 5.0) -> ProbeOutcome:
        """Ask ``server/discover`` and tell a modern server from a legacy one (STDIO-18).

        No answer within ``timeout`` means legacy; the probe is then cancelled, so
        a late answer is dropped (STDIO-21).
        """
        request = self.conn.discover_request()
        self._send(request)
        event = self._probe_end(request.id, time.monotonic() + timeout)
        if event is None:
            self._cancel(request.id, "probe timed out")
        return probe_outcome(event, (self.conn.protocol_version,))

    # -- the typed calls (mcp_proto_runtime._api) -----------------------------

    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressHandler | None = None,
        on_input: InputHandler | None = None,
    ) -> t.CallToolResult:
        params = t.CallToolRequestParams(name=name, arguments=dict(arguments or {}))
        result: t.CallToolResult = self.request(
            "tools/call", params, timeout=timeout, on_progress=on_progress, on_input=on_input
        )
        return result

    def pages(self, method: str, *, timeout: float | None = None) -> Iterator[Any]:
        """Each page of a listing (``tools/list``, ``resources/list``,
        ``resources/templates/list``, ``prompts/list``) as it comes, following
        ``nextCursor`` (PAGE-05, PAGE-06; bounded: :class:`mcp_proto_runtime.Pages`)."""
        walk = Pages(method)
        while not walk.done:
            page = self.request(method, walk.params(), timeout=timeout)
            walk.took(page)
            yield page

    def _every(self, method: str, timeout: float | None) -> list[Any]:
        return [item for page in self.pages(method, timeout=timeout)
                for item in getattr(page, LISTS[method])]  # fmt: skip

    def list_tools(self, *, timeout: float | None = None) -> list[t.Tool]:
        """Every tool, following ``nextCursor`` until it is absent (PAGE-05, PAGE-06)."""
        return self._every("tools/list", timeout)

    def list_resources(self, *, timeout: float | None = None) -> list[t.Resource]:
        return self._every("resources/list", timeout)

    def list_resource_templates(self, *, timeout: float | None = None) -> list[t.ResourceTemplate]:
        return self._every("resources/templates/list", timeout)

    def list_prompts(self, *, timeout: float | None = None) -> list[t.Prompt]:
        return self._every("prompts/list", timeout)

    def read_resource(
        self, uri: str, *, timeout: float | None = None, on_input: InputHandler | None = None
    ) -> t.ReadResourceResult:
        params = t.ReadResourceRequestParams(uri=uri)
        result: t.ReadResourceResult = self.request(
            "resources/read", params, timeout=timeout, on_input=on_input
        )
        return result

    def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,
        on_input: InputHandler | None = None,
    ) -> t.GetPromptResult:
        params = prompt_params(name, arguments)
        result: t.GetPromptResult = self.request(
            "prompts/get", params, timeout=timeout, on_input=on_input
        )
        return result

    def complete(
        self,
        ref: t.PromptReference | t.ResourceTemplateReference,
        argument: str,
        value: str,
        *,
        context: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> t.CompleteResult:
        """Suggestions for ``argument`` of a prompt or resource template, ``value`` typed
        so far; ``context``: the arguments already chosen."""
        params = completion_params(ref, argument, value, context)
        result: t.CompleteResult = self.request("completion/complete", params, timeout=timeout)
        return result

    def discover(self, *, timeout: float | None = None) -> t.DiscoverResult:
        result: t.DiscoverResult = self.request(
            "server/discover", t.RequestParams(), timeout=timeout
        )
        return result
