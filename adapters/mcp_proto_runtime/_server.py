"""The handler layer the adapters share: a method registry, a request context, answers.

Nothing here runs anything.  An adapter looks a request's handler up in
:class:`Handlers`, runs it its own way (a task, a thread), and turns what it
returned or raised into the event to send with :func:`answer`.  The
:class:`RequestContext` builds the notifications a handler may send for its
request (progress, log messages) and the ``input_required`` results of MRTR;
adapters subclass it to add the methods that actually send.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from typing import Any, Generic, Protocol, TypeVar

import attrs

from mcp_proto import (
    LEGACY_VERSIONS,
    LOG_LEVELS,
    EncodeError,
    LocalProtocolError,
    McpError,
    Notification,
    Request,
    Result,
    ServerConnection,
    structure,
    unstructure,
)
from mcp_proto import types as t
from mcp_proto.http import HTTPServer, SessionTable
from mcp_proto.http.limits import (
    DEFAULT_BODY_ALLOWANCE,
    DEFAULT_BODY_BUDGET,
    DEFAULT_MAX_LISTENS_PER_CLIENT,
    BodyBudget,
    ListenBudget,
)

from ._answers import (
    acknowledgement,
    answer,
    default_answer,
    internal_error,
    no_handler,
    unknown_tool,
)
from ._fanout import FANOUT_QUEUE, FANOUT_TIMEOUT, AsyncChanges
from ._handler_checks import HandlerKind, check_handler, check_method
from ._transport import Transport

__all__ = [
    "AsyncServerSettings",
    "LINGER_BYTES",
    "LINGER_TIME",
    "SEND_REFUSED",
    "AsyncHandlerContext",
    "ClientClock",
    "HandlerContext",
    "Handlers",
    "ServerSettings",
    "McpError",
    "RequestContext",
    "acknowledgement",
    "answer",
    "default_answer",
    "internal_error",
    "no_handler",
    "read_timeout",
    "unknown_tool",
]

H = TypeVar("H", bound=Callable[..., Any])
#: what ``send`` raises for an answer it will not write: adapters send ``internal_error`` then
SEND_REFUSED = (LocalProtocolError, EncodeError)
#: lingering close: after the last response of a connection that closes, an HTTP adapter
#: shuts its write side and reads and drops what the client still sends, for at most
#: LINGER_TIME seconds and LINGER_BYTES bytes, so the client reads the response instead of
#: a reset (a 413 to a client still sending its body)
LINGER_TIME = 2.0
LINGER_BYTES = 1024 * 1024
_RANK = {name: i for i, name in enumerate(LOG_LEVELS)}
_RUNTIME_METHODS = frozenset({"subscriptions/listen"})


class Handlers(Generic[H]):
    """Which callable answers which method: one per method, plus an optional catch-all.

    ``H`` is the adapter's handler type (``async def`` for trio and asyncio, a
    plain function for the blocking adapter); this class only stores them.
    ``server/discover`` needs no handler: without one, the adapters answer it
    from the connection's configuration.  ``subscriptions/listen`` takes none:
    the runtime acknowledges it from the capabilities and keeps it open
    (registering one raises ``ValueError``).
    """

    def __init__(self, handlers: Mapping[str, H] | None = None, *, default: H | None = None):
        self._by_method: dict[str, H] = {}
        #: the calling convention the adapter's server checks (set when it adopts these)
        self.kind: HandlerKind = None
        self._declared: Callable[[str], bool] | None = None
        for method, fn in (handlers or {}).items():
            self.add(method, fn)
        if default is not None:
            check_handler("(the catch-all)", default)
        self.default = default

    def adopt(self, kind: HandlerKind, declared: Callable[[str], bool] = lambda _: False) -> None:
        """An adapter's server takes these handlers: each must be of ``kind``, for a method
        that can reach it (a spec request, or one ``declared`` by a registered extension);
        so must those added later."""
        self.kind, self._declared = kind, declared
        for method, fn in self._by_method.items():
            check_method(method, declared)
            check_handler(method, fn, kind)
        if self.default is not None:
            check_handler("(the catch-all)", self.default, kind)

    def on(self, method: str) -> Callable[[H], H]:
        """Decorator: ``@handlers.on("tools/call")``."""

        def register(fn: H) -> H:
            self.add(method, fn)
            return fn

        return register

    def add(self, method: str, fn: H) -> None:
        """Register ``fn`` for ``method``; a table mistake raises at once
        (:mod:`mcp_proto_runtime._handler_checks`)."""
        if method in _RUNTIME_METHODS:
            raise ValueError(f"{method} is answered by the runtime, not by a handler")
        if self._declared is not None:  # taken by a server: the method must reach it
            check_method(method, self._declared)
        check_handler(method, fn, self.kind)
        self._by_method[method] = fn

    def find(self, method: str) -> H | None:
        if method in _RUNTIME_METHODS:
            return None  # not even the catch-all: the runtime owns it
        return self._by_method.get(method, self.default)

    def methods(self) -> tuple[str, ...]:
        return tuple(self._by_method)


@attrs.define(slots=True)
class RequestContext:
    """One admitted request, as its handler sees it.

    ``cancelled`` turns true when the client cancels (the blocking adapter's
    signal; trio and asyncio also cancel the handler's task).  The
    ``*_event`` methods build notifications for this request, or return
    ``None`` when the request did not ask for them (no ``progressToken``; no
    ``logLevel``, or a level below it), so handlers need not check.
    """

    request: Request
    cancelled: bool = False
    _last_progress: float | None = None
    #: what the request came on (:class:`~mcp_proto_runtime.Transport`)
    transport: Transport = attrs.field(factory=lambda: Transport(kind="stdio"), kw_only=True)

    @property
    def meta(self) -> t.RequestMetaObject | None:
        return self.request.meta

    @property
    def client_capabilities(self) -> t.ClientCapabilities | None:
        meta = self.meta
        return meta.client_capabilities if meta is not None else None

    def progress_event(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> Notification | None:
        meta = self.meta
        token = meta.progress_token if meta is not None else None
        if token is None or (self._last_progress is not None and progress <= self._last_progress):
            return None  # not asked for, or not increasing (PROG-05)
        self._last_progress = progress
        params = t.ProgressNotificationParams(
            progress_token=token, progress=progress, total=total, message=message
        )
        return Notification(
            method="notifications/progress", params=params, request_id=self.request.id
        )

    def log_event(
        self, level: t.LoggingLevel, data: Any, logger: str | None = None
    ) -> Notification | None:
        meta = self.meta
        asked = meta.log_level if meta is not None else None
        if asked is None or _RANK[level] < _RANK[asked]:
            return None  # LOG-03, LOG-04
        params = t.LoggingMessageNotificationParams(level=level, data=data, logger=logger)
        return Notification(
            method="notifications/message", params=params, request_id=self.request.id
        )

    @staticmethod
    def input_required(
        input_requests: Mapping[str, Any] | None = None, request_state: str | None = None
    ) -> t.InputRequiredResult:
        """An MRTR result to return from the handler (MRTR-09 needs one of the two).

        Each input request is an ``ElicitRequest``, ``CreateMessageRequest`` or
        ``ListRootsRequest``, or the same as a plain dict
        (``{"method": "elicitation/create", "params": {...}}``).  Raises
        :class:`DecodeError` for one that is neither (MRTR-05).
        """
        requests = dict(input_requests or {})
        if any(isinstance(v, dict) for v in requests.values()):
            raw = {k: v if isinstance(v, dict) else unstructure(v) for k, v in requests.items()}
            wire = {"resultType": "input_required", "inputRequests": raw}
            requests = structure(wire, t.InputRequiredResult).input_requests or {}
        return t.InputRequiredResult(input_requests=requests or None, request_state=request_state)


#: what a handler's context sends through: the stream or connection its request came on
S = TypeVar("S")


class HandlerContext(Generic[S]):
    """The part of a handler's context every adapter shares (their ``Context`` classes).

    ``request`` is the admitted request; ``cancelled`` turns true when the client
    cancels or the input ends; :meth:`input_required` builds an MRTR result.  The
    adapter adds the methods that send (``progress``, ``log``, ``notify_changed``),
    through ``session.emit`` and ``session.server._fan_out``.
    """

    def __init__(self, core: RequestContext, session: S) -> None:
        self._core = core
        self._session = session

    @property
    def request(self) -> Request:
        return self._core.request

    @property
    def cancelled(self) -> bool:
        return self._core.cancelled

    @property
    def transport(self) -> Transport:
        """The transport the request came on: its HTTP headers, the principal the
        server's ``auth`` let in, the peer (:class:`~mcp_proto_runtime.Transport`)."""
        return self._core.transport

    input_required = staticmethod(RequestContext.input_required)

    def _cancel(self) -> None:
        self._core.cancelled = True


class AsyncStream(Protocol):
    """What an async handler's context sends through (asyncio, trio; stdio or HTTP)."""

    @property
    def server(self) -> AsyncServerSettings[Any]: ...

    @property
    def changes(self) -> AsyncChanges | None:
        """Set while the stream is in the server's ``_sessions`` (an HTTP link: a listen)."""

    async def emit(self, event: Notification | Result) -> None: ...

    async def close_stream(self) -> bool:
        """End the request's response before its answer, if it can (see the context)."""


class AsyncHandlerContext(HandlerContext[AsyncStream]):
    """What an ``async`` handler gets (asyncio, trio): ways to talk about its request.

    ``progress`` and ``log`` send only what the request asked for and do nothing
    otherwise (see :meth:`RequestContext.progress_event`).
    """

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        event = self._core.progress_event(progress, total, message)
        if event is not None:
            await self._session.emit(event)

    async def log(self, level: t.LoggingLevel, data: Any, logger: str | None = None) -> None:
        event = self._core.log_event(level, data, logger)
        if event is not None:
            await self._session.emit(event)

    async def close_stream(self) -> bool:
        """End this request's HTTP response now and go on (True), or do nothing (False).

        For a legacy session's request on an event stream (LEG-12): the client resumes
        with a ``GET`` and ``Last-Event-ID``, and what the handler sends from then on,
        its answer included, reaches it there (``docs/dual-era.md``).  On stdio and for
        modern requests there is nothing to close.
        """
        return await self._session.close_stream()

    async def notify_changed(self, method: str, params: Any = None) -> None:
        """A change notification, to every open subscription that asked for it.

        As the server's ``notify_changed``, except that this request's own stdio
        stream gets it at once, from this task, so before the request's answer.
        """
        event = Notification(method=method, params=params or t.NotificationParams())
        await self._session.server._fan_out(event, self._session)


def read_timeout(
    *,
    busy: bool,
    waiting_since: float,
    now: float,
    client_timeout: float,
    keepalive_interval: float,
) -> float | None:
    """How long an HTTP adapter waits for the client's next bytes; ``None``: close now.

    While a handler runs or a listen is open (``busy``) the client may stay quiet:
    wait ``keepalive_interval`` and send a keep-alive comment.  Otherwise the client
    has ``client_timeout`` from ``waiting_since`` (the end of the last exchange, or
    the connection's start) to send a whole request, however it trickles the bytes
    (slowloris).  Times are the adapter's clock; the core has none.
    """
    if busy:
        return keepalive_interval
    left = waiting_since + client_timeout - now
    return min(keepalive_interval, left) if left > 0 else None


class ClientClock:
    """Per HTTP connection: since when the server has been waiting for its client.

    The clock starts when the connection opens and again whenever the server stops
    being busy (no handler running, no listen open, no answer being written); every
    complete exchange stops it -- a request for a handler, and as much one the binding
    answers itself (a ``202``, a ``4xx``): the adapter calls :meth:`request_arrived`
    for both.  :meth:`wait` applies :func:`read_timeout` to it.  Times come from the
    adapter.
    """

    __slots__ = ("_since",)

    def __init__(self, now: float) -> None:
        self._since: float | None = now

    def request_arrived(self) -> None:
        self._since = None

    def wait(self, *, busy: bool, now: float, settings: ServerSettings[Any]) -> float | None:
        """Seconds to wait for the client's bytes; ``None``: its time is up, close."""
        if busy or self._since is None:
            self._since = now
        return read_timeout(
            busy=busy,
            waiting_since=self._since,
            now=now,
            client_timeout=settings.client_timeout,
            keepalive_interval=settings.keepalive_interval,
        )


class ServerSettings(Generic[H]):
    """What every adapter's ``Server`` holds: its handlers and its connections' settings.

    ``handlers`` maps methods to handlers (or is a :class:`Handlers`);
    ``server/discover`` and ``subscriptions/listen`` are the runtime's (see
    :func:`default_answer`).  ``shutdown_grace``: when the input ends, seconds
    the requests already received get to finish before they are cancelled
    (STDIO-15).  ``keepalive_interval``: seconds of quiet on an open SSE stream
    before a keep-alive comment.  ``client_timeout``: seconds an HTTP client has
    to send a whole request (slowloris).  ``max_connections``: open HTTP
    connections at most; ``max_listens`` of them (default half) may hold an open
    listen, ``max_listens_per_client`` per client (peer address, or bearer token: see
    :mod:`mcp_proto.http.limits`).  ``body_allowance``: request body bytes each HTTP
    connection buffers on its own; ``body_budget``: body bytes past that all
    connections buffer together.  ``fanout_queue``: change notifications a
    subscriber may have waiting before it is ended (:mod:`mcp_proto_runtime._fanout`);
    ``fanout_timeout``: seconds a write to an HTTP subscriber may take before its
    connection is closed.  Every other keyword goes to
    :class:`~mcp_proto.ServerConnection` (``capabilities``, ``server_info``,
    limits...), one per stdio stream or per HTTP request (:meth:`connection`).  The
    table is checked as it is taken (:mod:`mcp_proto_runtime._handler_checks`).
    """

    #: what the adapter's handlers are: ``"sync"``, ``"async"`` (``None``: unchecked)
    _handler_kind: HandlerKind = None

    def __init__(
        self,
        handlers: Handlers[H] | Mapping[str, H] | None = None,
        *,
        shutdown_grace: float = 5.0,
        keepalive_interval: float = 15.0,
        client_timeout: float = 30.0,
        max_connections: int = 256,
        max_listens: int | None = None,
        max_listens_per_client: int = DEFAULT_MAX_LISTENS_PER_CLIENT,
        body_budget: int = DEFAULT_BODY_BUDGET,
        body_allowance: int = DEFAULT_BODY_ALLOWANCE,
        fanout_queue: int = FANOUT_QUEUE,
        fanout_timeout: float = FANOUT_TIMEOUT,
        **connection_options: Any,
    ) -> None:
        self.handlers = handlers if isinstance(handlers, Handlers) else Handlers(handlers)
        self.shutdown_grace = shutdown_grace
        self.keepalive_interval = keepalive_interval
        self.client_timeout = client_timeout
        self.max_connections = max_connections
        self.max_listens = max_connections // 2 if max_listens is None else max_listens
        self.max_listens_per_client = max_listens_per_client
        self.body_budget = body_budget
        self.body_allowance = body_allowance
        self.fanout_queue = fanout_queue
        self.fanout_timeout = fanout_timeout
        connection_options.setdefault("legacy_versions", LEGACY_VERSIONS)
        self.connection_options = connection_options
        self._template = ServerConnection(**connection_options)  # fails early on bad options
        extensions = self._template.extensions
        self.handlers.adopt(
            self._handler_kind, lambda method: extensions.request_types(method) is not None
        )
        #: stdio sessions, and HTTP connections holding an open listen: what
        #: ``notify_changed`` reaches
        self._sessions: set[Any] = set()

    def connection(self, *, legacy: bool = True) -> ServerConnection:
        """A new connection with this server's settings (one per stdio stream or HTTP request).

        ``legacy=False``: modern only, whatever ``legacy_versions`` says (the HTTP
        binding's per-request connections, which have no session to serve one in).
        """
        if legacy:
            return self._template.fresh()
        return self._template.fresh(legacy_versions=())

    def http_binding(
        self, http_options: Mapping[str, Any], *, legacy: bool = True
    ) -> tuple[HTTPServer, ServerConnection]:
        """The HTTP binding of an adapter's server, and the modern-only template.

        Per-request connections are modern only; with ``legacy`` and legacy versions
        configured, ``initialize``-era clients get sessions (``SessionTable`` with ids
        from ``secrets.token_bytes``, bounded and expiring by the adapter's clock).
        """
        template = self.connection(legacy=False)
        sessions = None
        if legacy and self._template.legacy_versions:
            sessions = SessionTable(token=secrets.token_bytes, connection=self.connection)
        http = HTTPServer(connection=template.fresh, sessions=sessions, **http_options)
        return http, template

    def budgets(
        self, listens: type[ListenBudget] = ListenBudget, bodies: type[BodyBudget] = BodyBudget
    ) -> tuple[ListenBudget, BodyBudget]:
        """The listen and body budgets one HTTP server's connections share, from these settings.

        ``listens`` and ``bodies`` are the classes built: an adapter whose connections are
        threads passes subclasses that take a lock.
        """
        return (
            listens(self.max_listens, self.max_listens_per_client),
            bodies(self.body_budget, self.body_allowance),
        )


class AsyncServerSettings(ServerSettings[H]):
    """:class:`ServerSettings`, and the change fan-out of the async adapters' servers.

    Every stream in ``_sessions`` has ``changes`` (an
    :class:`~mcp_proto_runtime._fanout.AsyncChanges` its writer task drains) and ``emit``;
    the adapter supplies :meth:`_checkpoint`.  Its handlers are ``async def``.
    """

    _handler_kind: HandlerKind = "async"

    async def notify_changed(self, method: str, params: Any = None) -> None:
        """Fan a change notification out to every matching subscription of every stream.

        It is handed to each stream's outbox, never waiting for one; each stream's
        writer task sends it.  A stream ``fanout_queue`` notifications behind has
        its subscriptions ended (:mod:`mcp_proto_runtime._fanout`).  Yields once, so that
        the writers run before the caller's next change.
        """
        await self._fan_out(Notification(method=method, params=params or t.NotificationParams()))

    async def _fan_out(self, event: Notification, own: AsyncStream | None = None) -> None:
        """``notify_changed``; ``own``, a handler's stream, is written from this task if it can."""
        sessions = list(self._sessions)
        for session in sessions:
            if session is not own:
                session.changes.offer(event)
        if own is not None and own in sessions and own.changes is not None:
            if own.changes.idle:  # nothing of its own waits before it
                await own.emit(event)
            else:
                own.changes.offer(event)
        await self._checkpoint()

    async def _checkpoint(self) -> None:
        raise NotImplementedError
