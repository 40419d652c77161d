"""SSE writer and parser (HTTP-SSE-1..4, edge 107): the WHATWG algorithm, chunking-independent."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_proto import RemoteProtocolError
from mcp_proto.http import KEEPALIVE, SSEEvent, SSEParser, sse_event, sse_message


def parse(data: bytes) -> list[SSEEvent]:
    parser = SSEParser()
    return parser.feed(data) + parser.feed(b"")


def test_one_message_per_frame() -> None:
    frame = sse_message(b'{"jsonrpc":"2.0","id":1,"result":{}}')
    assert frame == b'data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n'
    assert parse(frame) == [SSEEvent(data='{"jsonrpc":"2.0","id":1,"result":{}}')]


def test_multi_line_data_and_line_endings() -> None:
    stream = b"data: a\r\ndata:b\rdata:  c\n\n"
    assert parse(stream) == [SSEEvent(data="a\nb\n c")]
    assert sse_event("x\ny", event="e") == b"event: e\ndata: x\ndata: y\n\n"
    assert sse_message(b"{\n}") == b"data: {\ndata: }\n\n"


def test_edge107_comments_retry_id_and_unknown_fields_are_ignored() -> None:
    stream = KEEPALIVE + b":\r\nretry: 10\nid: 7\nfoo: bar\nnocolon\ndata: x\n\n"
    assert parse(stream) == [SSEEvent(data="x", id="7")]
    assert parse(b"event: ping\ndata: y\n\n") == [SSEEvent(data="y", event="ping")]
    assert parse(b"id: a\x00b\ndata: z\n\n") == [SSEEvent(data="z")]


def test_bom_blank_events_and_truncation() -> None:
    parser = SSEParser()
    assert parser.feed(b"\xef\xbb") == []
    assert parser.feed(b"\xbfdata: 1\n\n\n\ndata: 2") == [SSEEvent(data="1")]
    assert parser.feed(b"") == []
    assert parser.truncated
    with pytest.raises(RuntimeError):
        parser.feed(b"x")
    clean = SSEParser()
    assert clean.feed(b"data: 1\n\n") == [SSEEvent(data="1")]
    clean.feed(b"")
    assert not clean.truncated
    assert parse(b"\xef") == []  # a stream shorter than a BOM


def test_a_trailing_cr_waits_for_a_possible_lf() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\r") == []
    assert parser.feed(b"\n\r\n") == [SSEEvent(data="a")]
    assert parser.feed(b"data: b\r\r") == []  # the second CR may still be a CRLF
    assert parser.feed(b":") == [SSEEvent(data="b")]


def test_limits() -> None:
    with pytest.raises(RemoteProtocolError):
        SSEParser(max_event_size=10).feed(b"data: " + b"x" * 20)
    parser = SSEParser(max_event_size=10)
    with pytest.raises(RemoteProtocolError):
        parser.feed(b"data: 12345\ndata: 67890\n")


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    edges = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(edges) if b > a]


events = st.lists(
    st.tuples(
        st.sampled_from([None, "message", "other"]),
        st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30),
    ),
    max_size=6,
)


@settings(max_examples=60, deadline=None)
@given(
    events, st.lists(st.integers(min_value=0), max_size=12), st.sampled_from(["\n", "\r\n", "\r"])
)
def test_parsing_is_the_same_whatever_the_chunking(
    items: list[tuple[str | None, str]], cuts: list[int], eol: str
) -> None:
    stream = b"".join(sse_event(data, event=kind) for kind, data in items).replace(
        b"\n", eol.encode()
    )
    stream = KEEPALIVE.replace(b"\n", eol.encode()) + stream
    whole = parse(stream)
    parser = SSEParser()
    pieces: list[SSEEvent] = []
    for chunk in chunked(stream, cuts):
        pieces += parser.feed(chunk)
    pieces += parser.feed(b"")
    assert pieces == whole
    # Data lines are split on any line break, so compare normalised text.
    expected = [
        SSEEvent(data=data.replace("\r\n", "\n").replace("\r", "\n"), event=kind or "message")
        for kind, data in items
    ]
    assert whole == expected
