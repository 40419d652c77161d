"""The public testing helpers: ConnectionPair, ScriptedPeer, Trace."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

import mcp_proto as m
from mcp_proto import testing as mt
from mcp_proto import types as t

CAPS = t.ServerCapabilities(tools=t.ServerCapabilitiesTools(list_changed=True))
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def pair(**kw: Any) -> mt.ConnectionPair:
    return mt.ConnectionPair(server=m.ServerConnection(capabilities=CAPS), **kw)


def echo(event: Any) -> list[Any]:
    """A tiny application: answers a tools/call with the tool's name, bad input with its reply."""
    if isinstance(event, m.InvalidMessage):
        return [event]
    if isinstance(event, m.Request):
        text = t.TextContent(text=event.params.name)
        return [m.Result(id=event.id, result=t.CallToolResult(content=[text]))]
    return []


def call(id: Any, name: str = "echo") -> dict[str, Any]:
    params = {"name": name, "_meta": META}
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}


# -- ConnectionPair -----------------------------------------------------------


@pytest.mark.parametrize("chunk_size", [None, 1, 5])
def test_pair_round_trip_over_bytes(chunk_size: int | None) -> None:
    p = pair(chunk_size=chunk_size)
    (got,) = p.to_server(p.request("tools/call", t.CallToolRequestParams(name="x")))
    assert isinstance(got, m.Request) and got.id == 1
    (done,) = p.to_client(*echo(got))
    assert isinstance(done, m.Result) and done.result.content[0].text == "x"
    assert [e.summary() for e in p.trace] == ["request 1 tools/call", "result 1"]
    assert [e.sender for e in p.trace] == ["client", "server"]
    assert [e.receiver for e in p.trace] == ["server", "client"]


def test_pair_delivers_broken_bytes_and_closes() -> None:
    p = pair()
    (bad,) = p.deliver("client", b"not json\n")
    assert isinstance(bad, m.InvalidMessage) and bad.error.code == -32700
    (answer,) = p.to_client(bad)
    assert isinstance(answer, m.ErrorResponse) and answer.id is None
    assert p.deliver("client", b"") == []  # nothing written: nothing delivered, not closed
    p.to_server(p.request("tools/call", t.CallToolRequestParams(name="x")))
    assert p.close("client") == [m.ConnectionClosed(in_flight=(1,))]
    assert p.close("server") == [m.ConnectionClosed(in_flight=(1,))]
    assert p.trace.entries[0].raw == b"not json"
    with pytest.raises(ValueError, match="chunk_size"):
        mt.ConnectionPair(chunk_size=0)
    with pytest.raises(ValueError, match="sender"):
        p.deliver("proxy", b"{}\n")  # type: ignore[arg-type]


def test_drain_stops_at_connection_closed() -> None:
    srv = m.ServerConnection()
    srv.receive_data(b"")
    assert mt.drain(srv) == [m.ConnectionClosed()]
    assert mt.drain(m.ServerConnection()) == []


# -- matching -----------------------------------------------------------------


def test_assert_matches_subset_and_exact() -> None:
    actual = {"id": 1, "result": {"content": [{"type": "text", "text": "a"}], "x": True}}
    mt.assert_matches(actual, {"id": 1})
    mt.assert_matches(actual, {"result": {"content": [{"text": "a"}]}})
    mt.assert_matches(actual, {"id": mt.ANY, "result": {"y": mt.ABSENT}})
    mt.assert_matches(actual, {"id": mt.Match(predicate=lambda v: v > 0, description="> 0")})
    mt.assert_matches({"n": 1.0}, {"n": 1})
    mt.assert_matches(actual, actual, exact=True)
    cases = [
        ({"id": 2}, False, "at /id: expected 2, got 1"),
        ({"id": "1"}, False, 'at /id: expected "1", got 1'),
        ({"result": {"x": 1}}, False, "at /result/x: expected 1, got true"),
        ({"result": {"content": []}}, False, "expected 0 item(s), got 1"),
        ({"result": {"content": {}}}, False, "expected an object, got [{"),
        ({"id": []}, False, "expected an array, got 1"),
        ({"error": mt.ANY}, False, "at /error: missing"),
        ({"id": mt.ABSENT}, False, "at /id: expected no such key, got 1"),
        ({"id": mt.Match(predicate=lambda v: v < 0, description="< 0")}, False, "1 is not < 0"),
        ({"id": 1}, True, "at /: unexpected key(s) ['result']"),
        ({"a/b~c": 1}, False, "at /a~1b~0c: missing"),
    ]
    for expected, exact, fragment in cases:
        with pytest.raises(AssertionError) as info:
            mt.assert_matches(actual, expected, exact=exact)
        assert fragment in str(info.value), (expected, str(info.value))
        assert "expected:" in str(info.value) and "got:" in str(info.value)


