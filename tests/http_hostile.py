"""Hostile HTTP/1.1 requests: the corpus of ``tests/test_http1_differential.py``.

Each case is ``(id, first request)``; :func:`cases` appends :data:`SECOND`, a well-formed
request with a body, so that a reader that frames the first request differently shows it
as a different number of messages or a different second body.  The ``http1`` fuzz harness
takes these as seeds too (``fuzz/corpus_http.py``).
"""

from __future__ import annotations

#: the pipelined request after every case
SECOND = b"POST /second HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\n\r\nsecond"
CHUNKED = b"5\r\nhello\r\n0\r\n\r\n"


def post(fields: bytes = b"", body: bytes = b"", start: bytes = b"POST / HTTP/1.1") -> bytes:
    """A request: ``start``, ``Host: a``, then ``fields`` (each ending CRLF) and ``body``."""
    return start + b"\r\nHost: a\r\n" + fields + b"\r\n" + body


def te(value: bytes, body: bytes = CHUNKED, extra: bytes = b"") -> bytes:
    return post(b"Transfer-Encoding: " + value + b"\r\n" + extra, body)


def cl(value: bytes, body: bytes = b"hello", extra: bytes = b"") -> bytes:
    return post(b"Content-Length: " + value + b"\r\n" + extra, body)


def chunked(body: bytes) -> bytes:
    return te(b"chunked", body)


def line(request_line: bytes, fields: bytes = b"Host: a\r\n") -> bytes:
    return request_line + b"\r\n" + fields + b"\r\n"


SMUGGLING = [
    ("cl-te", cl(b"6", b"0\r\n\r\nG", b"Transfer-Encoding: chunked\r\n")),
    ("te-cl", te(b"chunked", b"5c\r\nGPOST / HTTP/1.1\r\n\r\n0\r\n\r\n",
                 b"Content-Length: 4\r\n")),
    ("cl-cl-differ", cl(b"5", extra=b"Content-Length: 6\r\n")),
    ("cl-cl-same", cl(b"5", extra=b"Content-Length: 5\r\n")),
    ("cl-cl-one-empty", cl(b"5", extra=b"Content-Length: \r\n")),
    ("te-te-cow", te(b"chunked", extra=b"Transfer-Encoding: cow\r\n")),
    ("te-te-same", te(b"chunked", extra=b"Transfer-Encoding: chunked\r\n")),
    ("te-te-identity-last", te(b"chunked", extra=b"Transfer-Encoding: identity\r\n")),
    ("te-te-chunked-last", te(b"identity", extra=b"Transfer-Encoding: chunked\r\n")),
    ("te-te-empty-last", te(b"chunked", extra=b"Transfer-Encoding: \r\n")),
    ("cl-te-space-colon", cl(b"6", b"0\r\n\r\nG", b"Transfer-Encoding : chunked\r\n")),
    ("cl-te-http10", cl(b"6", b"0\r\n\r\nG", b"Transfer-Encoding: chunked\r\n").replace(
        b"HTTP/1.1", b"HTTP/1.0")),
    ("cl-zero-te", te(b"chunked", extra=b"Content-Length: 0\r\n")),
    ("cl-te-x-chunked", cl(b"5", extra=b"Transfer-Encoding: x-chunked\r\n")),
    ("get-cl-body", cl(b"5").replace(b"POST", b"GET")),
    ("get-te-body", te(b"chunked").replace(b"POST", b"GET")),
    ("head-cl-body", cl(b"5").replace(b"POST", b"HEAD")),
]  # fmt: skip

TE_VALUES = [
    ("te-trailing-space", b"chunked "),
    ("te-Chunked", b"Chunked"),
    ("te-CHUNKED", b"CHUNKED"),
    ("te-mixed-case", b"cHuNkEd"),
    ("te-chunked-chunked", b"chunked, chunked"),
    ("te-chunked-space-comma", b"chunked , chunked"),
    ("te-x-chunked", b"x-chunked"),
    ("te-chunkedx", b"chunkedx"),
    ("te-chunk", b"chunk"),
    ("te-chunked-q", b"chunked;q=1"),
    ("te-chunked-semicolon", b"chunked;"),
    ("te-leading-tab", b"\tchunked"),
    ("te-trailing-tab", b"chunked\t"),
    ("te-identity", b"identity"),
    ("te-identity-chunked", b"identity, chunked"),
    ("te-gzip-chunked", b"gzip, chunked"),
    ("te-chunked-gzip", b"chunked, gzip"),
    ("te-chunked-identity", b"chunked, identity"),
    ("te-empty", b""),
    ("te-quoted", b'"chunked"'),
    ("te-trailing-comma", b"chunked,"),
    ("te-leading-comma", b", chunked"),
    ("te-comma-only", b","),
    ("te-vtab", b"\x0bchunked"),
    ("te-nul", b"chunked\x00"),
    ("te-obs-text", b"chunked\xff"),
    ("te-chunked-bare-cr", b"chunked\r"),
]

