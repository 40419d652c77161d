"""What the asyncio and trio Streamable HTTP clients share: the pool, the calls, the listens.

Plain ``async`` code over each adapter's own primitives -- a connection object
(``send``, ``next_event``, ``stale``, ``close``, ``conn``), :meth:`_connect` and
:meth:`_time_limit` -- so it runs under either event loop and holds no I/O of its own.
HTTP/1.1 carries one exchange at a time, so every call in flight and every open
listen holds a connection of its own, read in the caller's task; finished ones go
back to a small pool of idle keep-alive connections.  A call that times out or is
cancelled closes its connection, which is the cancellation (HTTP-12, HTTP-SSE-5).

Dual-era (issue 16): before the first call the era is found as the Streamable HTTP
page says (a modern ``server/discover`` first; a ``4xx`` without a modern error in its
body means a legacy server, and ``initialize`` opens a 2025-11-25 session).  In a legacy
session the server's requests on a call's stream are answered by POSTs of their own, a
stream the server closes mid-call is resumed with ``Last-Event-ID`` after its ``retry``,
a ``404`` opens a new session and sends the call again (once), and closing the client
ends the session (``DELETE``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Coroutine
from contextlib import AbstractAsyncContextManager, suppress
from typing import Any, ClassVar, Protocol, Self

from mcp_proto import (
    NEED_DATA,
    Cancelled,
    ClientConnection,
    ConnectionClosed,
    Legacy,
    LocalProtocolError,
    Notification,
    SubscriptionAcknowledged,
    SubscriptionEnded,
)
from mcp_proto import Request as RequestEvent
from mcp_proto import types as t
from mcp_proto.http import (
    HTTPClientConnection,
    HTTPPost,
    ResponseEvent,
    SessionExpired,
    StreamInterrupted,
    ToolRejected,
    UnexpectedResponse,
)

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
    legacy_reply,
    outcome_of,
)
from ._log import client_log

__all__ = ["Link", "Mailbox", "AsyncHTTPSession"]

#: seconds a closing client waits for its legacy session's ``DELETE`` to be answered
_GOODBYE = 5.0


class Source(Protocol):
    """Where a :class:`Subscription` reads its listen's events from."""

    async def get(self) -> Any:
        """The next item, once there is one."""


class Mailbox(Source, Protocol):
    """A queue of the adapter's event loop: ``put`` never blocks, ``get`` waits."""

    def put(self, item: Any) -> None:
        """Queue ``item``."""


class _Expired(Exception):
    """A ``404`` for a call of a legacy session: the server ended it (LEG-16); or a
    modern request answered as a legacy server answers (HTTP-42): its era changed."""


class Link(Protocol):
    """One keep-alive connection of an async HTTP client: a socket and its h11 state."""

    conn: HTTPClientConnection

    async def write(self, data: bytes) -> None:
        """Write ``data`` whole (raises the adapter's ``_GONE`` if the socket is gone)."""

    async def next_event(self) -> ResponseEvent:
        """The next event of the response being read, reading the socket as needed."""

    async def receive(self) -> None:
        """Read once from the socket into :attr:`conn` (its end, or a reset: ``b""``)."""

    def stale(self) -> bool:
        """An idle connection the server closed meanwhile."""

    def close(self) -> None:
        """Close the socket; a response still running is cancelled (HTTP-SSE-5)."""


