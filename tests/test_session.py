"""The sans-I/O stdio server session: bytes and handler outcomes in, actions out.

``mcp_proto_runtime.ServerSession`` is what the trio, asyncio and blocking stdio
servers carry out; these tests drive it by hand, with no I/O and no event loop.
The adapters' own suites (``tests/test_adapter_*.py``, ``test_adapter_faults.py``)
run the same paths through real subprocesses.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson
import pytest

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto_runtime import (
    RESUME_READING,
    CancelHandler,
    HandlerContext,
    RequestContext,
    RunHandler,
    ServerSession,
    ServerSettings,
    Stop,
    Write,
)
from tests.test_connection import CAPS, META, line, req


def tool(ctx: Any, params: Any) -> Any:
    return t.CallToolResult(content=[t.TextContent(text="ok")])


def session(max_concurrency: int = 4, **options: Any) -> ServerSession[Any, HandlerContext]:
    handlers = options.pop("handlers", {"tools/call": tool})
    settings = ServerSettings(handlers, capabilities=CAPS, shutdown_grace=2.5, **options)
    return ServerSession(settings, make_context, max_concurrency=max_concurrency)


def make_context(core: RequestContext) -> HandlerContext:
    return HandlerContext(core, None)


def call(id: int) -> bytes:
    return req(id, "tools/call", {"name": "x", "arguments": {}})


def cancel(id: int) -> bytes:
    return line(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}}
    )


def actions(s: ServerSession[Any, Any], *chunks: bytes) -> list[Any]:
    """Feed ``chunks``; the actions until the session needs data, pauses or stops."""
    for chunk in chunks:
        s.receive_data(chunk)
    out = []
    while (action := s.next_action()) is not m.NEED_DATA:
        out.append(action)
        if action is m.PAUSED or isinstance(action, Stop):
            break
    return out


def sent(action: Any) -> dict[str, Any]:
    assert isinstance(action, Write)
    message: dict[str, Any] = orjson.loads(action.data)
    return message


def test_a_request_runs_its_handler_and_the_answer_is_written() -> None:
    s = session()
    (run,) = actions(s, call(1))
    assert isinstance(run, RunHandler) and run.request.id == 1 and run.handler is tool
    assert run.context.request is run.request and s.running == 1 and not s.idle
    (write,) = s.handler_done(run, tool(run.context, run.request.params))
    assert sent(write)["id"] == 1 and sent(write)["result"]["content"][0]["text"] == "ok"
    assert s.idle and s.running == 0 and s.conn.in_flight() == ()


def test_what_no_handler_takes_is_answered_by_the_session_itself() -> None:
    """VER-04 discover from the configuration, ERR-07 -32601, a listen acknowledged."""
    s = session()
    listen = {"notifications": {"toolsListChanged": True}}
    discover, unknown, ack = actions(
        s,
        req(1, "server/discover"),
        req(2, "prompts/list"),
        req(3, "subscriptions/listen", listen),
    )
    assert sent(discover)["result"]["supportedVersions"] == ["2026-07-28"]
    assert sent(unknown)["error"]["code"] == m.METHOD_NOT_FOUND
    assert sent(ack)["method"] == "notifications/subscriptions/acknowledged"
    assert s.idle and s.conn.subscriptions() == (3,)


def test_an_invalid_message_gets_its_error_and_reading_goes_on() -> None:
    s = session()
    error, run = actions(s, b'{"jsonrpc":"2.0","id":7,"method":3}\n', call(8))
    assert sent(error)["id"] == 7 and sent(error)["error"]["code"] == m.INVALID_REQUEST
    assert isinstance(run, RunHandler) and run.request.id == 8


def test_a_client_notification_needs_no_action() -> None:
    s = session()
    note = line({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
    assert actions(s, note) == []


def test_max_concurrency_queues_in_order_and_an_end_hands_its_slot_on() -> None:
    s = session(max_concurrency=1)
    (first,) = actions(s, call(1), call(2), call(3))
    assert s.running == 1
    write, second = s.handler_done(first, tool(None, None))
    assert sent(write)["id"] == 1 and isinstance(second, RunHandler) and second.request.id == 2
    assert s.running == 1  # the slot was handed on, not freed and taken again
    _, third = s.handler_done(second, tool(None, None))
    assert third.request.id == 3
    (last,) = s.handler_done(third, tool(None, None))
    assert isinstance(last, Write) and s.running == 0 and s.idle


def test_a_queued_request_cancelled_never_runs_and_nothing_is_sent_for_it() -> None:
    """STDIO-13 and CANCEL-11: nothing for a cancelled request, not even a late start."""
    s = session(max_concurrency=1)
    (first,) = actions(s, call(1), call(2), cancel(2))
    (write,) = s.handler_done(first, tool(None, None))
    assert sent(write)["id"] == 1 and s.idle and s.running == 0


def test_a_running_request_cancelled_is_cancelled_and_its_answer_dropped() -> None:
    s = session()
    (run,) = actions(s, call(1))
    (stop,) = actions(s, cancel(1))
    assert isinstance(stop, CancelHandler) and stop.run is run and run.context.cancelled
    assert s.handler_done(run, tool(None, None)) == []  # returned anyway: not sent
    assert s.idle and s.running == 0


def test_a_handler_ended_by_cancellation_frees_its_slot_for_the_next() -> None:
    s = session(max_concurrency=1)
    (first,) = actions(s, call(1), call(2))
    actions(s, cancel(1))
    (second,) = s.handler_cancelled(first)
    assert isinstance(second, RunHandler) and second.request.id == 2 and s.running == 1


def test_a_cancel_for_something_ended_or_unknown_is_nothing() -> None:
    s = session()
    (run,) = actions(s, call(1))
    s.handler_done(run, tool(None, None))
    assert actions(s, cancel(1), cancel(99)) == []


def test_paused_past_max_in_flight_and_resumed_by_the_end_of_a_request() -> None:
    s = session(max_in_flight=1)
    run, paused = actions(s, call(1), call(2))
    assert paused is m.PAUSED and s.next_action() is m.PAUSED
    write, resume = s.handler_done(run, tool(None, None))
    assert sent(write)["id"] == 1 and resume is RESUME_READING
    (second,) = actions(s)
    assert isinstance(second, RunHandler) and second.request.id == 2
    (only_write,) = s.handler_done(second, tool(None, None))  # not paused: no resume
    assert isinstance(only_write, Write)


def test_the_end_of_input_stops_with_the_grace_and_stop_now_cancels_the_rest() -> None:
    """STDIO-15: what was received gets the grace; then it is cancelled, the queue dropped."""
    s = session(max_concurrency=1)
    first, stop = actions(s, call(1), call(2), b"")
    assert stop == Stop(reason="input ended", grace=2.5) and s.next_action() == stop
    (cancelled,) = s.stop_now()
    assert cancelled.run is first and first.context.cancelled
    assert s.handler_cancelled(first) == [] and s.idle and s.running == 0
    assert s.handler_done(first, None) == []  # a second end of the same run counts for nothing


def test_framing_lost_is_logged_and_stops(caplog: pytest.LogCaptureFixture) -> None:
    s = session(max_message_size=64)
    with caplog.at_level(logging.ERROR, "mcp_proto.server"):
        (stop,) = actions(s, b"x" * 100)
    assert isinstance(stop, Stop) and stop.reason == "input framing lost"
    assert "framing lost" in caplog.text


def test_an_answer_the_core_refuses_is_logged_and_becomes_internal_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A result of the wrong class for the method (BASE-09): -32603, and the reason logged."""
    s = session()
    (run,) = actions(s, call(1))
    with caplog.at_level(logging.ERROR, "mcp_proto.server"):
        (write,) = s.handler_done(run, t.ListPromptsResult(prompts=[]))
    assert sent(write)["error"] == {"code": m.INTERNAL_ERROR, "message": "Internal error"}
    assert "its answer was refused" in caplog.text and s.idle


def test_a_handler_that_raised_gets_the_runtime_answer() -> None:
    s = session()
    (run,) = actions(s, call(1))
    (write,) = s.handler_done(run, error=RuntimeError("boom"))
    assert sent(write)["result"]["isError"] is True  # tools/call: a tool execution error


def test_write_failed_stops_at_once_and_cancels_every_handler() -> None:
    s = session(max_concurrency=1)
    (first,) = actions(s, call(1), call(2))
    (cancelled,) = s.write_failed("the pipe is closed")
    assert cancelled.run is first and first.context.cancelled
    assert s.next_action() == Stop(reason="peer gone", grace=0.0)
    assert s.handler_cancelled(first) == [] and s.idle


def test_send_gives_the_bytes_of_what_the_adapter_sends_itself() -> None:
    s = session()
    (run,) = actions(s, req(1, "tools/call", {"name": "x"}, meta={**META, "progressToken": 5}))
    event = run.context._core.progress_event(0.5)
    assert event is not None and orjson.loads(s.send(event))["params"]["progressToken"] == 5


def test_max_concurrency_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="max_concurrency"):
        session(max_concurrency=0)
