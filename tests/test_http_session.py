"""The sans-I/O HTTP server session: bytes, times and handler outcomes in, actions out.

``mcp_proto_runtime.HTTPServerSession`` is what each adapter's HTTP link carries out
for one TCP connection.  These tests drive it by hand with HTTP/1.1 bytes and a clock
that is a plain number, with no socket and no event loop; the adapters' suites
(``test_adapter_http.py``, ``test_http_attacks.py``, ``test_http_write_deadline.py``)
run the same paths over real sockets.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from mcp_proto import types as t
from mcp_proto.http import HTTPServer
from mcp_proto_runtime import (
    END_LISTEN,
    CancelHandler,
    Close,
    HandlerContext,
    HTTPServerSession,
    OpenListen,
    ReadWithin,
    RequestContext,
    RunHandler,
    ServerSettings,
    Write,
)

from ._http_helpers import CAPS, body, headers

TOOL = t.Tool(name="echo", input_schema={"type": "object"})


def tool(ctx: Any, params: Any) -> Any:
    return t.CallToolResult(content=[t.TextContent(text="ok")])


def broken(ctx: Any, params: Any) -> Any:
    raise RuntimeError("the handler broke")


class Server:
    """One server's shared parts, as an adapter's ``serve_http`` builds them."""

    def __init__(self, **options: Any) -> None:
        handlers = options.pop("handlers", {"tools/call": tool})
        self.settings: ServerSettings[Any] = ServerSettings(handlers, capabilities=CAPS, **options)
        self.http = HTTPServer(connection=self.settings.connection, tools={"echo": TOOL})
        self.template = self.settings.connection()
        self.budgets = self.settings.budgets()

    def session(self, *, peer: str = "127.0.0.1", now: float = 0.0) -> HTTPServerSession[Any, Any]:
        return HTTPServerSession(
            self.settings,
            self.http,
            self.template,
            self.budgets,
            peer=peer,
            make_context=lambda core: HandlerContext(core, None),
            now=now,
        )


def http(method: str, params: dict[str, Any], *, id: Any = 1, **extra: str) -> bytes:
    """A whole HTTP/1.1 POST of one MCP message to ``/mcp``."""
    data = body(method, params, id=id)
    name = params.get("name") if method in ("tools/call", "prompts/get") else None
    fields = [*headers(method, name), *((k, v) for k, v in extra.items())]
    head = "".join(f"{k}: {v}\r\n" for k, v in fields)
    return f"POST /mcp HTTP/1.1\r\n{head}content-length: {len(data)}\r\n\r\n".encode() + data


CALL = {"name": "echo", "arguments": {}}


def response(data: bytes) -> tuple[int, bytes]:
    """The status of an HTTP/1.1 response and its body (not chunked: content-length)."""
    head, _, rest = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), rest


def answer(data: bytes, status: int = 200) -> dict[str, Any]:
    got, rest = response(data)
    assert got == status, data
    message: dict[str, Any] = orjson.loads(rest)
    return message


def test_a_request_for_a_handler_runs_it_and_its_answer_is_the_response() -> None:
    s = Server().session()
    assert isinstance(s.next_action(0.0), ReadWithin)
    assert s.read_timed_out() == b""  # no open stream: nothing to keep alive
    s.receive_data(http("tools/call", CALL))
    run = s.next_action(0.0)
    assert isinstance(run, RunHandler) and run.handler is tool and run.request.id == 1
    assert s.busy and s.run is run
    message = answer(s.handler_done(run, tool(run.context, run.request.params)))
    assert message["id"] == 1 and message["result"]["content"][0]["text"] == "ok"
    assert not s.busy and s.run is None
    assert isinstance(s.next_action(0.0), ReadWithin)  # keep-alive: the next request


def test_a_handler_that_raises_gets_an_answer_not_a_stray_exception() -> None:
    """A tool's exception is a tool error (isError); any other method's is -32603."""
    s = Server(handlers={"tools/call": broken, "prompts/get": broken}).session()
    s.receive_data(http("tools/call", CALL))
    run = s.next_action(0.0)
    assert isinstance(run, RunHandler)
    result = answer(s.handler_done(run, error=RuntimeError("the handler broke")))["result"]
    assert result["isError"] is True and "the handler broke" in result["content"][0]["text"]
    s.receive_data(http("prompts/get", {"name": "p"}))
    run = s.next_action(0.0)
    assert isinstance(run, RunHandler)
    data = s.handler_done(run, error=RuntimeError("secret detail"))
    message = answer(data, status=response(data)[0])
    assert message["error"]["code"] == -32603 and b"secret" not in data  # LOG-08


def test_an_answer_the_connection_refuses_is_logged_and_replaced_by_minus_32603(
    caplog: pytest.LogCaptureFixture,
) -> None:
    s = Server().session()
    s.receive_data(http("tools/call", CALL))
    run = s.next_action(0.0)
    assert isinstance(run, RunHandler)
    wrong = t.ListPromptsResult(prompts=[])  # not a tools/call result (BASE-09)
    with caplog.at_level("ERROR", logger="mcp_proto.server"):
        data = s.handler_done(run, wrong)
    assert answer(data, status=response(data)[0])["error"]["code"] == -32603
    assert "refused" in caplog.text


def test_a_method_no_handler_takes_is_answered_minus_32601_without_running_anything() -> None:
    s = Server().session()
    s.receive_data(http("prompts/list", {}))
    write = s.next_action(0.0)
    assert isinstance(write, Write)
    assert answer(write.data, status=404)["error"]["code"] == -32601
    assert s.run is None


def test_server_discover_is_answered_by_the_session_itself() -> None:
    s = Server().session()
    s.receive_data(http("server/discover", {}))
    write = s.next_action(0.0)
    assert isinstance(write, Write)
    result = answer(write.data)["result"]
    assert "2026-07-28" in result["supportedVersions"]


def test_a_client_that_never_sends_a_request_is_closed_at_its_timeout() -> None:
    """Slowloris: the wait shrinks with the clock, then the connection closes."""
    s = Server(client_timeout=10.0).session(now=100.0)
    first = s.next_action(100.0)
    assert isinstance(first, ReadWithin) and first.seconds == pytest.approx(10.0)
    later = s.next_action(106.0)
    assert isinstance(later, ReadWithin) and later.seconds == pytest.approx(4.0)
    s.receive_data(b"POST /mcp HTTP/1.1\r\n")  # a head that never ends
    close = s.next_action(111.0)
    assert isinstance(close, Close) and "too slow" in close.reason
    assert s.next_action(200.0) is close  # Close is final


def test_a_malformed_request_gets_a_400_and_the_connection_lingers_closed() -> None:
    s = Server().session()
    s.receive_data(b"POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-length: nope\r\n\r\n")
    write = s.next_action(0.0)
    assert isinstance(write, Write) and response(write.data)[0] == 400
    close = s.next_action(0.0)
    assert isinstance(close, Close) and close.linger


def test_a_missing_protocol_header_is_refused_with_the_bindings_reply() -> None:
    s = Server().session()
    data = http("tools/call", CALL).replace(b"mcp-protocol-version", b"x-ignored")
    s.receive_data(data)
    write = s.next_action(0.0)
    assert isinstance(write, Write) and response(write.data)[0] == 400
    assert s.run is None


def test_a_listen_is_opened_acknowledged_and_its_budget_given_back_on_close() -> None:
    server = Server()
    s = server.session()
    params = {"notifications": {"toolsListChanged": True}}
    s.receive_data(http("subscriptions/listen", params, id=7))
    opened = s.next_action(0.0)
    assert isinstance(opened, OpenListen) and opened.id == 7
    assert opened.ack.startswith(b"HTTP/1.1 200")
    assert b"notifications/subscriptions/acknowledged" in opened.ack
    listens, _ = server.budgets
    assert s.listening and s.busy and listens.open == 1
    wait = s.next_action(0.0)  # an open listen waits on the keep-alive interval
    assert isinstance(wait, ReadWithin) and wait.seconds == pytest.approx(15.0)
    assert b": keep-alive" in s.read_timed_out()  # an SSE comment (chunked) keeps it alive
    s.receive_data(b"")  # the client goes away
    assert s.next_action(0.0) is END_LISTEN  # first leave the fan-out...
    close = s.next_action(0.0)  # ...then close
    assert isinstance(close, Close) and not close.linger
    assert not s.listening and listens.open == 0
    s.close()
    assert listens.open == 0  # given back once, not twice


def test_a_second_listen_from_the_same_client_past_its_budget_is_refused_429() -> None:
    server = Server(max_listens_per_client=1)
    params = {"notifications": {"toolsListChanged": True}}
    first, second = server.session(), server.session()
    first.receive_data(http("subscriptions/listen", params, id=1))
    assert isinstance(first.next_action(0.0), OpenListen)
    second.receive_data(http("subscriptions/listen", params, id=2))
    refused = second.next_action(0.0)
    assert isinstance(refused, Write) and response(refused.data)[0] == 429
    assert not second.listening
    other = server.session(peer="127.0.0.2")  # another client has its own budget
    other.receive_data(http("subscriptions/listen", params, id=3))
    assert isinstance(other.next_action(0.0), OpenListen)


def test_the_client_closing_mid_request_cancels_the_handler_and_nothing_is_sent() -> None:
    """HTTP-SSE-5: a closed response stream cancels the request it carried."""
    s = Server().session()
    s.receive_data(http("tools/call", CALL))
    run = s.next_action(0.0)
    assert isinstance(run, RunHandler)
    s.receive_data(b"")
    cancel = s.next_action(0.0)
    assert isinstance(cancel, CancelHandler) and cancel.run is run
    assert run.context.cancelled
    assert s.handler_done(run, tool(run.context, None)) == b""  # too late: dropped
    close = s.next_action(0.0)
    assert isinstance(close, Close) and "closed" in close.reason


def test_a_handler_cancelled_by_the_adapter_frees_the_exchange() -> None:
    s = Server().session()
    s.receive_data(http("tools/call", CALL))
    run = s.next_action(0.0)
    assert isinstance(run, RunHandler)
    s.handler_cancelled(run)
    assert s.run is None and run.context.cancelled and not s.busy


def test_connection_close_from_the_client_closes_after_the_response() -> None:
    s = Server().session()
    s.receive_data(http("tools/call", CALL, connection="close"))
    run = s.next_action(0.0)
    assert isinstance(run, RunHandler)
    assert answer(s.handler_done(run, tool(run.context, None)))["id"] == 1
    close = s.next_action(0.0)
    assert isinstance(close, Close)


def test_pipelined_requests_are_taken_one_exchange_at_a_time() -> None:
    s = Server().session()
    s.receive_data(http("tools/call", CALL, id=1) + http("tools/call", CALL, id=2))
    first = s.next_action(0.0)
    assert isinstance(first, RunHandler) and first.request.id == 1
    assert answer(s.handler_done(first, tool(None, None)))["id"] == 1
    second = s.next_action(0.0)
    assert isinstance(second, RunHandler) and second.request.id == 2


def test_progress_from_a_handler_switches_the_response_to_sse() -> None:
    from mcp_proto import Notification

    s = Server().session()
    data = body("tools/call", CALL, progressToken="tok")
    fields = "".join(f"{k}: {v}\r\n" for k, v in headers("tools/call", "echo"))
    s.receive_data(
        f"POST /mcp HTTP/1.1\r\n{fields}content-length: {len(data)}\r\n\r\n".encode() + data
    )
    run = s.next_action(0.0)
    assert isinstance(run, RunHandler)
    progress = t.ProgressNotificationParams(progress_token="tok", progress=1)
    streamed = s.send(Notification(method="notifications/progress", params=progress, request_id=1))
    assert b"text/event-stream" in streamed and b"notifications/progress" in streamed
    wait = s.next_action(0.0)  # a streaming handler: the keep-alive interval
    assert isinstance(wait, ReadWithin) and wait.seconds == pytest.approx(15.0)
    assert b": keep-alive" in s.read_timed_out()
    tail = s.handler_done(run, tool(None, None))
    assert b"event: message" in tail or b"data: " in tail


def test_requestcontext_is_what_make_context_receives() -> None:
    seen: list[RequestContext] = []

    def make(core: RequestContext) -> HandlerContext:
        seen.append(core)
        return HandlerContext(core, None)

    server = Server()
    s: HTTPServerSession[Any, Any] = HTTPServerSession(
        server.settings,
        server.http,
        server.template,
        server.budgets,
        peer="127.0.0.1",
        make_context=make,
        now=0.0,
    )
    s.receive_data(http("tools/call", CALL))
    run = s.next_action(0.0)
    assert isinstance(run, RunHandler) and seen and seen[0].request is run.request
