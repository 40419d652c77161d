"""Role-agnostic request bookkeeping: what either role needs to know about a request.

Both the server role (``_server``, ``_server_rules``) and the client role
(``_client``) read this module; it knows neither.  It holds the record of one
request in flight (:class:`InFlight`), the log severities and their ranks
(LOG-04), and which change notifications a listen filter covers (SUB-02,
SUB-16).
"""

from __future__ import annotations

from typing import Any

import attrs

from .. import types as t
from .._codec import METHODS

__all__ = ["CHANGES", "LOG_LEVELS", "LOG_RANK", "InFlight", "matches_filter"]

#: RFC 5424 severities in ascending order (LOG-04).
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
#: severity -> its rank in :data:`LOG_LEVELS` (higher is more severe)
LOG_RANK = {name: i for i, name in enumerate(LOG_LEVELS)}
_FILTER_ATTRS = {
    f.metadata["wire"]: f.name for f in attrs.fields(t.SubscriptionFilter) if f.metadata
}
#: change notification -> the SubscriptionFilter attribute that opts into it (from the registry)
CHANGES = {m: _FILTER_ATTRS[i.listen_filter] for m, i in METHODS.items() if i.listen_filter}


class InFlight:
    """One request the server received and has not finished.

    ``listen`` holds the ``SubscriptionFilter`` a ``subscriptions/listen``
    asked for (``None`` for other methods); ``honoured`` the acknowledged one.
    """

    __slots__ = (
        "capabilities",
        "honoured",
        "id",
        "last_progress",
        "listen",
        "log_rank",
        "method",
        "progress_token",
    )

    def __init__(
        self,
        id: t.RequestId,
        method: str,
        meta: t.RequestMetaObject,
        params: Any,
    ) -> None:
        self.id = id
        self.method = method
        self.capabilities = meta.client_capabilities
        self.progress_token = meta.progress_token
        self.log_rank = LOG_RANK[meta.log_level] if meta.log_level is not None else None
        self.last_progress: float | None = None
        self.listen: t.SubscriptionFilter | None = (
            params.notifications if params is not None else None
        )
        self.honoured: t.SubscriptionFilter | None = None


def matches_filter(method: str, params: Any, honoured: t.SubscriptionFilter) -> bool:
    """Whether a change notification is one the acknowledged filter covers (SUB-02, SUB-16).

    ``notifications/resources/updated`` matches a listed URI exactly, or a
    sub-resource of it (the listed URI followed by ``/``, ``#`` or ``?``).
    """
    attr = CHANGES.get(method)
    if attr is None:
        return False
    if attr != "resource_subscriptions":
        return bool(getattr(honoured, attr))
    uri = getattr(params, "uri", None)
    if not isinstance(uri, str):
        return False
    for listed in honoured.resource_subscriptions or ():
        if uri == listed or (uri.startswith(listed) and uri[len(listed)] in "/#?"):
            return True
        if listed.endswith("/") and uri.startswith(listed):
            return True
    return False
