"""The trio client: concurrent calls and listens over one stream, one reader task.

The core (:class:`mcp_proto.ClientConnection`) allocates ids, stamps ``_meta``,
builds MRTR retries and judges every response; this module writes, routes each
event to the call waiting for it, and manages the server process (STDIO-14).
The reader runs in a nursery the caller owns: ``async with Client.stdio(...)``
opens one, or ``await nursery.start(client.run)`` uses yours.
"""

from __future__ import annotations

import math
import subprocess
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from typing import IO, TYPE_CHECKING, Any

import trio

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
_Channel = tuple[trio.MemorySendChannel[Any], trio.MemoryReceiveChannel[Any]]


class Client(AsyncCalls):
    """An MCP client over a trio stream pair; :meth:`stdio` spawns the server.

    Same contract as the blocking client (``mcp_proto_sync.Client``), plus
    concurrency: any number of calls and listens may be in flight at once.
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
    ) -> None:
        if connection is None:
            connection = m.ClientConnection(capabilities=capabilities)
        self.conn = connection
        self.process = process
        self.timeout = timeout
        self._receive = receive
        self._send = send
        self._send_lock = trio.Lock()
        self._waiters: dict[t.RequestId, _Channel] = {}
        self._failure: BaseException | None = None
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

        If the client cannot be made (a bad option), the process is killed at once.
        """
        process = await trio.lowlevel.open_process(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=dict(env) if env is not None else None,
            cwd=cwd,
        )
        assert process.stdin is not None and process.stdout is not None
        try:
            client = cls(process.stdout, process.stdin, process=process, **options)
        except BaseException:
            process.kill()
            with trio.CancelScope(shield=True):
                await process.wait()
            raise
        async with trio.open_nursery() as nursery:
            await nursery.start(client.run)
            try:
                yield client
            finally:
                with trio.CancelScope(shield=True):
                    await client.aclose()

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
        channel = self._watch(call.request.id)
        limit = self.timeout if timeout is None else timeout
        try:
            await self._write(self.conn.send(call.request))
            with trio.fail_after(math.inf if limit is None else limit):
                while True:
                    step = call.feed(await self._next(channel))
                    if isinstance(step, Done):
                        return step.result
                    if step is not None:
                        self._waiters[step.request.id] = self._waiters.pop(step.replaces)
                        await self._write(self.conn.send(step.request))
        except trio.TooSlowError:
            await self._cancel(call.request.id, "timed out")
            raise TimeoutError(f"{method} got no answer within {limit} s") from None
        except trio.Cancelled:
            with trio.CancelScope(shield=True), trio.move_on_after(5):  # CANCEL-05: tell it
                await self._cancel(call.request.id, "cancelled")
            raise
        finally:
            self._waiters.pop(call.request.id, None)

    async def _round(self, request: m.Request, limit: float) -> Any:
        channel = self._watch(request.id)
        try:
            await self._write(self.conn.send(request))
            with trio.move_on_after(limit):
                while isinstance(event := await self._next(channel), m.Notification):
                    pass
                return event
            await self._cancel(request.id, "timed out")
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
        channel = self._watch(request.id)
        limit = self.timeout if timeout is None else timeout
        try:
            await self._write(self.conn.send(request))
            with trio.fail_after(math.inf if limit is None else limit):
                first = await self._next(channel)
        except BaseException as e:
            self._waiters.pop(request.id, None)  # never acknowledged: tell the server
            with trio.CancelScope(shield=True), trio.move_on_after(5):
                await self._cancel(request.id, "listen abandoned")
            if isinstance(e, trio.TooSlowError):
                raise TimeoutError("the listen was not acknowledged in time") from None
            raise
        if not isinstance(first, m.SubscriptionAcknowledged):
            self._waiters.pop(request.id, None)
            outcome_of(first)  # raises for an error; a result ends it at once
            raise ConnectionError("the subscription ended before it was acknowledged")
        return Subscription(self, request.id, first.notifications, channel)

    # -- the reader ---------------------------------------------------------

    def _watch(self, id: t.RequestId) -> _Channel:
        if self._failure is not None:
            raise ConnectionError("the connection is closed") from self._failure
        channel: _Channel = trio.open_memory_channel(math.inf)
        self._waiters[id] = channel
        return channel

    async def _next(self, channel: _Channel) -> Any:
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
                        channel = self._waiters.get(owner_of(event))  # type: ignore[arg-type]
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
                self._failure = failure
                for send, _ in self._waiters.values():
                    send.send_nowait(failure)

    async def _write(self, data: bytes) -> None:
        if data:
            try:
                async with self._send_lock:
                    await self._send.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
                raise ConnectionError("the server's input is closed") from e

    def _listening(self, id: t.RequestId) -> bool:
        return id in self._waiters

    async def _end_listen(self, id: t.RequestId) -> None:
        self._waiters.pop(id, None)
        await self._cancel(id, "done")  # SUB-11

    async def _cancel(self, id: t.RequestId, reason: str) -> None:
        if id in self.conn.in_flight():
            with suppress(ConnectionError):  # server gone: nobody to tell
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
