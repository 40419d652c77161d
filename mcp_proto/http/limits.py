"""The budgets one HTTP server shares across its connections: open listens, buffered bodies.

Pure accounting, with no locks and no clock: an adapter whose connections run on threads
guards a budget itself, with a subclass whose methods take its lock.

* :class:`ListenBudget` -- at most ``total`` open ``subscriptions/listen`` streams per
  server and ``per_client`` per client, so that listens, which hold a connection each for
  as long as they are open, never take every connection from ordinary requests.  A client
  is the bearer token the endpoint's ``auth`` hook accepted, else the peer's IP address (an
  IPv6 peer's ``/64``, which one host usually holds whole): see :func:`client_key`.
* :class:`BodyBudget` and :class:`BodyAccount` -- request body bytes buffered: each
  connection buffers ``allowance`` bytes of its current request on its own, so small
  requests are never refused, and draws what is past that from one shared ``total``.

Past a budget the request is refused with a JSON-RPC error ``-32603`` (what the core
answers past its own ``max_subscriptions``), ``Retry-After`` and ``Connection: close``:
``429`` for a listen past its client's budget, ``503`` past the server's, ``503`` for a
body the shared budget cannot hold (the same request may succeed later, so not ``413``).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Hashable
from typing import Final

from attrs import evolve

from .. import types as t
from .._errors import INTERNAL_ERROR
from ._auth import bearer_token
from ._headers import Headers
from ._replies import Reply, _error_reply
from ._server import HTTPServer

__all__ = [
    "BODY_REFUSAL",
    "BODY_RETRY_AFTER",
    "DEFAULT_BODY_ALLOWANCE",
    "DEFAULT_BODY_BUDGET",
    "DEFAULT_MAX_LISTENS_PER_CLIENT",
    "LISTEN_RETRY_AFTER",
    "BodyAccount",
    "BodyBudget",
    "ListenBudget",
    "client_key",
]

#: bytes of body each connection may buffer without drawing on the shared budget
DEFAULT_BODY_ALLOWANCE: Final = 64 * 1024
#: bytes of bodies past the allowances all connections of a server may buffer together
DEFAULT_BODY_BUDGET: Final = 64 * 1024 * 1024
#: open listens of one client (peer address, or bearer token)
DEFAULT_MAX_LISTENS_PER_CLIENT: Final = 16
#: seconds a refused listen is told to wait: listens end seldom, so not at once
LISTEN_RETRY_AFTER: Final = 10
#: seconds a refused body is told to wait: bodies are read in moments
BODY_RETRY_AFTER: Final = 2


def _refusal(status: int, message: str, retry_after: int, id: t.RequestId | None) -> Reply:
    reply = _error_reply(status, t.Error(code=INTERNAL_ERROR, message=message), id)
    return evolve(
        reply,
        headers=(*reply.headers, ("retry-after", str(retry_after)), ("connection", "close")),
    )


def client_key(server: HTTPServer, headers: Headers, peer: str) -> Hashable:
    """Who sends a request, for the per-client budgets.

    With ``auth`` on the endpoint, a request that reached the application carried a
    bearer token its ``verify`` hook accepted: the token is the principal (the hook
    names no other), so clients behind one proxy or NAT are told apart.  Otherwise the
    peer's IP address, an IPv6 one by its ``/64``.
    """
    if server.auth is not None:
        token = bearer_token(headers)
        if token is not None:
            return ("bearer", token)
    try:
        address = ipaddress.ip_address(peer)
    except ValueError:
        return ("peer", peer)
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return ("peer", str(address.ipv4_mapped))
        return ("peer", str(ipaddress.IPv6Network((int(address) >> 64 << 64, 64))))
    return ("peer", str(address))


class ListenBudget:
    """Open listens of one server: ``total`` at most, ``per_client`` of them per client.

    :meth:`admit` counts a listen or refuses it; :meth:`release` gives its place back
    once it ends, however it ends (called exactly once per admitted listen).
    """

    def __init__(self, total: int, per_client: int) -> None:
        self.total = total
        self.per_client = min(per_client, total)
        self.open = 0
        self._by_client: dict[Hashable, int] = {}

    def admit(self, id: t.RequestId, client: Hashable) -> Reply | None:
        """Count listen ``id`` of ``client``: ``None`` if admitted, else the reply refusing it."""
        held = self._by_client.get(client, 0)
        if held >= self.per_client:
            message = f"too many open subscriptions for this client (limit {self.per_client})"
            return _refusal(429, message, LISTEN_RETRY_AFTER, id)
        if self.open >= self.total:
            message = f"too many open subscriptions on this server (limit {self.total})"
            return _refusal(503, message, LISTEN_RETRY_AFTER, id)
        self._by_client[client] = held + 1
        self.open += 1
        return None

    def release(self, client: Hashable) -> None:
        held = self._by_client.pop(client) - 1
        if held:
            self._by_client[client] = held
        self.open -= 1


class BodyBudget:
    """Body bytes past the per-connection ``allowance`` that all connections hold together."""

    def __init__(self, total: int, allowance: int) -> None:
        self.total = total
        self.allowance = allowance
        self.used = 0

    def reserve(self, n: int) -> bool:
        """Take ``n`` bytes of the budget; ``False`` (and nothing taken) if they do not fit."""
        if self.used + n > self.total:
            return False
        self.used += n
        return True

    def release(self, n: int) -> None:
        self.used -= n


#: the answer to a request whose body the budget cannot hold: try again shortly
BODY_REFUSAL: Final = _refusal(
    503, "the server is buffering too many request bodies", BODY_RETRY_AFTER, None
)


class BodyAccount:
    """One connection's share of a :class:`BodyBudget`: the body of its current request.

    :meth:`add` before buffering body bytes; :meth:`settle` once the request is over
    (answered, refused, or the connection closed) gives back what it drew.
    """

    __slots__ = ("budget", "held", "reserved")

    def __init__(self, budget: BodyBudget) -> None:
        self.budget = budget
        self.held = 0  # body bytes of the current request
        self.reserved = 0  # of those, the bytes drawn from the shared budget

    def add(self, n: int) -> bool:
        """Count ``n`` more body bytes; ``False`` (nothing counted) when the budget is spent."""
        held = self.held + n
        over = held - self.budget.allowance - self.reserved
        if over > 0:
            if not self.budget.reserve(over):
                return False
            self.reserved += over
        self.held = held
        return True

    def settle(self) -> None:
        if self.reserved:
            self.budget.release(self.reserved)
            self.reserved = 0
        self.held = 0
