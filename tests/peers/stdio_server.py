"""A stdio server for the adapter tests, on the blocking adapter, with hostile modes.

    python tests/peers/stdio_server.py [MODE]

MODE: ``normal`` (default); ``junk`` (prints a non-MCP line to stdout first); ``crlf``
(ends every line with CRLF); ``crash`` (exits mid-response to ``tools/call``);
``silent`` (reads but never answers); ``legacy`` (an ``initialize``-era server before
``initialize``: every request gets ``-32601``, as ``server/discover`` does from one);
``legacy-asks`` (a scripted ``initialize``-era server: it answers ``initialize``, and during
``tools/call`` asks the client a ``ping``, an unknown method and an ``elicitation/create``,
then answers the call with what came back); ``stubborn`` (ignores the end of stdin and
SIGTERM, so only SIGKILL ends it).

Tools: ``echo`` (text, with progress), ``sleep`` (seconds; notes cancellation on
stderr), ``big`` (a result of ``size`` bytes), ``ask`` (an MRTR elicitation round).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from typing import Any

from mcp_proto import types as t
from mcp_proto_sync import Context, McpError, Server

TOOLS = [
    t.Tool(name=name, input_schema={"type": "object"}) for name in ("echo", "sleep", "big", "ask")
]


def list_tools(ctx: Context, params: t.PaginatedRequestParams) -> t.ListToolsResult:
    return t.ListToolsResult(tools=TOOLS)


def call_tool(ctx: Context, params: t.CallToolRequestParams) -> Any:
    args = params.arguments or {}
    if params.name == "echo":
        ctx.progress(1, total=1)
        return t.CallToolResult(content=[t.TextContent(text=str(args.get("text", "")))])
    if params.name == "sleep":
        if ctx.wait_cancelled(float(args.get("seconds", 1))):
            print(f"cancelled {ctx.request.id}", file=sys.stderr, flush=True)
        return t.CallToolResult(content=[t.TextContent(text="slept")])
    if params.name == "bad_result":  # a result that cannot be encoded (a set)
        return t.CallToolResult(content=[], structured_content={"s": {1, 2}})
    if params.name == "big":
        return t.CallToolResult(content=[t.TextContent(text="x" * int(args["size"]))])
    if params.name == "ask":
        answers = params.input_responses or {}
        if "name" not in answers:  # MRTR-17: ask (again) for what is missing
            form = t.ElicitRequestFormParams(
                message="Your name?",
                requested_schema={"type": "object", "properties": {"name": {"type": "string"}}},
            )
            return ctx.input_required({"name": t.ElicitRequest(params=form)}, request_state="s1")
        content = answers["name"].content or {}
        return t.CallToolResult(content=[t.TextContent(text=f"hello {content.get('name')}")])
    raise McpError(-32602, f"Unknown tool: {params.name}")


def legacy_asks(out: Any) -> None:
    """The ``legacy-asks`` mode: plain JSON lines, no library."""

    def send(message: dict[str, Any]) -> None:
        out.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        out.flush()

    lines = iter(sys.stdin.buffer)
    for line in lines:
        message = json.loads(line)
        method, id = message.get("method"), message.get("id")
        if id is None or method is None:
            continue  # notifications (initialized, cancelled), stray answers
        if method == "initialize":
            info = {"name": "legacy-asks", "version": "1"}
            send(
                {
                    "id": id,
                    "result": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {"tools": {}},
                        "serverInfo": info,
                    },
                }
            )
        elif method == "tools/call":
            form = {"message": "name?", "requestedSchema": {"type": "object"}}
            send({"id": "p1", "method": "ping"})
            send({"id": "x1", "method": "no/such"})
            send({"id": "e1", "method": "elicitation/create", "params": form})
            answers: dict[str, Any] = {}
            while len(answers) < 3:
                got = json.loads(next(lines))
                if "method" not in got and got.get("id") in ("p1", "x1", "e1"):
                    answers[got["id"]] = got
            seen = {k: "result" if "result" in v else "error" for k, v in sorted(answers.items())}
            content = answers["e1"].get("result", {}).get("content")
            text = json.dumps({"answers": seen, "content": content}, sort_keys=True)
            send({"id": id, "result": {"content": [{"type": "text", "text": text}]}})
        else:
            send({"id": id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


def main(mode: str) -> None:
    caps = t.ServerCapabilities(tools=t.ServerCapabilitiesTools(list_changed=True), logging={})
    grace = float(os.environ.get("PEER_SHUTDOWN_GRACE", "5"))
    server = Server(
        {"tools/call": call_tool, "tools/list": list_tools},
        capabilities=caps,
        shutdown_grace=grace,
        max_in_flight=int(os.environ.get("PEER_MAX_IN_FLIGHT", "1024")),
    )
    out = sys.stdout.buffer
    if mode == "junk":
        out.write(b"Starting up... this line is not MCP\n")
        out.flush()
    if mode == "silent":
        sys.stdin.buffer.read()
        return
    if mode == "legacy":
        for line in sys.stdin.buffer:
            message = json.loads(line)
            if "id" in message and "method" in message:
                error = {"code": -32601, "message": f"Method not found: {message['method']}"}
                reply = {"jsonrpc": "2.0", "id": message["id"], "error": error}
                out.write(json.dumps(reply).encode() + b"\n")
                out.flush()
        return
    if mode == "legacy-asks":
        legacy_asks(out)
        return
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("ready", file=sys.stderr, flush=True)
        sys.stdin.buffer.read()
        time.sleep(60)
        return

    class Out:
        def write(self, data: bytes) -> int:
            if mode == "crash" and b'"result"' in data:
                out.write(data[: len(data) // 2])
                out.flush()
                os._exit(3)
            if mode == "crlf":
                data = data.replace(b"\n", b"\r\n")
            return out.write(data)

        def flush(self) -> None:
            out.flush()

    server.serve(sys.stdin.buffer, Out())  # type: ignore[arg-type]


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "normal")
