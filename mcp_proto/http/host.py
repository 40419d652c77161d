"""Strict parsing of ``Host``, ``Origin`` and the request target, and the allow-lists they meet.

The DNS-rebinding check of the server binding (HTTP-02) is only as good as
the parser behind it: a value two parsers read differently (``[::1]evil.com``,
``localhost:80@evil.com``) is a way past it.  So every value is read against
one small grammar, with no repair, and anything outside it is refused:

.. code-block:: text

    authority = host [ ":" port ]                  ; Host (RFC 9110 7.2), never userinfo
    host      = "[" ( IPv6address / IPvFuture ) "]" / reg-name
    reg-name  = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" )   ; IPv4 addresses included
    port      = 1*5DIGIT                           ; at most 65535
    origin    = ( "http" / "https" ) "://" authority          ; RFC 6454, or the literal "null"
    target    = origin-form / ( "http" / "https" ) "://" authority [ path ] [ "?" query ]

This is RFC 3986's ``authority`` narrowed where no HTTP client needs the rest:
no percent-encoding and no sub-delims in a name (they only let one name be
spelled two ways), and no empty port (URI producers omit the ``:``, RFC 3986
3.2.3).  Names compare case-insensitively and IPv6 literals by address
(``[0:0::1]`` is ``[::1]``); nothing else is normalised, so ``localhost.``
(trailing dot), ``127.1`` and ``127.0.0.01`` are names of their own that no
allow-list holds unless it says so.  Every parser is total (a value outside
the grammar gives ``None``), linear in its input, and an accepted authority
serialises back to exactly the text it came from.

:func:`check_head` applies them to a request head, for
:class:`~mcp_proto.http._server.ServerExchange`: a target that is neither
origin-form nor absolute-form, an invalid ``Host``, or an absolute-form target
whose authority disagrees with ``Host`` is ``400`` (RFC 9112 3.2); an authority
or an ``Origin`` the allow-lists do not admit is ``403`` (HTTP-02).
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Iterable

from attrs import frozen

__all__ = [
    "AllowList",
    "Authority",
    "Origin",
    "Refusal",
    "Target",
    "check_head",
    "parse_authority",
    "parse_origin",
    "parse_target",
]

_REG_NAME = re.compile(r"[A-Za-z0-9\-._~]+")
_PORT = re.compile(r"[0-9]{1,5}")
_IPV6 = re.compile(r"[0-9A-Fa-f:.]+")  # the characters of an IPv6address; ipaddress does the rest
_IPV_FUTURE = re.compile(r"[vV][0-9A-Fa-f]+\.[A-Za-z0-9\-._~!$&'()*+,;=:]+")
#: the schemes of an MCP endpoint, with their default ports
_DEFAULT_PORTS = {"http": 80, "https": 443}
#: the ports a ``Host`` without one may stand for: the defaults of http and https
_ANY_DEFAULT = (80, 443)
#: values up to this length are parsed once and remembered (clients repeat them)
_CACHEABLE = 256


@frozen
class Authority:
    """``host [":" port]`` as sent (``str()`` gives it back), with ``name`` to compare.

    ``name`` is the host lowercased, an IPv6 literal in its compressed form;
    ``port`` the port's value, or ``None`` when there is none.
    """

    host: str
    port_text: str | None
    name: str
    port: int | None

    def __str__(self) -> str:
        return self.host if self.port_text is None else f"{self.host}:{self.port_text}"


@frozen
class Origin:
    """A serialized origin (RFC 6454): ``scheme`` lowercase, ``port`` explicit or the default."""

    scheme: str
    authority: Authority

    @property
    def port(self) -> int:
        explicit = self.authority.port
        return _DEFAULT_PORTS[self.scheme] if explicit is None else explicit


@frozen
class Target:
    """A request target: ``path`` and ``query``; ``scheme`` and ``authority`` if absolute-form."""

    path: str
    query: str
    scheme: str | None = None
    authority: Authority | None = None


@frozen
class Refusal:
    """Why a head is refused: the HTTP status and the message of its ``-32600`` error."""

    status: int
    message: str


def _ip_literal(inner: str) -> str | None:
    """The name of ``[inner]``, or None when ``inner`` is not an IPv6address or IPvFuture."""
    if inner[:1] in ("v", "V"):
        return f"[{inner.lower()}]" if _IPV_FUTURE.fullmatch(inner) else None
    if _IPV6.fullmatch(inner) is None:
        return None
    try:
        return f"[{ipaddress.IPv6Address(inner).compressed}]"
    except ValueError:
        return None


def _parse_authority(text: str) -> Authority | None:
    if text[:1] == "[":
        end = text.find("]")
        if end < 0:
            return None
        host = text[: end + 1]
        name = _ip_literal(host[1:-1])
    else:
        host = text.partition(":")[0]
        name = host.lower() if _REG_NAME.fullmatch(host) else None
    if name is None:
        return None
    rest = text[len(host) :]
    if not rest:
        return Authority(host, None, name, None)
    if rest[0] != ":" or _PORT.fullmatch(rest, 1) is None:
        return None  # junk after "]", userinfo, a second ":", an empty or non-digit port
    port = int(rest[1:])
    return Authority(host, rest[1:], name, port) if port <= 65535 else None


@functools.lru_cache(maxsize=64)
def _parse_authority_cached(text: str) -> Authority | None:
    return _parse_authority(text)


def parse_authority(text: str) -> Authority | None:
    """``text`` read as ``host [":" port]`` (the grammar above), or None outside it."""
    if len(text) <= _CACHEABLE:
        return _parse_authority_cached(text)
    return _parse_authority(text)


def parse_origin(text: str) -> Origin | None:
    """``text`` read as an ``http``/``https`` serialized origin, or None (``null`` included)."""
    scheme, sep, rest = text.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in _DEFAULT_PORTS:
        return None
    authority = parse_authority(rest)
    return None if authority is None else Origin(scheme, authority)


def parse_target(text: str) -> Target | None:
    """A request target in origin-form or http(s) absolute-form, or None for any other form.

    The path is everything up to ``?`` as sent (an absolute-form target's
    empty path is ``/``); nothing is decoded or normalised.
    """
    if text[:1] == "/":
        path, _, query = text.partition("?")
        return Target(path, query)
    scheme, sep, rest = text.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in _DEFAULT_PORTS:
        return None  # authority-form, asterisk-form, another scheme, a relative path
    end = len(rest)
    for stop in ("/", "?"):
        found = rest.find(stop, 0, end)
        if found >= 0:
            end = found
    authority = parse_authority(rest[:end])
    if authority is None:
        return None
    path, _, query = rest[end:].partition("?")
    return Target(path or "/", query, scheme, authority)


@frozen
class AllowList:
    """The hosts (or origins) a server admits, built from entries by :meth:`of`.

    An entry is a host (``localhost``, ``[::1]``: any port), a host and port
    (``localhost:3000``: that port only), or, for origins, a serialized origin
    (``https://app.example``: that scheme, host and port).  ``entries`` keeps
    them as given, lowercased.
    """

    entries: frozenset[str]
    names: frozenset[str]
    pinned: frozenset[tuple[str, int]]
    origins: frozenset[tuple[str, str, int]]

    @classmethod
    def of(cls, entries: Iterable[str], *, origins: bool = False) -> AllowList:
        """The allow-list of ``entries``; raises ValueError for an entry outside the grammar
        (TypeError for one string instead of entries).

        Scheme-qualified entries are for origins only (``origins=True``); the
        literal ``null`` is no entry, since any page can send ``Origin: null``.
        """
        if isinstance(entries, str):  # its letters would each be a host name
            raise TypeError("an allow-list is an iterable of entries, not one string")
        texts = frozenset(e.lower() for e in entries)
        names: set[str] = set()
        pinned: set[tuple[str, int]] = set()
        full: set[tuple[str, str, int]] = set()
        for entry in texts:
            if origins and "://" in entry:
                origin = parse_origin(entry)
                if origin is None:
                    raise ValueError(f"allowed origin {entry!r} is not scheme://host[:port]")
                full.add((origin.scheme, origin.authority.name, origin.port))
                continue
            if origins and entry == "null":
                raise ValueError("the null origin cannot be allowed: any page can send it")
            authority = _parse_authority(entry)
            if authority is None:
                raise ValueError(f"allowed host {entry!r} is not host[:port]")
            if authority.port is None:
                names.add(authority.name)
            else:
                pinned.add((authority.name, authority.port))
        return cls(texts, frozenset(names), frozenset(pinned), frozenset(full))

    def admits(self, authority: Authority, scheme: str | None) -> bool:
        """Whether ``authority``, reached with ``scheme`` (None: http or https), is allowed.

        A missing port is the scheme's default, or either default when the
        scheme is unknown (a ``Host`` header on its own).
        """
        name = authority.name
        if name in self.names:
            return True
        if authority.port is not None:
            ports: tuple[int, ...] = (authority.port,)
        else:
            ports = _ANY_DEFAULT if scheme is None else (_DEFAULT_PORTS[scheme],)
        for port in ports:
            if (name, port) in self.pinned or (scheme, name, port) in self.origins:
                return True
        return False


def _shown(value: str) -> str:
    """``value`` quoted for an error message, cut short: the client sent it, it can be long."""
    return repr(value if len(value) <= 100 else value[:100] + "...")


def check_head(
    target: str,
    host: str | None,
    origin: str | None,
    hosts: AllowList | None,
    origins: AllowList | None,
) -> Target | Refusal:
    """The parsed target of a request head, or why the head is refused.

    ``host`` and ``origin`` are the header values (``None`` when absent; several
    values joined by ``", "``, which no grammar admits).  In order: the target
    must be origin-form or http(s) absolute-form (``400``); ``Host`` must parse
    (``400``, RFC 9112 3.2, also with ``hosts`` None); with an absolute-form
    target, ``Host`` must name the same host and port (``400``) and the target's
    authority is the one checked (RFC 9112 3.2.2); that authority must be on
    ``hosts`` (``403``; also when the request names none: an HTTP/1.0 request
    without ``Host`` and with an origin-form target is refused, not let past); a
    present ``Origin`` must parse, not be ``null`` and be on ``origins`` (``403``,
    HTTP-02).  A list of None turns its ``403`` off.
    """
    parsed = parse_target(target)
    if parsed is None:
        return Refusal(400, f"Bad Request: request target {_shown(target)} is not origin-form")
    header = None
    if host is not None:
        header = parse_authority(host)
        if header is None:
            return Refusal(400, f"Bad Request: invalid Host header {_shown(host)}")
    authority, scheme = header, None
    if parsed.authority is not None:
        authority, scheme = parsed.authority, parsed.scheme
        if header is not None and not _same(header, authority, _DEFAULT_PORTS[scheme or "http"]):
            return Refusal(
                400, f"Bad Request: Host {_shown(host or '')} is not the request target's host"
            )
    if hosts is not None and authority is None:  # HTTP/1.0 lets a client name no host
        return Refusal(403, "Forbidden: the request names no host (no Host header)")
    if hosts is not None and authority is not None and not hosts.admits(authority, scheme):
        return Refusal(403, f"Forbidden: host {_shown(str(authority))} is not allowed")
    if origins is not None and origin is not None:
        sent = parse_origin(origin)
        if sent is None or not origins.admits(sent.authority, sent.scheme):
            return Refusal(403, f"Forbidden: origin {_shown(origin)} is not allowed")
    return parsed


def _same(a: Authority, b: Authority, default: int) -> bool:
    """Whether two authorities name the same host and port, a missing port being ``default``."""
    port_a = default if a.port is None else a.port
    port_b = default if b.port is None else b.port
    return a.name == b.name and port_a == port_b
