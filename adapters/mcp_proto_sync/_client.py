"""The blocking client: a subprocess (or any pipe pair) and one call at a time.

The core (:class:`mcp_proto.ClientConnection`) allocates ids, stamps ``_meta``,
builds MRTR retries and judges every response; this module writes, reads with
a deadline, and manages the server process (STDIO-14).  It is not thread-safe:
one call at a time per client, from any one thread.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import time
from collections import deque
from collections.abc import Mapping, Sequence
from typing import IO, Any, Literal

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto_runtime import argv, check_era, era_failure, era_probe, owner_of, shown_progress

from ._calls import ProgressHandler, _Calls
from ._http_client import HTTPClientSession
from ._listen import QUEUED

__all__ = ["Client"]

_CHUNK = 65536


class Client(_Calls):
    """An MCP client over a byte stream; :meth:`stdio` spawns the server.

    ``capabilities`` are declared on every request (declare ``elicitation`` to
    be asked for input); ``connection`` replaces the default
    :class:`mcp_proto.ClientConnection` for full control of ``_meta``.
    ``timeout`` (seconds, default 60) bounds each call; a call that times out
    is cancelled on the server (CANCEL-06) and raises ``TimeoutError``.  An
    error response raises :class:`McpError`; a response that breaks the
    protocol raises :class:`mcp_proto.RemoteProtocolError`; a server that goes
    away raises ``ConnectionError``.

    ``era`` (issue 16): ``"auto"`` (the default) finds the server's era before the
    first request, as the stdio page says -- a ``server/discover`` probe, waiting
    ``probe_timeout`` seconds (default 10), then ``initialize`` for a legacy server
    (:class:`mcp_proto.EraProbe`); ``"modern"`` and ``"legacy"`` speak one era only.
    :attr:`era` and :attr:`protocol_version` say what was found.  A legacy server's
    requests (elicitation, sampling, roots) go to the call's ``on_input``, as the MRTR
    round they stand for; one that cannot be spoken to raises ``ConnectionError``.
    """

    def __init__(
        self,
        rfile: IO[bytes],
        wfile: IO[bytes],
        *,
        process: subprocess.Popen[bytes] | None = None,
        timeout: float | None = 60.0,
        capabilities: t.ClientCapabilities | None = None,
        connection: m.ClientConnection | None = None,
        era: Literal["auto", "modern", "legacy"] = "auto",
        probe_timeout: float = 10.0,
    ) -> None:
        check_era(era)
        if connection is None:
            connection = m.ClientConnection(capabilities=capabilities)
        self.conn = connection
        self._era_mode = era
        self.probe_timeout = probe_timeout
        #: what the era probe found (``None`` until the first request)
        self.outcome: m.Modern | m.Legacy | None = None
        self.process = process
        self.timeout = timeout
        self._rfile = rfile
        self._wfile = wfile
        self._selector = selectors.DefaultSelector()
        self._selector.register(rfile, selectors.EVENT_READ)
        self._closed = False
        #: what arrived for each open listen while nobody read it
        self._listens: dict[t.RequestId, deque[m.ClientEvent]] = {}
        self._legacy_listens = {}

    @staticmethod
    def http(url: str, **options: Any) -> HTTPClientSession:
        """A client for the Streamable HTTP endpoint at ``url``: :class:`HTTPClientSession`."""
        return HTTPClientSession(url, **options)

    @classmethod
    def stdio(
        cls,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        stderr: int | IO[Any] | None = None,
        **options: Any,
    ) -> Client:
        """Start ``command`` and talk to it over its stdin and stdout (STDIO-01).

        The server's stderr goes where ``stderr`` says (inherited by default;
        ``subprocess.DEVNULL`` to drop it) and is never read as protocol
        (STDIO-05). If the client cannot be made (a bad option), the process is killed.
        """
        process = subprocess.Popen(
            argv(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=dict(env) if env is not None else None,
            cwd=cwd,
        )
        assert process.stdin is not None and process.stdout is not None
        try:
            return cls(process.stdout, process.stdin, process=process, **options)
        except BaseException:
            process.kill()
            process.wait()
            process.stdin.close()
            process.stdout.close()
            raise

    # -- the era (issue 16) ---------------------------------------------------

    def _find_era(self, deadline: float | None) -> m.Modern | m.Legacy:
        probe = era_probe(self.conn, self._era_mode, "stdio")
        step = probe.start()
        assert step is not None  # (only over HTTP is there no probe of its own)
        while isinstance(step, m.Request):
            self._send(step)
            wait = time.monotonic() + self.probe_timeout
            event = self._await_end(
                step.id, wait if deadline is None else min(wait, deadline), None
            )
            if event is None:
                if step.id in self.conn.in_flight():
                    self._cancel(step.id, "no answer in time")
                if deadline is not None and time.monotonic() >= deadline:
                    raise TimeoutError("the server's era was not found within the call's timeout")
                step = probe.timed_out()
            else:
                step = probe.received(event)
        failure = era_failure(step)
        if failure is not None:
            raise failure
        assert isinstance(step, m.Modern | m.Legacy)
        if isinstance(step, m.Legacy):
            self._write(self.conn.send(step.initialized))  # LEG-03: before anything else
        return step

    # -- I/O ----------------------------------------------------------------

    def _send(self, request: m.Request) -> None:
        self._write(self.conn.send(request))

    def _cancel(self, id: t.RequestId, reason: str) -> None:
        self._write(self.conn.cancel(id, reason))

    def _await_end(
        self, id: t.RequestId, deadline: float | None, on_progress: ProgressHandler | None
    ) -> m.ClientEvent | None:
        """The event that ends request ``id``, or ``None`` at the deadline."""
        while True:
            event = self._next_for(id, deadline)
            if not isinstance(event, m.Notification):
                return event
            if event.method == "notifications/progress" and on_progress is not None:
                shown_progress(on_progress(event.params))

    def _opened(self, id: t.RequestId) -> None:
        self._listens[id] = deque(maxlen=QUEUED)

    def _listen_event(self, id: t.RequestId, deadline: float | None) -> m.ClientEvent | None:
        if id in self._legacy_listens:
            return self._legacy_event(id, deadline)
        queued = self._listens.get(id)
        if queued:
            return queued.popleft()
        event = self._next_for(id, deadline)
        if event is None or isinstance(event, (m.Notification, m.SubscriptionEnded)):
            return event
        return m.SubscriptionEnded(id=id, graceful=False)  # an error ended it

    def _next_for(self, id: t.RequestId, deadline: float | None) -> m.ClientEvent | None:
        """The next event of request ``id`` (``None`` at the deadline); what arrives for
        open listens meanwhile is kept for them, anything else dropped."""
        while True:
            event = self._next_event(deadline)
            if event is None:
                return None
            if isinstance(event, m.ConnectionClosed):
                raise ConnectionError("the server closed the connection")
            if self._answered(event):
                continue
            if owner_of(event) == id:
                return event
            self._route(event)

    def _route(self, event: m.ClientEvent) -> None:
        """An event no caller waits for: a listen's is kept for its reader (a legacy
        session's notifications for the listens they belong to); anything else (a late
        answer to an earlier call, a stray message) is dropped."""
        owner = owner_of(event)
        if owner in self._listens:
            self._listens[owner].append(event)
        else:
            self._deliver(event)

    def _session_wait(self, deadline: float | None) -> bool:
        event = self._next_event(deadline)
        if event is None:
            return False
        if isinstance(event, m.ConnectionClosed):
            raise ConnectionError("the server closed the connection")
        if not self._answered(event):
            self._route(event)
        return True

    def _answered(self, event: m.ClientEvent) -> bool:
        """A legacy server's request (or its ``ping``, or one refused): answered at once."""
        reply = self._reply_to(event)
        if reply is not None:
            self._write(self.conn.send(reply))
        return reply is not None or isinstance(event, m.Cancelled)

    def _end_listen(self, id: t.RequestId) -> None:
        if self._end_legacy_listen(id):
            return
        self._listens.pop(id, None)
        if id in self.conn.in_flight():  # SUB-11: cancel it
            self._write(self.conn.cancel(id, "done"))

    def _write(self, data: bytes) -> None:
        if data:
            try:
                self._wfile.write(data)
                self._wfile.flush()
            except (BrokenPipeError, ValueError) as e:
                raise ConnectionError("the server's input is closed") from e

    def _next_event(self, deadline: float | None) -> m.ClientEvent | None:
        """The next event, reading as needed; ``None`` when ``deadline`` passes."""
        while True:
            event = self.conn.next_event()  # raises RemoteProtocolError on lost framing
            if not isinstance(event, type):  # an event, not the NEED_DATA marker class
                return event
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return None
            if not self._selector.select(remaining):
                return None
            self.conn.receive_data(os.read(self._rfile.fileno(), _CHUNK))

    # -- lifetime -----------------------------------------------------------

    def close(self, grace: float = 2.0) -> int | None:
        """Close the server's stdin, wait ``grace`` s, then terminate, then kill (STDIO-14).

        Returns the process's exit code (``None`` without a process).
        """
        if self._closed:
            return self.process.returncode if self.process is not None else None
        self._closed = True
        self._selector.close()
        with contextlib.suppress(OSError):  # EPIPE: the server is gone, its stdin with it
            self._wfile.close()
        if self.process is None:
            self._rfile.close()
            return None
        code = None
        for stop in (None, self.process.terminate, self.process.kill):
            if stop is not None:
                stop()
            try:
                code = self.process.wait(grace)
                break
            except subprocess.TimeoutExpired:
                continue
        self._rfile.close()
        return code

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
