"""The checks of a request head, before its body is read (the table of ``_server``).

Without ``auth`` the verdict depends on a few header values only, which clients repeat:
an :class:`~mcp_proto.http.HTTPServer` remembers it for :data:`_VERDICTS` distinct heads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final
from urllib.parse import parse_qs

import orjson

from .. import types as t
from .._errors import INVALID_REQUEST
from ._auth import Challenge
from ._replies import _JSON, Reply, _error_reply
from .host import Refusal, check_head

if TYPE_CHECKING:
    from ._server import ServerExchange

__all__ = ["head_verdict"]

#: distinct request heads whose verdict an HTTPServer remembers
_VERDICTS = 256
_TOKEN_IN_QUERY: Final = Challenge(
    status=400, error="invalid_request", description="access tokens go in the Authorization header"
)


def head_verdict(ex: ServerExchange) -> Reply | None:
    """The reply the request head gets before its body is read, or ``None`` (the order of
    the checks is the table of :mod:`mcp_proto.http._server`)."""
    server, headers = ex.server, ex.headers
    if server.auth is not None:
        return _check_request_head(ex)
    # without auth the verdict depends on these values only: clients repeat them
    key = (
        ex.method,
        ex.target,
        headers.get("host"),
        headers.get("origin"),
        headers.get("content-type"),
        ex._json_ok,
        ex._sse_ok,
    )
    verdicts = server._verdicts
    if key in verdicts:
        reply = verdicts[key]
    else:
        reply = _check_request_head(ex)
        if len(verdicts) >= _VERDICTS:
            verdicts.clear()  # a client that varies them gets no memory of its own
        verdicts[key] = reply
    if reply is not None:
        return reply
    return _check_length(ex)


def _check_request_head(ex: ServerExchange) -> Reply | None:
    server, headers = ex.server, ex.headers
    target = check_head(
        ex.target,
        headers.get("host"),
        headers.get("origin"),
        server.allowed_hosts,
        server.allowed_origins,
    )
    if isinstance(target, Refusal):
        error = t.Error(code=INVALID_REQUEST, message=target.message)
        return _error_reply(target.status, error)
    path = target.path
    auth = server.auth
    if auth is not None and path in auth.metadata_paths:
        if ex.method not in ("GET", "HEAD"):
            return Reply(status=405, headers=(("allow", "GET"),))
        body = orjson.dumps(auth.metadata_document())
        return Reply(status=200, headers=(_JSON,), body=body)
    if path != server.endpoint:
        return Reply(status=404)
    legacy = server.sessions is not None and ex.method in ("GET", "DELETE")
    if ex.method != "POST" and not legacy:
        return Reply(status=405, headers=(("allow", "POST"),))
    if auth is not None and "access_token" in parse_qs(target.query):
        return server.challenge_reply(_TOKEN_IN_QUERY)  # edge 111: never in the URI
    if auth is not None:
        challenge = auth.check(headers)
        if challenge is not None:
            return server.challenge_reply(challenge)
    ctype = headers.get("content-type")
    if ctype is not None:
        kind, *params = (p.strip().lower() for p in ctype.split(";"))
        charset = [p.partition("=")[2].strip('"') for p in params if p.startswith("charset")]
        if kind != "application/json" or any(c != "utf-8" for c in charset):
            return Reply(status=415, headers=(("accept-post", "application/json"),))
    if not (ex._json_ok or ex._sse_ok):
        return Reply(status=406)
    return _check_length(ex) if auth is not None else None


def _check_length(ex: ServerExchange) -> Reply | None:
    length = ex.headers.get("content-length")
    digits = length is not None and length.isascii() and length.isdigit()
    if digits and int(length or 0) > ex.server.max_body_size:
        return Reply(status=413, headers=(("connection", "close"),))
    return None
