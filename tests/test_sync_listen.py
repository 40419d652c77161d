"""The blocking client's ``listen()`` (SUB-xx) over stdio and over HTTP, against real servers.

Stdio: the everything example on each adapter as a subprocess.  HTTP: each
adapter's HTTP server of ``tests/test_adapter_http_clients.py`` (its ``url``
fixture).  Every wait is bounded.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import mcp_proto_sync
from mcp_proto import types as t

from .test_adapter_http_clients import url  # noqa: F401  (the fixture)

SERVER = str(Path(__file__).resolve().parent.parent / "examples" / "everything_server.py")
CHANGES = t.SubscriptionFilter(tools_list_changed=True)
CHANGED = "notifications/tools/list_changed"


@pytest.fixture(params=["sync", "asyncio", "trio"])
def stdio_client(request: pytest.FixtureRequest) -> Iterator[mcp_proto_sync.Client]:
    command = [sys.executable, SERVER, "--stdio", "--adapter", request.param]
    with mcp_proto_sync.Client.stdio(command, stderr=subprocess.DEVNULL, timeout=20) as client:
        yield client


def exercise(client: mcp_proto_sync.Client | mcp_proto_sync.HTTPClientSession) -> None:
    with client.listen(CHANGES) as sub:
        assert sub.honoured.tools_list_changed and not sub.ended
        assert sub.next(timeout=0.3) is None  # SUB-03: nothing until something changes
        for _ in range(2):  # the notification arrives while the call waits: kept for sub
            client.call_tool("test_trigger_tool_change")
            note = sub.next(timeout=10)
            assert note is not None and note.method == CHANGED and note.request_id == sub.id
        client.call_tool("test_trigger_tool_change")
        assert next(iter(sub)).method == CHANGED
    assert sub.ended and sub.next(timeout=0.1) is None
    assert list(sub) == []
    # SUB-11: closed means cancelled; the client goes on working
    assert client.call_tool("test_simple_text").content[0].text


def test_stdio_listen_sees_changes_made_by_other_calls(
    stdio_client: mcp_proto_sync.Client,
) -> None:
    exercise(stdio_client)
    assert not stdio_client._listens and not stdio_client.conn.in_flight()


def test_http_listen_holds_its_own_connection(url: str) -> None:  # noqa: F811
    with mcp_proto_sync.Client.http(url, timeout=10) as client:
        exercise(client)
        assert not client._active


def test_stdio_notifications_queue_per_listen_and_only_for_open_ones(
    stdio_client: mcp_proto_sync.Client,
) -> None:
    one = stdio_client.listen(CHANGES)
    two = stdio_client.listen(CHANGES)
    stdio_client.call_tool("test_trigger_tool_change")
    assert len(stdio_client._listens[one.id]) == 1 and len(stdio_client._listens[two.id]) == 1
    one.close()
    stdio_client.call_tool("test_trigger_tool_change")
    assert one.id not in stdio_client._listens and len(stdio_client._listens[two.id]) == 2
    notes = [two.next(timeout=5) for _ in range(2)]
    assert [n.method if n else None for n in notes] == [CHANGED, CHANGED]
    two.close()
    assert not stdio_client.conn.in_flight()


def test_sub14_a_lost_server_ends_the_listen_with_connection_error(
    stdio_client: mcp_proto_sync.Client,
) -> None:
    sub = stdio_client.listen(CHANGES)
    assert stdio_client.process is not None
    stdio_client.process.kill()
    with pytest.raises(ConnectionError):
        sub.next(timeout=10)
