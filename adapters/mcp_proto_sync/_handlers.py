"""What the blocking stdio server and the blocking HTTP server share around one request.

:class:`Context` is what a handler gets (its request, ``progress``, ``log``,
``notify_changed``, ``wait_cancelled``); :func:`call` calls a handler and tells
its outcome; :class:`_Workers` is the bounded thread pool handlers run on.
Neither server module imports the other for these: ``_server`` imports ``_http``
to serve HTTP, and both import this module.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto_runtime import HandlerContext, RequestContext, RunHandler

__all__ = ["Context", "Handler", "call"]

Handler = Callable[["Context", Any], Any]
_DONE_LOCK = threading.Lock()  # makes a Context's event once: most handlers never wait


if TYPE_CHECKING:
    from ._server import Server


class Stream(Protocol):
    """What a blocking handler's context sends through: a stdio stream or an HTTP link."""

    @property
    def server(self) -> Server: ...

    def emit(self, event: m.Notification | m.Result) -> None: ...

    def close_stream(self) -> bool:
        """End the request's response before its answer, if it can (see the context)."""


class Context(HandlerContext[Stream]):
    """What a blocking handler gets: its request, and ways to talk about it.

    ``progress`` and ``log`` send only what the request asked for (a
    ``progressToken``; a ``logLevel`` at or below the level) and do nothing
    otherwise.  ``cancelled`` turns true when the client cancels or the
    connection ends; long handlers should look at it, or wait on
    :meth:`wait_cancelled`.
    """

    def __init__(self, core: RequestContext, session: Stream) -> None:
        super().__init__(core, session)
        self._done: threading.Event | None = None  # made by the first wait_cancelled

    def wait_cancelled(self, timeout: float | None = None) -> bool:
        """Block until the request is cancelled (True) or ``timeout`` passes (False)."""
        with _DONE_LOCK:
            if self._done is None:
                self._done = threading.Event()
                if self.cancelled:  # cancelled before anyone waited
                    self._done.set()
        return self._done.wait(timeout)

    def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        event = self._core.progress_event(progress, total, message)
        if event is not None:
            self._session.emit(event)

    def log(self, level: t.LoggingLevel, data: Any, logger: str | None = None) -> None:
        event = self._core.log_event(level, data, logger)
        if event is not None:
            self._session.emit(event)

    def close_stream(self) -> bool:
        """End this request's HTTP response now and go on (True), or do nothing (False).

        For a legacy session's request on an event stream (LEG-12): the client resumes
        with a ``GET`` and ``Last-Event-ID``, and what the handler sends from then on,
        its answer included, reaches it there (``docs/dual-era.md``).  On stdio and for
        modern requests there is nothing to close.
        """
        return self._session.close_stream()

    def notify_changed(self, method: str, params: Any = None) -> None:
        """A change notification, to every open subscription that asked for it.

        See :meth:`Server.notify_changed`; to this request's own stdio stream it is
        written at once, in this thread, as its answer will be.
        """
        event = m.Notification(method=method, params=params or t.NotificationParams())
        self._session.server._fan_out(event, self._session)

    def _cancel(self) -> None:
        super()._cancel()  # first: a wait_cancelled that makes the event now sees it
        with _DONE_LOCK:
            done = self._done
        if done is not None:
            done.set()


class _Workers:
    """Threads that run ``fn(arg)`` jobs in order of submission, at most ``size`` of them.

    A thread is started when a job finds none idle (as ``ThreadPoolExecutor`` does),
    with less bookkeeping per job: a job is a queue entry, not a future.  Any thread
    may submit.  :meth:`close` lets the threads finish every job submitted, then joins
    them; a job submitted after it raises ``RuntimeError``.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.jobs: queue.SimpleQueue[tuple[Callable[[Any], None], Any] | None] = (
            queue.SimpleQueue()
        )
        self.threads: list[threading.Thread] = []
        self.idle = 0  # idle threads less queued jobs no thread has been counted for
        self.closed = False
        self.lock = threading.Lock()

    def submit(self, fn: Callable[[Any], None], arg: Any) -> None:
        with self.lock:
            if self.closed:
                raise RuntimeError("the worker threads are closed")
            self.jobs.put((fn, arg))  # first: a thread started now takes it before it returns
            thread = None
            if self.idle == 0 and len(self.threads) < self.size:
                thread = threading.Thread(
                    target=self._work, name=f"mcp_{len(self.threads)}", daemon=True
                )
                self.threads.append(thread)
            else:
                self.idle -= 1  # this job is that thread's: the next one may need a new thread
        if thread is not None:
            thread.start()

    def _work(self) -> None:
        while (job := self.jobs.get()) is not None:
            job[0](job[1])
            with self.lock:
                self.idle += 1

    def close(self) -> None:
        with self.lock:
            self.closed = True
            threads = list(self.threads)
        for _ in threads:
            self.jobs.put(None)
        for thread in threads:
            thread.join()


def call(run: RunHandler[Handler, Context]) -> tuple[Any, Exception | None]:
    """Call ``run``'s handler: ``(value, None)``, or ``(None, error)`` for what it raised."""
    try:
        return run.handler(run.context, run.request.params), None
    except Exception as e:
        return None, e