class _Notes:
    """A modern listen's notifications (and its ``SubscriptionEnded``), read from the
    connection of its own: the :class:`Source` of its :class:`Subscription`."""

    def __init__(self, link: Link) -> None:
        self.link = link

    async def get(self) -> Any:
        while True:
            event = await self.link.next_event()
            if isinstance(event, (Notification, SubscriptionEnded)):
                return event
            if (error := http_failure(event)) is not None:
                raise error


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

    ``era`` is ``"auto"`` (the default: find it, see the module's docstring), ``"modern"``
    or ``"legacy"`` (``initialize`` at once); ``probe_timeout`` bounds each wait of the
    probe, ``era_cache`` keeps what it found per origin (:class:`HTTPClientSettings`).
    :attr:`era`, :attr:`protocol_version` and :attr:`outcome` say what was found;
    :meth:`connect` finds it before the first call.

    A subclass sets :attr:`_GONE` (what its connections raise once the socket is
    gone) and provides :meth:`_open_link`, :meth:`_time_limit`, :meth:`_sleep` and
    :meth:`_new_lock`.  It is an async context manager that closes every connection on
    exit (ending a legacy session first).
    """

    #: the exceptions a connection's ``write`` raises when the socket is gone
    _GONE: ClassVar[tuple[type[BaseException], ...]] = (OSError,)

    def __init__(self, url: str, **options: Any) -> None:
        super().__init__(url, **options)
        self._host = self.endpoint.authority
        self._idle: list[Link] = []
        self._open: set[Link] = set()
        self._listens: dict[t.RequestId, Link] = {}
        self._closed = False
        self._era_lock = self._new_lock()
        self._stream: Link | None = None  # a legacy session's GET stream, while open
        #: the calls in flight with an input handler: the stream's requests go to the last
        self._inputs: dict[t.RequestId, Call] = {}
        self._legacy_listens = {}
        self._mailboxes: dict[t.RequestId, Mailbox] = {}  # the legacy listens' notes

    # -- what the adapter provides ------------------------------------------

    async def _open_link(self) -> Link:
        """A new connection to :attr:`address` (``OSError`` if it cannot be made)."""
        raise NotImplementedError

    def _time_limit(self, limit: float | None) -> AbstractAsyncContextManager[Any]:
        """A block that raises ``TimeoutError`` once ``limit`` seconds pass (None: never)."""
        raise NotImplementedError

    async def _sleep(self, seconds: float) -> None:
        """Wait ``seconds`` (a legacy server's ``retry`` before a resume)."""
        raise NotImplementedError

    def _new_lock(self) -> AbstractAsyncContextManager[Any]:
        """A lock of the adapter's event loop (the era probe runs once)."""
        raise NotImplementedError

    def _spawn(self, work: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run ``work()`` in the background (the GET stream's reader); it never raises."""
        raise NotImplementedError

    async def _reap(self) -> None:
        """Wait for the background work to end (at close, once its socket is closed)."""

    def _new_mailbox(self) -> Mailbox:
        """An unbounded queue of the adapter's event loop (a legacy listen's notes)."""
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

    async def _post(self, message: RequestEvent | HTTPPost) -> Link:
        """Send ``message`` (a request, or a POST or GET the binding built) on an idle
        connection, or a new one; return the connection."""
        while self._idle:
            link = self._idle.pop()
            if link.stale():
                self._drop(link)  # closed by the server while idle (a keep-alive timeout)
                continue
            try:
                return await self._send_on(link, message)
            except (ConnectionError, LocalProtocolError):
                break  # closed by the server meanwhile ("Connection: close"): once more, afresh
        return await self._send_on(await self._connect(), message)

    async def _send_on(self, link: Link, message: RequestEvent | HTTPPost) -> Link:
        try:
            if isinstance(message, HTTPPost):
                await link.write(link.conn.send_post(message))
            else:
                await link.write(link.conn.send(message))
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
        if (
            link.conn.busy
            or self._closed
            or len(self._idle) >= self.pool_size
            or self._stale_binding(link.conn)  # a legacy session's that ended (404)
        ):
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
        """Send one request and return its result object, following MRTR rounds.

        In a legacy session the server's requests on the call's stream are answered
        with ``on_input`` (as the MRTR round each stands for), and a ``404`` (the server
        ended the session) opens a new session and sends the call again, once.
        """
        limit = self.timeout if timeout is None else timeout
        for attempt in (1, 2):
            await self._ensure_era(limit)
            conn = self.conn
            try:
                return await self._call(method, params, limit, on_progress, on_input)
            except _Expired:
                self._start_over(conn)
                if attempt == 2:
                    raise ConnectionError(
                        f"{method}: the new session was lost too (404), or the era changed again"
                    ) from None
        raise AssertionError("unreachable")  # pragma: no cover

    async def _call(
        self,
        method: str,
        params: Any,
        limit: float | None,
        on_progress: ProgressHandler | None,
        on_input: InputHandler | None,
    ) -> Any:
        call = Call(self.conn, method, params, on_progress=on_progress, on_input=on_input)
        first = call.request.id
        if on_input is not None:
            self._inputs[first] = call
        link: Link | None = None
        try:
            async with self._time_limit(limit):
                link = await self._post(call.request)
                while True:
                    link, event = await self._ending(link, call.request.id, call)
                    self._release(link)
                    link = None
                    step = await self._settle(call.feed(event))
                    if not isinstance(step, Retry):
                        assert isinstance(step, Done)  # _ending hands over endings only
                        return step.result
                    link = await self._post(step.request)
        except TimeoutError:
            raise TimeoutError(f"{method} got no answer within {limit} s") from None
        finally:
            self._inputs.pop(first, None)
            if link is not None:
                self._abandon(call.request.id, link)

    def _abandon(self, id: t.RequestId, link: Link) -> None:
        """Request ``id`` ends unanswered: closing its response cancels it (HTTP-12); in a
        legacy session a ``notifications/cancelled`` is POSTed too (LEG-09), in the
        background, so that a caller being cancelled need not wait for it."""
        notice = self.http.cancel(id, "abandoned")
        self._drop(link)
        if notice is not None:
            self._spawn(lambda: self._post_aside(notice))

    async def _round(self, request: RequestEvent, limit: float, *, legacy: bool = True) -> Any:
        link: Link | None = None
        try:
            async with self._time_limit(limit):
                link = await self._post(request)
                link, event = await self._ending(link, request.id, legacy=legacy)
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
        self, link: Link, id: t.RequestId, call: Call | None = None, *, legacy: bool = False
    ) -> tuple[Link, Any]:
        """The event that ends (or acknowledges) request ``id``, and the connection it came
        on (another one after a resume); HTTP failures raise (and the connection is
        dropped), but with ``legacy`` an error status the binding reads as the legacy era
        is returned.  A legacy server's requests are answered meanwhile, for ``call``."""
        on_progress = call.on_progress if call is not None else None
        try:
            while True:
                event = await link.next_event()
                if legacy and legacy_answer(event):
                    return link, event
                if not legacy and self._era_changed(event):  # a legacy server now
                    raise _Expired
                if isinstance(event, ToolRejected):
                    self.rejected_tools.append(event)
                    client_log.warning("tool %r left out: %s", event.name, event.reason)
                elif isinstance(event, Notification):
                    if event.method == "notifications/progress" and on_progress is not None:
                        shown = on_progress(event.params)
                        if inspect.isawaitable(shown):  # an async def callback
                            await shown
                    self._deliver(event)  # a legacy session's, on a call's stream
                elif (
                    reply := await self._settle(legacy_reply(self.conn, event, call))
                ) is not None:
                    await self._post_aside(self.http.answer(reply))
                elif isinstance(event, Cancelled):
                    pass  # the server gave up a request of its own: nothing to answer
                elif isinstance(event, StreamInterrupted):  # LEG-12: resume after its retry
                    self._drop(link)
                    await self._sleep((event.retry_ms or 1000) / 1000)
                    link = await self._post(self.http.resume(event))
                elif isinstance(event, SessionExpired):
                    raise _Expired
                elif (error := http_failure(event)) is not None:
                    raise error
                elif getattr(event, "id", None) == id:
                    return link, event
        except BaseException:
            self._abandon(id, link)  # (this call's link, which a resume may have changed)
            raise

    async def _open_stream(self) -> None:
        """The legacy session's standalone GET stream (LEG-13), read in the background:
        what belongs to no call comes on it (``roots/list``, list changes).  A ``405``
        (the server offers none) or a failure ends it; nothing else depends on it."""
        try:
            link = await self._post(self.http.open_stream())
        except (ConnectionError, LocalProtocolError) as e:
            client_log.warning("the session's GET stream could not be opened: %s", e)
            return
        self._stream = link
        self._spawn(lambda: self._pump(link))

    async def _pump(self, link: Link) -> None:
        """Read the GET stream to its end; the server's requests on it are answered with
        the ``on_input`` of the last call in flight that has one."""
        try:
            while link.conn.busy:
                event = link.conn.next_event()
                if event is NEED_DATA:
                    if link.conn.busy:
                        await link.receive()
                elif isinstance(event, Notification):
                    self._deliver(event)  # the session's: for the listens it belongs to
                elif not isinstance(event, Cancelled):
                    call = next(reversed(self._inputs.values()), None)
                    reply = await self._settle(legacy_reply(self.conn, event, call))
                    if reply is None:
                        break  # its end: a refusal (405), a lost connection
                    await self._post_aside(self.http.answer(reply))
        except Exception as e:  # the socket's own failures: the stream is over
            client_log.warning("the session's GET stream failed: %r", e)
        finally:
            if self._stream is link:
                self._stream = None
            self._drop(link)

    async def _post_aside(self, post: HTTPPost | None) -> None:
        """POST what is not a call (an answer to the server's request, a notification) on
        a connection of its own, and read its response (``202``) through.  Best effort
        within the client's timeout: a lost answer is the server's to time out."""
        if post is None:
            return
        link: Link | None = None
        try:
            async with self._time_limit(self.timeout):
                link = await self._post(post)
                while link.conn.busy:  # its events are nobody's: read through
                    event = link.conn.next_event()
                    if isinstance(event, ConnectionClosed) or not link.conn.busy:
                        break
                    if event is NEED_DATA:
                        await link.receive()
        except (ConnectionError, TimeoutError, LocalProtocolError) as e:
            client_log.warning("an answer to the server was not delivered: %r", e)
            if link is not None:
                self._drop(link)
            return
        self._release(link)

    def _start_over(self, expired: ClientConnection) -> None:
        """The binding of ``expired`` is over (a ``404`` in its session, or a server that
        is legacy after all): a new one, and the era found again at the next call."""
        if self._stream is not None:
            self._drop(self._stream)  # the old session's
        self._fresh_session(expired)
        self.outcome = None  # found again: initialize, then the call once more
        for link in self._idle:
            self._drop(link)
        self._idle.clear()

    async def listen(
        self, notifications: t.SubscriptionFilter, *, timeout: float | None = None
    ) -> Subscription:
        """Open a ``subscriptions/listen`` stream on a connection of its own.

        Returns once the server acknowledged it; iterate the :class:`Subscription`
        for the notifications, ``aclose()`` it to close the stream (SUB-11).  A cached
        modern era that the server contradicts is found again, and the listen made in
        the era found (once).
        """
        limit = self.timeout if timeout is None else timeout
        for attempt in (1, 2):
            await self._ensure_era(limit)
            if isinstance(self.outcome, Legacy):
                return await self._listen_legacy(notifications, self.outcome, limit)
            conn = self.conn
            try:
                return await self._listen_modern(notifications, limit)
            except _Expired:
                self._start_over(conn)
                if attempt == 2:
                    raise ConnectionError("listen: the era changed again") from None
        raise AssertionError("unreachable")  # pragma: no cover

    async def _listen_modern(
        self, notifications: t.SubscriptionFilter, limit: float | None
    ) -> Subscription:
        params = t.SubscriptionsListenRequestParams(notifications=notifications)
        request = build_request(self.conn, "subscriptions/listen", params)
        link: Link | None = None
        first: Any = None
        try:
            async with self._time_limit(limit):
                link = await self._post(request)
                link, first = await self._ending(link, request.id)
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
        return Subscription(self, request.id, first.notifications, _Notes(link))

    # -- what a Subscription needs ------------------------------------------

    def _listening(self, id: t.RequestId) -> bool:
        return id in self._listens or id in self._mailboxes

    def _legacy_source(self, id: t.RequestId) -> Mailbox:
        self._mailboxes[id] = mailbox = self._new_mailbox()
        return mailbox

    def _deliver(self, event: Any) -> None:
        """A legacy session's notification: to the listens it belongs to."""
        for id in self._listeners(event):
            self._mailboxes[id].put(event)

    async def _next(self, source: Source) -> Any:
        """The next notification (or the ``SubscriptionEnded``) of a listen: from its
        stream (a modern listen's :class:`_Notes`) or its mailbox (a legacy one's)."""
        return await source.get()

    async def _end_listen(self, id: t.RequestId) -> None:
        self._mailboxes.pop(id, None)
        if await self._end_legacy_listen(id):
            return
        link = self._listens.pop(id, None)
        if link is not None:
            self._release(link)  # still streaming: closed, which cancels it (SUB-11)

    # -- the era (issue 16) --------------------------------------------------

    _transport = "http"

    async def _tell(self, event: Notification) -> None:
        await self._post_aside(self.http.answer(event))
        if event.method == "notifications/initialized":
            await self._open_stream()  # the session is open: its GET stream

    # -- lifetime -----------------------------------------------------------

    async def aclose(self) -> None:
        """Close every connection; calls and listens in flight get ``ConnectionError``.

        A legacy session is ended first (``DELETE``, LEG-16), within a few seconds."""
        if self.conn.legacy is not None and not self._closed:
            with suppress(Exception):  # best effort: the client is going away
                async with self._time_limit(_GOODBYE):
                    await self._post_aside(self.http.end_session())
        self._closed = True
        for link in list(self._open):
            self._drop(link)
        self._idle.clear()
        self._listens.clear()
        await self._reap()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
