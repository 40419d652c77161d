"""Our clients against real legacy servers (issue 16; LEG-21, VER-13..17).

The official Python SDK's last 1.x release (``mcp`` 1.30.0), in its own environment made
by ``uv`` (skipped when it cannot be installed), serves ``tests/peers/legacy_sdk_server.py``
over stdio.  Each adapter's client (blocking, asyncio, trio) finds it legacy by its
``server/discover`` probe, opens an ``initialize`` session, and calls with progress; the
server's elicitation and roots requests are answered by the call's ``on_input``, the
callback an MRTR round uses.  Our own dual-era server, probed the same way, stays modern
(the matrix's Dual-era/Modern row).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
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

PEERS = Path(__file__).parent / "peers"
LEGACY_SDK = "mcp==1.30.0"
UV = shutil.which("uv")
CAPS = t.ClientCapabilities(
    elicitation=t.ClientCapabilitiesElicitation(), roots=t.ClientCapabilitiesRoots()
)
OURS = [sys.executable, "-m", "mcp_proto_cli", "serve-example", "--stdio",
        "--adapter", "sync"]  # fmt: skip


@pytest.fixture(scope="module")
def legacy_server() -> list[str]:
    """The command of the legacy SDK server, its environment made once."""
    if UV is None:
        pytest.skip("uv is needed to make the legacy SDK's own environment")
    command = [UV, "run", "--isolated", "--no-project", "--quiet", "--with", LEGACY_SDK,
               "python", str(PEERS / "legacy_sdk_server.py")]  # fmt: skip
    warm = [*command[:-2], "python", "-c", "import mcp"]
    done = subprocess.run(warm, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        pytest.skip(f"{LEGACY_SDK} could not be installed: {done.stderr[-300:]}")
    return command


def answer(event: m.InputRequired) -> dict[str, Any]:
    """One callback for both eras: each input request of the round, answered."""
    out: dict[str, Any] = {}
    for key, request in event.input_requests.items():
        if isinstance(request, t.ElicitRequest):
            out[key] = t.ElicitResult(action="accept", content={"name": "Ada"})
        elif isinstance(request, t.ListRootsRequest):
            out[key] = t.ListRootsResult(roots=[t.Root(uri="file:///work", name="work")])
    return out


async def session(client: Any, connect: Any, call: Any) -> dict[str, Any]:
    """What one client saw of the legacy server (``connect``/``call``: sync or awaited)."""
    report: dict[str, Any] = {}
    outcome = await connect()
    report["era"], report["version"] = client.era, client.protocol_version
    report["server"] = outcome.server_info.name if isinstance(outcome, m.Legacy) else None
    tools = await call(client.list_tools)
    report["tools"] = sorted(tool.name for tool in tools)
    seen: list[float] = []
    echoed = await call(client.call_tool, "echo", {"text": "hi"},
                        on_progress=lambda p: seen.append(p.progress))  # fmt: skip
    report["echo"], report["progress"] = echoed.content[0].text, seen
    report["ask"] = (await call(client.call_tool, "ask", on_input=answer)).content[0].text
    report["roots"] = (await call(client.call_tool, "roots", on_input=answer)).content[0].text
    report["unanswered"] = (await call(client.call_tool, "ask")).is_error  # no handler
    return report


def check(report: dict[str, Any]) -> None:
    assert report["era"] == "legacy" and report["version"] == "2025-11-25"
    assert report["server"] == "legacy-sdk-peer"
    assert report["tools"] == ["ask", "echo", "roots"]
    assert report["echo"] == "hi" and report["progress"] == [1]
    assert report["ask"] == "hello Ada"  # elicitation/create, answered by on_input
    assert report["roots"] == "file:///work"  # roots/list, answered by on_input
    assert report["unanswered"] is True  # an error to the server (its tool reports it)


def test_leg21_the_blocking_client_finds_a_legacy_server(legacy_server: list[str]) -> None:
    async def run() -> dict[str, Any]:
        with mcp_proto_sync.Client.stdio(
            legacy_server, capabilities=CAPS, stderr=subprocess.DEVNULL
        ) as client:

            async def connect() -> Any:
                return client.connect()

            async def call(fn: Any, *args: Any, **kw: Any) -> Any:
                return fn(*args, **kw)

            return await session(client, connect, call)

    check(anyio.run(run))


@pytest.mark.parametrize("adapter", ["asyncio", "trio"])
def test_leg21_the_async_clients_find_a_legacy_server(
    adapter: str, legacy_server: list[str]
) -> None:
    module: Any = mcp_proto_asyncio if adapter == "asyncio" else mcp_proto_trio

    async def run() -> dict[str, Any]:
        async with module.Client.stdio(
            legacy_server, capabilities=CAPS, stderr=subprocess.DEVNULL
        ) as client:

            async def call(fn: Any, *args: Any, **kw: Any) -> Any:
                return await fn(*args, **kw)

            return await session(client, client.connect, call)

    check(anyio.run(run, backend=adapter))


def test_leg21_an_explicit_legacy_era_skips_the_probe(legacy_server: list[str]) -> None:
    with mcp_proto_sync.Client.stdio(legacy_server, era="legacy",
                                     stderr=subprocess.DEVNULL) as client:  # fmt: skip
        assert client.call_tool("echo", {"text": "x"}).content[0].text == "x"
        assert client.era == "legacy" and client.conn.legacy is not None


@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
def test_ver13_a_dual_era_server_is_found_modern_and_never_initialized(adapter: str) -> None:
    if adapter == "sync":
        with mcp_proto_sync.Client.stdio(OURS, stderr=subprocess.DEVNULL) as client:
            outcome = client.connect()
            assert client.call_tool("test_simple_text").content
            legacy = client.conn.legacy
    else:
        module: Any = mcp_proto_asyncio if adapter == "asyncio" else mcp_proto_trio

        async def run() -> tuple[Any, Any]:
            async with module.Client.stdio(OURS, stderr=subprocess.DEVNULL) as client:
                outcome = await client.connect()
                assert (await client.call_tool("test_simple_text")).content
                return outcome, client.conn.legacy

        outcome, legacy = anyio.run(run, backend=adapter)
    assert isinstance(outcome, m.Modern) and outcome.discover is not None and legacy is None


@pytest.mark.parametrize("module", [mcp_proto_sync, mcp_proto_asyncio, mcp_proto_trio])
def test_an_era_outside_the_three_is_refused(module: Any) -> None:
    with pytest.raises(ValueError, match="era"):
        module.Client(None, None, era="ancient")


def test_the_cli_probes_and_calls_a_legacy_server(
    legacy_server: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """``mcp-proto probe`` and ``call`` work against a legacy server unchanged (issue 16)."""
    import shlex

    from mcp_proto_cli import main

    command = shlex.join(legacy_server)
    assert main(["probe", "--stdio", command]) == 0
    out = capsys.readouterr().out
    assert "era: legacy, version 2025-11-25" in out and "legacy-sdk-peer" in out
    params = '{"name": "echo", "arguments": {"text": "from the CLI"}}'
    assert main(["call", "--stdio", command, "tools/call", params]) == 0
    assert "from the CLI" in capsys.readouterr().out


# -- over Streamable HTTP (the blocking client) ---------------------------------


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def serving(command: list[str], port: int) -> subprocess.Popen[bytes]:
    """Start an HTTP server ``command`` listening on ``port``, in a process group of its
    own (a ``uv run`` wrapper's child included), for :func:`stop`."""
    from ._http_helpers import wait_for_port

    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)  # fmt: skip
    try:
        wait_for_port(port, alive=lambda: server.poll() is None)
    except BaseException:
        stop(server)
        raise
    return server


