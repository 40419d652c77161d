"""How the trio stdio server reads and writes one stream: two links, one contract.

Both take a whole message per :meth:`send` and never cut one short: a send is
shielded from cancellation and bounded instead by ``timeout`` seconds without
progress, past which the link is broken for good (``trio.BrokenResourceError`` now
and on every later send).  :meth:`receive` returns ``b""`` at the end of the input;
:meth:`drain` waits until every message handed to :meth:`send` so far is written.

* :class:`StreamLink`, the default: any ``trio.abc.Stream`` (``FdStream`` on stdio,
  memory streams in tests), one ``send_all`` at a time under a lock.
* :class:`FdLink`, ``Server(io="raw")``: two non-blocking descriptors read and written
  with ``os.read`` / ``os.write``, waiting for readiness (``trio.lowlevel``) only when a
  pipe is empty or full, so that most reads and writes cost no trip through the
  scheduler.  Kept because it measured about twice as fast (``docs/adapters.md``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from typing import Any, Protocol

import trio

from mcp_proto_runtime import server_log

from ._handlers import Signal, send_whole

__all__ = ["FdLink", "Link", "StreamLink"]

CHUNK = 65536
_PENDING_LIMIT = 1 << 18  # FdLink: bytes queued for stdout before senders wait


class Link(Protocol):
    async def receive(self) -> bytes: ...

    async def send(self, data: bytes, *, checkpoint: bool) -> None: ...

    async def drain(self) -> None: ...

    def close(self) -> None: ...


def _timed_out(timeout: float) -> trio.BrokenResourceError:
    reason = f"the client read nothing for {timeout} s"
    server_log.warning("stdio stream: %s: stream ended", reason)
    return trio.BrokenResourceError(reason)


class StreamLink:
    """A trio stream: ``receive_some``, and ``send_all`` whole, one at a time.

    ``checkpoint`` is accepted for the contract; every ``send_all`` is one already.
    :meth:`close` closes ``owns`` (the two stdio ``FdStream`` objects), never a caller's stream.
    """

    def __init__(
        self, stream: Any, timeout: float, owns: tuple[trio.lowlevel.FdStream, ...] = ()
    ) -> None:
        self.stream = stream
        self.owns = owns
        self.timeout = timeout
        self.lock = trio.Lock()  # fair: drain() queues behind every send before it
        self.broken: trio.BrokenResourceError | trio.ClosedResourceError | None = None

    async def receive(self) -> bytes:
        try:
            data = await self.stream.receive_some(CHUNK)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
            server_log.debug("stdio stream: a read failed: %r", e)
            return b""  # the end of the input, as far as the session is concerned
        return data if isinstance(data, bytes) else bytes(data)

    async def send(self, data: bytes, *, checkpoint: bool = True) -> None:
        if self.broken is not None:
            raise self.broken
        try:
            whole = await send_whole(self.stream, self.lock, data, self.timeout)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
            self.broken = e
            raise
        if not whole:
            self.broken = _timed_out(self.timeout)
            raise self.broken

    async def drain(self) -> None:
        async with self.lock:
            pass

    def close(self) -> None:
        for stream in self.owns:
            stream.close()


class FdLink:
    """Two file descriptors (stdin, stdout) in non-blocking mode, read and written directly.

    Writes need no lock: a message that fits is written whole at once; one that does
    not goes to :attr:`pending`, and the task that wrote it keeps flushing
    (:attr:`writing`), while the others append whole messages behind it, in order.
    Past :data:`_PENDING_LIMIT` queued bytes, senders wait for the queue to shrink
    before they append (backpressure; a sender cancelled while it waits sends
    nothing).  :meth:`close` restores the descriptors' blocking mode.
    """

    def __init__(self, rfd: int, wfd: int, timeout: float) -> None:
        self.rfd, self.wfd = rfd, wfd
        self.timeout = timeout
        self.blocking = os.get_blocking(rfd), os.get_blocking(wfd)
        os.set_blocking(rfd, False)
        os.set_blocking(wfd, False)
        self.pending = bytearray()
        self.writing = False
        self.broken: trio.BrokenResourceError | trio.ClosedResourceError | None = None
        # a pipe read short was emptied: the next read waits first, sparing a read that
        # would only say "nothing yet" (a regular file cannot be waited for: never)
        mode = os.fstat(rfd).st_mode
        self.pollable = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
        self.emptied = False
        self.drained = Signal()  # woken as the queue shrinks, and when the writer stops

    def close(self) -> None:
        for fd, blocking in ((self.wfd, self.blocking[1]), (self.rfd, self.blocking[0])):
            trio.lowlevel.notify_closing(fd)
            with contextlib.suppress(OSError):  # EBADF: the peer's end is already closed
                os.set_blocking(fd, blocking)
            os.close(fd)

    async def receive(self) -> bytes:
        """Up to :data:`CHUNK` bytes, ``b""`` at the end; a checkpoint either way."""
        waited = False
        if self.emptied:  # the last read emptied the pipe: a read now would find nothing
            await trio.lowlevel.wait_readable(self.rfd)
            waited = True
        while True:
            try:
                data = os.read(self.rfd, CHUNK)
            except BlockingIOError:
                await trio.lowlevel.wait_readable(self.rfd)
                waited = True
                continue
            except OSError as e:
                server_log.debug("stdio stream: a read failed: %r", e)
                return b""
            self.emptied = self.pollable and 0 < len(data) < CHUNK
            if not waited:  # the others still get a turn between two reads
                await trio.sleep(0)
            return data

    async def send(self, data: bytes, *, checkpoint: bool) -> None:
        """Write ``data`` whole, or queue it whole behind the task that is writing.

        ``checkpoint``: yield to the scheduler at least once (a handler's progress or
        log must not starve the others); without it, a write that fits yields nothing.
        """
        while self.writing:
            if len(self.pending) < _PENDING_LIMIT:
                self.pending += data  # the writer flushes it
                if checkpoint:
                    await trio.sleep(0)
                return
            await self.drained.wait()
        if self.broken is not None:
            raise self.broken
        try:
            sent = os.write(self.wfd, data)
        except BlockingIOError:
            sent = 0
        except OSError as e:
            self.broken = _broken(e)
            raise self.broken from e
        if sent == len(data):
            if checkpoint:
                await trio.sleep(0)
            return
        self.pending += memoryview(data)[sent:]
        self.writing = True
        try:
            with trio.CancelScope(shield=True) as scope:  # a message is never cut short
                await self._flush(scope)
            if scope.cancelled_caught:
                self.broken = _timed_out(self.timeout)
                raise self.broken
        finally:
            self.writing = False
            self.pending.clear()  # empty unless the pipe broke or the client stopped reading
            self.drained.wake()

    async def _flush(self, scope: trio.CancelScope) -> None:
        """Write :attr:`pending` out; ``scope``'s deadline moves on with every write."""
        while self.pending:
            scope.deadline = trio.current_time() + self.timeout
            await trio.lowlevel.wait_writable(self.wfd)
            try:
                sent = os.write(self.wfd, self.pending)
            except BlockingIOError:
                continue
            except OSError as e:
                self.broken = _broken(e)
                raise self.broken from e
            del self.pending[:sent]
            self.drained.wake()

    async def drain(self) -> None:
        while self.writing:
            await self.drained.wait()


def _broken(e: OSError) -> trio.BrokenResourceError | trio.ClosedResourceError:
    if e.errno == errno.EBADF:
        return trio.ClosedResourceError("file was already closed")
    return trio.BrokenResourceError(str(e))
