"""The fuzz harnesses' invariants hold on every seed, and they can fail.

The seeds are generated from the spec's examples at run time (``fuzz/corpus.py``); the
coverage-guided runs are ``python -m fuzz.run`` (``fuzz/README.md``).
"""

from __future__ import annotations

import h11
import orjson
import pytest

import mcp_proto as m
from fuzz import (
    corpus,
    corpus_http,
    invariants,
    invariants_http,
    invariants_http1,
    invariants_legacy_client,
    invariants_schema,
)
from mcp_proto import types as t
from mcp_proto.http import HTTPClient, HTTPClientConnection, Reply, RequestLost, SSEParser
from tests.conftest import needs_spec

CHECKS = {
    "messages": invariants.check_decode,
    "server": invariants.check_server_stream,
    "client": invariants.check_client_stream,
    "legacy_client": invariants_legacy_client.check_legacy_client_stream,
    "legacy_http_client": invariants_legacy_client.check_legacy_http_client,
    "http_server": invariants_http.check_http_server,
    "http1": invariants_http1.check_http1,
    "http_client": invariants_http.check_http_client,
    "sse": invariants_http.check_sse,
    "schema": invariants_schema.check_schema,
}
HOSTILE = [
    b"",
    b"\n\n\r\n",
    b"{" * 5000,
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}',  # no newline
    b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}\n',
    b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]\n',
    b'{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}\n',
    b'{"jsonrpc":"2.0","id":3,"method":"notifications/tools/list_changed"}\n',
    b'\xff\xfe\n{"jsonrpc":"2.0","id":1.5,"method":"tools/list","params":{}}\n',
    b"POST /mcp HTTP/1.1\r\ncontent-length: 99999999999999999999\r\n\r\n",
    b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nffffffffffffffffff\r\n",
    b"GET / HTTP/1.1\r\nhost: localhost\r\n\r\n" * 3,
    b"data: x\r\r\n\xef\xbb\xbf:\xff\xff\xffdata\n\n",
    b'[{"$ref":"#"},1]',
    b'{"$defs":{"a":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}',
    b'[{"pattern":"(a+)+$"},"aaaaaaaaaaaaaaaaaaaaaaaaaaaa!"]',
    b'[{"maximum":123456789012345678901234567890},1e400,-0.0,123456789012345678901234567891]',
]


@needs_spec
@pytest.mark.parametrize("kind", list(CHECKS))
def test_every_seed_keeps_the_invariants(kind: str) -> None:
    items = corpus.seeds(kind)
    assert len(items) > 20
    for item in items:
        CHECKS[kind](item)


@pytest.mark.parametrize("data", HOSTILE)
@pytest.mark.parametrize("kind", list(CHECKS))
def test_hostile_inputs_keep_the_invariants(kind: str, data: bytes) -> None:
    CHECKS[kind](data)


@needs_spec
def test_schema_check_rejects_an_invalid_message() -> None:
    with pytest.raises(AssertionError, match="schema"):
        invariants.check_valid_output(b'{"jsonrpc":"2.0","id":1,"result":7}\n')


def test_output_check_rejects_broken_framing() -> None:
    with pytest.raises(AssertionError):
        invariants.check_valid_output(b'{"jsonrpc":"2.0","id":1,"result":{}}')


@needs_spec
def test_http_output_check_rejects_an_invalid_sse_payload() -> None:
    head = h11.Response(status_code=200, headers=[("content-type", "text/event-stream")])
    with pytest.raises(AssertionError, match="schema"):
        invariants_http._messages(head, b'data: {"jsonrpc":"2.0","id":1,"result":7}\n\n')
    with pytest.raises(AssertionError):
        invariants_http._messages(head, b'data: {"jsonrpc":"2.0","id":1,"result":{}}\n')


def test_schema_check_resolves_failure_pointers() -> None:
    assert invariants_schema.resolve({"a/b": [0, {"~": 1}]}, "/a~1b/1/~0") == 1
    for pointer in ("/a~1b/2", "/c", "/a~1b/0/x", "a"):
        with pytest.raises(AssertionError):
            invariants_schema.resolve({"a/b": [0, {"~": 1}]}, pointer)


# -- what the fuzzers found (fuzz/README.md) ----------------------------------


