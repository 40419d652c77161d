"""What a handler table may hold, checked when a handler is registered (issue 17).

A mistake in the table used to surface only when a client called the method: a typo in
a method name was never called, a non-callable or a plain ``def`` on an async server
failed at call time.  :func:`check_handler` says so at once, with what to do instead:

* a handler must be callable (``TypeError``);
* a method the spec defines as a notification or as a request the server sends
  (``sampling/createMessage``...) has no handler (``ValueError``);
* a method the spec does not define is taken as an extension's, unless it is one
  letter-slip away from a spec method (``tool/call``): ``ValueError`` naming it;
* on the asyncio and trio servers a handler is an ``async def`` (or a callable whose
  ``__call__`` is), on the blocking server a plain function: the other kind is a
  ``TypeError`` (the adapters tell them apart; :class:`Handlers` alone does not).
"""

from __future__ import annotations

import difflib
import inspect
from typing import Any, Literal

from mcp_proto import METHODS, Kind

__all__ = ["HandlerKind", "check_handler"]

#: the calling convention of an adapter's handlers (``None``: not checked)
HandlerKind = Literal["sync", "async"] | None

_REQUESTS = sorted(name for name, info in METHODS.items() if info.kind is Kind.REQUEST)


def is_async(fn: Any) -> bool:
    """An ``async def`` (through ``functools.partial`` too), or an object whose
    ``__call__`` is one."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004  (the method itself is what is checked)
    )


def check_handler(method: str, fn: Any, kind: HandlerKind = None) -> None:
    """Raise ``TypeError`` or ``ValueError`` if ``fn`` cannot answer ``method`` on an
    adapter whose handlers are ``kind`` (see the module's docstring)."""
    if not callable(fn):
        raise TypeError(f"the handler for {method!r} is {fn!r}, not something to call")
    info = METHODS.get(method)
    if info is not None and info.kind is not Kind.REQUEST:
        raise ValueError(
            f"{method!r} is a {info.kind.value.replace('_', ' ')} ({info.direction.value}), "
            "not a request a server answers: it takes no handler"
        )
    if info is None:
        near = difflib.get_close_matches(method, _REQUESTS, n=1, cutoff=0.8)
        if near:
            raise ValueError(f"no method {method!r} in the spec: did you mean {near[0]!r}?")
    if kind == "async" and not is_async(fn):
        raise TypeError(
            f"the handler for {method!r} must be an async def on this server: "
            f"{fn!r} is a plain function (use mcp_proto_sync for those)"
        )
    if kind == "sync" and is_async(fn):
        raise TypeError(
            f"the handler for {method!r} must be a plain function on the blocking server: "
            f"{fn!r} is an async def (use mcp_proto_asyncio or mcp_proto_trio)"
        )
