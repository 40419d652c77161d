"""What every adapter's client does around one call, kept in one place.

:func:`build_request` turns ``(method, params)`` into a :class:`Request` with a
fresh id (params may be the method's class or a plain dict; a progress token
equal to the id when progress is wanted, unique while in flight, PROG-03).
:func:`outcome_of` turns the event that ended a request into its result, or
raises the matching exception.
"""

from __future__ import annotations

import inspect
import ssl
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, TypeVar

import attrs

from mcp_proto import (
    DEFAULT_MAX_MESSAGE_SIZE,
    INTERNAL_ERROR,
    METHODS,
    AnsweredRequest,
    ClientConnection,
    ConnectionClosed,
    EraCache,
    EraOutcome,
    EraProbe,
    ErrorResponse,
    Event,
    Incompatible,
    InputRequired,
    InvalidMessage,
    InvalidResponse,
    Legacy,
    McpError,
    Modern,
    Notification,
    RemoteProtocolError,
    Request,
    Result,
    ServerRequest,
    SubscriptionAcknowledged,
    SubscriptionEnded,
    VersionNotSupported,
    structure,
    unstructure,
)
from mcp_proto import types as t
from mcp_proto.http import (
    AuthenticationRequired,
    Era,
    HTTPClient,
    HTTPClientConnection,
    RequestLost,
    ResponseEvent,
    ToolRejected,
    UnexpectedResponse,
)

from ._reach import Endpoint, route_for

__all__ = [
    "ENDINGS",
    "shown_progress",
    "blocking",
    "Pending",
    "argv",
    "Endpoint",
    "HTTPClientSettings",
    "InputHandler",
    "InputRequiredError",
    "ProbeOutcome",
    "ProgressHandler",
    "Call",
    "Done",
    "Retry",
    "build_request",
    "era_failure",
    "http_failure",
    "legacy_input",
    "ERAS",
    "SHARED_ERAS",
    "check_era",
    "era_probe",
    "legacy_reply",
    "legacy_answer",
    "outcome_of",
    "owner_of",
    "probe_outcome",
]

#: the events that end a request: each request gets exactly one, or the connection closes
ENDINGS = (
    Result,
    ErrorResponse,
    InputRequired,
    InvalidResponse,
    Legacy,
    VersionNotSupported,
    SubscriptionEnded,
)


#: answers an ``input_required`` round: gets the event, returns the ``inputResponses``
InputHandler = Callable[
    [InputRequired], Mapping[str, Any] | Awaitable[Mapping[str, Any]]
]  # (an async def on the async clients)
#: sees each ``notifications/progress`` of a call that asked for progress
ProgressHandler = Callable[[t.ProgressNotificationParams], Awaitable[None] | None]


class InputRequiredError(Exception):
    """A call ended in an ``input_required`` round that no input handler answered.

    ``event`` is the :class:`InputRequired`; ``event.retry(...)`` continues it.
    """

    def __init__(self, event: InputRequired) -> None:
        keys = ", ".join(event.input_requests) or "none"
        super().__init__(f"the server needs input to continue (input requests: {keys})")
        self.event = event


def build_request(
    conn: ClientConnection, method: str, params: Any = None, *, progress: bool = False
) -> Request:
    """A request for ``method`` with a fresh id; ``_meta`` stamped from ``conn``'s defaults."""
    id = conn.next_id()
    info = METHODS.get(method)
    ptype = info.params_type if info is not None else None
    meta = conn.meta(progress_token=id if progress else None)
    if params is None or isinstance(params, dict):
        raw = dict(params or {})
        raw["_meta"] = {**unstructure(meta), **raw.get("_meta", {})}
        if ptype is None:
            return Request(id=id, method=method, params=raw)
        return Request(id=id, method=method, params=structure(raw, ptype))
    own = getattr(params, "meta", None)
    if own is None:
        params = attrs.evolve(params, meta=meta)
    elif progress:  # keep the caller's _meta (a trace id, a logLevel): add only the token
        params = attrs.evolve(params, meta=attrs.evolve(own, progress_token=id))
    return Request(id=id, method=method, params=params)


