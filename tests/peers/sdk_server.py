"""A stdio server built on the official SDK (``mcp`` 2.3.0), for the interop tests.

    python tests/peers/sdk_server.py

Tools: ``echo`` (text, with progress), ``ask`` (an MRTR elicitation round), ``sleep``
(seconds; notes cancellation on stderr), ``touch`` (sends ``notifications/tools/list_changed``).
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

app = MCPServer("sdk-peer")


@app.tool()
async def echo(text: str, ctx: Context) -> str:
    """Repeat the text."""
    await ctx.report_progress(1, 1)
    return text


@app.tool()
async def ask(ctx: Context) -> Any:
    """Ask the user for a name (one MRTR round)."""
    answers = ctx.input_responses or {}
    if "name" in answers:
        answer: Any = answers["name"]
        content = getattr(answer, "content", None) or {}
        return f"hello {content.get('name')}"
    form = ElicitRequestFormParams(
        message="Your name?",
        requested_schema={"type": "object", "properties": {"name": {"type": "string"}}},
    )
    return InputRequiredResult(
        input_requests={"name": ElicitRequest(params=form)}, request_state="sdk-state"
    )


@app.tool()
async def sleep(seconds: float, ctx: Context) -> str:
    """Sleep; note a cancellation on stderr."""
    try:  # the progress too: the client may cancel as soon as it reads it
        await ctx.report_progress(0, message="started")
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        print("cancelled", file=sys.stderr, flush=True)
        raise
    return "slept"


@app.tool()
async def touch(ctx: Context) -> str:
    """Tell the listeners that the tool list changed."""
    await ctx.notify_tools_changed()
    return "touched"


if __name__ == "__main__":
    app.run("stdio")
