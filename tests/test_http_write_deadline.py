"""HTTP writes to a client that stops reading: bounded, and never a wait for anyone else.

* a listen whose acknowledgement is large (it echoes ~3 MB of requested subscriptions) and
  whose client never reads: a tool call that changes something answers at once (the
  blocking adapter wrote that acknowledgement under the lock the fan-out takes), and the
  acknowledgement still comes first on the listen, before the change (SUB-04);
* a client that pipelines requests and never reads their responses: each response write
  has ``client_timeout`` seconds, then the server resets the connection; meanwhile other
  clients are served.

Bounded: every wait has a deadline; the servers are stopped at the end of each test.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from tests.test_fanout import (
    ADAPTERS,
    PREFIX,
    Exchange,
    acknowledged,
    call_flood,
    http_server,
    is_note,
)

ACK = "notifications/subscriptions/acknowledged"


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_listen_stalled_on_its_acknowledgement_does_not_hold_up_a_change(
    adapter: str,
) -> None:
    # ~3 MB of subscriptions, echoed by the acknowledgement; PREFIX covers the call's change
    uris = [PREFIX, *(f"{PREFIX}{'x' * 1000}{i}" for i in range(3000))]
    listen_params = {"notifications": {"resourceSubscriptions": uris}}
    # a listen body over the default 64 KiB allowance is refused (413): allow this one
    options = {"keepalive_interval": 10, "client_timeout": 30, "fanout_timeout": 30}
    with http_server(adapter, body_allowance=8 << 20, **options) as at:
        stalled = Exchange(at, 1, "subscriptions/listen", listen_params, rcvbuf=4096)
        time.sleep(0.5)  # the server is writing the acknowledgement; nobody reads it
        took = call_flood(at, 1, 10)
        # before the fix (blocking adapter) the call waited for the socket's timeout: 10 s
        assert took < 5.0, f"the call took {took:.2f} s"
        stalled.read(acknowledged, 15)
        stalled.read(lambda ex: any(is_note(m) for m in ex.messages), 0.5)
        stalled.close()
    kinds = [m.get("method") for m in stalled.messages]
    assert kinds and kinds[0] == ACK, kinds  # first on the listen (SUB-04)
    # every adapter joins the fan-out before its acknowledgement is written (OpenListen), so
    # the change reaches it, after the acknowledgement
    assert kinds[1:] == ["notifications/resources/updated"], kinds


REQUEST = b"GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"  # a 404, a little longer


def pipeline_bytes() -> int:
    """Bytes of requests whose 404s overfill the server's send buffer, however large it grows
    (``tcp_wmem``'s maximum on Linux), and the client's receive buffer, with a margin."""
    try:
        most = int(Path("/proc/sys/net/ipv4/tcp_wmem").read_text().split()[2])
    except (OSError, ValueError, IndexError):
        most = 4 << 20
    return most + (2 << 20)


def reset_by_server(sock: socket.socket) -> bool:
    """Whether the server reset the connection (without reading what it sent)."""
    return sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0


def pipeline(sock: socket.socket, data: bytes, seconds: float) -> bool:
    """Send ``data`` without reading anything; ``False`` if the server reset it first."""
    view = memoryview(data)
    deadline = time.monotonic() + seconds
    while view and time.monotonic() < deadline:
        try:
            view = view[sock.send(view) :]
        except BlockingIOError:
            time.sleep(0.02)
        except (ConnectionResetError, BrokenPipeError):
            return False
    return True


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_client_that_stops_reading_is_disconnected_after_client_timeout(
    adapter: str,
) -> None:
    timeout = 1.0
    count = pipeline_bytes() // len(REQUEST) + 1
    with http_server(adapter, keepalive_interval=timeout, client_timeout=timeout) as at:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        try:
            sock.connect(at)
            sock.setblocking(False)
            pipeline(sock, REQUEST * count, 10.0)  # the server stalls writing the 404s
            call_flood(at, 1, 10)  # another client is answered meanwhile (asserted there)
            deadline = time.monotonic() + timeout + 15.0
            while not reset_by_server(sock) and time.monotonic() < deadline:
                time.sleep(0.05)
            # before the fix (asyncio, trio) the connection stayed open for good
            assert reset_by_server(sock) or not pipeline(sock, REQUEST, 0.1), "still open"
        finally:
            sock.close()