@attrs.frozen
class Retry:
    """Send ``request``: the next MRTR round, answering ``replaces`` (now retired)."""

    request: Request
    replaces: t.RequestId


@attrs.frozen
class Done:
    """The call is over: ``result`` is what the caller gets."""

    result: Any


@attrs.frozen
class Pending:
    """An async callback's awaitable (``on_input`` or ``on_progress`` given as an
    ``async def`` to an async client): await :attr:`awaitable`, then ``resume(value)`` is
    the step it stood for; if it raised, ``failed(error)`` is (re-raise when ``None``).
    :meth:`AsyncCalls._settle <mcp_proto_runtime.AsyncCalls>` does this; a blocking client
    refuses async callbacks."""

    awaitable: Awaitable[Any]
    resume: Callable[[Any], Any]
    failed: Callable[[Exception], Any] | None = None


T = TypeVar("T")


def blocking(step: T | Pending) -> T:
    """``step`` for a blocking client, which cannot await: a :class:`Pending` (a callback
    that gave an awaitable) raises ``TypeError`` saying what to pass instead."""
    if isinstance(step, Pending):
        close = getattr(step.awaitable, "close", None)
        if close is not None:
            close()  # never awaited: no "coroutine was never awaited" warning
        raise TypeError(
            "the blocking client calls on_input and on_progress as plain functions: this one "
            "gave an awaitable (an async def?); use mcp_proto_asyncio or mcp_proto_trio"
        )
    return step


def shown_progress(shown: object) -> None:
    """What a blocking client's ``on_progress`` returned: nothing, or an awaitable it
    cannot await (``TypeError``, as :func:`blocking` says)."""
    if inspect.isawaitable(shown):
        blocking(Pending(shown, lambda _: None))


class Call:
    """One client call from its first request to its result, MRTR rounds included; no I/O.

    :attr:`request` is the request to send now: the first one, then each round's retry.
    :meth:`feed` takes each event routed to the current request and says what to do next:
    ``None`` (keep waiting: a progress notification, passed to ``on_progress``),
    :class:`Retry` (``on_input`` answered an ``input_required`` round: send
    ``retry.request``, routed under its new id), or :class:`Done`; for an ``async def``
    callback, a :class:`Pending` that gives one of those once awaited. An ending that is an
    error raises as :func:`outcome_of` does, and so does ``on_input``. The caller keeps the
    wait, the timeout and the cancellation: on any other way out it cancels
    :attr:`request` if it is still in flight.
    """

    __slots__ = ("conn", "method", "on_input", "on_progress", "request")

    def __init__(
        self,
        conn: ClientConnection,
        method: str,
        params: Any = None,
        *,
        on_progress: ProgressHandler | None = None,
        on_input: InputHandler | None = None,
    ) -> None:
        self.conn = conn
        self.method = method
        self.on_progress = on_progress
        self.on_input = on_input
        self.request = build_request(conn, method, params, progress=on_progress is not None)

    def feed(self, event: ResponseEvent) -> Retry | Done | Pending | None:
        """What ``event`` (routed to :attr:`request`) means for the call."""
        if isinstance(event, Notification):
            if self.on_progress is not None and event.method == "notifications/progress":
                shown = self.on_progress(event.params)
                if inspect.isawaitable(shown):
                    return Pending(shown, lambda _: None)
            return None
        if isinstance(event, InputRequired) and self.on_input is not None:
            answers = self.on_input(event)
            if inspect.isawaitable(answers):
                return Pending(answers, lambda got: self._retry(event, got))
            return self._retry(event, answers)
        return Done(outcome_of(event))

    def _retry(self, event: InputRequired, answers: Any) -> Retry:
        replaces = self.request.id
        self.request = event.retry(id=self.conn.next_id(), input_responses=answers)
        return Retry(self.request, replaces)


