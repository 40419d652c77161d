"""The trio client: concurrent calls and listens over one stream, one reader task.

The core (:class:`mcp_proto.ClientConnection`) allocates ids, stamps ``_meta``,
builds MRTR retries and judges every response; the calls, listens and the probe are
:class:`mcp_proto_runtime.StreamCalls`'s; this module gives them the stream's primitives
(write, route each event to the call waiting for it, time limits, cancellation) and manages
the server process (STDIO-14).
The reader runs in a nursery the caller owns: ``async with Client.stdio(...)``
opens one, or ``await nursery.start(client.run)`` uses yours.
"""

from __future__ import annotations

import math
import subprocess
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from functools import partial
from typing import IO, Any, Literal

import trio

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto_runtime import (
    StreamCalls,
    Subscription,
    argv,
    check_era,
)

from ._handlers import send_whole
from ._http_client import HTTPClientSession, time_limit

__all__ = ["Client", "Subscription"]

_CHUNK = 65536
_CLOSE_BOUND = 10.0  # seconds the shielded close on leaving ``stdio`` may take at most
#: what the reader hands a call: its events, or why the stream was lost
_Routed = m.ClientEvent | BaseException
_Channel = tuple[trio.MemorySendChannel[_Routed], trio.MemoryReceiveChannel[_Routed]]


class Client(StreamCalls[_Channel]):
    """An MCP client over a trio stream pair; :meth:`stdio` spawns the server.

    Same contract as the blocking client (``mcp_proto_sync.Client``), plus
    concurrency: any number of calls and listens may be in flight at once.  Dual-era
    (``era=``, issue 16) as the blocking client; ``await client.connect()`` runs the probe
    now.  A legacy server's requests go to the input handler of the last call in flight
    that has one (a stdio server names no call).  Each
    message is written whole even if its call is cancelled meanwhile (the stream is
    shared), within ``timeout`` seconds (60 if ``timeout`` is None): a server that
    reads nothing for that long fails the connection with ``ConnectionError``.
    """

    def __init__(
        self,
        receive: trio.abc.ReceiveStream,
        send: trio.abc.SendStream,
        *,
        process: trio.Process | None = None,
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
        self.outcome: m.Modern | m.Legacy | None = None
        self._era_lock = trio.Lock()
        self._inputs = {}
        self._legacy_listens = {}
        self.process = process
        self.timeout = timeout
        self._receive = receive
        self._send = send
        self._send_lock = trio.Lock()
        self._waiters: dict[t.RequestId, _Channel] = {}
        self._failure: BaseException | None = None
        self._lost: BaseException | None = None  # a write gave up: why the connection failed
        self._reader_scope = trio.CancelScope()

    @classmethod
    @asynccontextmanager
    async def stdio(
        cls,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        stderr: int | IO[Any] | None = None,
        **options: Any,
    ) -> AsyncIterator[Client]:
        """Start ``command``; yield a client on its stdin and stdout; close it on exit.

        The process runs under ``trio.run_process`` in the nursery this opens: if the
        body is cancelled, so is the process (terminated, then killed).  The close on
        exit (:meth:`aclose`) is shielded, and bounded.  If the client cannot be made
        (a bad option), the process is killed at once.
        """
        start = partial(
            trio.run_process,
            argv(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            check=False,
        )
        refused: Exception | None = None
        async with trio.open_nursery() as nursery:
            process: trio.Process = await nursery.start(start)
            assert process.stdin is not None and process.stdout is not None
            try:
                client = cls(process.stdout, process.stdin, process=process, **options)
            except Exception as e:  # raised below, as itself rather than in a group
                process.kill()
                refused = e
            else:
                await nursery.start(client.run)
                try:
                    yield client
                finally:
                    deadline = trio.current_time() + _CLOSE_BOUND
                    with trio.CancelScope(shield=True, deadline=deadline):
                        await client.aclose()
        if refused is not None:
            raise refused

    @staticmethod
    def http(url: str, **options: Any) -> HTTPClientSession:
        """A client for the Streamable HTTP endpoint at ``url``; ``async with`` closes it.

        Nothing is connected yet: each call opens (or reuses) a connection of its own.
        """
        return HTTPClientSession(url, **options)

    # -- the stream's primitives (StreamCalls) ------------------------------

    def _watch(self, id: t.RequestId) -> _Channel:
        if self._failure is not None:
            raise ConnectionError("the connection is closed") from self._failure
        channel: _Channel = trio.open_memory_channel(math.inf)
        self._waiters[id] = channel
        return channel

    async def _next(self, channel: _Channel) -> m.ClientEvent:
        event = await channel[1].receive()
        if isinstance(event, BaseException):
            raise ConnectionError("the connection was lost") from event
        return event

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """The reader: start it with ``await nursery.start(client.run)``."""
        failure: BaseException = ConnectionError("the server closed the connection")
        with self._reader_scope:
            task_status.started()
            try:
                while True:
                    chunk = await self._receive.receive_some(_CHUNK)
                    self.conn.receive_data(bytes(chunk))
                    while (event := self.conn.next_event()) is not m.NEED_DATA:
                        if isinstance(event, m.ConnectionClosed):
                            return
                        if await self._answered(event):  # a legacy server's request
                            continue
                        for owner in self._owners(event):
                            channel = self._waiters.get(owner)
                            if channel is not None:
                                channel[0].send_nowait(event)
                    if not chunk:
                        return
            except (
                m.RemoteProtocolError,
                trio.BrokenResourceError,
                trio.ClosedResourceError,
            ) as e:
                failure = e
            finally:
                self._failure = failure = self._lost or failure
                for send, _ in self._waiters.values():
                    send.send_nowait(failure)

    async def _write(self, data: bytes) -> None:
        if not data:
            return
        if self._lost is not None:
            raise ConnectionError("the connection was lost") from self._lost
        bound = 60.0 if self.timeout is None else self.timeout
        try:
            whole = await send_whole(self._send, self._send_lock, data, bound)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
            raise ConnectionError("the server's input is closed") from e
        if not whole:  # part of a message is out: nothing more can follow it
            self._lost = ConnectionError(f"the server read nothing for {bound} s")
            self._reader_scope.cancel()  # every call waiting fails with it
            raise self._lost

    def _time_limit(self, limit: float | None) -> AbstractAsyncContextManager[None]:
        return time_limit(limit)

    async def _abandon(self, id: t.RequestId, reason: str) -> None:
        if id in self.conn.in_flight():
            shield = trio.CancelScope(shield=True)  # the call may be being cancelled: tell anyway
            with shield, trio.move_on_after(5), suppress(ConnectionError):  # server gone
                await self._write(self.conn.cancel(id, reason))

    # -- lifetime -----------------------------------------------------------

    async def aclose(self, grace: float = 2.0) -> int | None:
        """Close the server's stdin, wait ``grace`` s, then terminate, then kill (STDIO-14)."""
        await self._send.aclose()
        code = None
        if self.process is not None:
            for stop in (None, self.process.terminate, self.process.kill):
                if stop is not None:
                    stop()
                with trio.move_on_after(grace):
                    code = await self.process.wait()
                    break
        self._reader_scope.cancel()
        return code
