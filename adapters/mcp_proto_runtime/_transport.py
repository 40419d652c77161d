"""What a handler may know of the transport its request came on (issue 17).

``ctx.transport`` on every adapter's handler context: the kind (``"stdio"`` or
``"http"``), the HTTP request's headers, the principal the server's ``auth`` hook let in,
and the peer.  Per-user logic (a tenant from a header, a quota per principal) and the
``principal`` binding of :class:`mcp_proto.RequestStateSealer` read it.
"""

from __future__ import annotations

import os
from typing import Literal

from attrs import frozen

from mcp_proto.http import Headers, bearer_token

__all__ = ["Transport", "http_transport", "stdio_transport"]


@frozen(kw_only=True)
class Transport:
    """The transport of one request.

    ``headers``: the HTTP request's (names lower-case; ``None`` on stdio).  ``principal``:
    over HTTP with ``auth=``, the bearer token its ``verify`` hook accepted (the token is
    the principal, as the listen budgets count it, ``mcp_proto.http.limits``); ``None``
    without ``auth`` and on stdio.  ``peer``: the client's IP address over HTTP;
    on stdio, the id of the process that started this server (the
    client, for ``serve_stdio``).
    """

    kind: Literal["stdio", "http"]
    headers: Headers | None = None
    principal: str | None = None
    peer: str | int | None = None


def stdio_transport() -> Transport:
    """The transport of a stdio server's requests."""
    return Transport(kind="stdio", peer=os.getppid())


def http_transport(headers: Headers, peer: str, *, authenticated: bool) -> Transport:
    """The transport of an HTTP request with ``headers`` from ``peer``; ``authenticated``:
    the server has ``auth``, so the request's bearer token passed its ``verify`` hook."""
    principal = bearer_token(headers) if authenticated else None
    return Transport(kind="http", headers=headers, principal=principal, peer=peer)
