"""What the asyncio and trio clients share: the convenience calls and the listen iterator.

Plain ``async`` code over each client's own primitives: it awaits nothing but the
client's methods, so it runs under either event loop and holds no I/O of its own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from mcp_proto import Notification, Request, SubscriptionEnded
from mcp_proto import types as t

from ._client import ProbeOutcome, probe_outcome

__all__ = ["AsyncCalls", "Subscription"]


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
        return await self.request("tools/call", params, **kw)  # type: ignore[no-any-return]

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
        return await self.request("server/discover", t.RequestParams(), **kw)  # type: ignore[no-any-return]


class _Listens(Protocol):
    """What a :class:`Subscription` needs of its client (stdio or HTTP)."""

    def _listening(self, id: t.RequestId) -> bool: ...
    async def _next(self, source: Any) -> Any: ...
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
        return event  # type: ignore[no-any-return]

    async def aclose(self) -> None:
        """Cancel the listen (SUB-11); nothing more arrives for it."""
        await self.client._end_listen(self.id)

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
