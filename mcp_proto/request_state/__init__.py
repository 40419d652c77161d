"""Sealed multi round-trip ``requestState`` (MRTR-07, MRTR-08); see ``docs/request-state.md``.

Owns: :class:`RequestStateSealer` (HMAC-SHA256 sealing bound to the method, the
salient params, the principal and an expiry; the time is passed in), its
:class:`RequestStateError` (a decode error whose ``check`` names what failed),
and :func:`missing_input_responses`.  May import ``mcp_proto.types`` and the
error model only.  Today's names stay importable from :mod:`mcp_proto` too.
"""

from ._sealer import (
    DEFAULT_MAX_REQUEST_STATE_SIZE,
    DEFAULT_REQUEST_STATE_TTL,
    RequestStateCheck,
    RequestStateError,
    RequestStateSealer,
    missing_input_responses,
)

__all__ = [
    "DEFAULT_MAX_REQUEST_STATE_SIZE",
    "DEFAULT_REQUEST_STATE_TTL",
    "RequestStateCheck",
    "RequestStateError",
    "RequestStateSealer",
    "missing_input_responses",
]
