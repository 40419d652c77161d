"""What the asyncio and trio clients share: the convenience calls and the listen iterator.

Plain ``async`` code over each client's own primitives: it awaits nothing but the
client's methods, so it runs under either event loop and holds no I/O of its own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, Generic, Protocol, TypeVar

from mcp_proto import (
    ClientEvent,
    Notification,
    Request,
    SubscriptionAcknowledged,
    SubscriptionEnded,
)
from mcp_proto import types as t
from mcp_proto.http import ResponseEvent

from ._client import (
    Call,
    Done,
    InputHandler,
    ProbeOutcome,
    ProgressHandler,
    build_request,
    outcome_of,
    probe_outcome,
)

__all__ = ["AsyncCalls", "StreamCalls", "Subscription"]


class AsyncCalls:
    """The calls every async client offers, over its own ``request`` and ``_round``."""

    request: Callable[..., Awaitable[Any]]
    conn: Any  #: the client's ``ClientConnection``

    async def _round(self, request: Request, limit: float) -> Any:
        """Send ``request``; the event that ends it, or ``None`` (and it is cancelled) when
        none comes within ``limit`` s. Progress is dropped; transport failures raise."""
        raise NotImplementedError

    async def probe(self, timeout: float = 5.0) -> ProbeOutcome:
        """Ask ``server/discover`` and tell a modern server from a legacy one (STDIO-18).

        Modern: a ``DiscoverResult``, or ``-32022`` naming the versions served. Legacy:
        anything else, no answer within ``timeout`` included (the probe is then cancelled,
        so a late answer is dropped, STDIO-21); over HTTP, an error status the binding reads
        as the legacy era (HTTP-42, HTTP-46).
        """
        event = await self._round(self.conn.discover_request(), timeout)
        return probe_outcome(event, (self.conn.protocol_version,))

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, **kw: Any
    ) -> t.CallToolResult:
        params = t.CallToolRequestParams(name=name, arguments=dict(arguments or {}))
        result: t.CallToolResult = await self.request("tools/call", params, **kw)
        return result

    async def list_tools(self, **kw: Any) -> list[t.Tool]:
        """Every tool, following ``nextCursor`` until it is absent (PAGE-05, PAGE-06)."""
        tools: list[t.Tool] = []
        cursor: str | None = None
        while True:
            page = await self.request("tools/list", t.PaginatedRequestParams(cursor=cursor), **kw)
            tools.extend(page.tools)
            if page.next_cursor is None:
                return tools
            cursor = page.next_cursor

    async def discover(self, **kw: Any) -> t.DiscoverResult:
        result: t.DiscoverResult = await self.request("server/discover", t.RequestParams(), **kw)
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
        call = Call(self.conn, method, params, on_progress=on_progress, on_input=on_input)
        source = self._watch(call.request.id)
        limit = self.timeout if timeout is None else timeout
        try:
            await self._write(self.conn.send(call.request))
            async with self._time_limit(limit):
                while True:
                    step = call.feed(await self._next(source))
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

    async def listen(
        self, notifications: t.SubscriptionFilter, *, timeout: float | None = None
    ) -> Subscription:
        """Open a ``subscriptions/listen`` stream; returns once it is acknowledged.

        An acknowledgement that does not come within ``timeout`` (the client's by default)
        cancels the listen and raises ``TimeoutError``; a refusal raises as a call does.
        """
        params = t.SubscriptionsListenRequestParams(notifications=notifications)
        request = build_request(self.conn, "subscriptions/listen", params)
        source = self._watch(request.id)
        limit = self.timeout if timeout is None else timeout
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

    async def _round(self, request: Request, limit: float) -> Any:
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

    async def _end_listen(self, id: t.RequestId) -> None:
        self._waiters.pop(id, None)
        await self._abandon(id, "done")  # SUB-11
