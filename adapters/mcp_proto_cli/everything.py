"""The "everything" server: every fixture the official conformance server suite expects.

    python -m mcp_proto_cli.everything --stdio|--http HOST:PORT [--adapter trio|asyncio|sync]
    mcp-proto serve-example --stdio [--adapter ...]     # the same

Tools, resources, a template, prompts, completion, listen (the core's default
acknowledgement), change notifications, and the MRTR fixtures with HMAC-sealed
``requestState`` (``mcp_proto.RequestStateSealer``).  The handlers are written
once, as coroutines that await only the context's own methods; the blocking
adapter runs them to completion without an event loop (``run_sync``), so all
three adapters behave the same over stdio.  ``--http`` serves Streamable HTTP at
``/mcp`` on any of them; ``tools/conformance.sh ADAPTER`` runs the official
conformance server suite against it.
"""

from __future__ import annotations

import argparse
import base64
import functools
import inspect
import secrets
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from mcp_proto import RequestStateError, RequestStateSealer, require_client_capabilities, structure
from mcp_proto import types as t
from mcp_proto_runtime import McpError, unknown_tool

from ._fixtures_2025 import TOOLS_2025, legacy_fixture

# A 1x1 PNG and a tiny silent WAV, base64.
PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
    )
).decode()
WAV = base64.b64encode(
    b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00"
    b"\x80>\x00\x00\x02\x00\x10\x00data\x00\x00\x00\x00"
).decode()
SEALER = RequestStateSealer(keys=secrets.token_bytes(32), ttl=300)

SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            "required": ["street", "city"],
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


def tool(name: str, description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "description": description, "inputSchema": schema or {"type": "object"}}


TOOLS = [
    tool("test_simple_text", "Returns simple text"),
    tool("test_image_content", "Returns an image"),
    tool("test_audio_content", "Returns audio"),
    tool("test_embedded_resource", "Returns an embedded resource"),
    tool("test_multiple_content_types", "Returns text, an image and a resource"),
    tool("test_error_handling", "Always fails as a tool execution error"),
    tool("test_tool_with_progress", "Reports progress three times"),
    tool("json_schema_2020_12_tool", "Takes a JSON Schema 2020-12 input", SCHEMA_2020_12),
    tool("test_missing_capability", "Needs the client's sampling capability"),
    tool("test_streaming_elicitation", "Asks for input through MRTR, never a request"),
    tool("test_logging_tool", "Logs, if the request asked for log messages"),
    tool("test_trigger_tool_change", "Changes the tool list and notifies listeners"),
    tool("test_trigger_prompt_change", "Changes the prompt list and notifies listeners"),
    tool("test_trigger_resource_update", "Changes test://watched-resource, tells subscribers"),
    tool(
        "test_x_mcp_header",
        "Takes a region mirrored into the Mcp-Param-Region header",
        {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}},
    ),
    tool("test_input_required_result_elicitation", "Asks for a name"),
    tool("test_input_required_result_sampling", "Asks the client's model"),
    tool("test_input_required_result_list_roots", "Asks for the client's roots"),
    tool("test_input_required_result_request_state", "Round-trips sealed state"),
    tool("test_input_required_result_multiple_inputs", "Asks three things at once"),
    tool("test_input_required_result_multi_round", "Two elicitation rounds"),
    tool("test_input_required_result_tampered_state", "Refuses a tampered state"),
    tool("test_input_required_result_capabilities", "Asks only what the client declared"),
]
TOOLS += TOOLS_2025
EXTRA_TOOLS: list[dict[str, Any]] = []
MAX_EXTRA = 16
CHANGES = threading.Lock()
EXTRA_PROMPTS: list[dict[str, Any]] = []
WATCHED = "test://watched-resource"
#: how many times test_trigger_resource_update changed the watched resource
WATCHED_CHANGES = [0]

