"""Server-side errors are visible (issue 17): a handler that raises is logged on
``mcp_proto.server`` at ERROR with its traceback, on every adapter, while the client gets
only the spec's answer (``isError`` for a tool, ``-32603`` with no detail otherwise,
LOG-08); an ``McpError`` a handler chose is logged at DEBUG; nothing is printed."""

from __future__ import annotations

import logging
from typing import Any

import pytest

import mcp_proto as m
import mcp_proto_sync

from .test_adapter_http import running


class Boom(RuntimeError):
    pass


def handlers(adapter: str) -> dict[str, Any]:
    def boom(ctx: Any, params: Any) -> Any:
        raise Boom("the database is down")

    def refuse(ctx: Any, params: Any) -> Any:
        raise m.McpError(-32602, "no such prompt")

    if adapter == "sync":
        return {"tools/call": boom, "resources/list": boom, "prompts/get": refuse}

    async def aboom(ctx: Any, params: Any) -> Any:
        return boom(ctx, params)

    async def arefuse(ctx: Any, params: Any) -> Any:
        return refuse(ctx, params)

    return {"tools/call": aboom, "resources/list": aboom, "prompts/get": arefuse}


@pytest.mark.parametrize("adapter", ["sync", "asyncio", "trio"])
def test_a_handler_that_raises_is_logged_with_its_traceback(
    adapter: str, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG, logger="mcp_proto.server")
    with running(adapter, handlers=handlers(adapter)) as (host, port):
        url = f"http://{host}:{port}/mcp"
        with mcp_proto_sync.Client.http(url, era="modern", timeout=10) as client:
            tool = client.call_tool("anything")
            with pytest.raises(m.McpError) as internal:
                client.request("resources/list", {})
            with pytest.raises(m.McpError) as chosen:
                client.request("prompts/get", {"name": "x"})
    assert tool.is_error and tool.content[0].text == "Boom: the database is down"
    assert (internal.value.code, internal.value.message) == (-32603, "Internal error")
    assert chosen.value.code == -32602
    records = [r for r in caplog.records if r.name == "mcp_proto.server"]
    raised = [r for r in records if r.levelno == logging.ERROR and r.exc_info]
    assert sorted(r.getMessage().split(" (id")[0] for r in raised) == [
        "handler for resources/list", "handler for tools/call"]  # fmt: skip
    assert all(r.exc_info and r.exc_info[0] is Boom for r in raised)
    assert any(r.levelno == logging.DEBUG and "no such prompt" in r.getMessage()
               for r in records)  # fmt: skip
    assert capsys.readouterr().out == ""  # logged, never printed
