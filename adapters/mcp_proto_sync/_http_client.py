"""The blocking Streamable HTTP client: one POST per call, on a small pool of connections.

The core builds each POST (headers included: ``Mcp-Method``, ``Mcp-Name``,
``Mcp-Param-*`` for the tools it listed) and reads each response, JSON or SSE, into
the same events as on stdio (:class:`mcp_proto.http.HTTPClientConnection`).  This
module opens sockets, writes, reads with a deadline, and cancels a call by closing
its connection (HTTP-SSE-5).  One call at a time, like the stdio client.
"""

from __future__ import annotations

import contextlib
import socket
import time
from typing import Any

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.http import (
    HTTPClientConnection,
    HTTPPost,
    SessionExpired,
    StreamInterrupted,
    ToolRejected,
)
from mcp_proto_runtime import (
    HTTPClientSettings,
    client_log,
    era_failure,
    era_probe,
    http_failure,
    legacy_answer,
    shown_progress,
)

from ._calls import ProgressHandler, SessionLost, _Calls
from ._connect import connect, readable

__all__ = ["HTTPClientSession"]

_CHUNK = 65536
_Link = tuple[socket.socket, HTTPClientConnection]


class HTTPClientSession(HTTPClientSettings, _Calls):
    """An MCP client for a Streamable HTTP endpoint (``http://host:port/path``).

    Same calls and errors as :class:`Client`; in addition an HTTP status the
    binding cannot read raises ``RemoteProtocolError`` naming it, and ``401``
    or ``403`` raises ``PermissionError`` carrying the parsed challenge
    (``.args[1]``) for an OAuth layer.  Tools whose ``x-mcp-header`` annotations
    are invalid are left out of ``tools/list`` results and listed in
    :attr:`rejected_tools` (HTTP-27).  ``headers`` go on every POST
    (``Authorization``...); at most ``pool_size`` idle connections are kept.

    ``era`` (issue 16), as the stdio client's: ``"auto"`` (the default) sends a modern
    ``server/discover`` first and, on a ``4xx`` with no modern error in its body (HTTP-42),
    opens a 2025-11-25 session (``initialize``; the session id and version on every later
    request, and the GET stream); ``"legacy"`` opens one at once, ``"modern"`` never does;
    ``era_cache`` keeps what was found per origin
    (:class:`~mcp_proto_runtime.HTTPClientSettings`).  In a session, the server's requests
    on a call's stream are answered by POSTs (with the call's ``on_input``), a stream the
    server closes mid-call is resumed with ``Last-Event-ID`` after its ``retry``, and
    :meth:`close` ends the session (``DELETE``).  A ``404`` in a session (the server ended
    it) opens a new one and sends the call again, once."""

    def __init__(self, url: str, **options: Any) -> None:
        super().__init__(url, **options)
        self._idle: list[_Link] = []
        self._active: dict[t.RequestId, _Link] = {}
        self._host = self.endpoint.authority
        self._stream: _Link | None = None  # a legacy session's GET stream, while open
        self._legacy_listens = {}

    # -- the era (issue 16) ---------------------------------------------------

    def _find_era(self, deadline: float | None) -> m.Modern | m.Legacy:
        mode = self._cached_era()
        if mode == "modern":  # a modern server, known from the era cache: no probe
            self._era_found(m.Modern(version=self.conn.protocol_version))
            assert self.outcome is not None
            return self.outcome
        probe = era_probe(self.conn, mode, "http")
        step: Any = probe.start()
        if step is None:  # a modern request first: server/discover (HTTP-42)
            request = self.conn.discover_request()
            self._send(request)
            event = self._probe_end(request.id, self._wait(deadline))
            if event is None:
                self._cancel(request.id, "no answer in time")
                raise TimeoutError("the server did not answer server/discover in time")
            step = probe.not_modern() if legacy_answer(event) else probe.received(event)
        while isinstance(step, m.Request):  # initialize
            self._send(step)
            event = self._await_end(step.id, self._wait(deadline), None)
            if event is None:
                self._cancel(step.id, "no answer in time")
            step = probe.timed_out() if event is None else probe.received(event)
        failure = era_failure(step)
        if failure is not None:
            raise failure
        assert isinstance(step, m.Modern | m.Legacy)
        if isinstance(step, m.Legacy):
            self._post_aside(self.http.answer(step.initialized))  # LEG-03: before anything
            self._open_stream()
        self._era_found(step)
        return step

    def _next_event(self, link: _Link, deadline: float | None) -> Any:
        """The next event of ``link``'s connection, reading as needed; ``None`` at the
        deadline.  Meanwhile the legacy session's GET stream is read too (its requests
        answered, with the call's ``on_input``)."""
        sock, hconn = link
        while (event := hconn.next_event()) is m.NEED_DATA:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return None
            if self._stream is not None:
                ready = readable([sock, self._stream[0]], remaining)
                if self._stream[0] in ready:
                    self._pump_stream()
                if sock not in ready:
                    continue
            sock.settimeout(remaining)
            try:
                data = sock.recv(_CHUNK)
            except TimeoutError:
                return None
            except OSError:
                data = b""  # a reset: the end of the response
            hconn.receive_data(data)
        return event

    def _open_stream(self) -> None:
        """The legacy session's standalone GET stream (LEG-13), where a server sends what
        belongs to no call (``roots/list``, list changes); ``405``: it offers none."""
        try:
            link = self._take()
            link[0].sendall(link[1].send_post(self.http.open_stream()))
        except (OSError, m.LocalProtocolError) as e:
            client_log.warning("the session's GET stream could not be opened: %s", e)
            return
        self._stream = link

    def _pump_stream(self) -> None:
        """Read what came on the GET stream and act on it; the stream is closed at its end
        (or a refusal: ``405``)."""
        assert self._stream is not None
        sock, hconn = self._stream
        try:
            sock.settimeout(0.001)
            hconn.receive_data(sock.recv(_CHUNK))
        except TimeoutError:
            return
        except OSError:
            hconn.receive_data(b"")
        ended = False
        while not ended and (event := hconn.next_event()) is not m.NEED_DATA:
            if isinstance(event, m.Notification):
                self._deliver(event)  # the session's: for the listens it belongs to
            else:  # a server's request, or the stream's end: a refusal (405), a lost link
                ended = not self._answered(event)
        if ended or not hconn.busy:
            self._close_stream()

    def _wait(self, deadline: float | None) -> float:
        wait = time.monotonic() + self.probe_timeout
        return wait if deadline is None else min(wait, deadline)

    def _post_aside(self, post: HTTPPost | None) -> None:
        """POST what is not a call (an answer to the server, a notification) on a free
        connection, and read its response (``202``) through."""
        if post is None:
            return
        link = self._take()
        sock, hconn = link
        deadline = time.monotonic() + (self.timeout or 60.0)
        try:
            sock.settimeout(self.timeout)
            sock.sendall(hconn.send_post(post))
            while hconn.busy:  # read the response through (its events are not a call's)
                event = hconn.next_event()
                if isinstance(event, m.ConnectionClosed):
                    break
                if event is not m.NEED_DATA or not hconn.busy:
                    continue
                sock.settimeout(max(0.001, deadline - time.monotonic()))
                hconn.receive_data(sock.recv(_CHUNK))
        except (OSError, m.LocalProtocolError):
            sock.close()
            return
        if link[1].busy or len(self._idle) >= self.pool_size or self._stale_binding(link[1]):
            link[0].close()
        else:
            self._idle.append(link)

    def _session_ended(self) -> SessionLost:
        """A ``404`` in the legacy session: a new binding, for a new session (LEG-16)."""
        self._fresh_session(self.conn)
        self.outcome = None
        self._close_stream()
        for sock, _ in self._idle:
            sock.close()  # made for the old binding: they carry the old session's id
        self._idle.clear()
        return SessionLost("the server ended the legacy session (404)")

    def _open(self) -> _Link:
        sock = connect(self.route, self.timeout)
        return sock, HTTPClientConnection(self.http, host=self._host)

    def _take(self) -> _Link:
        """An idle connection the server has not closed meanwhile, or a new one."""
        while self._idle:
            link = self._idle.pop()
            if not readable([link[0]], 0):
                return link
            link[0].close()  # readable while idle: closed by the server (keep-alive timeout)
        return self._open()

    def _send(self, request: m.Request) -> None:
        link = self._take()
        link[0].settimeout(self.timeout)  # not the last call's leftover deadline
        try:
            link[0].sendall(link[1].send(request))
        except (OSError, m.LocalProtocolError):  # the latter: "Connection: close" answered
            link[1].close()  # retires the id, so that it can be sent again
            link[0].close()  # a kept-alive connection the server had closed: once more, afresh
            link = self._open()
            link[0].sendall(link[1].send(request))
        self._active[request.id] = link

    def _cancel(self, id: t.RequestId, reason: str) -> None:
        link = self._active.pop(id, None)
        notice = self.http.cancel(id, reason) if link is not None else None  # LEG-09
        if link is None and id in self.conn.in_flight():
            self.conn.cancel(id, reason)  # it never reached a connection: just retire the id
        if link is not None:
            link[1].close()  # closing the response is the cancellation (HTTP-12)
            link[0].close()
        self._post_aside(notice)  # in a legacy session, closing is not: say so (LEG-09)

    def _retire(self, id: t.RequestId) -> None:
        sock, hconn = self._active.pop(id)
        if hconn.busy or len(self._idle) >= self.pool_size or self._stale_binding(hconn):
            sock.close()  # mid-response (an SSE stream's tail), too many, or the old session's
        else:
            self._idle.append((sock, hconn))

    def _await_end(
        self,
        id: t.RequestId,
        deadline: float | None,
        on_progress: ProgressHandler | None,
        *,
        legacy: bool = False,
    ) -> Any:
        link = self._active[id]
        while True:
            event = self._next_event(link, deadline)
            if event is None:
                return None
            if isinstance(event, ToolRejected):
                self.rejected_tools.append(event)
                client_log.warning("tool %r left out: %s", event.name, event.reason)
                continue
            if isinstance(event, m.Notification):
                if event.method == "notifications/progress" and on_progress is not None:
                    shown_progress(on_progress(event.params))
                self._deliver(event)  # a legacy session's, on a call's stream
                continue
            if self._answered(event):  # a legacy server's request on the call's stream
                continue
            if isinstance(event, StreamInterrupted):  # LEG-12: resume it after its retry
                link = self._resume(id, event, deadline)
                continue
            if isinstance(event, SessionExpired):
                self._active.pop(id)[0].close()
                raise self._session_ended()
            if legacy and legacy_answer(event):
                self._cancel(id, "ended")  # the answer of a legacy server: the probe is over
                return event
            if not legacy and self._era_changed(event):  # a legacy server now: find it again
                self._cancel(id, "ended")
                raise self._session_ended()
            self._raise_for(id, event)
            if getattr(event, "id", None) == id:
                if not isinstance(event, m.SubscriptionAcknowledged):
                    self._retire(id)  # a listen keeps its connection for its stream
                return event

    def _answered(self, event: Any) -> bool:
        """A legacy server's request (or ``ping``, or one refused): answered by a POST."""
        reply = self._reply_to(event)
        if reply is not None:
            self._post_aside(self.http.answer(reply))
        return reply is not None or isinstance(event, m.Cancelled)

    def _resume(self, id: t.RequestId, event: StreamInterrupted, deadline: float | None) -> _Link:
        """The GET that resumes request ``id``'s stream, after the server's ``retry``."""
        old = self._active.pop(id)
        if old[1].busy or len(self._idle) >= self.pool_size:
            old[0].close()
        else:
            self._idle.append(old)
        pause = (event.retry_ms or 1000) / 1000
        if deadline is not None:
            pause = max(0.0, min(pause, deadline - time.monotonic()))
        time.sleep(pause)
        link = self._take()
        link[0].settimeout(self.timeout)
        link[0].sendall(link[1].send_post(self.http.resume(event)))
        self._active[id] = link
        return link

    def _listen_event(self, id: t.RequestId, deadline: float | None) -> Any:
        if id in self._legacy_listens:
            return self._legacy_event(id, deadline)
        link = self._active.get(id)
        if link is None:
            return m.SubscriptionEnded(id=id)
        while True:
            event = self._next_event(link, deadline)
            if event is None or isinstance(event, (m.Notification, m.SubscriptionEnded)):
                return event
            if (error := http_failure(event)) is not None:
                self._end_listen(id)
                raise error

    def _session_wait(self, deadline: float | None) -> bool:
        """Wait for the session's GET stream (its notifications); with none (``405``)
        nothing can come outside a call: wait out the deadline."""
        remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
        if self._stream is None:
            if remaining is None:
                raise ConnectionError("the server offers no stream for the session's news")
            time.sleep(remaining)
            return False
        if not readable([self._stream[0]], remaining):
            return False
        self._pump_stream()
        return True

    def _end_listen(self, id: t.RequestId) -> None:
        if self._end_legacy_listen(id):
            return
        link = self._active.pop(id, None)
        if link is not None:
            link[1].close()  # closing the stream is the cancellation (SUB-11, HTTP-12)
            link[0].close()

    def _raise_for(self, id: t.RequestId, event: Any) -> None:
        """Turn the HTTP-only endings into exceptions (the connection is dropped)."""
        error = http_failure(event)
        if error is not None:
            self._cancel(id, "ended")
            raise error

    def _probe_end(self, id: t.RequestId, deadline: float) -> Any:
        """As ``_await_end``, but an error status the binding reads as a legacy server's
        (HTTP-42, HTTP-46) is returned, for the probe to call legacy, not raised."""
        return self._await_end(id, deadline, None, legacy=True)

    def _close_stream(self) -> None:
        if self._stream is not None:
            self._stream[0].close()
            self._stream = None

    def close(self) -> None:
        """Close the connections; a legacy session is ended first (``DELETE``, LEG-16)."""
        self._close_stream()
        if self.conn.legacy is not None:
            with contextlib.suppress(OSError, m.LocalProtocolError):  # best effort: going away
                self._post_aside(self.http.end_session())
        for sock, _ in [*self._idle, *self._active.values()]:
            sock.close()
        self._idle.clear()
        self._active.clear()

    def __enter__(self) -> HTTPClientSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
