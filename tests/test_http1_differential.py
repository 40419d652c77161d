"""The server's HTTP/1.1 reader against h11 and llhttp on hostile and mutated requests.

Every input is one connection's bytes: a request followed by a pipelined second one.  Three
readers take it -- ours (``ServerWire``), h11 (``h11.Connection(h11.SERVER)``) and llhttp
(``httptools.HttpRequestParser``, default settings, as uvicorn runs it) -- each answering
every complete request at once with an empty response, so that the next one is read, and
stopping at its first refusal, where the connection closes (``Connection: close``,
HTTP/1.0, an llhttp upgrade) or at the end of the input.  What each gives is the list of
complete messages, each ``(method, target, body)`` with the body decoded, and how it
stopped (``fuzz/invariants_http1.py`` drives them).  With ``O``, ``H``, ``L`` the messages
of ours, h11 and llhttp:

(a) **We never accept what both others refuse**: ``len(O) <= max(len(H), len(L))``.  If
    both stop before our ``k``-th message (by refusing, closing or upgrading: each has
    fewer complete messages than we do), we complete no more messages than the more
    permissive of them.

(b) **We never find a message boundary that both place elsewhere**: for every
    ``i < len(O)``, ``O[i] == H[i]`` or ``O[i] == L[i]`` -- the message we complete at
    position ``i`` is, with the same method, target and body, the one h11 or llhttp
    completes at that position.

The rule when one parser stops early: it has no message past its last one, so it cannot
vouch for our later messages, and only the other can; what it might have read later does
not count.  (b) implies (a); both are checked so a failure says which disagreement it is.

Being *stricter* than both -- fewer messages than either, refusing what both read -- is
allowed.  Those cases are :data:`STRICTER`, each with its reason (the table in
``docs/http.md``, "The server's HTTP/1.1"); the list is checked to be exact, so a new
strictness or a lost one shows here.

What this test (its mutations) and the ``http1`` fuzz harness found breaking (a) -- an
empty line before a request line, framing fields among trailers, a second ``Host`` in
HTTP/1.0 -- is fixed in the reader and kept as ``REGRESSIONS`` in the corpus.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzz import invariants_http1 as diff
from fuzz.invariants_http1 import Reading, read_h11, read_llhttp, read_ours, violation
from mcp_proto.http import wire as _http1
from tests.http_hostile import CASES, SECOND, cases
from tests.test_http1 import requests

#: cases where our reader completes fewer messages than both h11 and llhttp, and why
STRICTER = {
    "te-http10": "Transfer-Encoding in HTTP/1.0: RFC 9112 6.1, the framing is faulty",
    "http-0.9": "an HTTP version other than 1.0 and 1.1 is 505 (RFC 9112 2.3)",
    "http-2.0": "an HTTP version other than 1.0 and 1.1 is 505 (RFC 9112 2.3)",
    "request-line-70-KB": "a request line over 64 KiB is 414 (RFC 9112 3)",
    "field-value-70-KB": "a head over 64 KiB is 431, bounded memory",
    "field-name-70-KB": "a head over 64 KiB is 431, bounded memory",
    "fields-200": "more than 128 header fields is 431",
    "trailers-20-KB": "a chunked-body line (a trailer field too) over 1 KiB is 400",
    "chunk-17-digits": "a chunk size of more than 16 digits is 400, bounded",
    "ext-2-KB": "a chunked-body line over 1 KiB is 400, bounded",
    "ext-empty-name": "RFC 9112 7.1.1: a chunk-ext-name is a token, not empty",
    "ext-empty-value": "RFC 9112 7.1.1: a chunk-ext-val is a token or quoted-string",
    "ext-double-semicolon": "RFC 9112 7.1.1: each ';' is followed by a name",
}


def read_all(data: bytes) -> tuple[Reading, Reading, Reading]:
    return read_ours(data), read_h11(data), read_llhttp(data)


def test_the_corpus_is_large_named_and_pipelined() -> None:
    names = [name for name, _ in CASES]
    assert len(names) >= 150
    assert len(set(names)) == len(names), "two cases share an id"
    assert all(data.endswith(SECOND) for _, data in cases())


@functools.cache
def corpus_readings() -> dict[str, tuple[Reading, Reading, Reading]]:
    """Each case's readings by ours, h11 and llhttp (all of them take a tenth of a second)."""
    return {name: read_all(data) for name, data in cases()}


