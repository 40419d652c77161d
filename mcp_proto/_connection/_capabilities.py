"""Capability checks: what a peer declared, and the ``-32021`` reply when it is not enough.

Capabilities are compared as JSON objects: a required capability is present
when every key on its path is present in the declared object (META-09: only
what this request declares counts, never what earlier requests said).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar

from .. import types as t
from .._codec import structure, unstructure
from .._errors import MISSING_REQUIRED_CLIENT_CAPABILITY

__all__ = [
    "checked_capabilities",
    "has_capability",
    "input_capabilities",
    "missing_capabilities",
    "missing_required_client_capability",
    "require_client_capabilities",
    "undeclared_input_requests",
]


C = TypeVar("C", t.ClientCapabilities, t.ServerCapabilities)


def checked_capabilities(value: object, cls: type[C]) -> C:
    """``capabilities=`` of a connection: ``cls`` (``None``: an empty one); anything else,
    a plain dict included, raises ``TypeError`` saying what to pass."""
    if value is None:
        return cls()
    if not isinstance(value, cls):
        hint = ""
        if isinstance(value, Mapping):
            hint = f" (mcp_proto.structure(value, mcp_proto.types.{cls.__name__}) makes one)"
        raise TypeError(
            f"capabilities= takes a mcp_proto.types.{cls.__name__}, "
            f"not a value of type {type(value).__name__}{hint}"
        )
    return value


def _as_json(caps: object) -> Mapping[str, object]:
    if caps is None:
        return {}
    if isinstance(caps, Mapping):
        return caps
    value = unstructure(caps)
    return value if isinstance(value, dict) else {}


def has_capability(caps: object, path: tuple[str, ...]) -> bool:
    """Whether ``caps`` (a capabilities object or its JSON) declares ``path``.

    ``("resources", "subscribe")`` needs ``resources`` present and its
    ``subscribe`` truthy; a one-element path needs only the key's presence
    (``{"tools": {}}`` declares tools).
    """
    node: object = _as_json(caps)
    for i, key in enumerate(path):
        if not isinstance(node, Mapping) or key not in node:
            return False
        node = node[key]
        if i and node is False:
            return False
    return node is not None


def missing_capabilities(declared: object, required: object) -> dict[str, object]:
    """The part of ``required`` that ``declared`` lacks, as JSON (empty: nothing missing)."""
    have, need = _as_json(declared), _as_json(required)
    missing: dict[str, object] = {}
    for key, value in need.items():
        if key not in have or have[key] is None or have[key] is False:
            missing[key] = value
        elif isinstance(value, Mapping) and value:
            sub = missing_capabilities(have[key] if isinstance(have[key], Mapping) else {}, value)
            if sub:
                missing[key] = sub
    return missing


def missing_required_client_capability(
    required: t.ClientCapabilities, message: str = "Missing required client capability"
) -> t.Error:
    """``-32021`` with ``data.requiredCapabilities`` naming what the client lacks (META-10).

    ``required`` is sent as given; :func:`require_client_capabilities` passes
    only the part the request did not declare.
    """
    return t.Error(
        code=MISSING_REQUIRED_CLIENT_CAPABILITY,
        message=message,
        data={"requiredCapabilities": unstructure(required)},
    )


def require_client_capabilities(
    request_meta: t.RequestMetaObject | None,
    required: t.ClientCapabilities | Mapping[str, object],
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
    caps: t.ClientCapabilities | None, input_requests: Mapping[str, object] | None
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


def input_capabilities(
    input_requests: Mapping[str, object], keys: Iterable[str] | None = None
) -> t.ClientCapabilities:
    """The client capabilities the ``keys`` of ``input_requests`` (all by default) need:
    ``elicitation`` (``elicitation.url`` for a URL-mode one), ``sampling``, ``roots``; the
    ``requiredCapabilities`` of the ``-32021`` a server sends rather than ask a client
    for what it did not declare (MRTR-10, META-10)."""
    need: dict[str, dict[str, object]] = {}
    for key in input_requests if keys is None else keys:
        request = input_requests[key]
        method = getattr(request, "method", None)
        if method == "sampling/createMessage":
            need["sampling"] = {}
        elif method == "roots/list":
            need["roots"] = {}
        elif method == "elicitation/create":
            url = getattr(getattr(request, "params", None), "mode", None) == "url"
            # form mode: {"form": {}} (an empty elicitation object means form only too,
            # but a client that declared {"url": {}} needs to be told form, by name)
            need.setdefault("elicitation", {}).update({"url": {}} if url else {"form": {}})
    return structure(need, t.ClientCapabilities)


def _declared(caps: t.ClientCapabilities | None, method: object, request: object) -> bool:
    if caps is None:
        return False
    if method == "sampling/createMessage":
        return caps.sampling is not None
    if method == "roots/list":
        return caps.roots is not None
    if method != "elicitation/create" or caps.elicitation is None:
        return False
    el = caps.elicitation
    if getattr(getattr(request, "params", None), "mode", None) == "url":
        return el.url is not None
    return el.form is not None or el.url is None
