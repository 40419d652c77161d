"""Which era a server speaks, found as the spec says: no clock, no I/O (LEG-21, VER-13..17).

A dual-era client does not know whether its server is modern (2026-07-28, per-request
``_meta``) or legacy (``initialize``, 2025-11-25 and older).  :class:`EraProbe` says what
to send, reads what came back, and ends in an outcome:

* :class:`Modern` -- a ``DiscoverResult``, an answer to a modern request, or a
  recognised modern error (``-32022`` with a version in common: speak that one; never
  fall back to ``initialize``);
* :class:`Legacy` -- the probe drew any other error or no answer (stdio), or a ``4xx``
  with no modern error in its body (HTTP-42, told with :meth:`EraProbe.not_modern`),
  and ``initialize`` was answered at a version this client speaks; send
  :attr:`Legacy.initialized` before anything else (LEG-03);
* :class:`Incompatible` -- no version in common, or no answer to ``initialize``: the
  client disconnects with :attr:`Incompatible.reason` (LEG-05).

stdio (``transport="stdio"``) probes with ``server/discover`` before any other request
(the stdio page's "Backward Compatibility"); over HTTP the application's first modern
request is the probe.  The fallback keys on no error code: legacy servers answer an
unknown request with codes of their own, or not at all.  Timeouts are the caller's
(:meth:`EraProbe.timed_out`).  The era is the server's, not a request's: keep outcomes in
an :class:`EraCache` per process or origin, and :meth:`~EraCache.invalidate` when the
assumption fails.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from enum import Enum
from typing import Any, Literal, TypeAlias

from attrs import frozen

from .. import types as t
from .._codec import LATEST_PROTOCOL_VERSION, structure, unstructure
from .._errors import (
    HEADER_MISMATCH,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    LocalProtocolError,
)
from ._events import ErrorResponse, Notification, Request, Result, VersionNotSupported
from ._legacy import LEGACY_VERSIONS, legacy_types

__all__ = ["EraCache", "EraOutcome", "EraProbe", "Incompatible", "Legacy", "Modern"]

#: the errors only a modern server gives (HTTP-42, HTTP-46)
MODERN_ERRORS = frozenset({HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY,
                           UNSUPPORTED_PROTOCOL_VERSION})  # fmt: skip


@frozen(kw_only=True)
class Modern:
    """A modern server: speak ``version``.  ``supported`` is what the server named (a
    ``DiscoverResult``'s ``supportedVersions``, ``-32022``'s ``data.supported``), empty
    when it simply answered; ``discover`` the probe's result, when there was one."""

    version: str
    supported: tuple[str, ...] = ()
    discover: t.DiscoverResult | None = None


@frozen(kw_only=True)
class Legacy:
    """An ``initialize``-era server, at the negotiated ``version``.

    ``result`` is its ``InitializeResult`` (``mcp_proto.types.legacy``): its
    ``capabilities``, ``server_info`` and ``instructions`` hold for the whole session.
    Send ``initialized`` first (LEG-03).
    """

    version: str
    result: Any
    initialized: Notification

    @property
    def capabilities(self) -> Any:
        return self.result.capabilities

    @property
    def server_info(self) -> Any:
        return self.result.server_info

    @property
    def instructions(self) -> str | None:
        return self.result.instructions  # type: ignore[no-any-return]


@frozen(kw_only=True)
class Incompatible:
    """No way to talk: ``reason`` says why (for the user); ``supported``: what the server
    named, when it did."""

    reason: str
    supported: tuple[str, ...] = ()


EraOutcome: TypeAlias = Modern | Legacy | Incompatible


class _Stage(Enum):
    START = "not started"
    DISCOVER = "waiting for the answer to server/discover"
    FIRST = "waiting for the answer to the first modern request (HTTP)"
    INITIALIZE = "waiting for the answer to initialize"
    DONE = "decided"


