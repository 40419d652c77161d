"""Authorization for a protected MCP resource: hooks and challenges, never token crypto.

Server side, :class:`ProtectedResource` holds what RFC 9728 needs (the resource
URL, its authorization servers, the supported scopes) and a ``verify``
callable supplied by the application, which looks at the bearer token and
answers ``None`` (allowed) or a :class:`Challenge`: ``401`` for a missing,
invalid or expired token, ``403`` with ``error="insufficient_scope"`` for a
token that lacks scopes (AUTH, RFC 6750 section 3.1).  The challenge becomes a
``WWW-Authenticate: Bearer resource_metadata="...", scope="..."`` header.  The
metadata document is served at ``/.well-known/oauth-protected-resource`` and at
the path-suffixed variant for the endpoint's path.

Client side, :func:`parse_www_authenticate` reads a challenge header into
:class:`AuthChallenge` values (scheme and parameters), so an OAuth layer can
find ``resource_metadata``, ``scope`` and ``error``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final
from urllib.parse import urlsplit

from attrs import field, frozen

from ._headers import Headers

__all__ = [
    "WELL_KNOWN_PRM",
    "AuthChallenge",
    "Challenge",
    "ProtectedResource",
    "bearer_token",
    "parse_www_authenticate",
]

WELL_KNOWN_PRM: Final = "/.well-known/oauth-protected-resource"

_AUTH_PARAM = re.compile(
    r"""\s*([!#$%&'*+\-.^_`|~0-9A-Za-z]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]*)\s*(?:,|\Z)""",
    re.DOTALL,
)
_TOKEN68 = re.compile(r"\s+[A-Za-z0-9\-._~+/]+=*\s*(?:,|\Z)")
_SCHEME = re.compile(r"\s*,?\s*([!#$%&'*+\-.^_`|~0-9A-Za-z]+)(?=\s|,|\Z)")


@frozen(kw_only=True)
class Challenge:
    """What ``verify`` answers for a request it refuses.

    ``status`` 401 for a missing or bad token (with ``error="invalid_token"``
    when one was given), 403 for ``error="insufficient_scope"``; ``scope``
    names the scopes the operation needs.
    """

    status: int = 401
    error: str | None = None
    scope: str | None = None
    description: str | None = None

    @classmethod
    def insufficient_scope(cls, scope: str, description: str | None = None) -> Challenge:
        return cls(status=403, error="insufficient_scope", scope=scope, description=description)


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def bearer_token(headers: Headers) -> str | None:
    """The token of an ``Authorization: Bearer ...`` header, or None."""
    value = headers.get("authorization")
    if value is None:
        return None
    scheme, _, token = value.partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


class ProtectedResource:
    """An MCP server acting as an OAuth 2.1 resource server (the hooks, not the crypto).

    ``resource`` is the canonical URL of the MCP endpoint
    (``https://mcp.example.com/mcp``); ``verify(token, headers)`` decides
    (``token`` is ``None`` when no bearer token was sent).  ``metadata``
    adds fields to the Protected Resource Metadata document.
    """

    def __init__(
        self,
        *,
        resource: str,
        authorization_servers: Sequence[str],
        verify: Callable[[str | None, Headers], Challenge | None],
        scopes_supported: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        self.resource = resource
        self.authorization_servers = tuple(authorization_servers)
        self.verify = verify
        self.scopes_supported = tuple(scopes_supported) if scopes_supported else None
        self.extra = dict(metadata or {})
        parts = urlsplit(resource)
        path = parts.path.rstrip("/")
        #: the paths this document is served at: path-suffixed first, then the root (RFC 9728)
        self.metadata_paths = (
            (WELL_KNOWN_PRM + path, WELL_KNOWN_PRM) if path else (WELL_KNOWN_PRM,)
        )
        #: the URL named in ``resource_metadata`` of every challenge
        self.metadata_url = f"{parts.scheme}://{parts.netloc}{self.metadata_paths[0]}"

    def metadata_document(self) -> dict[str, Any]:
        """The RFC 9728 Protected Resource Metadata document (a JSON object)."""
        doc: dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": list(self.authorization_servers),
            "bearer_methods_supported": ["header"],
        }
        if self.scopes_supported:
            doc["scopes_supported"] = list(self.scopes_supported)
        doc.update(self.extra)
        return doc

    def www_authenticate(self, challenge: Challenge) -> str:
        """The ``WWW-Authenticate`` value for ``challenge`` (RFC 6750, RFC 9728 section 5.1)."""
        params = [("resource_metadata", self.metadata_url)]
        if challenge.error is not None:
            params.append(("error", challenge.error))
        if challenge.scope is not None:
            params.append(("scope", challenge.scope))
        if challenge.description is not None:
            params.append(("error_description", challenge.description))
        return "Bearer " + ", ".join(f"{k}={_quote(v)}" for k, v in params)

    def check(self, headers: Headers) -> Challenge | None:
        """Run ``verify`` on the request's bearer token."""
        return self.verify(bearer_token(headers), headers)


@frozen(kw_only=True)
class AuthChallenge:
    """One challenge of a ``WWW-Authenticate`` header: its scheme and parameters."""

    scheme: str
    params: Mapping[str, str] = field(factory=dict)

    @property
    def resource_metadata(self) -> str | None:
        return self.params.get("resource_metadata")

    @property
    def scope(self) -> str | None:
        return self.params.get("scope")

    @property
    def error(self) -> str | None:
        return self.params.get("error")


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return re.sub(r"\\(.)", r"\1", value[1:-1], flags=re.DOTALL)
    return value


def parse_www_authenticate(value: str) -> list[AuthChallenge]:
    """The challenges of a ``WWW-Authenticate`` value (auth-param lists; token68 is skipped).

    Scheme names are lowercased; parameter names too (RFC 9110 section 11.2).
    Anything unreadable ends the parse with what was read so far.
    """
    out: list[AuthChallenge] = []
    pos, n = 0, len(value)
    while pos < n:
        scheme = _SCHEME.match(value, pos)
        if scheme is None:
            break
        pos = scheme.end()
        params: dict[str, str] = {}
        token68 = _TOKEN68.match(value, pos)
        if token68 is not None:
            pos = token68.end()  # a token68 credential-like value: skipped
        while pos < n:
            param = _AUTH_PARAM.match(value, pos)
            if param is None:
                break
            params[param.group(1).lower()] = _unquote(param.group(2))
            pos = param.end()
        out.append(AuthChallenge(scheme=scheme.group(1).lower(), params=params))
        if pos < n and _SCHEME.match(value, pos) is None:
            break
    return out
