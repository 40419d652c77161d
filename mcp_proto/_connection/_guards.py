"""The named rules a request's transition checks: pure functions, each with its rule id.

A guard is ``guard(record, value, config) -> str | None``: the reason the transition
is refused, or ``None`` when it passes.  ``record`` is the request's
:class:`~mcp_proto._connection._requests.RequestRecord`, ``value`` what the move
carries (a result, progress or log params, an acknowledged filter, a change's
params), ``config`` the connection's :class:`GuardConfig`.  :data:`GUARDS` maps each
name to its function and rule id; the transition table of ``_requests`` names guards
by these names, so the table, the error and the generated diagram
(``docs/connections.md``) all say the same rule.

This module also holds what the guards share with the roles: the log severities and
their ranks (LOG-04) and which change notifications a listen filter covers (SUB-02,
SUB-16).  It knows no role.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeAlias

import attrs
from attrs import frozen

from .. import types as t
from .._codec import METHODS
from ._capabilities import undeclared_input_requests
from ._extensions import ExtensionRegistry

if TYPE_CHECKING:
    from ._requests import RequestRecord

__all__ = [
    "CHANGES",
    "GUARDS",
    "LOG_LEVELS",
    "LOG_RANK",
    "Guard",
    "GuardConfig",
    "RECEIVED",
    "matches_filter",
    "narrowed",
    "unasked",
]

#: RFC 5424 severities in ascending order (LOG-04).
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
#: severity -> its rank in :data:`LOG_LEVELS` (higher is more severe)
LOG_RANK = {name: i for i, name in enumerate(LOG_LEVELS)}
_FILTER_ATTRS = {
    f.metadata["wire"]: f.name for f in attrs.fields(t.SubscriptionFilter) if f.metadata
}
#: change notification -> the SubscriptionFilter attribute that opts into it (from the registry)
CHANGES = {m: _FILTER_ATTRS[i.listen_filter] for m, i in METHODS.items() if i.listen_filter}


@frozen(kw_only=True)
class GuardConfig:
    """What the guards read of the connection: set once, never changed."""

    #: the extensions the connection knows (result classes of extension methods)
    extensions: ExtensionRegistry = attrs.field(factory=lambda: ExtensionRegistry((), {}))


Guard: TypeAlias = Callable[["RequestRecord", Any, GuardConfig], "str | None"]


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


def unasked(honoured: t.SubscriptionFilter, asked: t.SubscriptionFilter) -> str | None:
    """What ``honoured`` holds that ``asked`` did not (SUB-06), or ``None``."""
    for name in ("tools_list_changed", "prompts_list_changed", "resources_list_changed"):
        if getattr(honoured, name) and not getattr(asked, name):
            return name
    extra = set(honoured.resource_subscriptions or ()) - set(asked.resource_subscriptions or ())
    return f"resourceSubscriptions {sorted(extra)}" if extra else None


def narrowed(honoured: t.SubscriptionFilter, asked: t.SubscriptionFilter) -> t.SubscriptionFilter:
    """``honoured`` without what ``asked`` did not hold: what a receiver keeps of an
    acknowledgement that grants more than it asked for (SUB-06, SUB-07)."""
    if unasked(honoured, asked) is None:
        return honoured
    flags = {
        name: getattr(honoured, name) and getattr(asked, name)
        for name in ("tools_list_changed", "prompts_list_changed", "resources_list_changed")
    }
    kept = set(asked.resource_subscriptions or ())
    uris = [uri for uri in honoured.resource_subscriptions or () if uri in kept]
    return attrs.evolve(honoured, resource_subscriptions=uris or None, **flags)


# -- the guards ---------------------------------------------------------------


def result_type(record: RequestRecord, result: Any, config: GuardConfig) -> str | None:
    """The method's result class, or one its extension declares (BASE-09)."""
    info = METHODS.get(record.method)
    if info is not None and info.result_type is not None:
        if isinstance(result, info.result_type):
            return None
        expected, got = info.result_type.__name__, type(result).__name__
        return f"{record.method} answers with {expected}, not {got}"
    config.extensions.check_result(record.method, result)  # raises with its own message
    return None


