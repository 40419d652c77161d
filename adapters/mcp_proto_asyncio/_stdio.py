"""The asyncio server's stdin and stdout, pipes or regular files alike (issue 17).

asyncio's pipe transports take pipes, sockets and character devices only; a server whose
stdin or stdout is a regular file (a recorded session replayed, a golden file written)
got ``ValueError: Pipe transport is for pipes/sockets only``.  A regular file never
blocks, so it is read in the loop's default executor and written at once.
"""

from __future__ import annotations

import asyncio
import os
import stat
from typing import IO, Any

from mcp_proto_runtime import server_log

__all__ = ["open_stdio"]

_CHUNK = 65536


def _is_pipe(stream: IO[Any]) -> bool:
    mode = os.fstat(stream.fileno()).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


class FileWriter:
    """What the server's session needs of an ``asyncio.StreamWriter``, on a regular
    file: each write goes out whole, at once."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]

    async def drain(self) -> None:
        """Nothing waits: the bytes are written."""

    def close(self) -> None:
        """The descriptor is the process's stdout: it stays open."""

    async def wait_closed(self) -> None:
        """Nothing is buffered."""


async def _read_file(reader: asyncio.StreamReader, fd: int) -> None:
    """Feed ``reader`` from a regular file, a chunk at a time; a read that fails (``EIO``,
    a directory) ends the input as its end would, so that the server stops."""
    loop = asyncio.get_running_loop()
    try:
        while data := await loop.run_in_executor(None, os.read, fd, _CHUNK):
            reader.feed_data(data)  # (a file is read ahead of the server: it is finite)
    except OSError as e:
        server_log.error("stdin could not be read: %s", e)
    finally:
        reader.feed_eof()


async def open_stdio(
    stdin: IO[Any], stdout: IO[Any]
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter | FileWriter, asyncio.Task[None] | None]:
    """A reader of ``stdin`` and a writer of ``stdout``, each a pipe's transport or a
    regular file's; the task that reads a regular stdin (cancel it when done), or None."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_CHUNK)
    feeding: asyncio.Task[None] | None = None
    if _is_pipe(stdin):
        pipe, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
        # the pipe transport reads 256 KiB at a time: a fresh mmap and munmap per read here,
        # for requests of a few hundred bytes; where it has this knob, read 64 KiB
        if isinstance(getattr(pipe, "max_size", None), int):
            pipe.max_size = _CHUNK  # type: ignore[attr-defined]
    else:
        feeding = asyncio.create_task(_read_file(reader, stdin.fileno()))
    if not _is_pipe(stdout):
        stdout.flush()
        return reader, FileWriter(stdout.fileno()), feeding
    unused = asyncio.StreamReader()  # a StreamReaderProtocol knows when the pipe closed
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(unused), stdout
    )
    return reader, asyncio.StreamWriter(transport, protocol, unused, loop), feeding