class EraProbe:
    """The era of one server, step by step (see the module docs).

    ``next_id`` gives request ids (a :class:`~mcp_proto.ClientConnection`'s ``next_id``,
    so the probe's ids are never reused); ``versions`` are the modern versions this
    client speaks, ``legacy_versions`` the ``initialize``-era ones (newest first: the
    first is the one asked for).  ``known``: an outcome from an :class:`EraCache`; a
    known :class:`Modern` needs no probe, a known :class:`Legacy` goes straight to
    ``initialize``.  Every step returns the next message to send (a :class:`Request`,
    sent as any other) or the outcome; a step out of turn raises
    :class:`~mcp_proto.LocalProtocolError`.
    """

    def __init__(
        self,
        *,
        transport: Literal["stdio", "http"],
        next_id: Callable[[], t.RequestId],
        capabilities: t.ClientCapabilities | None = None,
        client_info: t.Implementation | None = None,
        versions: Iterable[str] = (LATEST_PROTOCOL_VERSION,),
        legacy_versions: Iterable[str] = LEGACY_VERSIONS,
        known: Modern | Legacy | None = None,
    ) -> None:
        self.transport = transport
        self.versions = tuple(versions)
        self.legacy_versions = tuple(legacy_versions)
        if not self.versions and not self.legacy_versions:
            raise ValueError("a probe needs a version to speak")
        self._next_id = next_id
        self._capabilities = capabilities or t.ClientCapabilities()
        self._client_info = client_info or t.Implementation(name="mcp-proto", version="0.1.0")
        self._known = known
        self._stage = _Stage.START
        #: the request whose answer the probe waits for
        self.pending: Request | None = None
        #: the outcome, once decided
        self.outcome: EraOutcome | None = None

    # -- steps ---------------------------------------------------------------

    def start(self) -> Request | EraOutcome | None:
        """The first step: a ``server/discover`` probe (stdio), ``initialize`` (a known
        legacy server, or a client that speaks no modern version), the known
        :class:`Modern`, or ``None`` (HTTP: send the first modern request, and tell the
        probe what became of it)."""
        self._expect(_Stage.START)
        known = self._known
        if isinstance(known, Modern):
            return self._decide(known)
        if isinstance(known, Legacy) or not self.versions:
            return self._initialize()
        if self.transport == "http":
            self._stage = _Stage.FIRST
            return None
        self._stage = _Stage.DISCOVER
        meta = t.RequestMetaObject(
            protocol_version=self.versions[0],
            client_capabilities=self._capabilities,
            client_info=self._client_info,
        )
        params = t.RequestParams(meta=meta)
        self.pending = Request(id=self._next_id(), method="server/discover", params=params)
        return self.pending

    def received(self, event: Any) -> Request | EraOutcome:
        """What came back for the probe's request (a client connection's event for it).

        For ``server/discover`` or the first modern request: a ``Result`` or a modern
        error is :class:`Modern` (or :class:`Incompatible` with no version in common);
        anything else falls back to ``initialize``.  For ``initialize``: its
        ``InitializeResult`` is :class:`Legacy`; an error naming modern versions we
        speak (a modern-only server, LEG-22) is :class:`Modern` after all.
        """
        stage = self._stage
        if stage is _Stage.INITIALIZE:
            return self._initialized(event)
        self._expect(_Stage.DISCOVER, _Stage.FIRST)
        if isinstance(event, VersionNotSupported):
            return self._modern_among(event.supported, "-32022")
        if isinstance(event, Result):
            result = event.result
            if isinstance(result, t.DiscoverResult):
                return self._modern_among(tuple(result.supported_versions), "discover", result)
            return self._decide(Modern(version=self.versions[0]))
        if isinstance(event, ErrorResponse) and event.code in MODERN_ERRORS:
            return self._decide(Modern(version=self.versions[0]))  # fix the request, no fallback
        return self._initialize()  # any other answer (LEG-21): the fallback keys on no code

    def timed_out(self) -> Request | EraOutcome:
        """No answer within the caller's timeout: ``initialize`` after a silent probe
        (stdio: a legacy server may ignore an unknown request), or :class:`Incompatible`
        after a silent ``initialize``.  Over HTTP a timeout says nothing of the era."""
        if self._stage is _Stage.DISCOVER:
            return self._initialize()
        if self._stage is _Stage.INITIALIZE:
            return self._decide(Incompatible(reason="the server did not answer initialize"))
        raise LocalProtocolError(f"nothing to time out: {self._stage.value}")

    def not_modern(self) -> Request | EraOutcome:
        """HTTP: the first modern request drew a ``4xx`` with no modern error in its body
        (``mcp_proto.http.detect_era`` said ``LEGACY``, HTTP-42): ``initialize``."""
        self._expect(_Stage.FIRST)
        return self._initialize()

    # -- the rest ------------------------------------------------------------

    def _expect(self, *stages: _Stage) -> None:
        if self._stage not in stages:
            raise LocalProtocolError(f"the probe is {self._stage.value}")

    def _decide(self, outcome: EraOutcome) -> EraOutcome:
        self._stage, self.pending, self.outcome = _Stage.DONE, None, outcome
        return outcome

    def _modern_among(
        self, supported: tuple[str, ...], how: str, discover: t.DiscoverResult | None = None
    ) -> EraOutcome:
        common = set(supported) & set(self.versions)
        if not common:
            reason = (
                f"the server is modern ({how}) but speaks {', '.join(supported) or 'no version'}"
                f"; this client speaks {', '.join(self.versions) or 'no modern version'}"
            )
            return self._decide(Incompatible(reason=reason, supported=supported))
        return self._decide(Modern(version=max(common), supported=supported, discover=discover))

    def _initialize(self) -> Request | EraOutcome:
        if not self.legacy_versions:
            reason = "the server is not modern, and this client speaks no initialize-era version"
            return self._decide(Incompatible(reason=reason))
        lt = legacy_types()
        # the capabilities 2025-11-25 knows (one-word keys: the wire names are the fields)
        known = {f.name for f in lt.ClientCapabilities.__attrs_attrs__} - {"extra"}
        caps = {k: v for k, v in unstructure(self._capabilities).items() if k in known}
        params = lt.InitializeRequestParams(
            protocol_version=self.legacy_versions[0],
            capabilities=structure(caps, lt.ClientCapabilities),
            client_info=structure(unstructure(self._client_info), lt.Implementation),
        )
        self._stage = _Stage.INITIALIZE
        self.pending = Request(id=self._next_id(), method="initialize", params=params)
        return self.pending

    def _initialized(self, event: Any) -> EraOutcome:
        lt = legacy_types()
        if isinstance(event, Result) and isinstance(event.result, lt.InitializeResult):
            version = event.result.protocol_version
            if version not in self.legacy_versions:  # LEG-05: the client disconnects
                reason = (
                    f"the server answered initialize at {version}, which this client does "
                    f"not speak ({', '.join(self.legacy_versions)})"
                )
                return self._decide(Incompatible(reason=reason, supported=(version,)))
            note = Notification(method="notifications/initialized")
            return self._decide(Legacy(version=version, result=event.result, initialized=note))
        supported = _named_versions(event)
        if supported and set(supported) & set(self.versions):  # a modern-only server
            return self._modern_among(supported, "its refusal of initialize")
        what = event.error.message if isinstance(event, ErrorResponse) else type(event).__name__
        reason = f"the server refused initialize and is not modern: {what}"
        return self._decide(Incompatible(reason=reason, supported=supported))


