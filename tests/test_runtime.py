"""The handler runtime the adapters share (``mcp_proto_runtime``)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

import mcp_proto as m
import mcp_proto_runtime
from mcp_proto import types as t
from mcp_proto_runtime import (
    Call,
    Done,
    Handlers,
    InputRequiredError,
    McpError,
    RequestContext,
    Retry,
    acknowledgement,
    answer,
    build_request,
    default_answer,
    internal_error,
    no_handler,
    outcome_of,
    probe_outcome,
    read_timeout,
    unknown_tool,
)
from tests.conftest import ROOT


def request(method: str = "tools/call", **meta: Any) -> m.Request:
    conn = m.ClientConnection()
    params: Any
    if method == "tools/call":
        params = t.CallToolRequestParams(name="x", meta=conn.meta(**meta))
    elif method == "subscriptions/listen":
        flt = t.SubscriptionFilter(
            tools_list_changed=True, prompts_list_changed=True, resource_subscriptions=["a:b"]
        )
        params = t.SubscriptionsListenRequestParams(notifications=flt, meta=conn.meta(**meta))
    else:
        params = t.PaginatedRequestParams(meta=conn.meta(**meta))
    return m.Request(id=7, method=method, params=params)


def test_handlers_registry() -> None:
    handlers: Handlers[Any] = Handlers({"tools/list": len})
    handlers.on("tools/call")(print)
    assert handlers.find("tools/call") is print and handlers.find("prompts/get") is None
    handlers.default = repr
    assert handlers.find("prompts/get") is repr
    assert handlers.methods() == ("tools/list", "tools/call")


def test_answer_results_errors_and_exceptions() -> None:
    call = request()
    ok = answer(call, t.CallToolResult(content=[]))
    assert isinstance(ok, m.Result) and ok.id == 7
    as_dict = answer(call, {"content": [{"type": "text", "text": "hi"}]})
    assert isinstance(as_dict, m.Result) and as_dict.result.content[0].text == "hi"
    bad_dict = answer(call, {"content": 3})
    assert isinstance(bad_dict, m.ErrorResponse) and bad_dict.code == m.INTERNAL_ERROR
    nothing = answer(call, None)
    assert isinstance(nothing, m.ErrorResponse) and nothing.code == m.INTERNAL_ERROR
    mcp = answer(call, error=unknown_tool("nope"))
    assert isinstance(mcp, m.ErrorResponse) and mcp.error.message == "Unknown tool: nope"
    decode = answer(call, error=m.DecodeError(m.INVALID_PARAMS, "bad"))
    assert isinstance(decode, m.ErrorResponse) and decode.code == m.INVALID_PARAMS
    crash = answer(call, error=ZeroDivisionError("boom"))  # a tool execution error
    assert isinstance(crash, m.Result) and crash.result.is_error
    assert crash.result.content[0].text == "ZeroDivisionError: boom"
    other = answer(request("tools/list"), error=ZeroDivisionError("secret detail"))
    assert isinstance(other, m.ErrorResponse) and "secret" not in other.error.message  # LOG-08
    missing = no_handler(request("tools/list"))
    assert missing.code == m.METHOD_NOT_FOUND


@pytest.mark.parametrize("error", [m.LocalProtocolError, m.RemoteProtocolError])
def test_a_protocol_error_from_a_handler_is_any_other_exception(error: Any) -> None:
    # A ProtocolError is an McpError, but its error is a hint about a broken rule,
    # not an answer the handler chose: it stays what it was before the error model.
    raised = error("cannot send a result: request 99 is not in flight", rule="BASE-09")
    crash = answer(request(), error=raised)
    assert isinstance(crash, m.Result) and crash.result.is_error
    text = f"{error.__name__}: cannot send a result: request 99 is not in flight (BASE-09)"
    assert crash.result.content[0].text == text
    other = answer(request("tools/list"), error=raised)
    assert isinstance(other, m.ErrorResponse)
    assert other.error == t.Error(code=m.INTERNAL_ERROR, message="Internal error")


def test_cache01_answer_fills_missing_cache_hints() -> None:
    listed = answer(request("tools/list"), t.ListToolsResult(tools=[]), cache_hints=(5, "public"))
    assert isinstance(listed, m.Result)
    assert (listed.result.ttl_ms, listed.result.cache_scope) == (5, "public")
    kept = answer(
        request("tools/list"), t.ListToolsResult(tools=[], ttl_ms=1, cache_scope="private")
    )
    assert isinstance(kept, m.Result) and kept.result.ttl_ms == 1


def test_context_builds_only_what_the_request_asked_for() -> None:
    plain = RequestContext(request())
    assert plain.progress_event(1) is None and plain.log_event("error", "x") is None
    ctx = RequestContext(request(progress_token="p", log_level="warning"))
    assert ctx.client_capabilities == t.ClientCapabilities()
    first = ctx.progress_event(1, total=3, message="m")
    assert first is not None and first.params.progress_token == "p" and first.request_id == 7
    assert ctx.progress_event(1) is None  # not increasing (PROG-05)
    assert ctx.log_event("info", "x") is None  # below the asked level (LOG-04)
    log = ctx.log_event("error", {"k": 1}, logger="l")
    assert log is not None and log.params.logger == "l"
    ir = ctx.input_required(request_state="s")
    assert ir.request_state == "s" and ir.input_requests is None


def test_sub06_acknowledgement_is_what_the_capabilities_offer() -> None:
    caps = t.ServerCapabilities(
        tools=t.ServerCapabilitiesTools(list_changed=True),
        prompts=t.ServerCapabilitiesPrompts(list_changed=False),
        resources=t.ServerCapabilitiesResources(subscribe=True),
    )
    ack = acknowledgement(request("subscriptions/listen"), caps)
    assert ack.params.notifications == t.SubscriptionFilter(
        tools_list_changed=True, resource_subscriptions=["a:b"]
    )
    bare = acknowledgement(request("subscriptions/listen"), t.ServerCapabilities())
    assert bare.params.notifications == t.SubscriptionFilter()


def test_build_request_from_dicts_and_objects() -> None:
    conn = m.ClientConnection()
    from_dict = build_request(conn, "tools/call", {"name": "x"}, progress=True)
    assert isinstance(from_dict.params, t.CallToolRequestParams)
    assert from_dict.params.meta.progress_token == from_dict.id  # unique while in flight
    typed = build_request(conn, "tools/call", t.CallToolRequestParams(name="y"))
    assert typed.params.meta.protocol_version == "2026-07-28" and typed.id != from_dict.id
    unknown = build_request(conn, "x/y", None)
    assert unknown.params["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    with pytest.raises(m.DecodeError):
        build_request(conn, "tools/call", {"name": 3})


def test_outcome_of_each_ending() -> None:
    call = request()
    assert outcome_of(m.Result(id=1, result="r")) == "r"
    assert outcome_of(m.SubscriptionEnded(id=1)) is None
    with pytest.raises(McpError) as err:
        outcome_of(m.ErrorResponse(id=1, error=t.Error(code=-1, message="m", data=2)))
    assert (err.value.code, err.value.data) == (-1, 2)
    with pytest.raises(m.RemoteProtocolError):
        outcome_of(m.InvalidResponse(id=1, request=call, error=t.Error(code=-32602, message="x")))
    ir = m.InputRequired(
        id=1, result=t.InputRequiredResult(request_state="s"), request=call, round=1
    )
    with pytest.raises(InputRequiredError, match="input requests: none"):
        outcome_of(ir)
    with pytest.raises(TypeError):
        outcome_of(m.Cancelled(id=1))


def test_call_follows_progress_and_mrtr_rounds_to_its_result() -> None:
    """A ``Call`` is one request's life with no I/O: progress goes to ``on_progress``, an
    ``input_required`` round answered by ``on_input`` is a ``Retry`` with a fresh id and the
    state echoed (MRTR-13, MRTR-14), and the result is ``Done``."""
    conn = m.ClientConnection()
    seen: list[float] = []
    asked: list[m.InputRequired] = []
    elicit = t.ElicitResult(action="accept", content={"name": "Ada"})

    def answer_input(event: m.InputRequired) -> dict[str, Any]:
        asked.append(event)
        return {"name": elicit}

    params = t.CallToolRequestParams(name="ask", arguments={})
    call = Call(
        conn,
        "tools/call",
        params,
        on_progress=lambda p: seen.append(p.progress),
        on_input=answer_input,
    )
    first = call.request
    assert first.params.meta.progress_token == first.id  # progress asked for (PROG-03)
    conn.send(first)
    note = m.Notification(
        method="notifications/progress",
        params=t.ProgressNotificationParams(progress_token=first.id, progress=0.5),
        request_id=first.id,
    )
    assert call.feed(note) is None and seen == [0.5]
    form = t.ElicitRequestFormParams(message="Name?", requested_schema={"type": "object"})
    result = t.InputRequiredResult(
        input_requests={"name": t.ElicitRequest(params=form)}, request_state="s1"
    )
    step = call.feed(m.InputRequired(id=first.id, result=result, request=first, round=1))
    assert isinstance(step, Retry) and step.replaces == first.id
    assert call.request is step.request and step.request.id != first.id
    assert step.request.params.request_state == "s1"
    assert step.request.params.input_responses == {"name": elicit}
    assert [e.id for e in asked] == [first.id]
    done = call.feed(m.Result(id=step.request.id, result=t.CallToolResult(content=[])))
    assert done == Done(t.CallToolResult(content=[]))


def test_call_without_handlers_raises_for_an_unanswered_round_and_errors() -> None:
    conn = m.ClientConnection()
    call = Call(conn, "tools/call", {"name": "x"})
    assert call.request.params.meta.progress_token is None
    note = m.Notification(method="notifications/message", params=None, request_id=call.request.id)
    assert call.feed(note) is None  # not progress: dropped
    ir = m.InputRequired(
        id=call.request.id,
        result=t.InputRequiredResult(request_state="s"),
        request=call.request,
        round=1,
    )
    with pytest.raises(InputRequiredError):
        call.feed(ir)
    with pytest.raises(McpError) as err:
        call.feed(m.ErrorResponse(id=call.request.id, error=t.Error(code=-32602, message="no")))
    assert err.value.code == -32602


def test_default_answers_without_a_handler() -> None:
    conn = m.ServerConnection(capabilities=t.ServerCapabilities(tools=t.ServerCapabilitiesTools()))
    discover = default_answer(conn, m.Request(id=1, method="server/discover", params=None))
    assert isinstance(discover, m.Result) and discover.result == conn.discover_result()
    ack = default_answer(conn, request("subscriptions/listen"))
    assert isinstance(ack, m.Notification) and ack.request_id == 7
    assert default_answer(conn, request("tools/list")) == no_handler(request("tools/list"))
    assert internal_error(request()).error.message == "Internal error"


def test_stdio18_19_probe_outcomes() -> None:
    discover = t.DiscoverResult(
        supported_versions=["2026-07-28", "2099-01-01"],
        capabilities=t.ServerCapabilities(),
        ttl_ms=0,
        cache_scope="public",
    )
    modern = probe_outcome(m.Result(id=1, result=discover), ["2026-07-28"])
    assert (modern.era, modern.version, modern.result) == ("modern", "2026-07-28", discover)
    none_common = probe_outcome(m.Result(id=1, result=discover), ["1999-01-01"])
    assert none_common.era == "modern" and none_common.version is None
    error = t.Error(code=m.UNSUPPORTED_PROTOCOL_VERSION, message="no")
    refused = m.VersionNotSupported(
        id=1, request=request(), requested="x", supported=("2026-07-28",), error=error
    )
    assert probe_outcome(refused, ["2026-07-28"]).version == "2026-07-28"
    for other in (None, m.ErrorResponse(id=1, error=t.Error(code=-32601, message="?"))):
        assert probe_outcome(other, ["2026-07-28"]).era == "legacy"
    odd = m.Result(id=1, result=t.CallToolResult(content=[]))  # a result of the wrong shape
    assert probe_outcome(odd, ["2026-07-28"]).era == "legacy"


def test_input_requests_and_results_as_plain_dicts() -> None:
    elicit = {
        "method": "elicitation/create",
        "params": {"message": "name?", "requestedSchema": {"type": "object"}},
    }
    ir = RequestContext.input_required({"who": elicit, "roots": t.ListRootsRequest()}, "s")
    assert isinstance(ir.input_requests["who"], t.ElicitRequest)
    assert isinstance(ir.input_requests["roots"], t.ListRootsRequest)
    with pytest.raises(m.DecodeError):
        RequestContext.input_required({"x": {"method": "tools/list"}})  # MRTR-05
    as_dict = answer(request(), {"resultType": "input_required", "requestState": "s"})
    assert isinstance(as_dict, m.Result) and isinstance(as_dict.result, t.InputRequiredResult)


def test_read_timeout_for_http_adapters() -> None:
    wait = {"client_timeout": 30.0, "keepalive_interval": 15.0}
    assert read_timeout(busy=True, waiting_since=0, now=1000, **wait) == 15.0  # quiet is fine
    assert read_timeout(busy=False, waiting_since=0, now=0, **wait) == 15.0
    assert read_timeout(busy=False, waiting_since=0, now=20, **wait) == 10.0
    assert read_timeout(busy=False, waiting_since=0, now=30, **wait) is None  # slowloris: close


def test_build_request_keeps_the_callers_meta_when_adding_progress() -> None:
    conn = m.ClientConnection()
    own = conn.meta(log_level="debug", **{"com.example/trace": "t-1"})
    typed = build_request(
        conn, "tools/call", t.CallToolRequestParams(name="x", meta=own), progress=True
    )
    assert typed.params.meta.progress_token == typed.id
    assert typed.params.meta.log_level == "debug"
    assert typed.params.meta.extra == {"com.example/trace": "t-1"}


def test_listens_belong_to_the_runtime() -> None:
    with pytest.raises(ValueError, match="runtime"):
        Handlers({"subscriptions/listen": print})
    handlers: Handlers[Any] = Handlers(default=print)
    assert handlers.find("subscriptions/listen") is None  # not even the catch-all


def test_http_endpoint_and_failures() -> None:
    from mcp_proto.http import Era, RequestLost, UnexpectedResponse
    from mcp_proto_runtime import Endpoint, http_failure

    at = Endpoint.parse("http://user@127.0.0.1:3000/mcp?x=1")
    assert (at.host, at.port, at.target, at.authority) == (
        "127.0.0.1",
        3000,
        "/mcp?x=1",
        "127.0.0.1:3000",
    )
    assert Endpoint.parse("http://example.test").port == 80
    for bad in ("ftp://x", "http:///mcp", "https://x:0x1/"):  # https is taken (issue 17)
        with pytest.raises(ValueError):
            Endpoint.parse(bad)
    lost = http_failure(RequestLost(id=1, request=request(), reason="gone"))
    assert isinstance(lost, ConnectionError) and "gone" in str(lost)
    odd = http_failure(UnexpectedResponse(id=1, status=502, reason="bad gateway", era=Era.LEGACY))
    assert isinstance(odd, m.RemoteProtocolError) and "502" in str(odd)
    assert isinstance(http_failure(m.ConnectionClosed()), ConnectionError)
    assert http_failure(m.Result(id=1, result=None)) is None


def test_server_settings_split_adapter_options_from_connection_options() -> None:
    from mcp_proto_runtime import ServerSettings

    caps = t.ServerCapabilities(tools=t.ServerCapabilitiesTools())
    settings: ServerSettings[Any] = ServerSettings(
        {"tools/list": len}, client_timeout=3, capabilities=caps
    )
    assert settings.client_timeout == 3 and settings.shutdown_grace == 5.0
    # dual-era by default (issue 15): an adapter's Server serves initialize-era clients too
    assert settings.connection_options == {
        "capabilities": caps,
        "legacy_versions": m.LEGACY_VERSIONS,
    }
    first, second = settings.connection(), settings.connection()
    assert first is not second and first.capabilities == caps
    assert first.legacy_versions == m.LEGACY_VERSIONS
    assert settings.connection(legacy=False).legacy_versions == ()
    modern_only: ServerSettings[Any] = ServerSettings(legacy_versions=())
    assert modern_only.connection().legacy_versions == ()
    assert settings.handlers.find("tools/list") is len


def test_client_clock_starts_when_idle_and_stops_on_a_request() -> None:
    from mcp_proto_runtime import ClientClock, ServerSettings

    settings: ServerSettings[Any] = ServerSettings(client_timeout=30, keepalive_interval=15)
    clock = ClientClock(now=0)
    assert clock.wait(busy=False, now=29, settings=settings) == 1  # trickling does not reset it
    assert clock.wait(busy=False, now=30, settings=settings) is None
    clock.request_arrived()
    assert clock.wait(busy=True, now=100, settings=settings) == 15  # a handler runs: quiet is fine
    assert clock.wait(busy=False, now=110, settings=settings) == 15  # restarted at 100
    assert clock.wait(busy=False, now=131, settings=settings) is None


def test_the_adapters_reexport_the_runtime_s_objects() -> None:
    """One runtime: each adapter's shared names are the runtime's objects, not copies."""
    import mcp_proto_asyncio
    import mcp_proto_runtime
    import mcp_proto_sync
    import mcp_proto_trio

    for adapter in (mcp_proto_sync, mcp_proto_asyncio, mcp_proto_trio):
        for name in ("Handlers", "McpError", "InputRequiredError"):
            assert getattr(adapter, name) is getattr(mcp_proto_runtime, name), (adapter, name)
    assert mcp_proto_asyncio.Subscription is mcp_proto_trio.Subscription
    assert mcp_proto_trio.Subscription is mcp_proto_runtime.Subscription


def test_the_runtime_logs_under_one_mcp_proto_hierarchy() -> None:
    """The adapters report through ``mcp_proto.server`` / ``mcp_proto.client``, never print."""
    assert mcp_proto_runtime.server_log.name == "mcp_proto.server"
    assert mcp_proto_runtime.client_log.name == "mcp_proto.client"
    top = logging.getLogger("mcp_proto")  # configuring it configures both
    assert (
        mcp_proto_runtime.server_log.parent is top and mcp_proto_runtime.client_log.parent is top
    )
    root = ROOT / "adapters"
    printing = [
        f"{path.relative_to(ROOT)}:{n}"
        for folder in (
            "mcp_proto_runtime",
            "mcp_proto_sync",
            "mcp_proto_asyncio",
            "mcp_proto_trio",
        )
        for path in sorted((root / folder).glob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if "print(" in line
    ]
    assert printing == []
