"""What a handler table may hold, checked when a handler is registered (issue 17).

A mistake in the table used to surface only when a client called the method: a typo in
a method name was never called, a non-callable or a plain ``def`` on an async server
failed at call time.  :func:`check_handler` says so at once, with what to do instead:

* a handler must be callable (``TypeError``);
* a method the spec defines as a notification or as a request the server sends
  (``sampling/createMessage``...) has no handler (``ValueError``);
* a method the spec does not define is answered ``-32601`` by the core unless an
  extension the server registered (``extensions=``) declares it: such a handler would
  never run, so it is a ``ValueError`` (naming the spec method it is one slip from, if
  any: ``tool/call``);
* on the asyncio and trio servers a handler is an ``async def`` (or a callable whose
  ``__call__`` is, a ``functools.partial`` of one, a decorator's wrapper that names it
  in ``__wrapped__``), on the blocking server a plain function: the other kind is a
  ``TypeError`` (the adapters tell them apart; :class:`Handlers` alone does not).
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable
from typing import Any, Literal

from mcp_proto import METHODS, Kind

__all__ = ["HandlerKind", "check_handler", "check_method"]

#: the calling convention of an adapter's handlers (``None``: not checked)
HandlerKind = Literal["sync", "async"] | None

_REQUESTS = sorted(name for name, info in METHODS.items() if info.kind is Kind.REQUEST)


def is_async(fn: Any) -> bool:
    """An ``async def`` (through ``functools.partial`` and ``__wrapped__`` too), or an
    object whose ``__call__`` is one."""
    seen = 0
    while seen < 8:  # (a bounded unwrap: a partial of a wrapper of a partial...)
        call = getattr(fn, "__call__", None)  # noqa: B004  (the method itself is checked)
        if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call):
            return True
        inner = getattr(fn, "func", None) or getattr(fn, "__wrapped__", None)
        if inner is None:
            return False
        fn, seen = inner, seen + 1
    return False


def check_handler(method: str, fn: Any, kind: HandlerKind = None) -> None:
    """Raise ``TypeError`` if ``fn`` cannot be called, or is not of ``kind`` (see the
    module's docstring)."""
    if not callable(fn):
        raise TypeError(f"the handler for {method!r} is {fn!r}, not something to call")
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


def check_method(method: str, declared: Callable[[str], bool] = lambda _: False) -> None:
    """Raise ``ValueError`` if a handler for ``method`` could never run (see the module's
    docstring); ``declared(method)`` says whether a registered extension declares it."""
    info = METHODS.get(method)
    if info is not None and info.kind is not Kind.REQUEST:
        raise ValueError(
            f"{method!r} is a {info.kind.value.replace('_', ' ')} ({info.direction.value}), "
            "not a request a server answers: it takes no handler"
        )
    if info is None and not declared(method):
        near = difflib.get_close_matches(method, _REQUESTS, n=1, cutoff=0.8)
        hint = (
            f": did you mean {near[0]!r}?"
            if near
            else ("; an extension's method needs its Extension in the server's extensions=")
        )
        raise ValueError(f"no method {method!r} in the spec{hint}")