TE_FIELDS = [
    ("te-space-before-colon", b"Transfer-Encoding : chunked\r\n"),
    ("te-tab-before-colon", b"Transfer-Encoding\t: chunked\r\n"),
    ("te-lowercase-name", b"transfer-encoding: chunked\r\n"),
    ("te-no-ows", b"Transfer-Encoding:chunked\r\n"),
    ("te-underscore-name", b"Transfer_Encoding: chunked\r\n"),
    ("te-name-nul", b"Transfer-Encoding\x00: chunked\r\n"),
    ("te-name-prefix-space", b" Transfer-Encoding: chunked\r\n"),
    ("te-folded-value", b"Transfer-Encoding:\r\n chunked\r\n"),
    ("te-folded-continuation", b"Transfer-Encoding: chunked\r\n , identity\r\n"),
    ("te-folded-tab", b"Transfer-Encoding:\r\n\tchunked\r\n"),
    ("te-x-header-then-te", b"X-Transfer-Encoding: chunked\r\n"),
]

CL_VALUES = [
    ("cl-plus", b"+5"),
    ("cl-minus", b"-5"),
    ("cl-minus-zero", b"-0"),
    ("cl-space-inside", b"5 5"),
    ("cl-leading-zeros", b"005"),
    ("cl-many-leading-zeros", b"0" * 30 + b"5"),
    ("cl-hex", b"0x5"),
    ("cl-hex-letter", b"a"),
    ("cl-decimal-point", b"5.0"),
    ("cl-exponent", b"5e0"),
    ("cl-huge", b"9" * 25),
    ("cl-2-64-plus-5", b"18446744073709551621"),
    ("cl-2-63-plus-5", b"9223372036854775813"),
    ("cl-list-same", b"5, 5"),
    ("cl-list-same-no-space", b"5,5"),
    ("cl-list-differ", b"5, 6"),
    ("cl-trailing-comma", b"5,"),
    ("cl-leading-comma", b",5"),
    ("cl-empty", b""),
    ("cl-trailing-space", b"5 "),
    ("cl-leading-tab", b"\t5"),
    ("cl-nul", b"5\x00"),
    ("cl-fullwidth-digit", "\uff15".encode()),
    ("cl-superscript-one", b"\xb9"),
    ("cl-underscore", b"5_0"),
    ("cl-quoted", b'"5"'),
    ("cl-vtab", b"\x0b5"),
    ("cl-too-short", b"3"),
    ("cl-too-long", b"10"),
    ("cl-zero-with-body", b"0"),
]

CL_FIELDS = [
    ("cl-space-before-colon", b"Content-Length : 5\r\n"),
    ("cl-tab-before-colon", b"Content-Length\t: 5\r\n"),
    ("cl-underscore-name", b"Content_Length: 5\r\n"),
    ("cl-folded", b"Content-Length:\r\n 5\r\n"),
    ("cl-name-prefix-space", b" Content-Length: 5\r\n"),
]