def test_no_hostile_request_is_framed_as_neither_h11_nor_llhttp_frames_it() -> None:
    """(a) and (b) on every case; one test, so that the corpus costs no per-test overhead."""
    broken = {
        name: f"{problem}\n ours {ours}\n h11 {h11_}\n llhttp {llhttp}"
        for name, (ours, h11_, llhttp) in corpus_readings().items()
        if (problem := violation(ours, h11_, llhttp)) is not None
    }
    assert not broken, "\n".join(f"{name}: {why}" for name, why in broken.items())


def test_where_we_are_stricter_than_both_is_exactly_the_documented_list() -> None:
    stricter = {
        name
        for name, (ours, h11_, llhttp) in corpus_readings().items()
        if len(ours.messages) < min(len(h11_.messages), len(llhttp.messages))
    }
    assert stricter == set(STRICTER)


def test_the_properties_catch_a_reader_that_sees_more_or_other_messages() -> None:
    one = (b"POST", b"/", b"hello")
    two = (b"POST", b"/second", b"second")
    refused = Reading([one], "refused: x")
    assert violation(Reading([one, two], "end"), refused, refused) is not None  # (a)
    other = Reading([one, (b"POST", b"/second", b"seco")], "end")
    assert violation(Reading([one, two], "end"), other, Reading([one], "upgrade"))  # (b)
    # each of our messages vouched for by one of them, the other stopped early: fine
    assert violation(Reading([one, two], "end"), Reading([one, two], "end"), refused) is None
    assert violation(Reading([], "refused: y"), Reading([one, two], "end"), refused) is None


def test_the_differential_catches_the_lenient_chunk_line_it_replaced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With whitespace before the extensions taken again (the reader before RFC 9112 7.1
    exactly), the corpus shows the smuggling shape: we read what both others refuse."""
    lenient = rb"([0-9A-Fa-f]{1,16})[ \t]*(?:;[^\r\n]*)?\r\n"
    monkeypatch.setattr(_http1, "_CHUNK_LINE", _http1.re.compile(lenient))
    caught = {name for name, data in cases() if violation(*read_all(data)) is not None}
    assert caught == {
        "ext-bws-before-semicolon",
        "ext-tab-before-semicolon",
        "ext-bws-on-last-chunk",
    }
    with pytest.raises(AssertionError, match=r"\(a\)"):
        diff.check_http1(dict(cases())["ext-bws-before-semicolon"])


# -- random mutations of valid pipelined requests -----------------------------

#: bytes and tokens that matter to HTTP/1.1 framing, spliced in by the mutations
TOKENS = [
    *(b"\r", b"\n", b"\r\n", b" ", b"\t", b":", b";", b"0", b"chunked"),
    *(b"content-length: ", b"transfer-encoding: ", b"HTTP/1.1"),
]
BYTES = st.one_of(st.sampled_from(b"\r\n \t:;0\x00\x0b\x7f\xff"), st.integers(0, 255))


@st.composite
def mutated(draw: Any) -> bytes:
    """Two or three valid requests back to back, then one to four random mutations."""
    data = b"".join(raw for raw, _ in draw(st.lists(requests(), min_size=2, max_size=3)))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(["insert", "delete", "replace", "duplicate", "splice"]))
        if kind == "insert":
            data = data[:at] + bytes([draw(BYTES)]) + data[at:]
        elif kind == "delete":
            data = data[:at] + data[at + 1 :]
        elif kind == "replace":
            data = data[:at] + bytes([draw(BYTES)]) + data[at + 1 :]
        elif kind == "duplicate":
            data = data[: at + 1] + data[at:]
        else:
            data = data[:at] + draw(st.sampled_from(TOKENS)) + data[at:]
    return data


@settings(max_examples=300, deadline=None)
@given(mutated())
def test_mutated_pipelined_requests_are_framed_as_h11_or_llhttp_frames_them(data: bytes) -> None:
    ours, h11_, llhttp = read_all(data)
    problem = violation(ours, h11_, llhttp)
    assert problem is None, f"{problem}\n ours {ours}\n h11 {h11_}\n llhttp {llhttp}"


def test_the_peers_are_the_parsers_we_think() -> None:
    """The readers' own contract: a valid pipeline is two messages for each of the three."""
    data = b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello" + SECOND
    expected = [(b"POST", b"/", b"hello"), (b"POST", b"/second", b"second")]
    for reading in read_all(data):
        assert reading == Reading(expected, "end")
