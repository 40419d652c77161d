"""Extensions: methods and result types beyond the core, declared by both sides.

An :class:`Extension` names its identifier (``io.modelcontextprotocol/tasks``,
checked by the ``_meta`` key grammar with its mandatory prefix, VER-10) and the
requests, notifications and extra ``resultType`` values it adds.  The core
accepts them only when the extension is declared on both sides for that
request: in the server's ``capabilities.extensions`` and in the request's
``clientCapabilities.extensions``.  Otherwise the core behaves as if the
extension did not exist (``-32601`` for its methods, an invalid result for its
result types).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from attrs import field, frozen

from .. import types as t
from .._codec import structure
from .._errors import LocalProtocolError
from ..metakeys import check_extension_id

__all__ = ["Extension", "ExtensionRegistry"]

_NONE: Mapping[str, Any] = MappingProxyType({})


@frozen(kw_only=True)
class Extension:
    """What one extension adds to the protocol.

    ``requests`` maps a method to ``(params class, result class)`` (``None``
    keeps the params or result a plain dict); ``notifications`` maps a
    notification method to its params class; ``result_types`` maps extra
    ``resultType`` values to the class of such results.
    """

    id: str
    requests: Mapping[str, tuple[type | None, type | None]] = field(default=_NONE)
    notifications: Mapping[str, type | None] = field(default=_NONE)
    result_types: Mapping[str, type] = field(default=_NONE)

    def __attrs_post_init__(self) -> None:
        check_extension_id(self.id)

    def structure_params(self, method: str, raw: dict[str, Any]) -> Any:
        """Params of ``method`` as its class (raises ``DecodeError`` -32602)."""
        params_type = self.requests[method][0]
        return raw if params_type is None else structure(raw, params_type)


def _declared(caps: Any, ext_id: str) -> bool:
    extensions = getattr(caps, "extensions", None) if caps is not None else None
    return isinstance(extensions, Mapping) and ext_id in extensions


class ExtensionRegistry:
    """The extensions one connection knows, looked up by method or result type."""

    def __init__(
        self, extensions: Iterable[Extension], own_declared: Mapping[str, Any] | None
    ) -> None:
        self._by_id = {e.id: e for e in extensions}
        if own_declared is not None:
            missing = [i for i in self._by_id if i not in own_declared]
            if missing:
                raise ValueError(f"extensions {missing} are not declared in capabilities")
        self._requests = {m: e for e in self._by_id.values() for m in e.requests}
        self._notifications = {m: e for e in self._by_id.values() for m in e.notifications}
        self._result_types = {r: e for e in self._by_id.values() for r in e.result_types}

    def __bool__(self) -> bool:
        return bool(self._by_id)

    def for_request(self, method: str, meta: t.RequestMetaObject | None) -> Extension | None:
        """The extension of ``method`` if this request's client declared it."""
        ext = self._requests.get(method)
        if ext is None or meta is None or not _declared(meta.client_capabilities, ext.id):
            return None
        return ext

    def notification(self, method: str) -> Extension | None:
        return self._notifications.get(method)

    def result_type(
        self, result_type: str, client_caps: Any, server_caps: Any = None
    ) -> type | None:
        """The class of an extra ``resultType`` value, when both sides declared it."""
        ext = self._result_types.get(result_type)
        if ext is None or not _declared(client_caps, ext.id):
            return None
        if server_caps is not None and not _declared(server_caps, ext.id):
            return None
        return ext.result_types[result_type]

    def request_types(self, method: str) -> tuple[type | None, type | None] | None:
        ext = self._requests.get(method)
        return ext.requests[method] if ext is not None else None

    def check_result(self, method: str, result: Any) -> None:
        """Refuse a result for an extension method that is not of its declared classes."""
        ext = self._requests.get(method)
        if ext is None:
            raise LocalProtocolError(f"no result type is known for {method!r}")
        allowed = [c for c in (ext.requests[method][1], *ext.result_types.values()) if c]
        if allowed and not isinstance(result, tuple(allowed)):
            names = ", ".join(c.__name__ for c in allowed)
            raise LocalProtocolError(f"{method} answers with one of {names}")
