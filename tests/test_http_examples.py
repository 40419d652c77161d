"""The ASGI and WSGI glue of examples/, called directly: the binding needs no h11 and no server."""

from __future__ import annotations

import ast
import asyncio
import importlib.util
import io
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.http import HTTPClient, RequestLost, SSEParser

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
#: every module of mcp_proto.http except the h11 client connection and ``__init__``
#: (which imports it lazily: test_the_examples_run_with_h11_unimportable covers that)
PURE = sorted(
    p.name
    for p in (ROOT / "mcp_proto" / "http").glob("*.py")
    if p.name not in ("_client_connection.py", "_tunnel.py", "__init__.py")  # h11, on first use
)


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


asgi = load("asgi_app")
wsgi = load("wsgi_app")


def echo_post(progress: bool = False, text: str = "hi") -> Any:
    client = HTTPClient()
    meta = client.connection.meta(progress_token="p") if progress else None
    params = t.CallToolRequestParams(name="echo", arguments={"text": text}, meta=meta)
    post = client.send(
        m.Request(id=client.connection.next_id(), method="tools/call", params=params)
    )
    return client, post


def read(client: HTTPClient, post: Any, status: int, headers: Any, body: bytes) -> list[Any]:
    ex = client.response(post, status, headers)
    ex.receive_data(body)
    ex.receive_data(b"")
    out = []
    while (event := ex.next_event()) is not m.NEED_DATA:
        out.append(event)
    return out


# -- ASGI --------------------------------------------------------------------------------------


def run_asgi(
    app: Any, method: str, path: str, headers: Any, body: bytes, *, fail_after: int | None = None
) -> list[dict[str, Any]]:
    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "query_string": b"",
        "headers": [(k.encode(), v.encode()) for k, v in headers],
    }
    chunks = [body[:7], body[7:]] if body else [b""]
    incoming = [
        {"type": "http.request", "body": c, "more_body": i < len(chunks) - 1}
        for i, c in enumerate(chunks)
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return incoming.pop(0) if incoming else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if fail_after is not None and len(sent) >= fail_after:
            raise OSError("client disconnected")
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    return sent


def asgi_response(sent: list[dict[str, Any]]) -> tuple[int, list[tuple[str, str]], bytes]:
    start = sent[0]
    assert start["type"] == "http.response.start"
    assert sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False}
    headers = [(k.decode(), v.decode()) for k, v in start["headers"]]
    return start["status"], headers, b"".join(s["body"] for s in sent[1:])


def with_host(post: Any) -> list[tuple[str, str]]:
    return [("host", "127.0.0.1:8000"), *post.headers]


def test_asgi_json_result() -> None:
    client, post = echo_post()
    status, headers, body = asgi_response(
        run_asgi(asgi.app, "POST", "/mcp", with_host(post), post.body)
    )
    (result,) = read(client, post, status, headers, body)
    assert result.result.content[0].text == "hi"


def test_asgi_sse_with_progress() -> None:
    client, post = echo_post(progress=True)
    sent = run_asgi(asgi.app, "POST", "/mcp", with_host(post), post.body)
    status, headers, body = asgi_response(sent)
    assert dict(headers)["content-type"] == "text/event-stream"
    assert len(sent) == 4  # start, progress frame, result frame, end
    note, result = read(client, post, status, headers, body)
    assert note.method == "notifications/progress" and result.result.content[0].text == "hi"


def test_asgi_replies_and_errors() -> None:
    sent = run_asgi(asgi.app, "GET", "/mcp", [("host", "localhost")], b"")
    assert asgi_response(sent)[0] == 405
    client = HTTPClient()
    post = client.send(
        m.Request(id=1, method="tools/call", params=t.CallToolRequestParams(name="nope"))
    )
    status, headers, body = asgi_response(
        run_asgi(asgi.app, "POST", "/mcp", with_host(post), post.body)
    )
    (error,) = read(client, post, status, headers, body)
    assert isinstance(error, m.ErrorResponse) and error.code == -32602