def stop(server: subprocess.Popen[bytes]) -> None:
    """End a :func:`serving` server and everything it started (killing ``uv run`` alone
    leaves its child, the server, running)."""
    with contextlib.suppress(ProcessLookupError):  # the group is gone already
        os.killpg(server.pid, signal.SIGKILL)
    server.wait(10)


def name_answer(event: m.InputRequired) -> dict[str, Any]:
    return {k: t.ElicitResult(action="accept", content={"name": "Ada"})
            for k in event.input_requests}  # fmt: skip


def drive(adapter: str, target: str | list[str], scenario: Any, **options: Any) -> Any:
    """Run ``scenario(client, call)`` on ``adapter``'s client for ``target`` (a URL: the
    HTTP client; a command: the stdio one); ``call(fn, *args)`` calls a client method,
    awaited or not.  The client is closed afterwards.  An HTTP client gets an era cache of
    its own unless ``era_cache`` is given (a port used again by a later test must not
    find the era an earlier server had)."""
    if isinstance(target, str):
        options.setdefault("era_cache", m.EraCache())
    if adapter == "sync":
        sync_open = (
            mcp_proto_sync.Client.http if isinstance(target, str) else mcp_proto_sync.Client.stdio
        )

        async def run_sync() -> Any:
            async def call(fn: Any, *args: Any, **kw: Any) -> Any:
                return fn(*args, **kw)

            with sync_open(target, **options) as client:
                return await scenario(client, call)

        return anyio.run(run_sync)
    module: Any = mcp_proto_asyncio if adapter == "asyncio" else mcp_proto_trio
    async_open = module.Client.http if isinstance(target, str) else module.Client.stdio

    async def run() -> Any:
        async def call(fn: Any, *args: Any, **kw: Any) -> Any:
            return await fn(*args, **kw)

        async with async_open(target, **options) as client:
            return await scenario(client, call)

    return anyio.run(run, backend=adapter)


