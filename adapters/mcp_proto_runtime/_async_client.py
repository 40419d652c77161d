"""What the asyncio and trio clients share: the convenience calls and the listen iterator.

Plain ``async`` code over each client's own primitives: it awaits nothing but the
client's methods, so it runs under either event loop and holds no I/O of its own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, suppress
from typing import Any, Generic, Literal, Protocol, TypeVar

from mcp_proto import (
    Cancelled,
    ClientEvent,
    EraOutcome,
    EraProbe,
    Legacy,
    LegacyListen,
    McpError,
    Modern,
    Notification,
    Request,
    SubscriptionAcknowledged,
    SubscriptionEnded,
)
from mcp_proto import types as t
from mcp_proto.http import ResponseEvent

from ._api import LISTS, Pages, completion_params, prompt_params
from ._client import (
    Call,
    Done,
    InputHandler,
    Pending,
    ProbeOutcome,
    ProgressHandler,
    build_request,
    era_failure,
    era_probe,
    legacy_answer,
    legacy_reply,
    outcome_of,
    owner_of,
    probe_outcome,
)

__all__ = ["AsyncCalls", "StreamCalls", "Subscription"]


class AsyncCalls:
    """The calls every async client offers, over its own ``request`` and ``_round``."""

    request: Callable[..., Awaitable[Any]]
    conn: Any  #: the client's ``ClientConnection``
    timeout: float | None

    #: ``"auto"``, ``"modern"`` or ``"legacy"`` (issue 16); what the probe found
    _era_mode: str = "modern"
    outcome: Modern | Legacy | None = None
    probe_timeout: float = 10.0
    #: serializes the probe (the client's lock type: ``asyncio.Lock``, ``trio.Lock``)
    _era_lock: Any = None
    #: how the era is probed: over stdio with a ``server/discover`` of its own, over HTTP
    #: with a modern request whose refusal says "legacy" (HTTP-42)
    _transport: Literal["stdio", "http"] = "stdio"

    def _time_limit(self, limit: float | None) -> AbstractAsyncContextManager[Any]:
        """A block that raises ``TimeoutError`` once ``limit`` s pass (``None``: never)."""
        raise NotImplementedError

    @staticmethod
    async def _settle(step: Any) -> Any:
        """``step``, or what a :class:`~mcp_proto_runtime.Pending` (an ``async def``
        callback's) stands for once awaited."""
        while isinstance(step, Pending):
            try:
                value = await step.awaitable
            except Exception as e:
                if step.failed is None:
                    raise
                step = step.failed(e)
            else:
                step = step.resume(value)
        return step

    async def _tell(self, event: Notification) -> None:
        """Send a notification that belongs to no call (``notifications/initialized``)."""
        raise NotImplementedError

    async def _ensure_era(self, limit: float | None) -> None:
        """Before the first request: the era probe (:class:`~mcp_proto.EraProbe`) as the
        transport's page says, each wait ``probe_timeout`` s at most and all of it within
        ``limit``; ``era="modern"`` finds nothing.  Runs once, whatever the calls waiting."""
        if self.outcome is not None:
            return
        async with self._era_lock:
            if self.outcome is not None:  # (another call found it meanwhile)
                return
            mode = self._cached_era()
            if mode == "modern":
                self._era_found(Modern(version=self.conn.protocol_version))
                return
            probe = era_probe(self.conn, mode, self._transport)
            try:
                async with self._time_limit(limit):
                    step = await self._probe_steps(probe)
            except TimeoutError:
                raise TimeoutError("the server's era was not found in time") from None
            failure = era_failure(step)
            if failure is not None:
                raise failure
            assert isinstance(step, Modern | Legacy)
            if isinstance(step, Legacy):
                await self._tell(step.initialized)  # LEG-03: before anything else
            self._era_found(step)

    def _cached_era(self) -> str:
        """The mode the probe runs in (an HTTP client asks its era cache first)."""
        return self._era_mode

    def _era_found(self, outcome: Modern | Legacy) -> None:
        """The probe found ``outcome`` (an HTTP client remembers it for its origin)."""
        self.outcome = outcome

    async def _probe_steps(self, probe: EraProbe) -> EraOutcome:
        step = probe.start()
        if step is None:  # over HTTP: the modern request first (HTTP-42)
            event = await self._round(self.conn.discover_request(), self.probe_timeout)
            if event is None:
                raise TimeoutError
            step = probe.not_modern() if legacy_answer(event) else probe.received(event)
        while isinstance(step, Request):  # server/discover over stdio, then initialize
            event = await self._round(step, self.probe_timeout, legacy=False)
            step = probe.timed_out() if event is None else probe.received(event)
        return step

    @property
    def era(self) -> str:
        """``"modern"`` or ``"legacy"``, once found (before the first call: its mode)."""
        if self.outcome is None:
            return "legacy" if self._era_mode == "legacy" else "modern"
        return "legacy" if isinstance(self.outcome, Legacy) else "modern"

    @property
    def protocol_version(self) -> str:
        """The version spoken with the server (the connection's until the probe ran)."""
        outcome = self.outcome
        return outcome.version if outcome is not None else str(self.conn.protocol_version)

    async def connect(self, timeout: float | None = None) -> Modern | Legacy:
        """Find the server's era now (the first call does it otherwise): the outcome."""
        await self._ensure_era(self.timeout if timeout is None else timeout)
        assert self.outcome is not None
        return self.outcome

    async def _round(self, request: Request, limit: float, *, legacy: bool = True) -> Any:
        """Send ``request``; the event that ends it, or ``None`` (and it is cancelled) when
        none comes within ``limit`` s. Progress is dropped; transport failures raise, but
        with ``legacy`` an HTTP error status the binding reads as a legacy server's is
        returned (a stream has no status: there it changes nothing)."""
        raise NotImplementedError

    # -- listens in a legacy session (issue 16) ------------------------------

    #: the listens of a legacy session, by their client-made ids: what each takes
    _legacy_listens: dict[t.RequestId, LegacyListen]
    _legacy_count = 0

    async def _listen_legacy(
        self, wanted: t.SubscriptionFilter, outcome: Legacy, limit: float | None
    ) -> Subscription:
        """A listen mapped on the session (:class:`~mcp_proto.LegacyListen`): a
        ``resources/subscribe`` for each resource the server lets us subscribe to, then
        the session's notifications that belong to it.  No request carries its id."""
        plan = LegacyListen(wanted, outcome.result.capabilities)
        for uri in plan.subscribe:
            await self.request("resources/subscribe", {"uri": uri}, timeout=limit)
        self._legacy_count += 1
        id = f"legacy-listen-{self._legacy_count}"
        source = self._legacy_source(id)
        self._legacy_listens[id] = plan
        return Subscription(self, id, plan.honoured, source)  # type: ignore[arg-type]

    def _legacy_source(self, id: t.RequestId) -> Any:
        """Where legacy listen ``id``'s notifications are put for its reader."""
        raise NotImplementedError

    def _listeners(self, event: Any) -> list[t.RequestId]:
        """The legacy listens a session notification belongs to."""
        if not isinstance(event, Notification) or event.request_id is not None:
            return []
        return [id for id, plan in self._legacy_listens.items() if plan.matches(event)]

    async def _end_legacy_listen(self, id: t.RequestId) -> bool:
        """End legacy listen ``id``: ``resources/unsubscribe`` for its resources, best
        effort; ``False`` when ``id`` is not one."""
        plan = self._legacy_listens.pop(id, None)
        if plan is None:
            return False
        for uri in plan.subscribe:
            with suppress(OSError, ConnectionError, TimeoutError, McpError):  # best effort
                await self.request("resources/unsubscribe", {"uri": uri})
        return True

    async def probe(self, timeout: float = 5.0) -> ProbeOutcome:
        """Ask ``server/discover`` and tell a modern server from a legacy one (STDIO-18).

        Modern: a ``DiscoverResult``, or ``-32022`` naming the versions served. Legacy:
        anything else, no answer within ``timeout`` included (the probe is then cancelled,
        so a late answer is dropped, STDIO-21); over HTTP, an error status the binding reads
        as the legacy era (HTTP-42, HTTP-46).
        """
        event = await self._round(self.conn.discover_request(), timeout)
        return probe_outcome(event, (self.conn.protocol_version,))

    # -- the typed calls (mcp_proto_runtime._api) -----------------------------

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressHandler | None = None,
        on_input: InputHandler | None = None,
    ) -> t.CallToolResult:
        params = t.CallToolRequestParams(name=name, arguments=dict(arguments or {}))
        result: t.CallToolResult = await self.request(
            "tools/call", params, timeout=timeout, on_progress=on_progress, on_input=on_input
        )
        return result

    async def pages(self, method: str, *, timeout: float | None = None) -> AsyncIterator[Any]:
        """Each page of a listing (``tools/list``, ``resources/list``,
        ``resources/templates/list``, ``prompts/list``) as it comes, following
        ``nextCursor`` (PAGE-05, PAGE-06; bounded: :class:`mcp_proto_runtime.Pages`)."""
        walk = Pages(method)
        while not walk.done:
            page = await self.request(method, walk.params(), timeout=timeout)
            walk.took(page)
            yield page

    async def _every(self, method: str, timeout: float | None) -> list[Any]:
        return [item async for page in self.pages(method, timeout=timeout)
                for item in getattr(page, LISTS[method])]  # fmt: skip

    async def list_tools(self, *, timeout: float | None = None) -> list[t.Tool]:
        """Every tool, following ``nextCursor`` until it is absent (PAGE-05, PAGE-06)."""
        return await self._every("tools/list", timeout)

    async def list_resources(self, *, timeout: float | None = None) -> list[t.Resource]:
        return await self._every("resources/list", timeout)

    async def list_resource_templates(
        self, *, timeout: float | None = None
    ) -> list[t.ResourceTemplate]:
        return await self._every("resources/templates/list", timeout)

    async def list_prompts(self, *, timeout: float | None = None) -> list[t.Prompt]:
        return await self._every("prompts/list", timeout)

    async def read_resource(
        self, uri: str, *, timeout: float | None = None, on_input: InputHandler | None = None
    ) -> t.ReadResourceResult:
        params = t.ReadResourceRequestParams(uri=uri)
        result: t.ReadResourceResult = await self.request(
            "resources/read", params, timeout=timeout, on_input=on_input
        )
        return result

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,
        on_input: InputHandler | None = None,
    ) -> t.GetPromptResult:
        params = prompt_params(name, arguments)
        result: t.GetPromptResult = await self.request(
            "prompts/get", params, timeout=timeout, on_input=on_input
        )
        return result

    async def complete(
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
        result: t.CompleteResult = await self.request(
            "completion/complete", params, timeout=timeout
        )
        return result

    async def discover(self, *, timeout: float | None = None) -> t.DiscoverResult:
        result: t.DiscoverResult = await self.request(
            "server/discover", t.RequestParams(), timeout=timeout
        )
        return result


class _Listens(Protocol):
    """What a :class:`Subscription` needs of its client (stdio or HTTP)."""

    def _listening(self, id: t.RequestId) -> bool: ...
    async def _next(self, source: Any) -> ResponseEvent: ...
    async def _end_listen(self, id: t.RequestId) -> None: ...


class Subscription:
    """An acknowledged listen: iterate for its notifications; :meth:`aclose` cancels it.

    Iteration stops when the server ends the stream gracefully (SUB-12); a lost
    connection raises ``ConnectionError`` (re-listen on a new one, SUB-14).
    ``source`` is whatever the client reads this listen's events from (a queue,
    a channel, an HTTP connection).
    """

    def __init__(
        self, client: _Listens, id: t.RequestId, honoured: t.SubscriptionFilter, source: Any
    ) -> None:
        self.client = client
        self.id = id
        #: what the server agreed to send (SUB-07: may be less than asked)
        self.honoured = honoured
        self._source = source

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Notification:
        if not self.client._listening(self.id):
            raise StopAsyncIteration
        event = await self.client._next(self._source)
        if isinstance(event, SubscriptionEnded):
            await self.client._end_listen(self.id)
            raise StopAsyncIteration
        assert isinstance(event, Notification), event  # a listen's source: notes, its end
        return event

    async def aclose(self) -> None:
        """Cancel the listen (SUB-11); nothing more arrives for it."""
        await self.client._end_listen(self.id)

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


#: what a stream client reads one request's events from (a queue, a memory channel)
Source = TypeVar("Source")


class StreamCalls(AsyncCalls, Generic[Source]):
    """``request``, ``listen`` and the probe of an async client over one stream (stdio).

    The body of the asyncio and trio stdio clients. The client provides its stream's
    primitives: :attr:`_waiters` (the source of each watched id's events), ``_watch(id)``
    (a new source for ``id``, or ``ConnectionError`` once the stream is lost),
    ``_next(source)`` (its next event; ``ConnectionError`` when the stream is lost),
    ``_write(data)``, ``_time_limit(limit)`` (a block that raises ``TimeoutError`` once
    ``limit`` s pass; ``None``: never) and ``_abandon(id, reason)`` (cancel ``id`` if it is
    still in flight, even while the calling task is being cancelled, and never raise for a
    server that is gone). A call that ends any other way than with its answer is cancelled
    on the server (CANCEL-05).
    """

    timeout: float | None
    _waiters: dict[t.RequestId, Source]
    #: the calls in flight with an input handler: a legacy server's requests go to the last
    _inputs: dict[t.RequestId, Call]

    def _watch(self, id: t.RequestId) -> Source:
        raise NotImplementedError

    async def _next(self, source: Source) -> ClientEvent:
        raise NotImplementedError

    async def _write(self, data: bytes) -> None:
        raise NotImplementedError

    def _time_limit(self, limit: float | None) -> AbstractAsyncContextManager[Any]:
        raise NotImplementedError

    async def _abandon(self, id: t.RequestId, reason: str) -> None:
        raise NotImplementedError

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressHandler | None = None,
        on_input: InputHandler | None = None,
    ) -> Any:
        """Send one request and return its result object, following MRTR rounds."""
        limit = self.timeout if timeout is None else timeout
        await self._ensure_era(limit)
        call = Call(self.conn, method, params, on_progress=on_progress, on_input=on_input)
        source = self._watch(call.request.id)
        first = call.request.id
        if on_input is not None:
            self._inputs[first] = call
        try:
            await self._write(self.conn.send(call.request))
            async with self._time_limit(limit):
                while True:
                    step = await self._settle(call.feed(await self._next(source)))
                    if isinstance(step, Done):
                        return step.result
                    if step is not None:
                        self._waiters[step.request.id] = self._waiters.pop(step.replaces)
                        await self._write(self.conn.send(step.request))
        except TimeoutError:
            await self._abandon(call.request.id, "timed out")
            raise TimeoutError(f"{method} got no answer within {limit} s") from None
        except BaseException:
            await self._abandon(call.request.id, "cancelled")
            raise
        finally:
            self._waiters.pop(call.request.id, None)
            self._inputs.pop(first, None)

    # -- the era (issue 16) --------------------------------------------------

    async def _tell(self, event: Notification) -> None:
        await self._write(self.conn.send(event))

    async def _answered(self, event: ClientEvent) -> bool:
        """For the reader: a legacy server's request (or its ``ping``, or one refused),
        answered at once; True when ``event`` was one.  A request goes to the input
        handler of the last call in flight that has one (a stdio server names no call)."""
        call = next(reversed(self._inputs.values()), None)
        reply = await self._settle(legacy_reply(self.conn, event, call))
        if reply is not None:
            await self._write(self.conn.send(reply))
            return True
        return isinstance(event, Cancelled)  # the server gave up its request: no answer

    async def listen(
        self, notifications: t.SubscriptionFilter, *, timeout: float | None = None
    ) -> Subscription:
        """Open a ``subscriptions/listen`` stream; returns once it is acknowledged.

        An acknowledgement that does not come within ``timeout`` (the client's by default)
        cancels the listen and raises ``TimeoutError``; a refusal raises as a call does.
        """
        params = t.SubscriptionsListenRequestParams(notifications=notifications)
        limit = self.timeout if timeout is None else timeout
        await self._ensure_era(limit)
        if isinstance(self.outcome, Legacy):
            return await self._listen_legacy(notifications, self.outcome, limit)
        request = build_request(self.conn, "subscriptions/listen", params)
        source = self._watch(request.id)
        try:
            await self._write(self.conn.send(request))
            async with self._time_limit(limit):
                first = await self._next(source)
        except BaseException as e:
            self._waiters.pop(request.id, None)  # never acknowledged: tell the server
            await self._abandon(request.id, "listen abandoned")
            if isinstance(e, TimeoutError):
                raise TimeoutError("the listen was not acknowledged in time") from None
            raise
        if not isinstance(first, SubscriptionAcknowledged):
            self._waiters.pop(request.id, None)
            outcome_of(first)  # raises for an error; a result ends it at once
            raise ConnectionError("the subscription ended before it was acknowledged")
        return Subscription(self, request.id, first.notifications, source)

    async def _round(self, request: Request, limit: float, *, legacy: bool = True) -> Any:
        source = self._watch(request.id)
        try:
            await self._write(self.conn.send(request))
            async with self._time_limit(limit):
                while isinstance(event := await self._next(source), Notification):
                    pass
                return event
        except TimeoutError:
            await self._abandon(request.id, "timed out")
            return None
        finally:
            self._waiters.pop(request.id, None)

    def _listening(self, id: t.RequestId) -> bool:
        return id in self._waiters

    def _legacy_source(self, id: t.RequestId) -> Source:
        return self._watch(id)  # the reader puts what _owners names it in

    def _owners(self, event: ClientEvent) -> list[t.RequestId]:
        """For the reader: whose ``event`` is (a request's, a listen's, or the legacy
        listens' it belongs to); none for a stray message."""
        owner = owner_of(event)
        return [owner] if owner is not None else self._listeners(event)

    async def _end_listen(self, id: t.RequestId) -> None:
        self._waiters.pop(id, None)
        if not await self._end_legacy_listen(id):
            await self._abandon(id, "done")  # SUB-11
