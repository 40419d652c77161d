"""Values users hand in are checked when they are written (issue 17, ``docs/model.md``):
a required field missing or of the wrong type raises ``EncodeError`` naming the field and
what it must be, and nothing is written: the request can still be answered."""

from __future__ import annotations

import re
from typing import Any

import orjson
import pytest

import mcp_proto as m
from mcp_proto import types as t

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}  # fmt: skip


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (t.TextContent(text=3), "TextContent.text (text) must be a string, not 3"),
        (t.TextContent(text=None), "TextContent.text (text) must be a string, not None"),
        (t.Tool(name=None, input_schema={}), "Tool.name (name) must be a string, not None"),
        (t.Tool(name="x", input_schema="x"), "Tool.input_schema (inputSchema) must be an object"),
        (t.CallToolResult(content="hi"), "CallToolResult.content (content) must be an array"),
        (t.CallToolResult(content=[3]), "a int where the model wants TextContent or Image"),
        (t.ImageContent(data=b"x", mime_type="image/png"), "ImageContent.data (data) must be a"),
    ],
)
def test_a_wrong_value_is_an_encode_error_naming_the_field(value: Any, says: str) -> None:
    with pytest.raises(m.EncodeError, match="^" + re.escape(says)):
        m.encode_message(value)
    with pytest.raises(m.EncodeError):
        m.unstructure(value)


@pytest.mark.parametrize(
    "value",
    [t.Tool(name="x", input_schema={}, annotations="y"),
     t.CallToolResult(content=[], structured_content={}, meta=t.ToolAnnotations())],
)  # fmt: skip
def test_an_optional_field_of_the_wrong_type_is_an_encode_error_too(value: Any) -> None:
    """Optional fields are not checked one by one (writing stays cheap), but what the
    writer trips on is still the documented error, never a stray ``AttributeError``."""
    with pytest.raises(m.EncodeError):
        m.unstructure(value)
    with pytest.raises(m.EncodeError):
        m.encode_message(value)


def test_plain_json_where_the_model_takes_it_still_goes_through() -> None:
    result = t.CallToolResult(content=[{"type": "text", "text": "ok"}], structured_content={})
    assert orjson.loads(m.encode_message(result))["content"] == [{"type": "text", "text": "ok"}]
    assert m.encode_message(t.TextContent(text="x")) == b'{"text":"x","type":"text"}'


def test_nothing_is_written_and_the_request_can_still_be_answered() -> None:
    conn = m.ServerConnection(capabilities=t.ServerCapabilities(tools=t.ServerCapabilitiesTools()))
    request = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
               "params": {"name": "x", "_meta": META}}  # fmt: skip
    conn.receive_data(orjson.dumps(request) + b"\n")
    assert isinstance(conn.next_event(), m.Request)
    bad = t.CallToolResult(content=[t.TextContent(text=3)])
    with pytest.raises(m.EncodeError, match="must be a string, not 3"):
        conn.send(m.Result(id=7, result=bad))
    assert conn.in_flight() == (7,)
    good = conn.send(m.Result(id=7, result=t.CallToolResult(content=[t.TextContent(text="3")])))
    assert orjson.loads(good)["result"]["content"] == [{"type": "text", "text": "3"}]
