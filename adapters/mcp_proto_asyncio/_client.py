"""The asyncio client: concurrent calls and listens over one stream, one reader task.

The core (:class:`mcp_proto.ClientConnection`) allocates ids, stamps ``_meta``,
builds MRTR retries and judges every response; the calls, listens and the probe are
:class:`mcp_proto_runtime.StreamCalls`'s; this module gives them the stream's primitives
(write, route each event to the call waiting for it, time limits, cancellation) and manages
the server process (STDIO-14).
The reader task runs in a ``TaskGroup``: ``async with Client.stdio(...)`` (or ``async
with Client(reader, writer)``) enters one and leaves it on exit, or ``await client.run()``
runs the reader in a task group of yours. No task outlives the block that started it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import IO, TYPE_CHECKING, Any, Literal

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto_runtime import (
    StreamCalls,
    Subscription,
    argv,
    check_era,
)

if TYPE_CHECKING:
    from ._http_client import HTTPClientSession

__all__ = ["Client", "Subscription"]

_CHUNK = 65536


#: what the reader hands a call: its events, or why the stream was lost
_Routed = m.ClientEvent | BaseException


class Client(StreamCalls[asyncio.Queue[_Routed]]):
    """An MCP client over an asyncio stream pair; :meth:`stdio` spawns the server.

    Same contract as the blocking client (``mcp_proto_sync.Client``), plus
    concurrency: any number of calls and listens may be in flight at once.  Dual-era
    (``era=``, issue 16) as the blocking client; ``await client.connect()`` runs the probe
    now.  A legacy server's requests go to the input handler of the last call in flight
    that has one (a stdio server names no call).
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        process: asyncio.subprocess.Process | None = None,
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
        self._era_lock = asyncio.Lock()
        self._inputs = {}
        self._legacy_listens = {}
        self.process = process
        self.timeout = timeout
        self._reader = reader
        self._writer = writer
        self._waiters: dict[t.RequestId, asyncio.Queue[_Routed]] = {}
        self._task: asyncio.Task[None] | None = None
        self._group: asyncio.TaskGroup | None = None
        self._failure: BaseException | None = None

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

        The server is stopped as :meth:`aclose` says when the block ends, and killed at once
        if the client cannot be made (bad ``options``).
        """
        process = await asyncio.create_subprocess_exec(
            *argv(command),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            limit=_CHUNK,
        )
        assert process.stdin is not None and process.stdout is not None
        try:
            client = cls(process.stdout, process.stdin, process=process, **options)
        except BaseException:
            process.kill()
            await process.wait()
            raise
        async with client:
            yield client

    @staticmethod
    def http(url: str, **options: Any) -> HTTPClientSession:
        """A client for the Streamable HTTP endpoint at ``url``; ``async with`` closes it.

        Nothing is connected yet: each call opens (or reuses) a connection of its own.
        """
        from ._http_client import HTTPClientSession

        return HTTPClientSession(url, **options)

    # -- the stream's primitives (StreamCalls) ------------------------------

    def _watch(self, id: t.RequestId) -> asyncio.Queue[_Routed]:
        if self._failure is not None:
            raise ConnectionError("the connection is closed") from self._failure
        queue: asyncio.Queue[_Routed] = asyncio.Queue()
        self._waiters[id] = queue
        return queue

    async def _next(self, queue: asyncio.Queue[_Routed]) -> m.ClientEvent:
        event = await queue.get()
        if isinstance(event, BaseException):
            raise ConnectionError("the connection was lost") from event
        return event

    async def run(self) -> None:
        """Read the server's output and route each event to its call, until the end.

        ``async with client`` runs it in a task group of its own; call it yourself only to
        run it in yours (``group.create_task(client.run())``), and not both.
        """
        failure: BaseException = ConnectionError("the server closed the connection")
        try:
            while True:
                chunk = await self._reader.read(_CHUNK)
                self.conn.receive_data(chunk)
                while (event := self.conn.next_event()) is not m.NEED_DATA:
                    if isinstance(event, m.ConnectionClosed):
                        return
                    if await self._answered(event):  # a legacy server's request
                        continue
                    for owner in self._owners(event):
                        queue = self._waiters.get(owner)
                        if queue is not None:
                            queue.put_nowait(event)
                if not chunk:
                    return
        except (m.RemoteProtocolError, OSError) as e:
            failure = e
        finally:
            self._failure = failure
            for queue in self._waiters.values():
                queue.put_nowait(failure)

    async def _write(self, data: bytes) -> None:
        if data:
            try:
                self._writer.write(data)
                await self._writer.drain()
            except (ConnectionError, RuntimeError) as e:
                raise ConnectionError("the server's input is closed") from e

    def _time_limit(self, limit: float | None) -> AbstractAsyncContextManager[Any]:
        return asyncio.timeout(limit)

    async def _abandon(self, id: t.RequestId, reason: str) -> None:
        if id in self.conn.in_flight():
            with contextlib.suppress(ConnectionError):  # server gone: nobody to tell
                await self._write(self.conn.cancel(id, reason))

    # -- lifetime -----------------------------------------------------------

    async def aclose(self, grace: float = 2.0) -> int | None:
        """Close the server's stdin, wait ``grace`` s, then terminate, then kill (STDIO-14)."""
        self._writer.close()
        with contextlib.suppress(ConnectionError, RuntimeError):  # the pipe broke: closed anyway
            await self._writer.wait_closed()
        code = None
        if self.process is not None:
            for stop in (None, self.process.terminate, self.process.kill):
                if stop is not None:
                    with contextlib.suppress(ProcessLookupError):  # it exited meanwhile
                        stop()
                try:
                    code = await asyncio.wait_for(self.process.wait(), grace)
                    break
                except TimeoutError:
                    continue
        if self._task is not None:
            self._task.cancel()
        return code

    async def __aenter__(self) -> Client:
        """Start :meth:`run` in a task group that :meth:`__aexit__` leaves."""
        if self._group is not None:
            raise RuntimeError("the client is already open")
        group = asyncio.TaskGroup()
        await group.__aenter__()
        self._group = group
        self._task = group.create_task(self.run())
        return self

    async def __aexit__(self, *exc: Any) -> None:
        """:meth:`aclose`, then wait for the reader to end (its errors propagate)."""
        group, self._group = self._group, None
        try:
            await self.aclose()
        finally:
            if group is not None:
                await group.__aexit__(*exc)