@pytest.fixture(scope="module")
def our_http_server() -> Any:
    """Our dual-era example server over HTTP (the blocking adapter), for the module."""
    port = free_port()
    server = serving([sys.executable, "-m", "mcp_proto_cli", "serve-example", "--http",
                      f"127.0.0.1:{port}", "--adapter", "sync"], port)  # fmt: skip
    yield f"http://127.0.0.1:{port}/mcp"
    stop(server)


@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
def test_leg10_the_http_client_opens_a_legacy_session_on_our_server(
    adapter: str, our_http_server: str
) -> None:
    """era="legacy" against our dual-era server: initialize, the session id on every
    request, the server's elicitation answered by a POST, a stream closed mid-call
    resumed with Last-Event-ID, and DELETE at close."""

    async def scenario(c: Any, call: Any) -> Any:
        await call(c.connect)
        assert c.era == "legacy" and c.http.session_id is not None
        assert (await call(c.call_tool, "test_simple_text")).content
        asked = await call(c.call_tool, "test_input_required_result_elicitation",
                           on_input=name_answer)  # fmt: skip
        assert asked.content[0].text == "Hello, Ada!"  # asked on the stream, answered
        resumed = await call(c.call_tool, "test_reconnection")  # closed mid-call: resumed
        assert resumed.content[0].text == "Answered on the resumed stream"
        return c

    client = drive(adapter, our_http_server, scenario, era="legacy", capabilities=CAPS,
                   timeout=20)  # fmt: skip
    assert client.http.session_id is None  # DELETEd

    async def probed(c: Any, call: Any) -> Any:
        assert (await call(c.call_tool, "test_simple_text")).content
        return c.era, c.http.session_id, c.conn.legacy

    assert drive(adapter, our_http_server, probed, era="auto", timeout=20) == (
        "modern", None, None)  # fmt: skip


def end_session(url: str, session_id: str) -> int:
    """DELETE the session from outside the client, as a server that forgot it would."""
    import urllib.request

    request = urllib.request.Request(url, method="DELETE", headers={
        "Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"})  # fmt: skip
    with urllib.request.urlopen(request, timeout=10) as response:
        return int(response.status)


@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
def test_leg16_a_404_opens_a_new_session_and_the_call_is_sent_again(
    adapter: str, our_http_server: str
) -> None:
    """The server ended the session: the next call gets 404, and the client opens a new
    session (initialize without the old id) and sends that call again, within the call."""

    async def scenario(c: Any, call: Any) -> Any:
        await call(c.call_tool, "test_simple_text")
        first = c.http.session_id
        assert first is not None and end_session(our_http_server, first) in (200, 204)
        again = await call(c.call_tool, "test_simple_text")
        return first, c.http.session_id, again.content[0].text, c.era

    first, second, text, era = drive(adapter, our_http_server, scenario, era="legacy",
                                     timeout=20)  # fmt: skip
    assert second is not None and second != first and text and era == "legacy"


@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
def test_leg21_the_http_client_finds_a_legacy_sdk_server(
    adapter: str, legacy_server: list[str]
) -> None:
    port = free_port()
    server = serving([*legacy_server, "--http", str(port)], port)
    try:
        url = f"http://127.0.0.1:{port}/mcp"

        async def scenario(client: Any, call: Any) -> dict[str, Any]:
            return await session(client, lambda: call(client.connect), call)

        check(drive(adapter, url, scenario, era="auto", capabilities=CAPS, timeout=20))
    finally:
        stop(server)


# -- the official TypeScript SDK's 1.x server, over stdio and HTTP --------------


@pytest.fixture(scope="module")
def ts_server(ts_sdk: tuple[str, Path]) -> list[str]:
    """The command of the TypeScript SDK's legacy server (``conftest.ts_sdk``)."""
    node, folder = ts_sdk
    return [node, str(folder / "server.mjs")]


ALL_INPUT = t.ClientCapabilities(
    elicitation=t.ClientCapabilitiesElicitation(),
    roots=t.ClientCapabilitiesRoots(),
    sampling=t.ClientCapabilitiesSampling(),
)


def every_answer(event: m.InputRequired) -> dict[str, Any]:
    out = answer(event)
    for key, request in event.input_requests.items():
        if isinstance(request, t.CreateMessageRequest):
            text = t.TextContent(text="Paris")
            out[key] = t.CreateMessageResult(role="assistant", content=text, model="m")
    return out


