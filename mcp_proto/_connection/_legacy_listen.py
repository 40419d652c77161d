"""A modern listen on a legacy session: what 2025-11-25 can carry of it (issue 16).

2026-07-28 asks for notifications with ``subscriptions/listen`` and a
:class:`~mcp_proto.types.SubscriptionFilter`; an ``initialize``-era server has no such
request.  What it has instead: list-changed notifications the session gets when the
server declared ``listChanged`` for tools, prompts or resources, and
``resources/subscribe`` (when it declared ``resources.subscribe``), after which
``notifications/resources/updated`` comes for that resource.  Those notifications belong
to the session, not to a request: the client hands each to the listens whose
:meth:`LegacyListen.matches` says so.

What cannot be mapped is left out of :attr:`LegacyListen.honoured`, as a modern server
leaves out what it will not send (SUB-07): a list the server does not announce changes
of, a resource subscription on a server without ``subscribe``.
"""

from __future__ import annotations

from typing import Any

from .. import types as t
from ..types import legacy as lt
from ._events import Notification

__all__ = ["LegacyListen"]

_LISTS = {
    "notifications/tools/list_changed": "tools_list_changed",
    "notifications/prompts/list_changed": "prompts_list_changed",
    "notifications/resources/list_changed": "resources_list_changed",
}


def _kept(wanted: bool | None, capability: Any) -> bool | None:
    """``True`` when the listen wants a list's changes and the server announces them."""
    announces = capability is not None and capability.list_changed is True
    return True if wanted and announces else None


class LegacyListen:
    """What of the filter ``wanted`` a legacy server with ``capabilities`` (its
    ``InitializeResult``'s) can send, and how to ask for it.

    :attr:`honoured` is the filter the listen gets (as a modern server's
    acknowledgement says); :attr:`subscribe` the resource URIs to send
    ``resources/subscribe`` for now, and ``resources/unsubscribe`` for at its end.
    """

    __slots__ = ("honoured", "subscribe")

    def __init__(self, wanted: t.SubscriptionFilter, capabilities: lt.ServerCapabilities) -> None:
        resources = capabilities.resources
        can_subscribe = resources is not None and resources.subscribe is True
        uris = list(dict.fromkeys(wanted.resource_subscriptions or ())) if can_subscribe else []
        self.subscribe: tuple[str, ...] = tuple(uris)
        self.honoured = t.SubscriptionFilter(
            tools_list_changed=_kept(wanted.tools_list_changed, capabilities.tools),
            prompts_list_changed=_kept(wanted.prompts_list_changed, capabilities.prompts),
            resources_list_changed=_kept(wanted.resources_list_changed, resources),
            resource_subscriptions=list(self.subscribe) or None,
        )

    def matches(self, note: Notification) -> bool:
        """Whether session notification ``note`` belongs to this listen."""
        field = _LISTS.get(note.method)
        if field is not None:
            return getattr(self.honoured, field) is True
        if note.method != "notifications/resources/updated":
            return False
        params = note.params
        uri = params.get("uri") if isinstance(params, dict) else getattr(params, "uri", None)
        return uri in self.subscribe