def legacy_input(
    event: ServerRequest, call: Request | None, on_input: InputHandler | None
) -> Result | ErrorResponse | Pending:
    """The answer to a legacy server's request (issue 16), asked of ``on_input`` as the
    MRTR round it stands for: one ``InputRequired`` for ``call`` (the call it came with,
    or during), its one input request keyed by the server's id.  So one callback answers
    both eras.  No handler (or no call), no answer for the key, or a handler that raised:
    a JSON-RPC error the server gets instead (its request failed; the call goes on).
    """
    if on_input is None or call is None:
        error = t.Error(code=INTERNAL_ERROR, message=f"no input handler for {event.method}")
        return ErrorResponse(id=event.id, error=error)
    key = str(event.id)
    asked = InputRequired(
        id=call.id,
        result=t.InputRequiredResult(input_requests={key: event.request}),
        request=call,
        round=1,
    )
    try:
        answers = on_input(asked)
    except Exception as e:
        return _input_failed(event, e)
    if inspect.isawaitable(answers):
        return Pending(answers, lambda got: _legacy_answer(event, key, got),
                       lambda e: _input_failed(event, e))  # fmt: skip
    return _legacy_answer(event, key, answers)


def _input_failed(event: ServerRequest, e: Exception) -> ErrorResponse:
    error = t.Error(code=INTERNAL_ERROR, message=f"the input handler failed: {e}")
    return ErrorResponse(id=event.id, error=error)


def _legacy_answer(event: ServerRequest, key: str, answers: Any) -> Result | ErrorResponse:
    if key not in answers:
        error = t.Error(code=INTERNAL_ERROR, message=f"the input handler gave no {key!r} answer")
        return ErrorResponse(id=event.id, error=error)
    return event.answer(answers[key])


#: what the HTTP clients of this process learned of their origins' eras (VER-13)
SHARED_ERAS = EraCache()

#: the clients' ``era=`` choices: find it, or force one
ERAS = ("auto", "modern", "legacy")


def check_era(era: str) -> str:
    """``era`` if it is one of :data:`ERAS`; ``ValueError`` naming them otherwise."""
    if era not in ERAS:
        raise ValueError(f"era is 'auto', 'modern' or 'legacy', not {era!r}")
    return era


def era_probe(conn: ClientConnection, era: str, transport: Literal["stdio", "http"]) -> EraProbe:
    """The era probe a client runs before its first call (``era``: ``"auto"``, or
    ``"legacy"`` for ``initialize`` at once), with ``conn``'s ids, capabilities and info.

    Over stdio it starts with its own ``server/discover``; over HTTP
    (:meth:`~mcp_proto.EraProbe.start` returns ``None``) the client sends the modern
    request itself and reports what came back (HTTP-42).
    """
    return EraProbe(
        transport=transport,
        next_id=conn.next_id,
        capabilities=conn.capabilities,
        client_info=conn.client_info,
        versions=() if era == "legacy" else (conn.protocol_version,),
    )


def legacy_reply(conn: ClientConnection, event: Any, call: Call | None) -> Event | Pending | None:
    """What a client sends for ``event`` in a legacy session, or ``None`` when it is not
    the server's: a request of the server's is answered by ``call``'s ``on_input`` (the
    call in flight it came with, see :func:`legacy_input`); a ``ping`` answered by the
    core (:class:`~mcp_proto.AnsweredRequest`) and a refused one
    (:class:`~mcp_proto.InvalidMessage`) are sent as they are.  The server's own
    ``Cancelled`` needs no answer: ``None`` too.
    """
    if isinstance(event, ServerRequest):
        request = call.request if call is not None else None
        return legacy_input(event, request, call.on_input if call is not None else None)
    if isinstance(event, AnsweredRequest | InvalidMessage) and conn.legacy is not None:
        return event
    return None


