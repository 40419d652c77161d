"""A legacy (``initialize``-era) stdio server: the official Python SDK's last 1.x line.

    uv run --isolated --no-project --with mcp==1.30.0 python tests/peers/legacy_sdk_server.py
    ... python tests/peers/legacy_sdk_server.py --http PORT     (Streamable HTTP, /mcp)

It runs in its own environment (``tests/test_interop_legacy_client.py`` makes it), so it
imports nothing of this project.  Tools: ``echo`` (text, with progress and an info log),
``ask`` (an ``elicitation/create`` request to the client), ``roots`` (a ``roots/list``
request to the client).
"""

from __future__ import annotations

from mcp.server.fastmcp import Context, FastMCP
from pydantic import BaseModel

app = FastMCP("legacy-sdk-peer")


class Name(BaseModel):
    name: str


@app.tool()
async def echo(text: str, ctx: Context) -> str:
    """Repeat the text."""
    await ctx.report_progress(1, 1)
    await ctx.info(f"echoing {text}")
    return text


@app.tool()
async def ask(ctx: Context) -> str:
    """Ask the user for a name."""
    answer = await ctx.elicit(message="Your name?", schema=Name)
    if answer.action != "accept" or answer.data is None:
        return f"no name ({answer.action})"
    return f"hello {answer.data.name}"


@app.tool()
async def roots(ctx: Context) -> str:
    """List the client's roots."""
    listed = await ctx.session.list_roots()
    return ", ".join(str(root.uri) for root in listed.roots) or "no roots"


if __name__ == "__main__":
    import sys

    if len(sys.argv) > 2 and sys.argv[1] == "--http":  # --http PORT: Streamable HTTP
        app.settings.host, app.settings.port = "127.0.0.1", int(sys.argv[2])
        app.run("streamable-http")
    else:
        app.run("stdio")