def test_found_client_stream_notification_without_params() -> None:
    """A change notification with no ``params`` crashed the client's demultiplexer."""
    client, _ = invariants.new_client()
    client.receive_data(b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n')
    (event,) = [client.next_event()]
    assert isinstance(event, m.InvalidMessage) and "SUB-09" in str(event.error)
    invariants.check_client_stream(
        b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed","para-s":{}}\n'
    )


def test_found_server_answers_an_id_without_method_as_invalid_request() -> None:
    """Not a library bug: the harness had counted only lines with a method as answerable."""
    server = invariants.new_server()
    server.receive_data(b'{"jsonrpc":"2.0","id":6,"method@":"tools/list","params":{}}\n')
    event = server.next_event()
    assert isinstance(event, m.InvalidMessage)
    reply = orjson.loads(server.send(event))
    assert (reply["id"], reply["error"]["code"]) == (6, m.INVALID_REQUEST)
    invariants.check_server_stream(b'{"jsonrpc":"2.0","id":6,"method@":"tools/list"}\n')


def test_found_an_error_without_id_ends_no_request() -> None:
    """Not a library bug: an uncorrelated error (BASE-16) is reported with ``id=None``."""
    client, _ = invariants.new_client()
    client.receive_data(b'{"jsonrpc":"2.0","Id":3,"error":{"code":-32020,"message":"m"}}\n')
    event = client.next_event()
    assert isinstance(event, m.ErrorResponse) and event.id is None
    assert set(client.in_flight()) == {1, 2, 3, 4}
    invariants.check_client_stream(b'{"jsonrpc":"2.0","Id":3,"error":{"code":1,"message":"m"}}\n')


def test_found_http_server_head_reply_has_no_body() -> None:
    """A ``Reply`` with a body to a ``HEAD`` request made h11 raise ``LocalProtocolError``.

    (A foreign ``Host`` gives a ``403`` with a JSON-RPC error body.)  A response to ``HEAD``
    now carries the headers only.  Harness side: the checker had read every JSON response
    as having a body, ``HEAD``'s included.
    """
    data = b"HEAD /mcp HTTP/1.1\r\nhost: elsewhere\r\n\r\n"
    events, written = invariants_http._serve([data])
    assert isinstance(events[0], Reply) and events[0].status == 403 and events[0].body
    ((method, out),) = written
    assert method == b"HEAD" and out.endswith(b"\r\n\r\n") and b"content-length" in out
    invariants_http.check_http_server(data + data.replace(b"elsewhere", b"localhost"))


def test_found_http_server_a_length_str_isdigit_takes_but_int_does_not() -> None:
    """Our HTTP/1.1 reader: ``Content-Length: ¹`` passed ``str.isdigit`` and crashed
    ``int()`` (in the pure binding's ``413`` check too).  Now a ``400``."""
    data = (
        b"POST /mcp HTTP/1.1\r\ncontent-length: 7\r\nhost: localhost:8000\r\n\r\n[{},{}]"
        b"POST /mcp HTTP/1.1\r\ncontent-length: \xb9\r\nhost: localhost:8000\r\n\r\n{bad json"
    )
    events, _ = invariants_http._serve([data])
    assert [e.status for e in events if isinstance(e, Reply)][-1] == 400
    invariants_http.check_http_server(data)


def test_found_http_server_trailer_lines_are_header_fields() -> None:
    """Our HTTP/1.1 reader dropped trailer lines unchecked, so a request hidden in a
    trailer section was read by nobody while h11 refused it; a malformed trailer is a 400."""
    data = (
        b"POST /mcp HTTP/1.1\r\nhost: localhost:8000\r\ntransfer-encoding: chunked\r\n\r\n"
        b'7\r\n{"jsonr\r\n0\r\npc":"2.\r\nHEAD /mcp HTTP/1.1\r\nhost: localhost:8000\r\n\r\n'
    )
    events, _ = invariants_http._serve([data])
    assert isinstance(events[0], Reply) and events[0].status == 400
    invariants_http.check_http_server(data)


def test_found_http_client_send_on_a_connection_the_server_closes() -> None:
    """After a ``Connection: close`` response, ``send`` leaked h11's own ``LocalProtocolError``.

    It now raises the library's documented ``LocalProtocolError``.  Harness side: whether
    the driver tries the next POST before seeing the close depends on the chunks, so the
    refusal is not an event the runs compare.
    """
    reply = corpus_http.json_response(
        {"jsonrpc": "2.0", "id": 1, "result": {"tools": [], "resultType": "complete"}},
        extra=b"connection: close\r\n",
    )
    conn = HTTPClientConnection(HTTPClient(), host="localhost")
    conn.send(m.Request(id=1, method="tools/list", params=t.PaginatedRequestParams()))
    conn.receive_data(reply)
    assert isinstance(conn.next_event(), m.Result) and not conn.busy
    with pytest.raises(m.LocalProtocolError, match="closes"):
        conn.send(m.Request(id=2, method="tools/list", params=t.PaginatedRequestParams()))
    invariants_http.check_http_client(reply + reply)


def test_found_sse_line_bound_does_not_depend_on_chunks() -> None:
    """A line over ``max_event_size`` was refused only when it arrived without its ending.

    A long comment (or ``event:``/``id:``) line in one chunk passed, byte by byte it raised;
    now every line over the bound raises.  Harness side: an exception from ``feed`` loses
    the events that call completed, so only the outcome is compared after one.
    """
    line = b": " + b"y" * 300 + b"\n" + b"data: a\n\n"
    with pytest.raises(m.RemoteProtocolError, match="line longer"):
        SSEParser(max_event_size=256).feed(line)
    assert SSEParser(max_event_size=512).feed(line)[0].data == "a"
    invariants_http.check_sse(line)


def test_found_http_client_h11_error_text_depends_on_chunks() -> None:
    """Not a library bug: h11's error text quotes the bytes it had, so the ``RequestLost``
    reason after a malformed chunk differs with the chunking; the harness compares the
    reason up to h11's text."""
    head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
    data = head + b"\r\n2\r\ndata:xx\r\n0\r\n\r\n"
    runs = [invariants_http._call(chunks)[0] for chunks in ([data], [data[:-9], data[-9:]])]
    for events in runs:
        assert isinstance(events[0], RequestLost)
        assert events[0].reason == "the response is not valid HTTP"
    invariants_http.check_http_client(data)


def test_found_http_client_reports_the_close_of_an_idle_connection() -> None:
    """A server that wrote bytes after its response, then closed, was never reported closed.

    With both sides done and unread bytes h11 pauses (until the next cycle), so end of
    input gave ``NEED_DATA`` forever; now it gives ``ConnectionClosed``, as the class
    promises.
    """
    reply = corpus_http.json_response(
        {"jsonrpc": "2.0", "id": 1, "result": {"tools": [], "resultType": "complete"}}
    )
    conn = HTTPClientConnection(HTTPClient(), host="localhost")
    conn.send(m.Request(id=1, method="tools/list", params=t.PaginatedRequestParams()))
    conn.receive_data(reply + b"HTTP/1.1 2")
    assert isinstance(conn.next_event(), m.Result)
    assert conn.next_event() is m.NEED_DATA and not conn.busy
    conn.receive_data(b"")
    assert isinstance(conn.next_event(), m.ConnectionClosed)
    with pytest.raises(m.LocalProtocolError):
        conn.send(m.Request(id=2, method="tools/list", params=t.PaginatedRequestParams()))
    invariants_http.check_http_client(reply + b"HTTP/1.1 2")


def test_found_http1_a_second_host_is_refused_in_http10_too() -> None:
    """Our HTTP/1.1 reader checked for one ``Host`` in HTTP/1.1 only; two ``Host`` lines in
    an HTTP/1.0 request (with a bare LF, which llhttp refuses) were read by us alone, h11
    refusing them.  RFC 9112 3.2 asks a 400 for more than one in any request."""
    data = (
        b"POST / HTTP/1.0\r\nHosconnection: closecoding\nHost: aransfer-Encoding: 1\r\n"
        b"Host: \r\nHst: a\r\n\r\n\r\nsecond"
    )
    events = invariants_http1.wire_events([data])
    assert events == [invariants_http1.Refused(400, "more than one Host, or none in HTTP/1.1")]
    invariants_http1.check_http1(data)


def test_the_legacy_client_harness_can_fail() -> None:
    """Its answer check is not vacuous: a reply with no usable id is caught."""
    client = invariants_legacy_client.new_legacy_client()
    assert client.legacy is not None and set(client.in_flight()) == {1, 2, 3, 4}
    bad = m.AnsweredRequest(
        id=5, method="ping", params=None, reply={"jsonrpc": "2.0", "result": {}}
    )
    with pytest.raises(AssertionError):
        invariants_legacy_client._answer(client, bad)