def era_failure(outcome: EraOutcome) -> ConnectionError | None:
    """The exception a probe's outcome means: ``ConnectionError`` naming why for
    :class:`~mcp_proto.Incompatible` (no version in common, LEG-05), else ``None``."""
    if isinstance(outcome, Incompatible):
        return ConnectionError(f"cannot talk to this server: {outcome.reason}")
    return None


def owner_of(event: ResponseEvent) -> t.RequestId | None:
    """The id of the request an event belongs to, for routing it to that call's waiter.

    Endings and acknowledgements carry it as ``id``; progress, log messages and
    stream notifications as ``request_id``.  ``None``: nobody's (a stray
    message, an uncorrelated error, the connection's end).
    """
    if isinstance(event, Notification):
        return event.request_id
    if isinstance(event, (*ENDINGS, SubscriptionAcknowledged)):
        return event.id
    return None


def outcome_of(event: ResponseEvent) -> Any:
    """The result carried by the event that ended a request, or the exception it means.

    ``Result`` and ``SubscriptionEnded`` give their result; an error response
    raises :class:`McpError` (``-32022`` included, its data names the versions
    the server supports); ``InvalidResponse`` raises
    :class:`RemoteProtocolError`; an unanswered ``InputRequired`` raises
    :class:`InputRequiredError`.
    """
    if isinstance(event, Result):
        return event.result
    if isinstance(event, SubscriptionEnded):
        return event.result
    if isinstance(event, (ErrorResponse, VersionNotSupported)):
        error: t.Error = event.error
        raise McpError(error.code, error.message, error.data)
    if isinstance(event, InvalidResponse):
        raise RemoteProtocolError(f"invalid response: {event.error.message}")
    if isinstance(event, InputRequired):
        raise InputRequiredError(event)
    raise TypeError(f"{type(event).__name__} does not end a request")


@attrs.frozen(kw_only=True)
class ProbeOutcome:
    """What a ``server/discover`` probe says about a stdio server (STDIO-18, STDIO-19).

    ``era`` is ``"modern"`` for a ``DiscoverResult`` or a ``-32022`` naming the
    versions served, ``"legacy"`` for anything else: another error, no answer in
    time, a result of the wrong shape (the fallback is never keyed to one code).
    ``version`` is the newest version both sides support (``None`` when there
    is none, or for a legacy server); ``result`` the ``DiscoverResult`` if any.
    """

    era: Literal["modern", "legacy"]
    supported: tuple[str, ...] = ()
    version: str | None = None
    result: t.DiscoverResult | None = None


def probe_outcome(event: ResponseEvent | None, ours: Iterable[str]) -> ProbeOutcome:
    """Classify the event that ended a probe (``None``: no answer before the timeout)."""
    ours = tuple(ours)
    if isinstance(event, Result) and isinstance(event.result, t.DiscoverResult):
        supported = tuple(event.result.supported_versions)
        common = set(supported) & set(ours)
        return ProbeOutcome(
            era="modern",
            supported=supported,
            version=max(common) if common else None,
            result=event.result,
        )
    if isinstance(event, VersionNotSupported):
        return ProbeOutcome(era="modern", supported=event.supported, version=event.choose(ours))
    return ProbeOutcome(era="legacy")


def argv(command: Sequence[str]) -> list[str]:
    """The arguments of a stdio server's ``command``; a single string (which would start
    a program named by its whole text, or by its first letter) raises ``TypeError``
    saying what to pass."""
    if isinstance(command, str | bytes):
        raise TypeError(
            f"the command is a list of arguments, not one string: {command!r} "
            "(shlex.split() makes the list from a command line)"
        )
    args = list(command)
    if not args or not all(isinstance(a, str) for a in args):
        raise TypeError(f"the command is a non-empty list of strings, not {command!r}")
    return args


