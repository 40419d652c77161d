"""Capability checks: what a peer declared, and the ``-32021`` reply when it is not enough.

Capabilities are compared as JSON objects: a required capability is present
when every key on its path is present in the declared object (META-09: only
what this request declares counts, never what earlier requests said).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import types as t
from .._codec import structure, unstructure
from .._errors import missing_required_client_capability

__all__ = [
    "has_capability",
    "missing_capabilities",
    "require_client_capabilities",
    "undeclared_input_requests",
]


def _as_json(caps: Any) -> Mapping[str, Any]:
    if caps is None:
        return {}
    if isinstance(caps, Mapping):
        return caps
    value = unstructure(caps)
    return value if isinstance(value, dict) else {}


def has_capability(caps: Any, path: tuple[str, ...]) -> bool:
    """Whether ``caps`` (a capabilities object or its JSON) declares ``path``.

    ``("resources", "subscribe")`` needs ``resources`` present and its
    ``subscribe`` truthy; a one-element path needs only the key's presence
    (``{"tools": {}}`` declares tools).
    """
    node: Any = _as_json(caps)
    for i, key in enumerate(path):
        if not isinstance(node, Mapping) or key not in node:
            return False
        node = node[key]
        if i and node is False:
            return False
    return node is not None


def missing_capabilities(declared: Any, required: Any) -> dict[str, Any]:
    """The part of ``required`` that ``declared`` lacks, as JSON (empty: nothing missing)."""
    have, need = _as_json(declared), _as_json(required)
    missing: dict[str, Any] = {}
    for key, value in need.items():
        if key not in have or have[key] is None or have[key] is False:
            missing[key] = value
        elif isinstance(value, Mapping) and value:
            sub = missing_capabilities(have[key] if isinstance(have[key], Mapping) else {}, value)
            if sub:
                missing[key] = sub
    return missing


def require_client_capabilities(
    request_meta: t.RequestMetaObject | None, required: t.ClientCapabilities | Mapping[str, Any]
) -> t.Error | None:
    """``None`` when the request declared ``required``, else the ``-32021`` error to send.

    The error's ``data.requiredCapabilities`` lists only what is missing
    (META-10, ERR-09).
    """
    declared = request_meta.client_capabilities if request_meta is not None else None
    missing = missing_capabilities(declared, required)
    if not missing:
        return None
    return missing_required_client_capability(structure(missing, t.ClientCapabilities))


def undeclared_input_requests(
    caps: t.ClientCapabilities | None, input_requests: Mapping[str, Any] | None
) -> list[str]:
    """Keys of ``input_requests`` the client did not declare capabilities for (MRTR-10).

    ``elicitation/create`` needs ``elicitation`` (URL mode needs
    ``elicitation.url``; form mode needs ``elicitation.form``, or an empty
    ``elicitation`` object, which means form only), ``sampling/createMessage``
    needs ``sampling`` and ``roots/list`` needs ``roots``.  Unknown methods are
    never declared (MRTR-05).
    """
    bad = []
    for key, request in (input_requests or {}).items():
        method = getattr(request, "method", None)
        if not _declared(caps, method, request):
            bad.append(key)
    return bad


def _declared(caps: t.ClientCapabilities | None, method: Any, request: Any) -> bool:
    if caps is None:
        return False
    if method == "sampling/createMessage":
        return caps.sampling is not None
    if method == "roots/list":
        return caps.roots is not None
    if method != "elicitation/create" or caps.elicitation is None:
        return False
    el = caps.elicitation
    if getattr(request.params, "mode", None) == "url":
        return el.url is not None
    return el.form is not None or el.url is None
