"""The complete client API (issue 17): the same typed calls on every adapter's client,
stdio and HTTP, against our everything server; listings follow cursors, bounded."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto_runtime import MAX_PAGES, Pages

from .test_interop_legacy_client import drive, free_port, serving, stop

OURS = [sys.executable, "-m", "mcp_proto_cli", "serve-example", "--stdio",
        "--adapter", "sync"]  # fmt: skip


async def everything(client: Any, call: Any) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    seen["tools"] = {tool.name for tool in await call(client.list_tools)}
    seen["resources"] = {r.uri for r in await call(client.list_resources)}
    seen["templates"] = [r.uri_template for r in await call(client.list_resource_templates)]
    seen["prompts"] = {p.name for p in await call(client.list_prompts, timeout=10)}
    pages = client.pages("prompts/list")
    if hasattr(pages, "__aiter__"):
        seen["pages"] = [page async for page in pages]
    else:
        seen["pages"] = list(pages)
    read = await call(client.read_resource, "test://static-text")
    seen["read"] = read.contents[0].text
    prompt = await call(
        client.get_prompt, "test_prompt_with_arguments", {"arg1": "a", "arg2": "b"}
    )
    seen["prompt"] = prompt.messages[0].content.text
    done = await call(client.complete, t.PromptReference(name="test_prompt_with_arguments"),
                      "arg1", "py", context={"arg2": "b"})  # fmt: skip
    seen["complete"] = list(done.completion.values)
    seen["discover"] = (await call(client.discover)).supported_versions
    return seen


@pytest.fixture(scope="module")
def our_url() -> Any:
    """The everything server over HTTP, in a process of its own (the blocking adapter)."""
    port = free_port()
    server = serving([*OURS[:-3], "--http", f"127.0.0.1:{port}", "--adapter", "sync"], port)
    yield f"http://127.0.0.1:{port}/mcp"
    stop(server)


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
def test_the_typed_calls_on_every_client(adapter: str, transport: str, our_url: str) -> None:
    target: Any = our_url if transport == "http" else OURS
    seen = drive(adapter, target, everything, era="modern", timeout=20)
    assert "test_simple_text" in seen["tools"] and "test://static-text" in seen["resources"]
    assert seen["templates"] == ["test://template/{id}/data"]
    assert "test_prompt_with_arguments" in seen["prompts"]
    assert len(seen["pages"]) == 1 and isinstance(seen["pages"][0], t.ListPromptsResult)
    assert seen["read"] and seen["prompt"] == "Prompt with arguments: arg1='a', arg2='b'"
    assert seen["complete"] == ["python", "typescript"]
    assert "2026-07-28" in seen["discover"]


def page(cursor: str | None) -> t.ListToolsResult:
    return t.ListToolsResult(tools=[t.Tool(name="x", input_schema={})], next_cursor=cursor)


def test_pages_follow_cursors_and_stop_on_a_loop_or_past_the_bound() -> None:
    walk = Pages("tools/list")
    assert walk.params().cursor is None
    assert len(walk.took(page("c1"))) == 1 and walk.params().cursor == "c1" and not walk.done
    walk.took(page(None))
    assert walk.done
    looping = Pages("tools/list")
    looping.took(page("same"))
    with pytest.raises(m.RemoteProtocolError, match="sent cursor 'same' again"):
        looping.took(page("same"))
    endless = Pages("tools/list")
    with pytest.raises(m.RemoteProtocolError, match=f"more than {MAX_PAGES} pages"):
        for n in range(MAX_PAGES + 1):
            endless.took(page(f"c{n}"))
    with pytest.raises(ValueError, match="not a list method"):
        Pages("tools/call")


def test_complete_wants_a_reference() -> None:
    async def main() -> None:
        from mcp_proto_runtime import completion_params

        with pytest.raises(TypeError, match="PromptReference"):
            completion_params({"type": "ref/prompt"}, "a", "b", None)  # type: ignore[arg-type]

    anyio.run(main)
