"""Tools the official conformance suite calls at 2025-11-25 (issue 15), in both eras.

Written once against 2026-07-28: each asks through an ``input_required`` round, which a
legacy session turns into a real ``sampling/createMessage`` or ``elicitation/create``
request to the client (``docs/dual-era.md``).  ``legacy_fixture`` gives ``None`` for a
name that is not one of them.
"""

from __future__ import annotations

import inspect
from typing import Any

from mcp_proto import types as t

__all__ = ["TOOLS_2025", "legacy_fixture"]


def _tool(name: str, description: str, properties: dict[str, Any] | None = None) -> Any:
    schema: dict[str, Any] = {"type": "object"}
    if properties:
        schema["properties"] = properties
    return {"name": name, "description": description, "inputSchema": schema}


TOOLS_2025 = [
    _tool("test_tool_with_logging", "Sends three log messages while it runs"),
    _tool("test_sampling", "Asks the client's model", {"prompt": {"type": "string"}}),
    _tool("test_elicitation", "Asks the user", {"message": {"type": "string"}}),
    _tool("test_elicitation_sep1034_defaults", "Asks with default values (SEP-1034)"),
    _tool("test_elicitation_sep1330_enums", "Asks with every enum schema (SEP-1330)"),
    _tool("test_reconnection", "Closes its event stream mid-call; answers on the resume"),
]

_DEFAULTS = {
    "name": {"type": "string", "default": "John Doe"},
    "age": {"type": "integer", "default": 30},
    "score": {"type": "number", "default": 95.5},
    "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
    "verified": {"type": "boolean", "default": True},
}
_CHOICES = [{"const": "a", "title": "Option A"}, {"const": "b", "title": "Option B"}]
_ENUMS = {
    "untitledSingle": {"type": "string", "enum": ["a", "b", "c"]},
    "titledSingle": {"type": "string", "oneOf": _CHOICES},
    "legacyEnum": {"type": "string", "enum": ["a", "b"], "enumNames": ["Option A", "Option B"]},
    "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}},
    "titledMulti": {"type": "array", "items": {"anyOf": _CHOICES}},
}


def _text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def _form(message: str, properties: dict[str, Any]) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties}
    return {
        "method": "elicitation/create",
        "params": {"message": message, "requestedSchema": schema},
    }


async def legacy_fixture(ctx: Any, params: t.CallToolRequestParams) -> Any:
    """The answer of one of :data:`TOOLS_2025`, or ``None``."""
    name, args = params.name, params.arguments or {}
    got = (params.input_responses or {}).get("answer")
    if name == "test_tool_with_logging":
        for step in ("starting", "working", "done"):
            sent = ctx.log("info", {"message": f"test_tool_with_logging {step}"})
            if inspect.isawaitable(sent):
                await sent
        return _text("Logged three messages")
    if name == "test_reconnection":  # SEP-1699: the client resumes with Last-Event-ID
        closed = ctx.close_stream()
        if inspect.isawaitable(closed):
            closed = await closed
        return _text("Answered on the resumed stream" if closed else "No stream to close")
    if name == "test_sampling":
        if not isinstance(got, t.CreateMessageResult):
            prompt = str(args.get("prompt", "Hello"))
            message = {"role": "user", "content": {"type": "text", "text": prompt}}
            ask = {"method": "sampling/createMessage",
                   "params": {"messages": [message], "maxTokens": 100}}  # fmt: skip
            return ctx.input_required({"answer": ask})
        content = got.content
        return _text(f"LLM response: {getattr(content, 'text', '')}")
    forms: dict[str, tuple[str, dict[str, Any]]] = {
        "test_elicitation": (str(args.get("message", "Please provide your information")),
                             {"username": {"type": "string"}, "email": {"type": "string"}}),
        "test_elicitation_sep1034_defaults": ("Defaults, please", _DEFAULTS),
        "test_elicitation_sep1330_enums": ("Choose, please", _ENUMS),
    }  # fmt: skip
    if name not in forms:
        return None
    if not isinstance(got, t.ElicitResult):
        return ctx.input_required({"answer": _form(*forms[name])})
    return _text(f"User {got.action}: {got.content or {}}")
