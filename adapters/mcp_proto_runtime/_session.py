"""One stdio stream's server side with no I/O: input and handler outcomes in, actions out.

:class:`ServerSession` holds what every adapter's stdio server used to write for
itself: the dispatch of the core's events, the answer to a request no handler takes,
the handlers' concurrency limit and the queue behind it, the contexts by id, the
answer to what a handler returned or raised (and the ``-32603`` when the core
refuses it), the pause when the core stops reading (:data:`mcp_proto.PAUSED`), and
the end of the stream.  The adapter reads, writes, spawns, cancels and waits, as the
actions say; it decides nothing.

The loop of an adapter, whatever its I/O model::

    while True:
        action = session.next_action()
        if action is NEED_DATA:  session.receive_data(read())
        elif action is PAUSED:   wait until a ResumeReading action is carried out
        elif Write:              write action.data whole
        elif RunHandler:         run action.handler(action.context, params) on a task/thread,
                                 then carry out session.handler_done(action, value, error)
                                 (or handler_cancelled(action) if it was cancelled)
        elif CancelHandler:      cancel that handler's task (or flag its context)
        elif Stop:               stop reading; give the handlers action.grace seconds to
                                 end (session.idle), then cancel what stop_now() names

Not thread-safe: the blocking adapter calls it under the lock that guards the
connection.  No clock: the grace is a number the adapter waits for.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, Generic, TypeAlias, TypeVar

import attrs

from mcp_proto import (
    NEED_DATA,
    PAUSED,
    AnsweredRequest,
    Cancelled,
    ConnectionClosed,
    ErrorResponse,
    InvalidMessage,
    Notification,
    RemoteProtocolError,
    Request,
    Result,
)
from mcp_proto import types as t

from ._log import server_log
from ._server import (
    SEND_REFUSED,
    HandlerContext,
    RequestContext,
    ServerSettings,
    answer,
    default_answer,
    internal_error,
)
from ._transport import stdio_transport

__all__ = [
    "RESUME_READING",
    "respond",
    "Action",
    "CancelHandler",
    "ResumeReading",
    "RunHandler",
    "ServerSession",
    "Stop",
    "Write",
]

H = TypeVar("H")
C = TypeVar("C", bound=HandlerContext[Any])


@attrs.frozen(slots=True)
class Write:
    """Write ``data`` to the stream, whole, before the next write."""

    data: bytes


@attrs.frozen(slots=True, eq=False)
class RunHandler(Generic[H, C]):
    """Run ``handler(context, request.params)``, then report its end to the session.

    (:meth:`ServerSession.handler_done`, or :meth:`ServerSession.handler_cancelled`.)
    """

    request: Request
    handler: H
    context: C


@attrs.frozen(slots=True, eq=False)
class CancelHandler(Generic[H, C]):
    """The client cancelled ``run`` (or the stream is over): cancel its handler.

    The session already counts it as cancelled: whatever the handler still returns
    is not sent (STDIO-13).
    """

    run: RunHandler[H, C]


@attrs.frozen(slots=True)
class ResumeReading:
    """A request ended while reading was paused: wake the reader.

    There is one value, :data:`RESUME_READING`.
    """


RESUME_READING = ResumeReading()


@attrs.frozen(slots=True)
class Stop:
    """Stop reading: the input ended (or can no longer be read).

    Give the handlers still running (or queued) ``grace`` seconds to end, until
    :attr:`ServerSession.idle`, then cancel what :meth:`ServerSession.stop_now` names.
    ``reason`` says why, for a log line.
    """

    reason: str
    grace: float


Action: TypeAlias = "Write | RunHandler[Any, Any] | CancelHandler[Any, Any] | ResumeReading | Stop"


def respond(
    send: Callable[[Result | ErrorResponse], bytes],
    request: Request,
    value: object,
    error: BaseException | None,
    cache_hints: tuple[int, str],
) -> bytes:
    """The bytes answering ``request``, for what its handler returned or raised.

    :func:`~mcp_proto_runtime.answer` makes the response and ``send`` (a connection's)
    encodes it; one the connection refuses (a broken send rule, a result that cannot be
    encoded) is logged on ``mcp_proto.server`` and replaced by ``-32603``, so the
    request never hangs.
    """
    try:
        return send(answer(request, value, error, cache_hints=cache_hints))
    except SEND_REFUSED as e:
        server_log.error("handler for %s: its answer was refused: %s", request.method, e)
        return send(internal_error(request))


class ServerSession(Generic[H, C]):
    """The server side of one stdio stream (one :class:`mcp_proto.ServerConnection`).

    ``settings`` gives the handlers, the connection's options and the shutdown grace;
    ``make_context`` wraps each admitted request's :class:`RequestContext` in the
    adapter's handler context; at most ``max_concurrency`` handlers run at once, the
    requests behind them wait here in order (a cancelled one is dropped unseen).
    """

    def __init__(
        self,
        settings: ServerSettings[Any],
        make_context: Callable[[RequestContext], C],
        *,
        max_concurrency: int,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be 1 or more")
        self.conn = settings.connection()
        self._find: Callable[[str], H | None] = settings.handlers.find
        self._make_context = make_context
        self._transport = stdio_transport()
        self._grace = settings.shutdown_grace
        self._max = max_concurrency
        self._running = 0
        self._queue: deque[RunHandler[H, C]] = deque()
        #: every request handed to a handler and not ended: queued or running
        self._runs: dict[t.RequestId, RunHandler[H, C]] = {}
        self._paused = False  # next_action said PAUSED, and no ResumeReading since
        self._stop: Stop | None = None

    @property
    def idle(self) -> bool:
        """No handler runs or waits for a slot."""
        return not self._runs

    @property
    def running(self) -> int:
        """Handlers running now (at most ``max_concurrency``)."""
        return self._running

    def receive_data(self, data: bytes) -> None:
        """Bytes read from the stream; ``b""`` when the input ended."""
        self.conn.receive_data(data)

    def next_action(self) -> Action | type[NEED_DATA] | type[PAUSED]:
        """What to do next: read (``NEED_DATA``), wait (``PAUSED``), or an action.

        ``PAUSED``: the core holds a request past ``max_in_flight``; read nothing
        until a :class:`ResumeReading` comes out of :meth:`handler_done`.  Once a
        :class:`Stop` is returned, every call returns it again.
        """
        if self._stop is not None:
            return self._stop
        conn = self.conn
        while True:
            try:
                event = conn.next_event()
            except RemoteProtocolError as e:  # the stream's framing is lost: nothing to answer
                server_log.error("input framing lost: %s", e)
                return self._stopping("input framing lost")
            if event is NEED_DATA:
                return NEED_DATA
            if isinstance(event, Request):
                run = self._admit(event)
                if run is not None:
                    return run
            elif isinstance(event, Cancelled):
                action = self._cancel(event.id)
                if action is not None:
                    return action
            elif event is PAUSED:
                # every call in flight is a handler's, running or queued behind a running one
                assert self._running, "paused with no handler to resume it"
                self._paused = True
                return PAUSED
            elif isinstance(event, InvalidMessage | AnsweredRequest):
                # a refusal, or a legacy request the core answered (ping, setLevel...)
                data = conn.send(event)
                if data:
                    return Write(data)
            elif isinstance(event, ConnectionClosed):
                return self._stopping("input ended")
            # a client notification (roots, initialized...) needs nothing from a stdio server

    def _admit(self, request: Request) -> Write | RunHandler[H, C] | None:
        handler = self._find(request.method)
        if handler is None:  # server/discover, a listen, or -32601: answered here
            data = self.conn.send(default_answer(self.conn, request))
            return Write(data) if data else None
        context = self._make_context(RequestContext(request, transport=self._transport))
        run = RunHandler(request=request, handler=handler, context=context)
        self._runs[request.id] = run
        if self._running < self._max:
            self._running += 1
            return run
        self._queue.append(run)
        return None

    def _cancel(self, id: t.RequestId) -> CancelHandler[H, C] | None:
        run = self._runs.get(id)
        if run is None:
            return None  # answered already, or answered by the session itself
        run.context._core.cancelled = True
        try:
            self._queue.remove(run)
        except ValueError:  # running: its handler is to be cancelled
            return CancelHandler(run)
        del self._runs[id]  # waiting for a slot: it never runs
        return None

    def _stopping(self, reason: str) -> Stop:
        self._stop = Stop(reason=reason, grace=self._grace)
        return self._stop

    def handler_done(
        self, run: RunHandler[H, C], value: object = None, error: BaseException | None = None
    ) -> list[Write | RunHandler[H, C] | ResumeReading]:
        """``run``'s handler returned ``value`` or raised ``error``: what to do now, in order.

        The answer to write (none for a cancelled request: STDIO-13), then a
        :class:`ResumeReading` if reading was paused, then the next queued request to
        run in the slot this one freed (run it from the same task or thread).  An answer
        the core refuses (a broken send rule, a result that cannot be encoded) is logged
        on ``mcp_proto.server`` and replaced by ``-32603``.
        """
        actions: list[Write | RunHandler[H, C] | ResumeReading] = []
        if not run.context.cancelled:
            conn = self.conn
            data = respond(conn.send, run.request, value, error, conn.cache_hints)
            if data:
                actions.append(Write(data))
        self._end(run, actions)
        return actions

    def handler_cancelled(
        self, run: RunHandler[H, C]
    ) -> list[Write | RunHandler[H, C] | ResumeReading]:
        """``run``'s handler ended by cancellation: nothing is sent for it; what to do now."""
        actions: list[Write | RunHandler[H, C] | ResumeReading] = []
        run.context._core.cancelled = True
        self._end(run, actions)
        return actions

    def _end(
        self, run: RunHandler[H, C], actions: list[Write | RunHandler[H, C] | ResumeReading]
    ) -> None:
        if self._runs.pop(run.request.id, None) is not run:
            return  # already ended (stop_now dropped it): its slot is not counted twice
        if self._paused:
            self._paused = False
            actions.append(RESUME_READING)
        if self._queue:  # empty once stop_now ran
            actions.append(self._queue.popleft())  # it takes this slot over
        else:
            self._running -= 1

    def send(self, event: Notification | Result) -> bytes:
        """The bytes of what the adapter sends itself; ``b""``: nothing to send.

        A handler's progress and log, a change notification, the end of a listen
        (:func:`~mcp_proto_runtime.listen_end`).
        """
        return self.conn.send(event)

    def write_failed(self, reason: str) -> list[CancelHandler[H, C]]:
        """A write failed because the peer is gone: stop, and cancel every handler.

        From now on :meth:`next_action` returns :class:`Stop` and no queued request
        runs.  Logged at debug on ``mcp_proto.server``: a client that leaves is normal.
        """
        server_log.debug("stdio stream: %s", reason)
        self._stop = Stop(reason="peer gone", grace=0.0)
        return self.stop_now()

    def stop_now(self) -> list[CancelHandler[H, C]]:
        """The grace after :class:`Stop` is over: the handlers to cancel; the queue is dropped."""
        for run in self._queue:
            run.context._core.cancelled = True
            del self._runs[run.request.id]
        self._queue.clear()
        cancels = []
        for run in self._runs.values():
            run.context._core.cancelled = True
            cancels.append(CancelHandler(run))
        return cancels
