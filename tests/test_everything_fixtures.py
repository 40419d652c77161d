"""The everything server's 2025-11-25 fixture tools (issue 15), in both eras, in-process.

The official conformance suite calls them at 2025-11-25 (``tools/conformance.sh``, not
part of pytest); here each adapter's HTTP client calls them on our blocking everything
server, in a legacy session (the server's ``sampling/createMessage`` and
``elicitation/create`` requests, answered by ``on_input``; a stream closed mid-call and
resumed) and as modern MRTR rounds, so that one callback answers both eras.
"""

from __future__ import annotations

from typing import Any

import pytest

import mcp_proto as m
from mcp_proto import types as t

from .test_interop_legacy_client import drive

CAPS = t.ClientCapabilities(
    elicitation=t.ClientCapabilitiesElicitation(), sampling=t.ClientCapabilitiesSampling()
)


@pytest.fixture(scope="module")
def url(everything_url: str) -> str:
    return everything_url


def answer(event: m.InputRequired) -> dict[str, Any]:
    """The model says "Paris"; the user accepts each form with its defaults (or a name)."""
    out: dict[str, Any] = {}
    for key, request in event.input_requests.items():
        if isinstance(request, t.CreateMessageRequest):
            text = t.TextContent(text="Paris")
            out[key] = t.CreateMessageResult(role="assistant", content=text, model="m")
        elif isinstance(request, t.ElicitRequest):
            schema = request.params.requested_schema or {}  # type: ignore[union-attr]
            content = {name: field.get("default", "Ada")
                       for name, field in schema.get("properties", {}).items()
                       if "default" in field or field.get("type") == "string"}  # fmt: skip
            out[key] = t.ElicitResult(action="accept", content=content)
    return out


async def fixtures(client: Any, call: Any) -> dict[str, str]:
    seen: dict[str, str] = {"era": (await call(client.connect)) and client.era}
    for name in ("test_tool_with_logging", "test_sampling", "test_elicitation",
                 "test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums",
                 "test_reconnection"):  # fmt: skip
        result = await call(client.call_tool, name, on_input=answer)
        seen[name] = result.content[0].text
    return seen


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
def test_the_2025_fixture_tools_answer_in_both_eras(adapter: str, era: str, url: str) -> None:
    seen = drive(adapter, url, fixtures, era=era, capabilities=CAPS, timeout=10)
    assert seen["era"] == era
    assert seen["test_tool_with_logging"] == "Logged three messages"
    assert seen["test_sampling"] == "LLM response: Paris"
    assert seen["test_elicitation"].startswith("User accept: {")
    assert "'name': 'John Doe'" in seen["test_elicitation_sep1034_defaults"]
    assert "'age': 30" in seen["test_elicitation_sep1034_defaults"]
    assert seen["test_elicitation_sep1330_enums"].startswith("User accept")
    # a legacy session's stream is closed and resumed; a modern one has no stream to close
    closed = "Answered on the resumed stream" if era == "legacy" else "No stream to close"
    assert seen["test_reconnection"] == closed