async def ts_session(client: Any, call: Any) -> dict[str, Any]:
    """What a client saw of the TypeScript server: era, calls, the server's requests
    answered by ``on_input``, the log level set, and a call given up that the server saw
    cancelled (LEG-09)."""
    report: dict[str, Any] = {}
    outcome = await call(client.connect)
    report["era"] = (client.era, client.protocol_version, outcome.server_info.name)
    report["tools"] = sorted(tool.name for tool in await call(client.list_tools))
    seen: list[float] = []
    echoed = await call(client.call_tool, "echo", {"text": "hi"},
                        on_progress=lambda p: seen.append(p.progress))  # fmt: skip
    report["echo"] = (echoed.content[0].text, seen)
    for name in ("ask", "sample", "roots"):
        report[name] = (await call(client.call_tool, name, on_input=every_answer)).content[0].text
    report["level"] = await call(client.request, "logging/setLevel", {"level": "debug"})
    with pytest.raises(TimeoutError):
        await call(client.call_tool, "slow", timeout=0.5)
    for _ in range(20):  # the cancel is on its way (in the background on async HTTP)
        report["cancelled"] = (await call(client.call_tool, "cancelled")).content[0].text
        if report["cancelled"] == "true":
            break
        await anyio.sleep(0.1)
    return report


def ts_check(report: dict[str, Any]) -> None:
    assert report["era"] == ("legacy", "2025-11-25", "ts-legacy-peer")
    assert report["tools"] == ["ask", "bump", "cancelled", "echo", "roots", "sample", "slow"]
    assert report["echo"] == ("hi", [1])
    assert report["ask"] == "hello Ada" and report["sample"] == "Paris"
    assert report["roots"] == "file:///work"  # over HTTP: asked on the session's GET stream
    assert report["level"] is None  # logging/setLevel answered {}
    assert report["cancelled"] == "true"


@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
def test_leg21_the_typescript_sdk_server_over_stdio(adapter: str, ts_server: list[str]) -> None:
    options = {"stderr": subprocess.DEVNULL, "capabilities": ALL_INPUT, "timeout": 20}
    ts_check(drive(adapter, ts_server, ts_session, **options))


@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
def test_leg21_the_typescript_sdk_server_over_http(adapter: str, ts_server: list[str]) -> None:
    port = free_port()
    server = serving([*ts_server, "--http", str(port)], port)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        ts_check(drive(adapter, url, ts_session, capabilities=ALL_INPUT, timeout=20,
                       era_cache=m.EraCache()))  # fmt: skip
    finally:
        stop(server)


async def ts_listen(client: Any, call: Any) -> dict[str, Any]:
    """A listen in a legacy session: ``resources/subscribe`` for the resource, the server's
    ``notifications/resources/updated`` on the listen, and ``unsubscribe`` at its close."""
    await call(client.connect)
    wanted = t.SubscriptionFilter(resource_subscriptions=["test://counter"],
                                  tools_list_changed=True)  # fmt: skip
    sub = await call(client.listen, wanted)
    report: dict[str, Any] = {"honoured": sub.honoured}
    report["bumped"] = (await call(client.call_tool, "bump")).content[0].text
    if isinstance(sub, mcp_proto_sync.Subscription):
        note = sub.next(10)
        sub.close()
    else:
        with anyio.fail_after(10):
            note = await sub.__anext__()
        await sub.aclose()
    report["note"] = (note.method, note.params.uri) if note is not None else None
    report["after"] = (await call(client.call_tool, "bump")).content[0].text
    return report


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
def test_leg_sub07_a_listen_is_a_subscription_on_the_typescript_server(
    adapter: str, transport: str, ts_server: list[str]
) -> None:
    """SUB-07 in a legacy session: the listen is honoured for what the server declared (a
    resource subscription, tool list changes), the server's update comes on it, and its
    close unsubscribes (a later ``bump`` finds nothing subscribed)."""
    if transport == "stdio":
        report = drive(adapter, ts_server, ts_listen, stderr=subprocess.DEVNULL, timeout=20)
    else:
        port = free_port()
        server = serving([*ts_server, "--http", str(port)], port)
        try:
            report = drive(adapter, f"http://127.0.0.1:{port}/mcp", ts_listen, timeout=20)
        finally:
            stop(server)
    assert report["honoured"] == t.SubscriptionFilter(
        resource_subscriptions=["test://counter"], tools_list_changed=True
    )
    assert report["bumped"] == "test://counter"
    assert report["note"] == ("notifications/resources/updated", "test://counter")
    assert report["after"] == ""