def test_asgi_handler_without_answer_and_disconnect_while_reading() -> None:
    async def silent(request: m.Request) -> Any:
        return
        yield  # pragma: no cover

    app = asgi.MCPApp(asgi.make_server(), silent)
    _client, post = echo_post()
    _status, _, body = asgi_response(run_asgi(app, "POST", "/mcp", with_host(post), post.body))
    assert orjson.loads(body)["error"]["code"] == m.INTERNAL_ERROR

    async def gone() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    sent: list[Any] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)  # pragma: no cover

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [(b"host", b"localhost")],  # without one the head is refused: 403
        "query_string": b"x=1",
    }
    asyncio.run(asgi.app(scope, gone, send))
    asyncio.run(asgi.app({"type": "websocket"}, gone, send))
    assert sent == []


def test_asgi_client_gone_cancels_and_closes_the_handler() -> None:
    closed: list[str] = []

    async def slow(request: m.Request) -> Any:
        try:
            params = t.ProgressNotificationParams(progress_token="p", progress=1)
            yield m.Notification(
                method="notifications/progress", params=params, request_id=request.id
            )
            yield m.Result(id=request.id, result=t.CallToolResult(content=[]))  # pragma: no cover
        finally:
            closed.append("finally")

    app = asgi.MCPApp(asgi.make_server(), slow)
    _, post = echo_post(progress=True)
    sent = run_asgi(app, "POST", "/mcp", with_host(post), post.body, fail_after=1)
    assert len(sent) == 1 and closed == ["finally"]


def test_asgi_lifespan() -> None:
    events = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return next(events)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(asgi.app({"type": "lifespan"}, receive, send))
    assert [s["type"] for s in sent] == ["lifespan.startup.complete", "lifespan.shutdown.complete"]


# -- WSGI --------------------------------------------------------------------------------------


def environ_for(method: str, headers: list[tuple[str, str]], body: bytes) -> dict[str, Any]:
    env: dict[str, Any] = {
        "REQUEST_METHOD": method,
        "SCRIPT_NAME": "",
        "PATH_INFO": "/mcp",
        "QUERY_STRING": "",
        "wsgi.input": io.BytesIO(body),
        "CONTENT_LENGTH": str(len(body)) if body else "",
    }
    for name, value in headers:
        if name == "content-type":
            env["CONTENT_TYPE"] = value
        else:
            env["HTTP_" + name.upper().replace("-", "_")] = value
    return env


def run_wsgi(app: Any, env: dict[str, Any]) -> tuple[int, list[tuple[str, str]], bytes, Any]:
    started: list[Any] = []

    def start_response(status: str, headers: list[tuple[str, str]]) -> None:
        started.append((status, headers))

    iterable = app(env, start_response)
    body = b"".join(iterable)
    iterable.close()
    status, headers = started[0]
    return int(status.split()[0]), headers, body, iterable


def test_wsgi_json_and_sse() -> None:
    client, post = echo_post(text="wsgi")
    status, headers, body, _ = run_wsgi(wsgi.app, environ_for("POST", with_host(post), post.body))
    (result,) = read(client, post, status, headers, body)
    assert result.result.content[0].text == "wsgi"
    client, post = echo_post(progress=True)
    status, headers, body, _ = run_wsgi(wsgi.app, environ_for("POST", with_host(post), post.body))
    assert dict(headers)["x-accel-buffering"] == "no"
    assert [type(e).__name__ for e in read(client, post, status, headers, body)] == [
        "Notification",
        "Result",
    ]