def legacy_answer(event: ResponseEvent | None) -> bool:
    """Whether an HTTP ending is an error status the binding reads as a legacy server's
    (HTTP-42, HTTP-46): to a probe that is the legacy era, to a call an error."""
    return isinstance(event, UnexpectedResponse) and event.era is Era.LEGACY


def http_failure(event: ResponseEvent) -> Exception | None:
    """The exception an HTTP-only ending of a request means (``None`` for the others).

    A lost request or a closed connection is ``ConnectionError``; ``401``/``403``
    is ``PermissionError`` carrying the event (its parsed challenge) as
    ``args[1]``; a status the binding cannot read is :class:`RemoteProtocolError`, or
    :class:`McpError` when its body held a JSON-RPC error (its code kept).
    """
    if isinstance(event, RequestLost):
        return ConnectionError(f"the request was lost: {event.reason}")
    if isinstance(event, AuthenticationRequired):
        return PermissionError(f"HTTP {event.status}: authorization required", event)
    if isinstance(event, UnexpectedResponse):
        hint = ""
        if event.era is Era.LEGACY:  # the matrix's Modern/Legacy row: say what to do
            hint = "; an initialize-era server, it seems: era='auto' or 'legacy' talks to it"
        if event.error is not None:  # a JSON-RPC error still: its code is the caller's
            error = event.error
            return McpError(error.code, f"{error.message} (HTTP {event.status})", error.data)
        return RemoteProtocolError(
            f"HTTP {event.status}: {event.reason} ({event.era.value}){hint}"
        )
    if isinstance(event, ConnectionClosed):
        return ConnectionError("the server closed the connection")
    return None


