"""Serving an MCP endpoint from any ASGI server, with no framework and no h11.

The ASGI server has parsed the HTTP request already; this glue hands its
method, path and headers to :class:`mcp_proto.http.HTTPServer`, feeds the body
chunks as they arrive (so an oversized body is refused without being kept), and
writes the response parts back as ASGI messages.  The application is an async
generator per request: it yields ``Notification`` events (progress, log, a
listen's change notifications) and finally a ``Result`` or ``ErrorResponse``.

Cancellation (HTTP-SSE-5): when writing fails because the client went away
(ASGI servers raise ``OSError`` from ``send`` then), the exchange is told with
``client_closed()`` and the generator is closed, so the handler's ``finally``
runs and nothing more is sent.

Run it with any ASGI server, for instance ``uvicorn examples.asgi_app:app``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, MutableMapping
from typing import Any

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.http import HTTPServer, Reply, ResponseData, ResponsePart, ResponseStart

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Handler = Callable[[m.Request], AsyncGenerator[Any, None]]


def to_asgi(part: ResponsePart) -> dict[str, Any]:
    """One response part as the ASGI message that carries it."""
    if isinstance(part, ResponseStart):
        headers = [
            (name.encode("latin-1"), value.encode("latin-1")) for name, value in part.headers
        ]
        return {"type": "http.response.start", "status": part.status, "headers": headers}
    if isinstance(part, ResponseData):
        return {"type": "http.response.body", "body": part.data, "more_body": True}
    return {"type": "http.response.body", "body": b"", "more_body": False}


class MCPApp:
    """An ASGI application serving one MCP endpoint."""

    def __init__(self, server: HTTPServer, handler: Handler) -> None:
        self.server = server
        self.handler = handler

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                kind = (await receive())["type"]
                await send({"type": f"{kind}.complete"})
                if kind == "lifespan.shutdown":
                    return
        if scope["type"] != "http":
            return
        target = scope["path"]
        if scope.get("query_string"):
            target += "?" + scope["query_string"].decode("latin-1")
        ex = self.server.exchange(scope["method"], target, scope["headers"])
        while ex.wants_body:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            ex.receive_body(message.get("body", b""))
            if not message.get("more_body", False):
                ex.end_of_body()
        event = ex.next_event()
        if isinstance(event, Reply):
            for part in ex.send(event):
                await send(to_asgi(part))
            return
        assert isinstance(event, m.Request)  # the body is complete: a Reply or the Request
        await self._answer(ex, event, send)

    async def _answer(self, ex: Any, request: m.Request, send: Send) -> None:
        replies = self.handler(request)
        try:
            async for out in replies:
                try:
                    for part in ex.send(out):
                        await send(to_asgi(part))
                except OSError:
                    ex.client_closed()  # the same Cancelled the core reports on stdio
                    return
                if ex.done:
                    return
            error = t.Error(code=m.INTERNAL_ERROR, message="the handler gave no answer")
            for part in ex.send(m.ErrorResponse(id=request.id, error=error)):
                await send(to_asgi(part))
        finally:
            await replies.aclose()


async def demo_handler(request: m.Request) -> AsyncGenerator[Any, None]:
    """``tools/call`` of ``echo``: progress when a token was given, then the text back."""
    if request.method != "tools/call" or request.params.name != "echo":
        error = m.invalid_params(f"unknown tool or method: {request.method}")
        yield m.ErrorResponse(id=request.id, error=error)
        return
    meta = request.meta
    if meta is not None and meta.progress_token is not None:
        params = t.ProgressNotificationParams(progress_token=meta.progress_token, progress=1)
        yield m.Notification(method="notifications/progress", params=params, request_id=request.id)
    text = str((request.params.arguments or {}).get("text", ""))
    yield m.Result(id=request.id, result=t.CallToolResult(content=[t.TextContent(text=text)]))


def make_server() -> HTTPServer:
    caps = t.ServerCapabilities(tools=t.ServerCapabilitiesTools())
    return HTTPServer(connection=lambda: m.ServerConnection(capabilities=caps))


app = MCPApp(make_server(), demo_handler)