CHUNK_SIZES = [
    ("chunk-16-digits", b"0" * 15 + b"5\r\nhello\r\n0\r\n\r\n"),
    ("chunk-17-digits", b"0" * 16 + b"5\r\nhello\r\n0\r\n\r\n"),
    ("chunk-40-digits", b"0" * 39 + b"5\r\nhello\r\n0\r\n\r\n"),
    ("chunk-2-64", b"10000000000000000\r\nhello\r\n0\r\n\r\n"),
    ("chunk-2-64-plus-5", b"10000000000000005\r\nhello\r\n0\r\n\r\n"),
    ("chunk-2-64-minus-1", b"ffffffffffffffff\r\nhello\r\n0\r\n\r\n"),
    ("chunk-2-128-plus-5", b"1" + b"0" * 31 + b"5\r\nhello\r\n0\r\n\r\n"),
    ("chunk-uppercase-hex", b"A\r\nhellohello\r\n0\r\n\r\n"),
    ("chunk-negative", b"-5\r\nhello\r\n0\r\n\r\n"),
    ("chunk-plus", b"+5\r\nhello\r\n0\r\n\r\n"),
    ("chunk-0x", b"0x5\r\nhello\r\n0\r\n\r\n"),
    ("chunk-space-before", b" 5\r\nhello\r\n0\r\n\r\n"),
    ("chunk-space-after", b"5 \r\nhello\r\n0\r\n\r\n"),
    ("chunk-size-empty", b"\r\nhello\r\n0\r\n\r\n"),
    ("chunk-size-not-hex", b"g\r\nhello\r\n0\r\n\r\n"),
    ("chunk-size-too-small", b"3\r\nhello\r\n0\r\n\r\n"),
    ("chunk-size-too-big", b"7\r\nhello\r\n0\r\n\r\n"),
    ("chunk-last-00", b"5\r\nhello\r\n00\r\n\r\n"),
    ("chunk-no-last", b"5\r\nhello\r\n"),
    ("chunk-no-final-crlf", b"5\r\nhello\r\n0\r\n"),
    ("chunk-zero-then-data", b"0\r\nhello\r\n\r\n"),
    ("chunk-trailer", b"5\r\nhello\r\n0\r\nX-T: y\r\n\r\n"),
    ("chunk-trailer-cl", b"5\r\nhello\r\n0\r\nContent-Length: 5\r\n\r\n"),
    ("chunk-trailer-fold", b"5\r\nhello\r\n0\r\nX-T: y\r\n z\r\n\r\n"),
    ("chunk-trailer-no-colon", b"5\r\nhello\r\n0\r\nX-T y\r\n\r\n"),
]

CHUNK_EXTENSIONS = [
    ("ext-name", b"5;a"),
    ("ext-value", b"5;a=b"),
    ("ext-quoted-space", b'5;a="b c"'),
    ("ext-quoted-escape", b'5;a="b\\"c"'),
    ("ext-quoted-backslash", b'5;a="b\\\\"'),
    ("ext-quoted-semicolon", b'5;a="b;c"'),
    ("ext-quoted-unterminated", b'5;a="bc'),
    ("ext-quoted-escaped-end", b'5;a="bc\\"'),
    ("ext-quoted-obs-text", b'5;a="\xff"'),
    ("ext-bws-after-semicolon", b"5; a"),
    ("ext-bws-around-equals", b"5;a = b"),
    ("ext-bws-before-semicolon", b"5 ;a"),
    ("ext-tab-before-semicolon", b"5\t;a"),
    ("ext-tab-after-semicolon", b"5;\ta"),
    ("ext-empty-name", b"5;=b"),
    ("ext-empty-value", b"5;a="),
    ("ext-semicolon-only", b"5;"),
    ("ext-double-semicolon", b"5;;a"),
    ("ext-trailing-semicolon", b"5;a;"),
    ("ext-two", b"5;a=b;c=d"),
    ("ext-space-in-value", b"5;a=b c"),
    ("ext-space-after-value", b"5;a=b "),
    ("ext-nul", b"5;a\x00"),
    ("ext-obs-text-token", b"5;a=\xff"),
    ("ext-bare-lf-inside", b"5;a\nb"),
    ("ext-bare-cr-inside", b"5;a\rb"),
    ("ext-quoted-crlf-inside", b'5;a="b\r\nc"'),
    ("ext-500-bytes", b"5;a=" + b"x" * 500),
    ("ext-2-KB", b"5;a=" + b"x" * 2000),
    ("ext-many", b"5" + b";a=b" * 100),
]