class HTTPClientSettings:
    """What every adapter's HTTP client holds: where, how long, and the core's pieces.

    ``url`` is ``http(s)://host[:port]/path``; ``https://`` runs TLS with ``ssl_context``
    (``ssl.create_default_context()`` by default), and ``proxy`` says how to get there
    (``"auto"``: the environment's ``HTTPS_PROXY``/``HTTP_PROXY`` and ``NO_PROXY``;
    ``None``: directly; or ``"http://host:port"``): :attr:`route`
    (:mod:`mcp_proto_runtime._reach`).  ``connection`` (or a new
    :class:`ClientConnection` declaring ``capabilities``) allocates ids and
    judges responses; :attr:`http` builds the POSTs (``headers`` on each).
    ``timeout`` bounds each call; at most ``pool_size`` idle connections are
    kept.  ``max_message_size`` bounds one message from the server, an SSE
    event or a JSON body (16 MiB by default); past it the call raises
    :class:`RemoteProtocolError` naming the limit and its connection is closed.
    Tools dropped from ``tools/list`` for bad ``x-mcp-header``
    annotations are collected in :attr:`rejected_tools` (HTTP-27).

    ``era`` (issue 16): ``"auto"`` (the default) finds the server's era before the first
    call (a modern ``server/discover`` first, a legacy session on a ``4xx`` with no modern
    error in its body, HTTP-42); ``"modern"`` speaks 2026-07-28 only; ``"legacy"`` opens a
    2025-11-25 session at once.  ``probe_timeout`` bounds each wait of the probe;
    :attr:`outcome` is what it found (``None`` until then).  What the probe finds is kept
    per origin in ``era_cache`` (VER-13; by default :data:`SHARED_ERAS`, one per process):
    a later client of that origin sends no probe (a known modern server) or opens its
    session at once (a known legacy one).  The entry is dropped when its assumption fails:
    a modern request answered as a legacy server answers (HTTP-42) probes again, once.
    An era this client found itself is trusted: a later such answer is the call's error.
    """

    def __init__(
        self,
        url: str,
        *,
        era: Literal["auto", "modern", "legacy"] = "auto",
        probe_timeout: float = 10.0,
        era_cache: EraCache | None = None,
        ssl_context: ssl.SSLContext | None = None,
        proxy: str | None = "auto",
        timeout: float | None = 60.0,
        capabilities: t.ClientCapabilities | None = None,
        connection: ClientConnection | None = None,
        headers: Iterable[tuple[str, str]] = (),
        pool_size: int = 4,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    ) -> None:
        self._era_mode = check_era(era)
        self.probe_timeout = probe_timeout
        self.outcome: Modern | Legacy | None = None
        #: whether :attr:`outcome` is the cache's modern entry, not yet borne out
        self._era_assumed = False
        self.endpoint = Endpoint.parse(url)
        #: how the connections reach the endpoint: TLS, a proxy's tunnel
        self.route = route_for(self.endpoint, ssl_context=ssl_context, proxy=proxy)
        self.address = self.route.address
        self.era_cache = SHARED_ERAS if era_cache is None else era_cache
        #: the key of this server in :attr:`era_cache`
        self.origin = f"{self.endpoint.scheme}://{self.endpoint.authority.lower()}"
        if connection is None:
            connection = ClientConnection(capabilities=capabilities)
        self.conn = connection
        self.http = HTTPClient(
            connection,
            target=self.endpoint.target,
            headers=headers,
            max_message_size=max_message_size,
        )
        self.timeout = timeout
        self.pool_size = pool_size
        self.rejected_tools: list[ToolRejected] = []

    def _cached_era(self) -> str:
        """The era mode the probe runs in: ``"modern"`` or ``"legacy"`` when
        :attr:`era_cache` knows this origin (and ``era="auto"``), else :attr:`_era_mode`."""
        if self._era_mode != "auto":
            return self._era_mode
        known = self.era_cache.get(self.origin)
        if known is None:
            return "auto"
        self._era_assumed = isinstance(known, Modern)
        return "modern" if self._era_assumed else "legacy"

    def _era_found(self, outcome: Modern | Legacy) -> None:
        """The probe found ``outcome``: it is :attr:`outcome`, and the cache's."""
        self.outcome = outcome
        if self._era_mode == "auto":
            self.era_cache.put(self.origin, outcome)

    def _era_changed(self, event: ResponseEvent) -> bool:
        """Whether ``event``, the answer to a modern request, says the server is legacy
        after all (HTTP-42) while the era is the cache's, not yet borne out: the entry is
        dropped, and the caller opens a new binding (:meth:`_fresh_session`) and finds the
        era again (a call sent meanwhile on the old assumption fails with its error)."""
        if not self._era_assumed or self.conn.legacy is not None:
            return False
        if not legacy_answer(event):
            if isinstance(event, Result | ErrorResponse | SubscriptionAcknowledged):
                self._era_assumed = False  # a modern answer: the cached era is borne out
            return False
        self._era_assumed = False  # the probe finds the truth; it is trusted then
        self.era_cache.invalidate(self.origin)
        return True

    def _fresh_session(self, expired: ClientConnection) -> bool:
        """A ``404`` for a request of ``expired``'s legacy session (LEG-16): replace
        :attr:`conn` and :attr:`http` with new ones (the same capabilities, client info
        and version; no session yet), so that the next request opens a new session.

        False when that was done already (another call saw the ``404`` first).
        Connections made for the old binding must not carry new requests: an adapter
        drops them (:meth:`_stale_binding`).
        """
        if expired is not self.conn:
            return False
        self.conn = ClientConnection(
            capabilities=expired.capabilities,
            client_info=expired.client_info,
            protocol_version=expired.protocol_version,
        )
        self.http = HTTPClient(
            self.conn,
            target=self.endpoint.target,
            headers=self.http.headers,
            max_message_size=self.http.max_message_size,
        )
        return True

    def _stale_binding(self, link: HTTPClientConnection) -> bool:
        """Whether connection ``link`` was made for a binding since replaced
        (:meth:`_fresh_session`): it carries the old session's id, so it is not reused."""
        return link.client is not self.http
