"""``on_input`` and ``on_progress`` may be ``async def`` on the asyncio and trio clients
(issue 17), in both eras, over stdio and HTTP; the blocking client refuses them, saying
what to use instead."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest

import mcp_proto as m
import mcp_proto_sync
from mcp_proto import types as t

from .test_interop_legacy_client import drive

CAPS = t.ClientCapabilities(elicitation=t.ClientCapabilitiesElicitation())
OURS = [sys.executable, "-m", "mcp_proto_cli", "serve-example", "--stdio",
        "--adapter", "sync"]  # fmt: skip


@pytest.fixture(scope="module")
def url(everything_url: str) -> str:
    return everything_url


async def answer(event: m.InputRequired) -> dict[str, Any]:
    await anyio.sleep(0.01)  # it really awaits
    return {key: t.ElicitResult(action="accept", content={"name": "Ada"})
            for key in event.input_requests}  # fmt: skip


async def scenario(client: Any, call: Any) -> tuple[str, list[float]]:
    seen: list[float] = []

    async def show(params: t.ProgressNotificationParams) -> None:
        await anyio.sleep(0)
        seen.append(params.progress)

    asked = await call(client.call_tool, "test_input_required_result_elicitation",
                       on_input=answer)  # fmt: skip
    await call(client.call_tool, "test_tool_with_progress", on_progress=show)
    return asked.content[0].text, seen


@pytest.mark.parametrize("era", ["modern", "legacy"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("adapter", ["asyncio", "trio"])
def test_async_callbacks_on_the_async_clients(
    adapter: str, transport: str, era: str, url: str
) -> None:
    target: Any = url if transport == "http" else OURS
    text, seen = drive(adapter, target, scenario, era=era, capabilities=CAPS, timeout=20)
    assert text == "Hello, Ada!"
    assert seen and seen == sorted(seen)


def hidden(event: m.InputRequired) -> Any:
    """A plain function that returns a coroutine: no async def to see up front."""
    return answer(event)


def test_the_blocking_client_refuses_async_callbacks(url: str) -> None:
    with mcp_proto_sync.Client.http(url, era="modern", capabilities=CAPS, timeout=10) as client:
        with pytest.raises(TypeError, match="async def: the blocking client calls plain"):
            client.call_tool("test_input_required_result_elicitation", on_input=answer)
        with pytest.raises(TypeError, match="gave an awaitable"):  # a plain on_progress
            client.call_tool("test_tool_with_progress", on_progress=hidden)
        with pytest.raises(TypeError, match="gave an awaitable"):  # hidden behind a lambda
            client.call_tool("test_input_required_result_elicitation", on_input=hidden)
