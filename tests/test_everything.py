"""The everything example over stdio, on each adapter, driven by our blocking client.

Covers the fixtures the conformance server suite exercises (HTTP-only there): content types,
progress, errors, capability checks, every MRTR fixture with sealed ``requestState``,
resources, templates, prompts and completion.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto_sync import Client, InputRequiredError, McpError

SERVER = str(Path(__file__).resolve().parent.parent / "examples" / "everything_server.py")
ALL = t.ClientCapabilities(
    elicitation=t.ClientCapabilitiesElicitation(),
    sampling=t.ClientCapabilitiesSampling(),
    roots=t.ClientCapabilitiesRoots(),
)


def answers(event: m.InputRequired) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, request in event.input_requests.items():
        if isinstance(request, t.ElicitRequest):
            out[key] = t.ElicitResult(action="accept", content={"name": "Ada", "context": "c"})
        elif isinstance(request, t.CreateMessageRequest):
            out[key] = t.CreateMessageResult(
                role="assistant", content=t.TextContent(text="Paris"), model="m"
            )
        else:
            out[key] = t.ListRootsResult(roots=[t.Root(uri="file:///tmp")])
    return out


@pytest.fixture(params=["sync", "asyncio", "trio"], scope="module")
def client(request: pytest.FixtureRequest) -> Iterator[Client]:
    command = [sys.executable, SERVER, "--stdio", "--adapter", request.param]
    with Client.stdio(command, capabilities=ALL, timeout=30, stderr=subprocess.DEVNULL) as c:
        yield c


def text_of(result: Any) -> str:
    return result.content[0].text  # type: ignore[no-any-return]


def test_discover_and_lists(client: Client) -> None:
    found = client.discover()
    assert found.capabilities.prompts is not None and found.instructions
    names = {tool.name for tool in client.list_tools()}
    assert {"test_simple_text", "json_schema_2020_12_tool", "test_x_mcp_header"} <= names
    resources = client.request("resources/list", t.PaginatedRequestParams())
    assert all(r.uri and r.name for r in resources.resources)
    prompts = client.request("prompts/list", t.PaginatedRequestParams())
    assert "test_prompt_with_arguments" in {p.name for p in prompts.prompts}


def test_content_and_errors(client: Client) -> None:
    assert "simple text" in text_of(client.call_tool("test_simple_text"))
    image = client.call_tool("test_image_content").content[0]
    assert (image.type, image.mime_type) == ("image", "image/png")
    assert client.call_tool("test_audio_content").content[0].mime_type == "audio/wav"
    assert len(client.call_tool("test_multiple_content_types").content) == 3
    assert client.call_tool("test_error_handling").is_error is True
    with pytest.raises(McpError) as err:
        client.call_tool("no_such_tool")
    assert err.value.code == m.INVALID_PARAMS


def test_progress_and_missing_capability(client: Client) -> None:
    seen: list[float] = []
    client.call_tool("test_tool_with_progress", on_progress=lambda p: seen.append(p.progress))
    assert seen == [0, 50, 100]
    assert "available" in text_of(client.call_tool("test_missing_capability"))


@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        ("test_input_required_result_elicitation", "Hello, Ada!"),
        ("test_input_required_result_sampling", "Sampling answered"),
        ("test_input_required_result_list_roots", "Roots: 1"),
        ("test_input_required_result_request_state", "state-ok"),
        ("test_input_required_result_multiple_inputs", "All inputs received"),
        ("test_input_required_result_multi_round", "Multi-round complete"),
        ("test_input_required_result_capabilities", "Asked only what was declared"),
    ],
)
def test_mrtr_fixtures(client: Client, tool: str, expected: str) -> None:
    assert expected in text_of(client.call_tool(tool, on_input=answers))


def test_tampered_state_is_refused(client: Client) -> None:
    with pytest.raises(InputRequiredError) as asked:
        client.call_tool("test_input_required_result_tampered_state")
    event = asked.value.event
    state = event.result.request_state
    assert state is not None
    forged = state[:-2] + ("AA" if not state.endswith("AA") else "BB")
    tampered = m.InputRequired(
        id=event.id,
        result=t.InputRequiredResult(
            input_requests=event.result.input_requests, request_state=forged
        ),
        request=event.request,
        round=event.round,
    )
    retry = tampered.retry(id=client.conn.next_id(), input_responses=answers(event))
    client._write(client.conn.send(retry))
    ending = client._await_end(retry.id, None, None)
    assert isinstance(ending, m.ErrorResponse) and ending.code == m.INVALID_PARAMS  # edge 52


def test_resources_prompts_completion(client: Client) -> None:
    read = client.request(
        "resources/read", t.ReadResourceRequestParams(uri="test://template/7/data")
    )
    assert '"id":"7"' in read.contents[0].text
    with pytest.raises(McpError) as err:
        client.request("resources/read", t.ReadResourceRequestParams(uri="test://nope"))
    assert err.value.code == m.INVALID_PARAMS and err.value.data == {"uri": "test://nope"}
    prompt = client.request(
        "prompts/get",
        t.GetPromptRequestParams(
            name="test_prompt_with_arguments", arguments={"arg1": "a", "arg2": "b"}
        ),
    )
    assert "arg1='a'" in prompt.messages[0].content.text
    asked = client.request(
        "prompts/get",
        t.GetPromptRequestParams(name="test_input_required_result_prompt"),
        on_input=answers,
    )
    assert asked.messages[0].content.text == "Context: c"
    ref = t.PromptReference(name="test_prompt_with_arguments")
    done = client.request(
        "completion/complete",
        t.CompleteRequestParams(
            ref=ref, argument=t.CompleteRequestParamsArgument(name="arg1", value="p")
        ),
    )
    assert done.completion.values


def test_err09_missing_capability_is_32021() -> None:
    command = [sys.executable, SERVER, "--stdio", "--adapter", "sync"]
    with Client.stdio(command, timeout=30) as bare, pytest.raises(McpError) as err:
        bare.call_tool("test_missing_capability")
    assert err.value.code == m.MISSING_REQUIRED_CLIENT_CAPABILITY
    assert err.value.data == {"requiredCapabilities": {"sampling": {}}}
