"""Serving an MCP endpoint from any WSGI server, with no framework and no h11.

WSGI gives the request as ``environ`` and a ``wsgi.input`` file; the body is
read in bounded chunks and stops as soon as the binding has refused it (413).
The application is a plain generator per request, yielding ``Notification``
events and finally a ``Result`` or ``ErrorResponse``.  Response parts become
``start_response(status, headers)`` and the chunks of the returned iterable,
so an SSE stream is written frame by frame.

Cancellation (HTTP-SSE-5): a WSGI server calls ``close()`` on the iterable when
the client went away; that tells the exchange (``client_closed()``) and closes
the handler's generator.

Run it with any WSGI server, for instance
``python -c "from wsgiref.simple_server import make_server; from examples.wsgi_app import app;
make_server('127.0.0.1', 8000, app).serve_forever()"``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from http import HTTPStatus
from typing import Any

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.http import (
    HTTPServer,
    Reply,
    ResponseData,
    ResponseEnd,
    ResponsePart,
    ResponseStart,
    ServerExchange,
)

StartResponse = Callable[[str, list[tuple[str, str]]], Any]
Handler = Callable[[m.Request], Iterator[Any]]
CHUNK = 64 * 1024


def request_headers(environ: dict[str, Any]) -> list[tuple[str, str]]:
    """The request headers back from ``environ`` (``HTTP_*`` plus the two CGI ones)."""
    out = [
        (key[5:].replace("_", "-").lower(), value)
        for key, value in environ.items()
        if key.startswith("HTTP_")
    ]
    for key, name in (("CONTENT_TYPE", "content-type"), ("CONTENT_LENGTH", "content-length")):
        if environ.get(key):
            out.append((name, environ[key]))
    return out


def status_line(status: int) -> str:
    return f"{status} {HTTPStatus(status).phrase}"


class Body:
    """The iterable a WSGI server writes out: response bytes, as the handler produces them."""

    def __init__(self, ex: ServerExchange, parts: list[ResponsePart], rest: Iterator[Any]) -> None:
        self.ex = ex
        self.parts = parts
        self.rest = rest

    def __iter__(self) -> Iterator[bytes]:
        yield from (p.data for p in self.parts if isinstance(p, ResponseData))
        if any(isinstance(p, ResponseEnd) for p in self.parts):
            return
        for out in self.rest:
            parts = self.ex.send(out)
            yield from (p.data for p in parts if isinstance(p, ResponseData))
            if self.ex.done:
                return

    def close(self) -> None:
        if not self.ex.done:
            self.ex.client_closed()  # the client went away: the request is cancelled
        close = getattr(self.rest, "close", None)
        if close is not None:
            close()


class MCPApp:
    """A WSGI application serving one MCP endpoint."""

    def __init__(self, server: HTTPServer, handler: Handler) -> None:
        self.server = server
        self.handler = handler

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        target = environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")
        if environ.get("QUERY_STRING"):
            target += "?" + environ["QUERY_STRING"]
        ex = self.server.exchange(environ["REQUEST_METHOD"], target, request_headers(environ))
        remaining = int(environ.get("CONTENT_LENGTH") or 0)
        stream = environ["wsgi.input"]
        while ex.wants_body and remaining > 0:
            chunk = stream.read(min(CHUNK, remaining))
            if not chunk:
                break
            remaining -= len(chunk)
            ex.receive_body(chunk)
        ex.end_of_body()
        event = ex.next_event()
        if isinstance(event, Reply):
            return self._start(ex, ex.send(event), iter(()), start_response)
        assert isinstance(event, m.Request)  # the body is complete: a Reply or the Request
        replies = self.handler(event)
        parts: list[ResponsePart] = []
        for out in replies:  # run until the response head is known
            parts = ex.send(out)
            if parts:
                break
        else:
            error = t.Error(code=m.INTERNAL_ERROR, message="the handler gave no answer")
            parts = ex.send(m.ErrorResponse(id=event.id, error=error))
        return self._start(ex, parts, replies, start_response)

    def _start(
        self,
        ex: ServerExchange,
        parts: list[ResponsePart],
        rest: Iterator[Any],
        start_response: StartResponse,
    ) -> Body:
        head = parts[0]
        assert isinstance(head, ResponseStart)
        start_response(status_line(head.status), list(head.headers))
        return Body(ex, parts[1:], rest)


def demo_handler(request: m.Request) -> Iterator[Any]:
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
