"""The stdio clients' era handling on each adapter (issue 16), against scripted peers.

``tests/peers/stdio_server.py`` in its ``legacy-asks`` mode is an ``initialize``-era
server that, during a call, asks the client a ``ping``, an unknown method and an
elicitation; ``legacy`` answers every request ``-32601`` (``initialize`` too: nothing to
talk to); ``silent`` never answers.  Each client answers the server's requests as the
spec says, gives up with a clear error, or times out within its call's budget.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import mcp_proto as m
import mcp_proto_asyncio
import mcp_proto_sync
import mcp_proto_trio
from mcp_proto import types as t

PEER = [sys.executable, str(Path(__file__).parent / "peers" / "stdio_server.py")]
CAPS = t.ClientCapabilities(elicitation=t.ClientCapabilitiesElicitation())
ADAPTERS = ["sync", "asyncio", "trio"]


def name(event: m.InputRequired) -> dict[str, Any]:
    return {k: t.ElicitResult(action="accept", content={"n": "Ada"}) for k in event.input_requests}


def broken(event: m.InputRequired) -> dict[str, Any]:
    raise RuntimeError("the user's callback has a bug")


def run(adapter: str, mode: str, body: Any, **options: Any) -> Any:
    """``body(client, call)`` against the peer in ``mode`` on ``adapter``; its value.

    ``call(fn, *args, **kw)`` runs a client method (awaited on the async adapters)."""
    command = [*PEER, mode]
    options = {"stderr": subprocess.DEVNULL, "timeout": 10, **options}
    if adapter == "sync":

        async def sync_call(fn: Any, *args: Any, **kw: Any) -> Any:
            return fn(*args, **kw)

        async def sync_main() -> Any:
            with mcp_proto_sync.Client.stdio(command, **options) as client:
                return await body(client, sync_call)

        return anyio.run(sync_main)
    module: Any = mcp_proto_asyncio if adapter == "asyncio" else mcp_proto_trio

    async def async_call(fn: Any, *args: Any, **kw: Any) -> Any:
        return await fn(*args, **kw)

    async def async_main() -> Any:
        async with module.Client.stdio(command, **options) as client:
            return await body(client, async_call)

    return anyio.run(async_main, backend=adapter)


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_leg07_the_servers_requests_are_answered_ping_unknown_and_elicitation(
    adapter: str,
) -> None:
    async def body(client: Any, call: Any) -> Any:
        result = await call(client.call_tool, "x", on_input=name)
        return client.era, json.loads(result.content[0].text)

    era, seen = run(adapter, "legacy-asks", body, capabilities=CAPS)
    assert era == "legacy"
    assert seen["answers"] == {"e1": "result", "p1": "result", "x1": "error"}
    assert seen["content"] == {"n": "Ada"}


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_an_input_handler_that_raises_gets_the_server_an_error(adapter: str) -> None:
    async def body(client: Any, call: Any) -> Any:
        result = await call(client.call_tool, "x", on_input=broken)
        return json.loads(result.content[0].text)

    seen = run(adapter, "legacy-asks", body, capabilities=CAPS)
    assert seen["answers"]["e1"] == "error" and seen["content"] is None


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_leg05_a_server_that_answers_nothing_it_should_is_incompatible(adapter: str) -> None:
    async def body(client: Any, call: Any) -> Any:
        with pytest.raises(ConnectionError, match="refused initialize"):
            await call(client.connect)

    run(adapter, "legacy", body)


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_silent_server_times_out_within_the_first_calls_budget(adapter: str) -> None:
    async def body(client: Any, call: Any) -> Any:
        with pytest.raises(TimeoutError):
            await call(client.call_tool, "echo", timeout=0.5)

    run(adapter, "silent", body, probe_timeout=5)


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_era_modern_sends_no_probe_and_legacy_no_discover(adapter: str) -> None:
    async def modern(client: Any, call: Any) -> Any:
        assert client.era == "modern"  # known at once: no probe
        outcome = await call(client.connect)
        return outcome, await call(client.call_tool, "echo", {"text": "m"})

    outcome, result = run(adapter, "normal", modern, era="modern")
    assert outcome == m.Modern(version="2026-07-28") and result.content[0].text == "m"

    async def legacy(client: Any, call: Any) -> Any:
        assert client.era == "legacy"  # (what was asked for, before it is found)
        return await call(client.connect)

    found = run(adapter, "legacy-asks", legacy, era="legacy")
    assert isinstance(found, m.Legacy) and found.server_info.name == "legacy-asks"


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_sub07_a_legacy_listen_keeps_only_what_the_server_announces(adapter: str) -> None:
    """The peer declares no list changes: the listen is mapped on the session and honours
    nothing (SUB-07), with no request sent for it."""

    async def body(client: Any, call: Any) -> Any:
        sub = await call(client.listen, t.SubscriptionFilter(tools_list_changed=True))
        assert sub.honoured == t.SubscriptionFilter() and client.era == "legacy"
        await call(sub.aclose if adapter != "sync" else sub.close)

    run(adapter, "legacy-asks", body)


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_listen_to_a_modern_only_silent_server_times_out(adapter: str) -> None:
    async def body(client: Any, call: Any) -> Any:
        with pytest.raises(TimeoutError, match="listen"):
            await call(client.listen, t.SubscriptionFilter(tools_list_changed=True), timeout=0.3)

    run(adapter, "silent", body, era="modern")


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_listen_refused_raises_as_a_call_does(adapter: str) -> None:
    async def body(client: Any, call: Any) -> Any:
        with pytest.raises(m.McpError):
            await call(client.listen, t.SubscriptionFilter(tools_list_changed=True))

    run(adapter, "legacy", body, era="modern")  # it answers -32601 to everything