def cache_fields(record: RequestRecord, result: Any, config: GuardConfig) -> str | None:
    """A cacheable complete result carries ``ttlMs`` >= 0 and ``cacheScope`` (CACHE-01/07)."""
    info = METHODS.get(record.method)
    if info is None or not info.cacheable or getattr(result, "result_type", None) != "complete":
        return None
    ttl, scope = getattr(result, "ttl_ms", None), getattr(result, "cache_scope", None)
    if type(ttl) is int and ttl >= 0 and scope in ("public", "private"):
        return None
    return f"a {record.method} result needs ttlMs >= 0 and cacheScope"


def mrtr_method(record: RequestRecord, result: Any, config: GuardConfig) -> str | None:
    """Only methods that allow it answer ``input_required`` (MRTR-03)."""
    info = METHODS.get(record.method)
    if info is not None and info.input_required_allowed:
        return None
    return f"input_required is not allowed on {record.method}"


def mrtr_shape(record: RequestRecord, result: Any, config: GuardConfig) -> str | None:
    """An ``InputRequiredResult`` has ``inputRequests`` or ``requestState`` (MRTR-09)."""
    if result.input_requests or result.request_state is not None:
        return None
    return "an InputRequiredResult needs inputRequests or requestState"


def mrtr_declared(record: RequestRecord, result: Any, config: GuardConfig) -> str | None:
    """Only input requests the request's client capabilities declare (MRTR-10)."""
    bad = undeclared_input_requests(record.capabilities, result.input_requests)
    if not bad:
        return None
    return f"input requests {bad} need client capabilities this request did not declare"


def progress_increases(record: RequestRecord, params: Any, config: GuardConfig) -> str | None:
    """Each progress value is greater than the last one of the request (PROG-05)."""
    last = record.last_progress
    if last is None or params.progress > last:
        return None
    return f"progress must increase ({params.progress} after {last})"


def log_requested(record: RequestRecord, params: Any, config: GuardConfig) -> str | None:
    """Log messages only for a request that set ``logLevel`` (LOG-03)."""
    if record.log_rank is not None:
        return None
    return f"request {record.id!r} did not set io.modelcontextprotocol/logLevel"


def log_level(record: RequestRecord, params: Any, config: GuardConfig) -> str | None:
    """At or above the requested level (LOG-04)."""
    assert record.log_rank is not None  # log_requested runs first
    if LOG_RANK[params.level] >= record.log_rank:
        return None
    return f"level {params.level!r} is below the requested {LOG_LEVELS[record.log_rank]!r}"


def ack_subset(record: RequestRecord, honoured: Any, config: GuardConfig) -> str | None:
    """The acknowledged filter is a subset of the one asked for (SUB-06)."""
    assert record.listen is not None  # only listens are acknowledged
    extra = unasked(honoured, record.listen)
    return None if extra is None else f"the client did not ask for {extra}"


def change_in_filter(record: RequestRecord, change: Any, config: GuardConfig) -> str | None:
    """A change of a kind the listen's acknowledged filter covers (SUB-02, SUB-16).

    ``change`` is ``(method, params)``.
    """
    method, params = change
    assert record.honoured is not None  # only acknowledged listens get changes
    if matches_filter(method, params, record.honoured):
        return None
    return f"listen {record.id!r} did not ask for this {method}"


#: the guards a receiver runs too.  The others stay the sender's duty: the client
#: decodes a result by its method's class (result_type) and normalises cache fields
#: (CACHE-06) rather than refusing them; it attributes log messages instead of judging
#: their level (LOG-05); and it narrows an acknowledged filter to what it asked for
#: (SUB-07, :func:`narrowed`) rather than refusing the acknowledgement.
RECEIVED = frozenset(
    {"mrtr_method", "mrtr_shape", "mrtr_declared", "progress_increases", "change_in_filter"}
)

#: guard name -> (the function, the rule it enforces)
GUARDS: dict[str, tuple[Guard, str]] = {
    "result_type": (result_type, "BASE-09"),
    "cache_fields": (cache_fields, "CACHE-01"),
    "mrtr_method": (mrtr_method, "MRTR-03"),
    "mrtr_shape": (mrtr_shape, "MRTR-09"),
    "mrtr_declared": (mrtr_declared, "MRTR-10"),
    "progress_increases": (progress_increases, "PROG-05"),
    "log_requested": (log_requested, "LOG-03"),
    "log_level": (log_level, "LOG-04"),
    "ack_subset": (ack_subset, "SUB-06"),
    "change_in_filter": (change_in_filter, "SUB-02"),
}