def test_assert_matches_shows_what_json_cannot() -> None:
    with pytest.raises(AssertionError, match=r"got:      \{'n': 1180591620717411303424\}"):
        mt.assert_matches({"n": 2**70}, {"n": 1})
    peer = mt.ScriptedPeer([mt.Close(), mt.Expect(message={})], role="client")
    peer.receive_data(b"\n  \n")  # blank lines are not messages
    with pytest.raises(AssertionError, match="sends next \\(close\\)"):
        peer.receive_data(b"{}\n")


def test_assert_matches_takes_typed_values() -> None:
    impl = t.Implementation(name="a", version="1")
    mt.assert_matches({"name": "a", "version": "1"}, impl, exact=True)
    with pytest.raises(AssertionError, match="/version"):
        mt.assert_matches({"name": "a", "version": "2"}, impl)
    assert repr(mt.ANY) == "ANY" and repr(mt.ABSENT) == "ABSENT"


# -- ScriptedPeer ---------------------------------------------------------------


def test_scripted_client_against_a_server() -> None:
    steps: list[mt.Step] = [
        mt.Send(message=call(1)),
        mt.Expect(message={"id": 1, "result": {"content": [{"text": "echo"}]}}),
        mt.Send(message=b"garbage\n"),
        mt.Expect(message={"id": mt.ABSENT, "error": {"code": -32700}}),
        mt.Send(message=call(2, "two")),
        mt.Expect(message={"id": 2, "result": {"resultType": "complete"}}),
        mt.Close(),
    ]
    peer = mt.ScriptedPeer(steps, role="client")
    events = peer.run(m.ServerConnection(capabilities=CAPS), echo)
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["Request", "InvalidMessage", "Request", "ConnectionClosed"]
    assert peer.done and len(peer.trace) == 6
    assert peer.trace.entries[2] == mt.TraceEntry(sender="client", raw=b"garbage")


def test_scripted_server_against_a_client() -> None:
    client = m.ClientConnection()
    first = m.Request(
        id=client.next_id(), method="tools/call", params=t.CallToolRequestParams(name="x")
    )
    steps: list[mt.Step] = [
        mt.Expect(
            message={
                "id": 1,
                "method": "tools/call",
                "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
            }
        ),
        mt.Send(
            message={
                "jsonrpc": "2.0",
                "id": 1,
                "result": {"resultType": "input_required", "requestState": "s1"},
            }
        ),
        mt.Expect(
            message={"id": 2, "params": {"requestState": "s1", "inputResponses": mt.ABSENT}}
        ),
        mt.Send(message=t.JSONRPCResultResponse(id=2, result=t.CallToolResult(content=[]))),
    ]

    def retry(event: Any) -> list[Any]:
        return [event.retry(id=client.next_id())] if isinstance(event, m.InputRequired) else []

    peer = mt.ScriptedPeer(steps, role="server")
    events = peer.run(client, retry, start=[first])
    assert [type(e).__name__ for e in events] == ["InputRequired", "Result"]


def test_mismatch_names_the_step_expected_and_got() -> None:
    steps: list[mt.Step] = [
        mt.Send(message=call(1)),
        mt.Expect(message={"id": 1, "result": {"content": [{"text": "other"}]}}),
    ]
    peer = mt.ScriptedPeer(steps, role="client")
    with pytest.raises(AssertionError) as info:
        peer.run(m.ServerConnection(capabilities=CAPS), echo)
    text = str(info.value)
    assert text.startswith("step 2 of 2: the message does not match")
    assert 'expected: {"id":1,"result":{"content":[{"text":"other"}]}}' in text
    assert '"text":"echo"' in text
    assert 'at /result/content/0/text: expected "other", got "echo"' in text


def test_peer_errors_for_out_of_script_traffic() -> None:
    peer = mt.ScriptedPeer([mt.Send(message=call(1))], role="client")
    with pytest.raises(AssertionError, match=r"step 1 of 1: the script sends next \(send \{"):
        peer.receive_data(b'{"jsonrpc":"2.0","id":1,"result":{}}\n')
    peer = mt.ScriptedPeer([mt.Expect(message={})], role="client")
    with pytest.raises(AssertionError, match="invalid JSON: nope"):
        peer.receive_data(b"nope\n")
    done = mt.ScriptedPeer([], role="server")
    with pytest.raises(AssertionError, match="the script is over"):
        done.receive_data(b"{}\n")
    waiting = mt.ScriptedPeer([mt.Expect(message={"id": 9})], role="server")
    with pytest.raises(AssertionError, match=r'step 1 of 1 was not played: expect \{"id":9\}'):
        waiting.run(m.ClientConnection())
    partial = mt.ScriptedPeer([mt.Expect(message={})], role="server")
    partial.receive_data(b'{"a":')
    with pytest.raises(AssertionError, match="unfinished line"):
        partial.assert_done()
    closing = mt.ScriptedPeer([mt.Close()], role="client")
    with pytest.raises(AssertionError, match="1 of 2 was not played: send b'x'"):
        mt.ScriptedPeer([mt.Send(message=b"x"), mt.Close()], role="client").assert_done()
    assert closing.data_to_send() == [b""] and closing.done
    with pytest.raises(ValueError, match="sender"):
        mt.ScriptedPeer([], role="both")  # type: ignore[arg-type]


