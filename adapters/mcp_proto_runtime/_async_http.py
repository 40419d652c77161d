"""What the asyncio and trio Streamable HTTP clients share: the pool, the calls, the listens.

Plain ``async`` code over each adapter's own primitives -- a connection object
(``send``, ``next_event``, ``stale``, ``close``, ``conn``), :meth:`_connect` and
:meth:`_time_limit` -- so it runs under either event loop and holds no I/O of its own.
HTTP/1.1 carries one exchange at a time, so every call in flight and every open
listen holds a connection of its own, read in the caller's task; finished ones go
back to a small pool of idle keep-alive connections.  A call that times out or is
cancelled closes its connection, which is the cancellation (HTTP-12, HTTP-SSE-5).
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any, ClassVar, Protocol, Self

from mcp_proto import (
    NEED_DATA,
    LocalProtocolError,
    Modern,
    Notification,
    SubscriptionAcknowledged,
    SubscriptionEnded,
)
from mcp_proto import Request as RequestEvent
from mcp_proto import types as t
from mcp_proto.http import HTTPClientConnection, ResponseEvent, ToolRejected, UnexpectedResponse

from ._async_client import AsyncCalls, Subscription
from ._client import (
    Call,
    Done,
    HTTPClientSettings,
    InputHandler,
    ProgressHandler,
    Retry,
    build_request,
    http_failure,
    legacy_answer,
    outcome_of,
)
from ._log import client_log

__all__ = ["Link", "AsyncHTTPSession"]


class Link(Protocol):
    """One keep-alive connection of an async HTTP client: a socket and its h11 state."""

    conn: HTTPClientConnection

    async def send(self, request: RequestEvent) -> None:
        """Write the POST for ``request`` (raises the adapter's ``_GONE`` if the socket is)."""

    async def next_event(self) -> ResponseEvent:
        """The next event of the response being read, reading the socket as needed."""

    def stale(self) -> bool:
        """An idle connection the server closed meanwhile."""

    def close(self) -> None:
        """Close the socket; a response still running is cancelled (HTTP-SSE-5)."""


class AsyncHTTPSession(HTTPClientSettings, AsyncCalls):
    """An MCP client for a Streamable HTTP endpoint (``http://host:port/path``):
    the body of the asyncio and trio ``HTTPClientSession`` classes.

    Same calls, errors and :class:`Subscription` as the stdio clients, any number
    of them concurrently; in addition ``401``/``403`` raises ``PermissionError``
    carrying the parsed challenge (``.args[1]``), and a status the binding cannot
    read raises ``RemoteProtocolError``.  Tools whose ``x-mcp-header`` annotations
    are invalid are left out of ``tools/list`` results and listed in
    :attr:`rejected_tools` (HTTP-27).  ``headers`` go on every POST; at most
    ``pool_size`` idle connections are kept.

    A subclass sets :attr:`_GONE` (what its connections raise once the socket is
    gone) and provides :meth:`_open_link` and :meth:`_time_limit`.  It is an
    async context manager that closes every connection on exit.
    """

    #: the exceptions a connection's ``send`` raises when the socket is gone
    _GONE: ClassVar[tuple[type[BaseException], ...]] = (OSError,)

    def __init__(self, url: str, **options: Any) -> None:
        super().__init__(url, **options)
        self._host = self.endpoint.authority
        self._idle: list[Link] = []
        self._open: set[Link] = set()
        self._listens: dict[t.RequestId, Link] = {}
        self._closed = False

    # -- what the adapter provides ------------------------------------------

    async def _open_link(self) -> Link:
        """A new connection to :attr:`address` (``OSError`` if it cannot be made)."""
        raise NotImplementedError

    def _time_limit(self, limit: float | None) -> AbstractAsyncContextManager[Any]:
        """A block that raises ``TimeoutError`` once ``limit`` seconds pass (None: never)."""
        raise NotImplementedError

    # -- connections --------------------------------------------------------

    async def _connect(self) -> Link:
        if self._closed:
            raise ConnectionError("the client is closed")
        try:
            link = await self._open_link()
        except OSError as e:
            raise ConnectionError(f"cannot connect to {self.address}: {e}") from e
        self._open.add(link)
        return link

    async def _post(self, request: RequestEvent) -> Link:
        """Send ``request`` on an idle connection, or a new one; return the connection."""
        while self._idle:
            link = self._idle.pop()
            if link.stale():
                self._drop(link)  # closed by the server while idle (a keep-alive timeout)
                continue
            try:
                return await self._send_on(link, request)
            except (ConnectionError, LocalProtocolError):
                break  # closed by the server meanwhile ("Connection: close"): once more, afresh
        return await self._send_on(await self._connect(), request)

    async def _send_on(self, link: Link, request: RequestEvent) -> Link:
        try:
            await link.send(request)
        except self._GONE as e:
            self._drop(link)  # retires the id, so that it can be sent again
            raise ConnectionError(f"the request could not be sent: {e}") from e
        except BaseException:
            self._drop(link)  # cancelled, or refused by the core before anything was sent
            raise
        return link

    def _release(self, link: Link) -> None:
        """A response ended: keep its connection for the next call if it is reusable."""
        while link.conn.busy and link.conn.next_event() is not NEED_DATA:
            pass  # the end of the body, already buffered
        if link.conn.busy or self._closed or len(self._idle) >= self.pool_size:
            self._drop(link)
        else:
            self._idle.append(link)

    def _drop(self, link: Link) -> None:
        self._open.discard(link)
        link.close()

    # -- calls --------------------------------------------------------------

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
        limit = self.timeout if timeout is None else timeout
        link: Link | None = None
        try:
            async with self._time_limit(limit):
                link = await self._post(call.request)
                while True:
                    event = await self._ending(link, call.request.id, on_progress)
                    self._release(link)
                    link = None
                    step = call.feed(event)
                    if not isinstance(step, Retry):
                        assert isinstance(step, Done)  # _ending hands over endings only
                        return step.result
                    link = await self._post(step.request)
        except TimeoutError:
            raise TimeoutError(f"{method} got no answer within {limit} s") from None
        finally:
            if link is not None:
                self._drop(link)  # closing the response cancels the request (HTTP-12)

    async def _round(self, request: RequestEvent, limit: float) -> Any:
        link: Link | None = None
        try:
            async with self._time_limit(limit):
                link = await self._post(request)
                event = await self._ending(link, request.id, legacy=True)
                if not isinstance(event, UnexpectedResponse):
                    self._release(link)
                    link = None
                return event
        except TimeoutError:
            return None
        finally:
            if link is not None:
                self._drop(link)  # closing the response cancels the request (HTTP-12)

    async def _ending(
        self,
        link: Link,
        id: t.RequestId,
        on_progress: ProgressHandler | None = None,
        *,
        legacy: bool = False,
    ) -> Any:
        """The event that ends (or acknowledges) request ``id``; HTTP failures raise, but
        with ``legacy`` an error status the binding reads as the legacy era is returned."""
        while True:
            event = await link.next_event()
            if legacy and legacy_answer(event):
                return event
            if isinstance(event, ToolRejected):
                self.rejected_tools.append(event)
                client_log.warning("tool %r left out: %s", event.name, event.reason)
            elif isinstance(event, Notification):
                if event.method == "notifications/progress" and on_progress is not None:
                    on_progress(event.params)
            elif (error := http_failure(event)) is not None:
                raise error
            elif getattr(event, "id", None) == id:
                return event

    async def listen(
        self, notifications: t.SubscriptionFilter, *, timeout: float | None = None
    ) -> Subscription:
        """Open a ``subscriptions/listen`` stream on a connection of its own.

        Returns once the server acknowledged it; iterate the :class:`Subscription`
        for the notifications, ``aclose()`` it to close the stream (SUB-11).
        """
        params = t.SubscriptionsListenRequestParams(notifications=notifications)
        request = build_request(self.conn, "subscriptions/listen", params)
        limit = self.timeout if timeout is None else timeout
        link: Link | None = None
        first: Any = None
        try:
            async with self._time_limit(limit):
                link = await self._post(request)
                first = await self._ending(link, request.id)
        except TimeoutError:
            raise TimeoutError("the listen was not acknowledged in time") from None
        finally:
            if link is not None and first is None:
                self._drop(link)
        if not isinstance(first, SubscriptionAcknowledged):
            self._release(link)
            outcome_of(first)  # raises for an error; a result ends it at once
            raise ConnectionError("the subscription ended before it was acknowledged")
        self._listens[request.id] = link
        return Subscription(self, request.id, first.notifications, link)

    # -- what a Subscription needs ------------------------------------------

    def _listening(self, id: t.RequestId) -> bool:
        return id in self._listens

    async def _next(self, link: Link) -> Any:
        """The next notification (or the ``SubscriptionEnded``) of a listen's stream."""
        while True:
            event = await link.next_event()
            if isinstance(event, (Notification, SubscriptionEnded)):
                return event
            if (error := http_failure(event)) is not None:
                raise error

    async def _end_listen(self, id: t.RequestId) -> None:
        link = self._listens.pop(id, None)
        if link is not None:
            self._release(link)  # still streaming: closed, which cancels it (SUB-11)

    # -- the era ------------------------------------------------------------

    @property
    def era(self) -> str:
        """``"modern"``: over HTTP the async clients speak 2026-07-28 only, so far (the
        blocking client's ``era=`` is the dual-era one; issue 16)."""
        return "modern"

    @property
    def protocol_version(self) -> str:
        return str(self.conn.protocol_version)

    async def connect(self, timeout: float | None = None) -> Modern:
        """As the other clients' ``connect``; here nothing to find: :class:`Modern`."""
        return Modern(version=self.conn.protocol_version)

    # -- lifetime -----------------------------------------------------------

    async def aclose(self) -> None:
        """Close every connection; calls and listens in flight get ``ConnectionError``."""
        self._closed = True
        for link in list(self._open):
            self._drop(link)
        self._idle.clear()
        self._listens.clear()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
