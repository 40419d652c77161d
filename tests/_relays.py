"""Byte relays on 127.0.0.1 for the TLS and proxy tests: a TLS front for a plain server,
and an HTTP ``CONNECT`` proxy.  Each runs in threads, records what it saw, and stops with
:meth:`Relay.stop` (every socket closed, bounded joins)."""

from __future__ import annotations

import contextlib
import select
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from typing import Any


class Relay:
    """Accept on 127.0.0.1, ``open(conn)`` each connection: the socket to relay (``conn``
    or a TLS one over it) and the port on 127.0.0.1 to relay it to, or ``None`` (refused);
    then pump bytes both ways until either side ends."""

    def __init__(self, open: Callable[[socket.socket], tuple[socket.socket, int] | None]) -> None:
        self._open = open
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.2)
        self.port: int = self.listener.getsockname()[1]
        self._socks: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._stopped = threading.Event()
        self._spawn(self._accept)

    def _spawn(self, target: Callable[..., None], *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # closed by stop()
            conn.settimeout(10)
            self._socks.append(conn)
            self._spawn(self._serve, conn)

    def _serve(self, conn: socket.socket) -> None:
        try:
            opened = self._open(conn)
        except (OSError, ValueError):
            opened = None  # a failed handshake (the client refused our certificate)
        if opened is None:
            conn.close()
            return
        front, port = opened
        back = socket.create_connection(("127.0.0.1", port), timeout=10)
        self._socks.append(back)
        _relay(front, back)

    def stop(self) -> None:
        self._stopped.set()
        self.listener.close()
        for sock in self._socks:
            with contextlib.suppress(OSError):  # already closed by its pump
                sock.close()
        for thread in self._threads:
            thread.join(5)


def _relay(a: socket.socket, b: socket.socket) -> None:
    """Pump bytes both ways in one thread (a TLS socket is not for two threads at once)
    until either side ends, or nothing moved for 30 s."""
    socks = [a, b]
    with contextlib.suppress(OSError, ValueError):  # a side gone (or closed by stop())
        while True:
            ready = [s for s in socks if isinstance(s, ssl.SSLSocket) and s.pending()]
            ready = ready or select.select(socks, [], [], 30)[0]
            if not ready:
                break
            for sock in ready:
                data = sock.recv(65536)
                if not data:
                    raise ConnectionResetError
                (b if sock is a else a).sendall(data)
    for sock in socks:
        with contextlib.suppress(OSError):  # closed already
            sock.close()


@contextlib.contextmanager
def _running(open: Callable[[socket.socket], Any], seen: dict[str, Any]) -> Iterator[None]:
    """A :class:`Relay` of ``open`` for the block; its port goes in ``seen``."""
    relay = Relay(open)
    seen["port"] = relay.port
    try:
        yield
    finally:
        relay.stop()


@contextlib.contextmanager
def tls_front(context: ssl.SSLContext, backend: int) -> Iterator[dict[str, Any]]:
    """A TLS server on 127.0.0.1 relaying to the plain server on ``backend``; yields
    ``{"port": ..., "sni": [names the clients sent]}``."""
    seen: dict[str, Any] = {"sni": []}
    context.sni_callback = lambda sock, name, ctx: seen["sni"].append(name) and None

    def open(conn: socket.socket) -> tuple[socket.socket, int]:
        return context.wrap_socket(conn, server_side=True), backend

    with _running(open, seen):
        yield seen


@contextlib.contextmanager
def connect_proxy(*, refuse: bytes | None = None) -> Iterator[dict[str, Any]]:
    """An HTTP proxy on 127.0.0.1 that opens ``CONNECT`` tunnels to 127.0.0.1 (whatever
    host is named, so ``localhost`` certificates still match); yields ``{"port": ...,
    "heads": [each request head]}``.  With ``refuse`` it answers that instead."""
    seen: dict[str, Any] = {"heads": []}

    def open(conn: socket.socket) -> tuple[socket.socket, int] | None:
        head = b""
        while b"\r\n\r\n" not in head:
            data = conn.recv(4096)
            if not data:
                return None
            head += data
        seen["heads"].append(head.decode("latin-1"))
        if refuse is not None:
            conn.sendall(refuse)
            return None
        target = head.split(b" ", 2)[1].decode()
        conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        return conn, int(target.rpartition(":")[2])

    with _running(open, seen):
        yield seen