NAME = {
    "method": "elicitation/create",
    "params": {
        "message": "What is your name?",
        "requestedSchema": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        },
    },
}
SAMPLE = {
    "method": "sampling/createMessage",
    "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Capital of France?"}}],
        "maxTokens": 50,
    },
}
ROOTS = {"method": "roots/list"}


def text(value: str, **extra: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], **extra}


async def sent(action: Awaitable[None] | None) -> None:
    """Await what the adapter's context returned (a coroutine, or ``None`` when blocking)."""
    if inspect.isawaitable(action):
        await action


def salient(params: t.CallToolRequestParams) -> dict[str, Any]:
    return {"name": params.name, "arguments": params.arguments or {}}


def seal(state: Any, params: t.CallToolRequestParams) -> str:
    return SEALER.seal(state, method="tools/call", params=salient(params), now=time.time())


def unseal(params: t.CallToolRequestParams) -> Any:
    """The verified state, or ``None`` on the first round; ``-32602`` if it fails (edge 52)."""
    if params.request_state is None:
        return None
    try:
        return SEALER.verify(
            params.request_state, method="tools/call", params=salient(params), now=time.time()
        )
    except RequestStateError as e:
        raise McpError(e.code, e.message) from None


def answer_of(params: t.CallToolRequestParams, key: str) -> Any:
    return (params.input_responses or {}).get(key)