def test_wsgi_replies() -> None:
    status, headers, body, _ = run_wsgi(
        wsgi.app, environ_for("DELETE", [("host", "localhost")], b"")
    )
    assert (status, dict(headers)["allow"], body) == (405, "POST", b"")
    small = wsgi.MCPApp(type(wsgi.make_server())(max_body_size=10), wsgi.demo_handler)
    _, post = echo_post()
    env = environ_for("POST", [("host", "localhost")], post.body)
    env["CONTENT_LENGTH"] = ""
    env["HTTP_TRANSFER_ENCODING"] = "chunked"
    status, *_ = run_wsgi(small, {**env, "CONTENT_LENGTH": str(len(post.body))})
    assert status == 413
    env = environ_for("POST", [("host", "localhost")], post.body)
    env["CONTENT_LENGTH"] = str(len(post.body) + 10)  # the input ends early
    status, *_ = run_wsgi(wsgi.app, env)
    assert status == 400
    env = environ_for("POST", [("host", "localhost")], b"")
    env["QUERY_STRING"] = "a=1"
    assert run_wsgi(wsgi.app, env)[0] == 400


def test_wsgi_handler_without_answer_and_early_close() -> None:
    def silent(request: m.Request) -> Any:
        return iter(())

    client, post = echo_post()
    app = wsgi.MCPApp(wsgi.make_server(), silent)
    status, _, body, _ = run_wsgi(app, environ_for("POST", with_host(post), post.body))
    assert status == 200 and orjson.loads(body)["error"]["code"] == m.INTERNAL_ERROR

    closed: list[str] = []

    def slow(request: m.Request) -> Any:
        try:
            params = t.ProgressNotificationParams(progress_token="p", progress=1)
            yield m.Notification(
                method="notifications/progress", params=params, request_id=request.id
            )
            yield m.Result(id=request.id, result=t.CallToolResult(content=[]))  # pragma: no cover
        finally:
            closed.append("finally")

    client, post = echo_post(progress=True)
    started: list[Any] = []
    iterable = wsgi.MCPApp(wsgi.make_server(), slow)(
        environ_for("POST", with_host(post), post.body), lambda s, h: started.append(s)
    )
    first = next(iter(iterable))  # the progress frame reaches the client, which then leaves
    assert (
        SSEParser()
        .feed(first)[0]
        .data.startswith('{"jsonrpc":"2.0","method":"notifications/progress"')
    )
    iterable.close()
    assert closed == ["finally"] and iterable.ex.done
    assert wsgi.status_line(202) == "202 Accepted"
    lost = client.response(post, 200, [("content-type", "text/event-stream")]).close()
    assert isinstance(lost, RequestLost)


# -- independence from h11 ---------------------------------------------------------------------


def test_the_pure_binding_modules_do_not_import_h11() -> None:
    assert len(PURE) >= 10
    for name in PURE:
        tree = ast.parse((ROOT / "mcp_proto" / "http" / name).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                assert all(a.name.split(".")[0] != "h11" for a in node.names), name
            elif isinstance(node, ast.ImportFrom):
                assert (node.module or "").split(".")[0] != "h11", name
                assert node.module != "_client_connection", name


def test_the_examples_run_with_h11_unimportable() -> None:
    script = (
        "import sys, io\n"
        "sys.modules['h11'] = None\n"
        f"sys.path.insert(0, {str(EXAMPLES)!r})\n"
        "import wsgi_app, asgi_app\n"
        "import mcp_proto.http as h\n"
        "env = {'REQUEST_METHOD': 'GET', 'PATH_INFO': '/mcp', 'wsgi.input': io.BytesIO(),"
        " 'HTTP_HOST': 'localhost'}\n"
        "out = []\n"
        "b''.join(wsgi_app.app(env, lambda s, hs: out.append(s)))\n"
        "assert out == ['405 Method Not Allowed'], out\n"
        "assert h.HTTPServerConnection  # the server side has its own HTTP/1.1\n"
        "try:\n"
        "    h.HTTPClientConnection\n"
        "except ImportError:\n"
        "    print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.stdout.strip() == "ok", done.stderr
