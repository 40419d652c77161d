"""The asyncio client: concurrent calls and listens over one stream, one reader task.

The core (:class:`mcp_proto.ClientConnection`) allocates ids, stamps ``_meta``,
builds MRTR retries and judges every response; this module writes, routes each
event to the call waiting for it, and manages the server process (STDIO-14).
The reader task runs in a ``TaskGroup``: ``async with Client.stdio(...)`` (or ``async
with Client(reader, writer)``) enters one and leaves it on exit, or ``await client.run()``
runs the reader in a task group of yours. No task outlives the block that started it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import IO, TYPE_CHECKING, Any

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto_runtime import (
    AsyncCalls,
    Call,
    Done,
    InputHandler,
    ProgressHandler,
    Subscription,
    build_request,
    outcome_of,
    owner_of,
)

if TYPE_CHECKING:
    from ._http_client import HTTPClientSession

__all__ = ["Client", "Subscription"]

_CHUNK = 65536


class Client(AsyncCalls):
    """An MCP client over an asyncio stream pair; :meth:`stdio` spawns the server.

    Same contract as the blocking client (``mcp_proto_sync.Client``), plus
    concurrency: any number of calls and listens may be in flight at once.
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
    ) -> None:
        if connection is None:
            connection = m.ClientConnection(capabilities=capabilities)
        self.conn = connection
        self.process = process
        self.timeout = timeout
        self._reader = reader
        self._writer = writer
        self._waiters: dict[t.RequestId, asyncio.Queue[Any]] = {}
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
            *command,
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
        queue = self._watch(call.request.id)
        limit = self.timeout if timeout is None else timeout
        try:
            await self._write(self.conn.send(call.request))
            async with asyncio.timeout(limit):
                while True:
                    step = call.feed(await self._next(queue))
                    if isinstance(step, Done):
                        return step.result
                    if step is not None:
                        self._waiters[step.request.id] = self._waiters.pop(step.replaces)
                        await self._write(self.conn.send(step.request))
        except TimeoutError:
            if call.request.id in self.conn.in_flight():
                await self._write(self.conn.cancel(call.request.id, "timed out"))
            raise TimeoutError(f"{method} got no answer within {limit} s") from None
        except asyncio.CancelledError:
            if call.request.id in self.conn.in_flight():  # CANCEL-05: tell the server
                with contextlib.suppress(ConnectionError):  # server gone: nobody to tell
                    await self._write(self.conn.cancel(call.request.id, "cancelled"))
            raise
        finally:
            self._waiters.pop(call.request.id, None)

    async def _round(self, request: m.Request, limit: float) -> Any:
        queue = self._watch(request.id)
        try:
            await self._write(self.conn.send(request))
            async with asyncio.timeout(limit):
                while isinstance(event := await self._next(queue), m.Notification):
                    pass
                return event
        except TimeoutError:
            if request.id in self.conn.in_flight():
                await self._write(self.conn.cancel(request.id, "timed out"))
            return None
        finally:
            self._waiters.pop(request.id, None)

    async def listen(
        self, notifications: t.SubscriptionFilter, *, timeout: float | None = None
    ) -> Subscription:
        """Open a ``subscriptions/listen`` stream; returns once it is acknowledged.

        An acknowledgement that does not come within ``timeout`` (the client's by default)
        cancels the listen and raises ``TimeoutError``; a refusal raises as a call does.
        """
        params = t.SubscriptionsListenRequestParams(notifications=notifications)
        request = build_request(self.conn, "subscriptions/listen", params)
        queue = self._watch(request.id)
        limit = self.timeout if timeout is None else timeout
        try:
            await self._write(self.conn.send(request))
            async with asyncio.timeout(limit):
                first = await self._next(queue)
        except BaseException:
            self._waiters.pop(request.id, None)
            if request.id in self.conn.in_flight():  # not acknowledged in time: tell the server
                with contextlib.suppress(ConnectionError):  # server gone: nobody to tell
                    await self._write(self.conn.cancel(request.id, "listen abandoned"))
            raise
        if not isinstance(first, m.SubscriptionAcknowledged):
            self._waiters.pop(request.id, None)
            outcome_of(first)  # raises for an error; a result ends it at once
            raise ConnectionError("the subscription ended before it was acknowledged")
        return Subscription(self, request.id, first.notifications, queue)

    # -- the reader ---------------------------------------------------------

    def _watch(self, id: t.RequestId) -> asyncio.Queue[Any]:
        if self._failure is not None:
            raise ConnectionError("the connection is closed") from self._failure
        queue: asyncio.Queue[Any] = asyncio.Queue()
        self._waiters[id] = queue
        return queue

    async def _next(self, queue: asyncio.Queue[Any]) -> Any:
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
                    queue = self._waiters.get(owner_of(event))  # type: ignore[arg-type]
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

    def _listening(self, id: t.RequestId) -> bool:
        return id in self._waiters

    async def _end_listen(self, id: t.RequestId) -> None:
        self._waiters.pop(id, None)
        if id in self.conn.in_flight():  # SUB-11: cancel it
            await self._write(self.conn.cancel(id, "done"))

    async def _write(self, data: bytes) -> None:
        if data:
            try:
                self._writer.write(data)
                await self._writer.drain()
            except (ConnectionError, RuntimeError) as e:
                raise ConnectionError("the server's input is closed") from e

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