async def call_tool(ctx: Any, params: t.CallToolRequestParams) -> Any:
    name = params.name
    caps = ctx.request.meta.client_capabilities
    if name == "test_simple_text":
        return text("This is a simple text response for testing.")
    if name == "test_image_content":
        return {"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]}
    if name == "test_audio_content":
        return {"content": [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]}
    resource = {"uri": "test://embedded-resource", "mimeType": "text/plain", "text": "Embedded"}
    if name == "test_embedded_resource":
        return {"content": [{"type": "resource", "resource": resource}]}
    if name == "test_multiple_content_types":
        mixed = {
            "uri": "test://mixed-content-resource",
            "mimeType": "application/json",
            "text": '{"test":"data","value":123}',
        }
        return {
            "content": [
                {"type": "text", "text": "Multiple content types test:"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
                {"type": "resource", "resource": mixed},
            ]
        }
    if name == "test_error_handling":
        return text("This tool intentionally returns an error for testing", isError=True)
    if name == "test_tool_with_progress":
        for step in (0, 50, 100):
            await sent(ctx.progress(step, total=100, message=f"step {step}"))
        return text("Progress test completed")
    if name == "json_schema_2020_12_tool":
        return text(f"Received: {params.arguments}")
    if name == "test_missing_capability":
        missing = require_client_capabilities(ctx.request.meta, {"sampling": {}})
        if missing is not None:  # -32021 with data.requiredCapabilities (META-10)
            raise McpError.from_error(missing)
        return text("sampling is available")
    if name == "test_logging_tool":
        await sent(ctx.log("info", {"message": "test_logging_tool ran"}))
        return text("Logged (if asked to)")
    if name in ("test_trigger_tool_change", "test_trigger_prompt_change"):
        kind = "tools" if name == "test_trigger_tool_change" else "prompts"
        target = EXTRA_TOOLS if kind == "tools" else EXTRA_PROMPTS
        with CHANGES:  # handlers may run on threads (the blocking adapter)
            if len(target) < MAX_EXTRA:  # any client may call this: the list stays bounded
                entry: dict[str, Any] = {"name": f"dynamic_{kind}_{len(target)}"}
                entry["description"] = "Added at run time"
                if kind == "tools":
                    entry["inputSchema"] = {"type": "object"}
                target.append(entry)
        await sent(ctx.notify_changed(f"notifications/{kind}/list_changed"))
        return text(f"{kind} list changed")
    if name == "test_trigger_resource_update":
        with CHANGES:
            WATCHED_CHANGES[0] += 1
        updated = t.ResourceUpdatedNotificationParams(uri=WATCHED)
        await sent(ctx.notify_changed("notifications/resources/updated", updated))
        return text(f"{WATCHED} changed")
    if name == "test_x_mcp_header":
        return text(f"region: {(params.arguments or {}).get('region')}")
    return await mrtr_tool(ctx, params, caps)


async def mrtr_tool(ctx: Any, params: t.CallToolRequestParams, caps: Any) -> Any:
    name = params.name
    if name in ("test_input_required_result_elicitation", "test_streaming_elicitation"):
        got = answer_of(params, "user_name")
        if not isinstance(got, t.ElicitResult):
            return ctx.input_required({"user_name": NAME})  # asked (again): MRTR-17
        return text(f"Hello, {(got.content or {}).get('name', 'stranger')}!")
    if name == "test_input_required_result_sampling":
        if not isinstance(answer_of(params, "capital_question"), t.CreateMessageResult):
            return ctx.input_required({"capital_question": SAMPLE})
        return text("Sampling answered")
    if name == "test_input_required_result_list_roots":
        got = answer_of(params, "client_roots")
        if not isinstance(got, t.ListRootsResult):
            return ctx.input_required({"client_roots": ROOTS})
        return text(f"Roots: {len(got.roots)}")
    if name in (
        "test_input_required_result_request_state",
        "test_input_required_result_tampered_state",
    ):
        state = unseal(params)
        if state is None:
            return ctx.input_required({"user_name": NAME}, seal({"step": 1}, params))
        return text(f"state-ok: step {state['step']}")
    if name == "test_input_required_result_multiple_inputs":
        wanted = {"user_name": NAME, "greeting": SAMPLE, "client_roots": ROOTS}
        state = unseal(params)
        missing = {k: v for k, v in wanted.items() if answer_of(params, k) is None}
        if state is None or missing:
            return ctx.input_required(missing or wanted, seal({"step": 1}, params))
        return text("All inputs received")
    if name == "test_input_required_result_multi_round":
        state = unseal(params)
        if state is None:
            return ctx.input_required({"step1": NAME}, seal({"step": 1}, params))
        if state["step"] == 1:
            return ctx.input_required({"step2": NAME}, seal({"step": 2}, params))
        return text("Multi-round complete")
    if name == "test_input_required_result_capabilities":
        ask = {}
        if caps.sampling is not None:
            ask["capital_question"] = SAMPLE
        if caps.elicitation is not None:
            ask["user_name"] = NAME
        if not ask or all(answer_of(params, k) is not None for k in ask):
            return text("Asked only what was declared")
        return ctx.input_required(ask)
    got = await legacy_fixture(ctx, params)
    if got is not None:
        return got
    raise unknown_tool(name)


async def list_tools(ctx: Any, params: Any) -> Any:
    return {"tools": TOOLS + EXTRA_TOOLS, "ttlMs": 0, "cacheScope": "public"}


RESOURCES = [
    {"uri": "test://static-text", "name": "static-text", "mimeType": "text/plain"},
    {"uri": "test://static-binary", "name": "static-binary", "mimeType": "image/png"},
    {"uri": "test://watched-resource", "name": "watched-resource", "mimeType": "text/plain"},
]
TEMPLATE = {
    "uriTemplate": "test://template/{id}/data",
    "name": "template",
    "mimeType": "application/json",
}


async def list_resources(ctx: Any, params: Any) -> Any:
    return {"resources": RESOURCES, "ttlMs": 0, "cacheScope": "public"}


async def list_templates(ctx: Any, params: Any) -> Any:
    return {"resourceTemplates": [TEMPLATE], "ttlMs": 0, "cacheScope": "public"}


async def read_resource(ctx: Any, params: t.ReadResourceRequestParams) -> Any:
    uri = params.uri
    body: dict[str, Any]
    if uri in ("test://static-text", "test://watched-resource"):
        body = {"uri": uri, "mimeType": "text/plain", "text": f"This is the content of {uri}"}
        if uri == WATCHED and WATCHED_CHANGES[0]:
            body["text"] += f" (changed {WATCHED_CHANGES[0]} times)"
    elif uri == "test://static-binary":
        body = {"uri": uri, "mimeType": "image/png", "blob": PNG}
    elif uri.startswith("test://template/") and uri.endswith("/data"):
        id = uri[len("test://template/") : -len("/data")]
        data = f'{{"id":"{id}","templateTest":true,"data":"Data for ID: {id}"}}'
        body = {"uri": uri, "mimeType": "application/json", "text": data}
    else:
        raise McpError(-32602, f"Resource not found: {uri}", {"uri": uri})
    return {"contents": [body], "ttlMs": 0, "cacheScope": "public"}


PROMPTS = [
    {"name": "test_simple_prompt", "description": "A prompt without arguments"},
    {
        "name": "test_prompt_with_arguments",
        "description": "A prompt with two arguments",
        "arguments": [{"name": "arg1", "required": True}, {"name": "arg2", "required": True}],
    },
    {
        "name": "test_prompt_with_embedded_resource",
        "description": "A prompt with a resource",
        "arguments": [{"name": "resourceUri", "required": True}],
    },
    {"name": "test_prompt_with_image", "description": "A prompt with an image"},
    {"name": "test_input_required_result_prompt", "description": "A prompt that asks first"},
]


async def list_prompts(ctx: Any, params: Any) -> Any:
    return {"prompts": PROMPTS + EXTRA_PROMPTS, "ttlMs": 0, "cacheScope": "public"}


def user(content: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": content}


async def get_prompt(ctx: Any, params: t.GetPromptRequestParams) -> Any:
    args = params.arguments or {}
    if params.name == "test_simple_prompt":
        messages = [user({"type": "text", "text": "This is a simple prompt for testing."})]
    elif params.name == "test_prompt_with_arguments":
        said = f"Prompt with arguments: arg1='{args.get('arg1')}', arg2='{args.get('arg2')}'"
        messages = [user({"type": "text", "text": said})]
    elif params.name == "test_prompt_with_embedded_resource":
        uri = args.get("resourceUri", "test://example")
        resource = {"uri": uri, "mimeType": "text/plain", "text": "Embedded resource content"}
        messages = [
            user({"type": "resource", "resource": resource}),
            user({"type": "text", "text": "Please process the embedded resource above."}),
        ]
    elif params.name == "test_prompt_with_image":
        messages = [
            user({"type": "image", "data": PNG, "mimeType": "image/png"}),
            user({"type": "text", "text": "Please analyze the image above."}),
        ]
    elif params.name == "test_input_required_result_prompt":
        got = (params.input_responses or {}).get("user_context")
        if not isinstance(got, t.ElicitResult):
            ask = {
                "method": "elicitation/create",
                "params": {
                    "message": "What context should the prompt use?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"context": {"type": "string"}},
                    },
                },
            }
            return ctx.input_required({"user_context": ask})
        context = (got.content or {}).get("context", "")
        messages = [user({"type": "text", "text": f"Context: {context}"})]
    else:
        raise McpError(-32602, f"Unknown prompt: {params.name}")
    return {"messages": messages}


async def complete(ctx: Any, params: Any) -> Any:
    return {"completion": {"values": ["python", "typescript"], "total": 2, "hasMore": False}}


HANDLERS: dict[str, Callable[..., Coroutine[Any, Any, Any]]] = {
    "tools/list": list_tools,
    "tools/call": call_tool,
    "resources/list": list_resources,
    "resources/templates/list": list_templates,
    "resources/read": read_resource,
    "prompts/list": list_prompts,
    "prompts/get": get_prompt,
    "completion/complete": complete,
}
CAPABILITIES = t.ServerCapabilities(
    tools=t.ServerCapabilitiesTools(list_changed=True),
    prompts=t.ServerCapabilitiesPrompts(list_changed=True),
    resources=t.ServerCapabilitiesResources(list_changed=True, subscribe=True),
    completions={},
    logging={},
)
OPTIONS: dict[str, Any] = {
    "capabilities": CAPABILITIES,
    "server_info": t.Implementation(name="mcp-proto-everything", version="0.1.0"),
    "instructions": "A server with every conformance fixture.",
}


def run_sync(handler: Callable[..., Coroutine[Any, Any, Any]]) -> Callable[..., Any]:
    """A blocking handler from a coroutine that never suspends (it awaits no real I/O)."""

    def blocking(ctx: Any, params: Any) -> Any:
        coro = handler(ctx, params)
        try:
            coro.send(None)
        except StopIteration as done:
            return done.value
        coro.close()
        raise RuntimeError(f"{handler.__name__} awaited real I/O; it cannot run blocking")

    return blocking


def serve_stdio(adapter: str) -> None:
    if adapter == "sync":
        import mcp_proto_sync

        handlers = {method: run_sync(fn) for method, fn in HANDLERS.items()}
        mcp_proto_sync.Server(handlers, **OPTIONS).serve_stdio()
    elif adapter == "asyncio":
        import asyncio

        import mcp_proto_asyncio

        asyncio.run(mcp_proto_asyncio.Server(HANDLERS, **OPTIONS).serve_stdio())
    else:
        import trio

        import mcp_proto_trio

        trio.run(mcp_proto_trio.Server(HANDLERS, **OPTIONS).serve_stdio)


def tool_lookup(name: str) -> t.Tool | None:
    """The tool definitions by name, for checking ``Mcp-Param-*`` headers (HTTP)."""
    for found in (*TOOLS, *EXTRA_TOOLS):
        if found["name"] == name:
            return structure(found, t.Tool)
    return None


def _ready(at: tuple[str, int]) -> None:
    print(f"serving http://{at[0]}:{at[1]}/mcp", flush=True)


def serve_http(adapter: str, address: str) -> None:
    """Serve Streamable HTTP at ``http://HOST:PORT/mcp`` (port 0: any free port)."""
    host, _, port = address.rpartition(":")
    where = (host or "127.0.0.1", int(port))
    if adapter == "sync":
        import mcp_proto_sync

        handlers = {method: run_sync(fn) for method, fn in HANDLERS.items()}
        server = mcp_proto_sync.Server(handlers, **OPTIONS)
        server.serve_http(*where, ready=_ready, tools=tool_lookup)
    elif adapter == "asyncio":
        import asyncio

        import mcp_proto_asyncio

        server_a = mcp_proto_asyncio.Server(HANDLERS, **OPTIONS)
        asyncio.run(server_a.serve_http(*where, ready=_ready, tools=tool_lookup))
    else:
        import trio

        import mcp_proto_trio

        server_t = mcp_proto_trio.Server(HANDLERS, **OPTIONS)

        async def main() -> None:
            async with trio.open_nursery() as nursery:
                serve = functools.partial(server_t.serve_http, *where, tools=tool_lookup)
                _ready(await nursery.start(serve))

        trio.run(main)


def host_port(text: str) -> str:
    """``--http``'s value, ``HOST:PORT`` or ``:PORT`` (``argparse`` reports a bad one as a
    usage error, in one line)."""
    _, sep, port = text.rpartition(":")
    if not (sep and port.isascii() and port.isdigit() and int(port) <= 65535):
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT (a port from 0 to 65535)")
    return text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--stdio", action="store_true", help="serve stdin/stdout")
    where.add_argument(
        "--http", metavar="HOST:PORT", type=host_port, help="serve Streamable HTTP at /mcp"
    )
    parser.add_argument("--adapter", choices=("trio", "asyncio", "sync"), default="sync")


def run(args: argparse.Namespace) -> None:
    if args.http:
        serve_http(args.adapter, args.http)
    else:
        serve_stdio(args.adapter)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    run(parser.parse_args(argv))


if __name__ == "__main__":
    main()