def test_peer_without_respond_collects_events() -> None:
    peer = mt.ScriptedPeer([mt.Send(message=call(1)), mt.Close()], role="client")
    events = peer.run(m.ServerConnection(capabilities=CAPS))
    assert [type(e).__name__ for e in events] == ["Request", "ConnectionClosed"]


# -- Trace ----------------------------------------------------------------------


def test_trace_save_load_render() -> None:
    p = pair()
    (got,) = p.to_server(p.request("tools/call", t.CallToolRequestParams(name="x")))
    p.to_client(
        m.ErrorResponse(id=got.id, error=t.Error(code=-32602, message="no")),
    )
    p.deliver("client", b'\xff\xfe\n{"jsonrpc":"2.0","method":"notifications/x"}\r\n\n')
    p.trace.record_message("server", {"jsonrpc": "2.0", "id": "a", "result": {"resultType": "x"}})
    p.trace.record_message("server", {"jsonrpc": "2.0"})
    p.trace.record_message("server", [1])
    text = p.trace.dumps()
    assert text.count("\n") == len(p.trace) == 7
    assert '"rawBase64":"//4="' in text
    again = mt.Trace.loads(text)
    assert again == p.trace and again != text and mt.Trace.loads(text.encode()) == again
    rendered = again.render().splitlines()
    assert rendered[0] == "  1 client -> server: request 1 tools/call"
    assert rendered[2] == "  2 server -> client: error 1 -32602"
    assert rendered[4] == "  3 client -> server: not a JSON object"
    assert rendered[5] == '    "//4="'
    assert rendered[6] == "  4 client -> server: notification notifications/x"
    assert rendered[8] == '  5 server -> client: result "a" x'
    assert rendered[10] == "  6 server -> client: not a message"
    assert repr(again) == "<Trace of 7 messages>"
    huge = mt.TraceEntry(sender="server", message={"id": 2**70, "error": {"code": 1}})
    assert huge.summary() == f"error {2**70} 1"
    with pytest.raises(TypeError):
        hash(again)


@pytest.mark.parametrize(
    "line",
    [
        b"[1]",
        b'{"from":"proxy","message":{}}',
        b'{"from":"client"}',
        b"{",
        b'{"from":"server","rawBase64":"*"}',
    ],
)
def test_trace_loads_refuses_malformed_lines(line: bytes) -> None:
    with pytest.raises(ValueError, match="line 2 of the trace"):
        mt.Trace.loads(b'{"from":"client","raw":"x"}\n' + line + b"\n")


def test_recorded_trace_replays_as_a_script() -> None:
    """Record a session with a pair, save it, replay it against a fresh server."""
    p = pair()
    (got,) = p.to_server(p.request("tools/call", t.CallToolRequestParams(name="a")))
    p.to_client(*echo(got))
    # the trace so far, seen from the server's side, drives a client
    server_steps = p.trace.script("server", exact=False)
    assert [type(s).__name__ for s in server_steps] == ["Expect", "Send"]
    client = m.ClientConnection()
    first = m.Request(
        id=client.next_id(), method="tools/call", params=t.CallToolRequestParams(name="a")
    )
    (result,) = mt.ScriptedPeer(server_steps, role="server").run(client, start=[first])
    assert isinstance(result, m.Result)
    (bad,) = p.deliver("client", b"oops\n")
    p.to_client(bad)
    saved = p.trace.dumps()
    steps = mt.Trace.loads(saved).script("client")
    assert [type(s).__name__ for s in steps] == ["Send", "Expect", "Send", "Expect"]
    peer = mt.ScriptedPeer(steps, role="client")
    peer.run(m.ServerConnection(capabilities=CAPS), echo)
    assert peer.trace.dumps() == saved
    with pytest.raises(ValueError, match="not JSON"):
        mt.Trace.loads(saved).script("server")  # the client's garbage cannot be expected


def test_testing_module_imports_no_test_framework() -> None:
    files = sorted((Path(m.__file__).parent / "testing").glob("*.py"))
    assert len(files) >= 4
    for path in files:
        tree = ast.parse(path.read_text())
        imported = {
            alias.name.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        } | {
            node.module.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
        }
        assert not imported & {"pytest", "unittest", "hypothesis"}, path.name
