"""A legacy (``initialize``-era) client: the official Python SDK's last 1.x line.

    uv run --isolated --no-project --with mcp==1.30.0 \
        python tests/peers/legacy_sdk_client.py CMD...
    ... python tests/peers/legacy_sdk_client.py --http URL

It starts ``CMD`` as a stdio server (or connects to the Streamable HTTP endpoint
``URL``), talks to it the 2025-11-25 way, and prints one JSON object of what it saw
(``tests/test_interop_legacy.py`` reads it).  It runs in an
environment of its own: the project's environment has the modern SDK.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import anyio
from mcp import ClientSession, McpError, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client
from pydantic import AnyUrl


async def main(argv: list[str]) -> dict[str, Any]:
    with anyio.fail_after(60):
        return await session_report(argv)


@contextlib.asynccontextmanager
async def streams(argv: list[str]) -> AsyncIterator[tuple[Any, Any]]:
    if argv[0] == "--http":
        async with streamablehttp_client(argv[1]) as (read, write, _):
            yield read, write
    else:
        server = StdioServerParameters(command=argv[0], args=argv[1:])
        async with stdio_client(server) as (read, write):
            yield read, write


async def session_report(argv: list[str]) -> dict[str, Any]:
    report: dict[str, Any] = {"logs": [], "updated": [], "progress": []}
    cancel: dict[str, Any] = {}  # the id of the call the elicitation callback cancels

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        report["logs"].append(params.level)

    async def on_elicit(context: Any, params: Any) -> types.ElicitResult:
        report["elicit_message"] = params.message
        if "id" in cancel:  # the client changed its mind: it cancels the call instead
            note = types.CancelledNotification(
                params=types.CancelledNotificationParams(requestId=cancel["id"], reason="no")
            )
            await cancel["session"].send_notification(types.ClientNotification(note))
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def on_sample(context: Any, params: Any) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="Paris"), model="m"
        )

    async def on_message(message: Any) -> None:
        root = getattr(message, "root", None)
        if isinstance(root, types.ResourceUpdatedNotification):
            report["updated"].append(str(root.params.uri))

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        report["progress"].append(progress)

    async with (
        streams(argv) as (read, write),
        ClientSession(
            read,
            write,
            logging_callback=on_log,
            elicitation_callback=on_elicit,
            sampling_callback=on_sample,
            message_handler=on_message,
        ) as session,
    ):
        init = await session.initialize()
        report["version"] = init.protocolVersion
        report["server"] = init.serverInfo.name
        report["capabilities"] = sorted(init.capabilities.model_dump(exclude_none=True))
        tools = await session.list_tools()
        report["tools"] = len(tools.tools)
        await session.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
        elicited = await session.call_tool("test_input_required_result_elicitation", {})
        report["elicited"] = elicited.content[0].text  # type: ignore[union-attr]
        sampled = await session.call_tool("test_input_required_result_sampling", {})
        report["sampled"] = sampled.content[0].text  # type: ignore[union-attr]
        # cancellation of a call waiting for input: no answer comes for it, the session goes on
        cancel.update(id=session._request_id, session=session)  # the next request's id
        try:
            await session.call_tool(
                "test_input_required_result_elicitation",
                {},
                read_timeout_seconds=timedelta(seconds=1.5),
            )
            report["cancelled"] = "answered"
        except McpError as e:
            report["cancelled"] = "timed out" if "Timed out" in str(e) else str(e)
        cancel.clear()
        await session.set_logging_level("info")
        await session.call_tool("test_logging_tool", {})
        await session.send_ping()
        uri = AnyUrl("test://watched-resource")
        await session.subscribe_resource(uri)
        await session.call_tool("test_trigger_resource_update", {})
        await session.unsubscribe_resource(uri)
        await session.call_tool("test_trigger_resource_update", {})
        await session.send_ping()  # the second update, had it been sent, is in by now
        read_back = await session.read_resource(uri)
        report["read"] = read_back.contents[0].uri.unicode_string()
        # SEP-1699: over HTTP the server closes the call's stream, the SDK resumes it
        reconnected = await session.call_tool("test_reconnection", {})
        report["reconnected"] = reconnected.content[0].text  # type: ignore[union-attr]
        result = await session.call_tool("test_simple_text", {})
        report["result_keys"] = sorted(result.model_dump(exclude_none=True, by_alias=True))
    return report


if __name__ == "__main__":
    print(json.dumps(anyio.run(main, sys.argv[1:])), flush=True)