def _named_versions(event: Any) -> tuple[str, ...]:
    """The versions an error names in ``data.supported`` (LEG-22, VER-16), if any."""
    if not isinstance(event, ErrorResponse) or not isinstance(event.error.data, dict):
        return ()
    named = event.error.data.get("supported")
    if not isinstance(named, list) or not all(isinstance(v, str) for v in named):
        return ()
    return tuple(named)


class EraCache:
    """What a client learned of its servers, keyed by what it calls them (a command line,
    an origin); the caller owns it (VER-13: SHOULD cache per process or origin).

    Holds :class:`Modern` and :class:`Legacy` outcomes (never :class:`Incompatible`:
    that one is probed again), at most ``max_entries`` (the least recently used go).
    """

    def __init__(self, max_entries: int = 256) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, not {max_entries}")
        self.max_entries = max_entries
        self._entries: OrderedDict[Hashable, Modern | Legacy] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable) -> Modern | Legacy | None:
        """The outcome learned for ``key``, or ``None``."""
        outcome = self._entries.get(key)
        if outcome is not None:
            self._entries.move_to_end(key)
        return outcome

    def put(self, key: Hashable, outcome: EraOutcome) -> None:
        """Remember ``outcome`` for ``key`` (an :class:`Incompatible` forgets it instead)."""
        if isinstance(outcome, Incompatible):
            self._entries.pop(key, None)
            return
        self._entries[key] = outcome
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def invalidate(self, key: Hashable) -> None:
        """The cached assumption failed (a legacy answer to a modern request, a session
        gone...): probe ``key`` again next time."""
        self._entries.pop(key, None)