BARE_CR_LF = [
    ("lf-ends-request-line", b"POST / HTTP/1.1\nHost: a\r\nContent-Length: 5\r\n\r\nhello"),
    ("lf-everywhere-in-head", b"POST / HTTP/1.1\nHost: a\nContent-Length: 5\n\nhello"),
    ("cr-ends-request-line", b"POST / HTTP/1.1\rHost: a\r\nContent-Length: 5\r\n\r\nhello"),
    ("cr-in-target", line(b"GET /a\rb HTTP/1.1")),
    ("cr-in-field-value", post(b"X: a\rb\r\n")),
    ("cr-in-field-name", post(b"X\r: b\r\n")),
    ("cr-cr-lf-ends-field", post(b"X: a\r\r\n")),
    ("cr-ends-field", post(b"X: a\rContent-Length: 5\r\n", b"hello")),
    ("head-ends-lf-crlf", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\n\r\nhello"),
    ("head-ends-crlf-lf", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\nhello"),
    ("head-ends-cr-cr", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\r\r\nhello"),
    ("lf-ends-chunk-size", chunked(b"5\nhello\r\n0\r\n\r\n")),
    ("cr-ends-chunk-size", chunked(b"5\rhello\r\n0\r\n\r\n")),
    ("lf-after-chunk-data", chunked(b"5\r\nhello\n0\r\n\r\n")),
    ("cr-after-chunk-data", chunked(b"5\r\nhello\r0\r\n\r\n")),
    ("cr-cr-lf-after-chunk-data", chunked(b"5\r\nhello\r\r\n0\r\n\r\n")),
    ("nothing-after-chunk-data", chunked(b"5\r\nhello0\r\n\r\n")),
    ("lf-ends-last-chunk", chunked(b"5\r\nhello\r\n0\n\r\n")),
    ("lf-lf-ends-chunked-body", chunked(b"5\r\nhello\r\n0\n\n")),
    ("lf-ends-trailer-section", chunked(b"5\r\nhello\r\n0\r\n\n")),
    ("lf-ends-trailer-field", chunked(b"5\r\nhello\r\n0\r\nX: y\n\r\n")),
    ("cr-in-trailer-field", chunked(b"5\r\nhello\r\n0\r\nX: a\rb\r\n\r\n")),
    ("cr-cr-lf-ends-chunked-body", chunked(b"5\r\nhello\r\n0\r\n\r\r\n")),
    ("lf-before-second", cl(b"5", b"hello\n")),
    ("crlf-before-second", cl(b"5", b"hello\r\n")),
    ("cr-before-second", cl(b"5", b"hello\r")),
    ("crlfs-before-first", b"\r\n\r\n\r\n" + cl(b"5")),
    ("lfs-before-first", b"\n\n" + cl(b"5")),
    ("cr-before-first", b"\r" + cl(b"5")),
]

HEAD_BYTES = [
    ("fold-host", post(b"X: 1\r\n", start=b"POST / HTTP/1.1\r\nHost: a\r\n b")),
    ("fold-field", post(b"X: a\r\n b\r\n")),
    ("fold-field-tab", post(b"X: a\r\n\tb\r\n")),
    ("fold-first-line", b"POST / HTTP/1.1\r\n X: a\r\nHost: a\r\n\r\n"),
    ("nul-in-name", post(b"X\x00Y: z\r\n")),
    ("nul-in-value", post(b"X: a\x00b\r\n")),
    ("nul-in-target", line(b"GET /a\x00b HTTP/1.1")),
    ("space-in-name", post(b"X Y: z\r\n")),
    ("space-before-colon", post(b"X : y\r\n")),
    ("empty-name", post(b": y\r\n")),
    ("no-colon", post(b"X y\r\n")),
    ("colon-only", post(b":\r\n")),
    ("colon-in-value", post(b"X:Y: z\r\n")),
    ("del-in-name", post(b"X\x7fY: z\r\n")),
    ("del-in-value", post(b"X: a\x7fb\r\n")),
    ("obs-text-in-value", post(b"X: \xe9t\xe9\r\n")),
    ("obs-text-in-name", post(b"X\xe9: z\r\n")),
    ("tab-in-value", post(b"X: a\tb\r\n")),
    ("vtab-in-value", post(b"X: a\x0bb\r\n")),
    ("escape-in-value", post(b"X: a\x1bb\r\n")),
    ("utf8-in-value", post("X: é\r\n".encode())),
]

TARGETS = [
    ("absolute-form", line(b"GET http://a/x HTTP/1.1")),
    ("absolute-form-other-host", line(b"GET http://b/x HTTP/1.1")),
    ("authority-form-connect", line(b"CONNECT a:443 HTTP/1.1")),
    ("authority-form-get", line(b"GET a:443 HTTP/1.1")),
    ("asterisk-options", line(b"OPTIONS * HTTP/1.1")),
    ("asterisk-get", line(b"GET * HTTP/1.1")),
    ("target-fragment", line(b"GET /a#b HTTP/1.1")),
    ("target-space", line(b"GET /a b HTTP/1.1")),
    ("target-tab", line(b"GET /a\tb HTTP/1.1")),
    ("target-del", line(b"GET /a\x7fb HTTP/1.1")),
    ("target-obs-text", line(b"GET /\xe9 HTTP/1.1")),
    ("target-empty", line(b"GET  HTTP/1.1")),
    ("target-double-slash", line(b"GET //a HTTP/1.1")),
    ("target-backslash", line(b"GET /a\\b HTTP/1.1")),
    ("target-quote-angle", line(b'GET /"<>" HTTP/1.1')),
    ("target-braces-pipe", line(b"GET /{|}^` HTTP/1.1")),
    ("target-no-slash", line(b"GET a HTTP/1.1")),
]

HOSTS = [
    ("host-twice", post(b"Host: b\r\n")),
    ("host-twice-same", post(b"Host: a\r\n")),
    ("host-missing", b"GET / HTTP/1.1\r\n\r\n"),
    ("host-missing-http10", b"GET / HTTP/1.0\r\n\r\n"),
    ("host-twice-http10", b"GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n"),
    ("host-empty", b"GET / HTTP/1.1\r\nHost:\r\n\r\n"),
    ("host-space", b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n"),
    ("host-at", b"GET / HTTP/1.1\r\nHost: a@b\r\n\r\n"),
    ("host-list", b"GET / HTTP/1.1\r\nHost: a, b\r\n\r\n"),
    ("host-space-before-colon", b"GET / HTTP/1.1\r\nHost : a\r\n\r\n"),
]

VERSIONS = [
    ("http-0.9-request", b"GET /\r\n\r\n"),
    ("http-0.9", line(b"GET / HTTP/0.9")),
    ("http-1.0", line(b"GET / HTTP/1.0")),
    ("http-1.2", line(b"GET / HTTP/1.2")),
    ("http-2.0", line(b"GET / HTTP/2.0")),
    ("http-3.0", line(b"GET / HTTP/3.0")),
    ("http-11.1", line(b"GET / HTTP/11.1")),
    ("http-1.10", line(b"GET / HTTP/1.10")),
    ("http-1", line(b"GET / HTTP/1")),
    ("http-lowercase", line(b"GET / http/1.1")),
    ("http-trailing-space", line(b"GET / HTTP/1.1 ")),
    ("http-trailing-tab", line(b"GET / HTTP/1.1\t")),
    ("http-https", line(b"GET / HTTPS/1.1")),
    ("http-space-slash", line(b"GET / HTTP /1.1")),
    ("http-suffix", line(b"GET / HTTP/1.1x")),
    ("http-1.0-keep-alive", line(b"GET / HTTP/1.0", b"Connection: keep-alive\r\n")),
]

METHODS = [
    ("method-space-inside", line(b"GE T / HTTP/1.1")),
    ("method-lowercase", line(b"get / HTTP/1.1")),
    ("method-nul", line(b"G\x00ET / HTTP/1.1")),
    ("method-tab-separator", line(b"GET\t/ HTTP/1.1")),
    ("method-two-spaces", line(b"GET  / HTTP/1.1")),
    ("method-at", line(b"G@T / HTTP/1.1")),
    ("method-paren", line(b"G(T / HTTP/1.1")),
    ("method-slash", line(b"G/T / HTTP/1.1")),
    ("method-utf8", line("ÇET / HTTP/1.1".encode())),
    ("method-del", line(b"PO\x7fST / HTTP/1.1")),
    ("method-brackets", line(b"[GET] / HTTP/1.1")),
    ("method-token-chars", line(b"!#$%&'*+-.^_`|~ / HTTP/1.1")),
    ("method-100-chars", line(b"X" * 100 + b" / HTTP/1.1")),
    ("method-leading-space", line(b" GET / HTTP/1.1")),
    ("method-missing", line(b"/ HTTP/1.1")),
]

SIZES = [
    ("request-line-70-KB", line(b"GET /" + b"a" * 70_000 + b" HTTP/1.1")),
    ("field-value-70-KB", post(b"X: " + b"a" * 70_000 + b"\r\n")),
    ("field-name-70-KB", post(b"X" * 70_000 + b": a\r\n")),
    ("head-20-KB", post(b"".join(b"X-%d: %s\r\n" % (i, b"a" * 1000) for i in range(20)))),
    ("fields-120", post(b"".join(b"X-%d: a\r\n" % i for i in range(120)))),
    ("fields-200", post(b"".join(b"X-%d: a\r\n" % i for i in range(200)))),
    ("trailers-20-KB", chunked(b"5\r\nhello\r\n0\r\n" + b"X: " + b"a" * 20_000 + b"\r\n\r\n")),
]

EXPECT_UPGRADE = [
    ("expect-100-continue", cl(b"5", extra=b"Expect: 100-continue\r\n")),
    ("expect-unknown", cl(b"5", extra=b"Expect: foo\r\n")),
    ("expect-100-http10", cl(b"5", extra=b"Expect: 100-continue\r\n").replace(
        b"HTTP/1.1", b"HTTP/1.0")),
    ("upgrade-websocket", post(b"Upgrade: websocket\r\nConnection: Upgrade\r\n")),
    ("upgrade-h2c", post(b"Upgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\n"
                         b"HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n")),
    ("upgrade-without-connection", post(b"Upgrade: websocket\r\n")),
    ("upgrade-with-body", cl(b"5", extra=b"Upgrade: websocket\r\nConnection: Upgrade\r\n")),
    ("connection-upgrade-alone", post(b"Connection: Upgrade\r\n")),
    ("connect-with-body", cl(b"5").replace(b"POST /", b"CONNECT a:443")),
    ("connection-close", post(b"Connection: close\r\n")),
    ("connection-close-uppercase", post(b"Connection: CLOSE\r\n")),
    ("connection-close-in-list", post(b"Connection: keep-alive, close\r\n")),
    ("connection-closex", post(b"Connection: closex\r\n")),
]  # fmt: skip

#: inputs where our reader once completed messages that both h11 and llhttp refused
#: (found by the mutation test); each now a 400 (docs/http.md, "The server's HTTP/1.1")
REGRESSIONS = [
    ("empty-line-then-unregistered-method", b"\n\nOST / HTTP/1.1\r\nHost: a\r\n\r\n"),
    ("empty-line-then-bare-lf-head", b"\r\nPOST / HTTP/1.1\nHost: a\nContent-Length: 5\n\nhello"),
    ("cl-then-empty-line-then-bad-method", cl(b"5", b"hello\nZ")),
    (
        "trailer-malformed-content-length",
        chunked(b"5\r\nhello\r\n0\r\nContent-Length:: 5\r\n\r\n"),
    ),
    ("trailer-unknown-coding", chunked(b"5\r\nhello\r\n0\r\nTransfer-Encoding: gzip\r\n\r\n")),
    # found by the http1 fuzz harness: RFC 9112 3.2 refuses a second Host in any request
    ("http10-host-twice-bare-lf", b"GET / HTTP/1.0\r\nHost: a\nHost: b\r\n\r\n"),
]

CASES: list[tuple[str, bytes]] = [
    *SMUGGLING,
    *((name, te(value)) for name, value in TE_VALUES),
    *((f"{name}-and-cl", te(value, extra=b"Content-Length: 5\r\n")) for name, value in TE_VALUES),
    *((name, post(field, CHUNKED)) for name, field in TE_FIELDS),
    ("te-http10", te(b"chunked").replace(b"HTTP/1.1", b"HTTP/1.0")),
    *((name, cl(value)) for name, value in CL_VALUES),
    *((name, post(field, b"hello")) for name, field in CL_FIELDS),
    *((name, chunked(body)) for name, body in CHUNK_SIZES),
    *((name, chunked(size + b"\r\nhello\r\n0\r\n\r\n")) for name, size in CHUNK_EXTENSIONS),
    ("ext-on-last-chunk", chunked(b"5\r\nhello\r\n0;a=b\r\n\r\n")),
    ("ext-bws-on-last-chunk", chunked(b"5\r\nhello\r\n0 ;a\r\n\r\n")),
    *BARE_CR_LF,
    *HEAD_BYTES,
    *TARGETS,
    *HOSTS,
    *VERSIONS,
    *METHODS,
    *SIZES,
    *EXPECT_UPGRADE,
    *REGRESSIONS,
]


def cases() -> list[tuple[str, bytes]]:
    """Every case as ``(id, bytes)``, the pipelined :data:`SECOND` request appended."""
    return [(name, first + SECOND) for name, first in CASES]
