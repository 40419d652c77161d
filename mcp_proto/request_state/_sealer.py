"""Sealed MRTR ``requestState``: integrity-protected, bound, expiring (MRTR-07, MRTR-08).

A server that keeps state between the rounds of a multi round-trip request
hands it to the client as ``requestState`` and gets it back on the retry.  The
client is not trusted with it (MRTR-07), so :class:`RequestStateSealer` signs
it with HMAC-SHA256 and binds it to what the spec asks for (MRTR-08): the
method, a digest of the salient params the application chooses, the
authenticated principal, and an expiry.  The time is always passed in (the core
has no clock).

The sealed form is ASCII: ``v1.<payload>.<mac>``, both parts unpadded
base64url.  The payload is readable by anyone who decodes it (integrity, not
confidentiality): keep secrets out of the application state, or encrypt them
yourself first.  Nothing here makes a state single-use; a server that needs
that (one-time redemptions) keeps a record of used states itself (MRTR-08).

Verification runs these checks in order and stops at the first failure, which
:class:`RequestStateError` names in ``check``:

============  ================================================================
``size``      the text is longer than ``max_size`` (checked before anything else)
``format``    not a string, not ASCII, not three dot-separated parts, bad base64
``version``   the prefix is not ``v1``
``signature`` the MAC matches none of the keys (tampered, or an unknown key)
``payload``   the signed payload is not what this module writes
``method``    sealed for another method
``params``    sealed for other salient params
``principal`` sealed for another principal (or for none, or for one when none)
``expired``   ``now`` is at or past the expiry
============  ================================================================

Nothing about the payload is looked at before the signature has been checked.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal, TypeAlias

import attrs
import orjson
from attrs import frozen

from .._errors import INVALID_PARAMS, DecodeError

__all__ = [
    "DEFAULT_MAX_REQUEST_STATE_SIZE",
    "DEFAULT_REQUEST_STATE_TTL",
    "RequestStateCheck",
    "RequestStateError",
    "RequestStateSealer",
    "missing_input_responses",
]

#: Default bound on a sealed ``requestState`` (characters), enforced on seal and verify.
DEFAULT_MAX_REQUEST_STATE_SIZE: Final = 16 * 1024
#: Default lifetime of a sealed state, in seconds (MRTR-08 asks for a short one).
DEFAULT_REQUEST_STATE_TTL: Final = 300.0
#: Minimum key length in bytes (the HMAC-SHA256 output size).
MIN_KEY_SIZE: Final = 32

RequestStateCheck: TypeAlias = Literal[
    "size", "format", "version", "signature", "payload", "method", "params", "principal", "expired"
]

_VERSION = "v1"
_DOMAIN = b"mcp-proto requestState\x00"
_B64URL = re.compile(r"[A-Za-z0-9_-]+")
_PAYLOAD_KEYS = frozenset({"m", "p", "u", "e", "s"})


class RequestStateError(DecodeError):
    """A ``requestState`` that failed verification; carries the error to answer with.

    ``code`` is ``-32602`` (invalid params, as edge case 52 of the spec notes
    recommends), ``data`` is ``{"reason": check}`` and ``path`` points at
    ``/params/requestState``.  ``check`` names the failed check (see the
    module docs).  Send ``ErrorResponse(id=request.id, error=e.error())``, or
    answer with a fresh ``InputRequiredResult`` to start the exchange again.
    """

    def __init__(self, check: RequestStateCheck, detail: str) -> None:
        super().__init__(
            INVALID_PARAMS,
            f"Invalid requestState: {detail}",
            data={"reason": check},
            path="/params/requestState",
        )
        self._check: RequestStateCheck = check

    @property
    def check(self) -> RequestStateCheck:
        """The failed check (read-only, like every field of the error)."""
        return self._check


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    if _B64URL.fullmatch(text) is None or len(text) % 4 == 1:
        raise ValueError("not unpadded base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _digest(value: Any) -> str:
    """SHA-256 of the canonical JSON (sorted keys, compact) of ``value``."""
    try:
        canonical = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError as e:
        raise TypeError(f"salient params must be a JSON value: {e}") from None
    return _b64(hashlib.sha256(canonical).digest())


def _principal_digest(principal: str | None) -> str | None:
    if principal is None:
        return None
    if type(principal) is not str:
        raise TypeError("the principal is a string or None")
    return _b64(hashlib.sha256(principal.encode("utf-8", "surrogatepass")).digest())


def _finite(now: float) -> float:
    if isinstance(now, bool) or not isinstance(now, int | float) or not math.isfinite(now):
        raise ValueError(f"now must be a finite number of seconds, not {now!r}")
    return float(now)


def _keys(value: bytes | Iterable[bytes]) -> tuple[bytes, ...]:
    keys = (value,) if isinstance(value, bytes | bytearray) else tuple(value)
    return tuple(bytes(k) for k in keys)


def _check_keys(_: Any, __: Any, keys: tuple[bytes, ...]) -> None:
    if not keys:
        raise ValueError("at least one key is needed")
    for key in keys:
        if len(key) < MIN_KEY_SIZE:
            raise ValueError(f"keys must be at least {MIN_KEY_SIZE} bytes (secrets.token_bytes)")


def _check_positive(name: str, value: float) -> None:
    if not value > 0 or not math.isfinite(value):
        raise ValueError(f"{name} must be positive and finite, not {value!r}")


def _positive(_: Any, attribute: attrs.Attribute[Any], value: float) -> None:
    _check_positive(attribute.name, value)


@frozen(kw_only=True)
class RequestStateSealer:
    """Seals and verifies ``requestState`` with HMAC-SHA256 (MRTR-07, MRTR-08).

    ``keys``: one key, or several for rotation: :meth:`seal` signs with the
    first, :meth:`verify` accepts any (put the new key first, keep the old one
    until states sealed with it have expired).  Each key is at least 32 random
    bytes (``secrets.token_bytes(32)``); keys never appear in the repr.
    ``ttl``: default lifetime in seconds.  ``max_size``: bound on the sealed
    text, checked before any decoding.
    """

    keys: tuple[bytes, ...] = attrs.field(converter=_keys, validator=_check_keys, repr=False)
    ttl: float = attrs.field(default=DEFAULT_REQUEST_STATE_TTL, validator=_positive)
    max_size: int = attrs.field(default=DEFAULT_MAX_REQUEST_STATE_SIZE, validator=_positive)

    def _mac(self, key: bytes, body: str) -> str:
        return _b64(hmac.new(key, _DOMAIN + body.encode("ascii"), hashlib.sha256).digest())

    def seal(
        self,
        state: Any,
        *,
        method: str,
        params: Any = None,
        principal: str | None = None,
        now: float,
        ttl: float | None = None,
    ) -> str:
        """The sealed ``requestState`` carrying ``state`` (any JSON value).

        ``params`` is the salient part of the request's params, as a JSON
        value you choose (``{"name": ..., "arguments": ...}`` for a tool call;
        leave out ``_meta``, ``inputResponses`` and ``requestState``, which
        change between rounds).  ``principal`` is the authenticated caller, or
        ``None``.  The state expires at ``now + ttl``.  Raises ``TypeError``
        for values that are not JSON and ``ValueError`` when the result would
        exceed ``max_size``.
        """
        lifetime = self.ttl if ttl is None else ttl
        _check_positive("ttl", lifetime)
        payload = {
            "m": method,
            "p": _digest(params),
            "u": _principal_digest(principal),
            "e": _finite(now) + lifetime,
            "s": state,
        }
        try:
            raw = orjson.dumps(payload)
        except orjson.JSONEncodeError as e:
            raise TypeError(f"the state must be a JSON value: {e}") from None
        body = f"{_VERSION}.{_b64(raw)}"
        sealed = f"{body}.{self._mac(self.keys[0], body)}"
        if len(sealed) > self.max_size:
            raise ValueError(f"the sealed state is {len(sealed)} chars, over {self.max_size}")
        return sealed

    def verify(
        self,
        sealed: Any,
        *,
        method: str,
        params: Any = None,
        principal: str | None = None,
        now: float,
    ) -> Any:
        """The application state inside ``sealed``, once every check passed.

        ``method``, ``params`` and ``principal`` are those of the request that
        brought the state back, chosen the same way as for :meth:`seal`.
        Raises :class:`RequestStateError` naming the first failed check; the
        MAC is compared in constant time, against every key.
        """
        current = _finite(now)
        if isinstance(sealed, str) and len(sealed) > self.max_size:
            raise RequestStateError("size", f"longer than {self.max_size} characters")
        if not isinstance(sealed, str) or not sealed.isascii():
            raise RequestStateError("format", "not an ASCII string")
        parts = sealed.split(".")
        if len(parts) != 3:
            raise RequestStateError("format", "not a sealed state")
        version, encoded, mac = parts
        if version != _VERSION:
            raise RequestStateError("version", "unknown version")
        body = f"{version}.{encoded}"
        matched = False
        for key in self.keys:  # no early exit: the time does not depend on which key matched
            matched |= hmac.compare_digest(self._mac(key, body), mac)
        if not matched:
            raise RequestStateError("signature", "signature mismatch")
        try:
            payload = orjson.loads(_unb64(encoded))
        except (ValueError, binascii.Error, orjson.JSONDecodeError):
            payload = None
        if type(payload) is not dict or payload.keys() != _PAYLOAD_KEYS:
            raise RequestStateError("payload", "unreadable payload")
        expires = payload["e"]
        if type(expires) is not float:
            raise RequestStateError("payload", "unreadable payload")
        if payload["m"] != method:
            raise RequestStateError("method", "issued for another method")
        if payload["p"] != _digest(params):
            raise RequestStateError("params", "issued for other params")
        if payload["u"] != _principal_digest(principal):
            raise RequestStateError("principal", "issued for another principal")
        if current >= expires:
            raise RequestStateError("expired", "expired")
        return payload["s"]


def missing_input_responses(
    input_responses: Mapping[str, Any] | None,
    needed: Iterable[str] | Mapping[str, type | tuple[type, ...]],
) -> list[str]:
    """The keys the application needs that ``inputResponses`` does not answer (MRTR-17).

    ``needed`` lists the keys, or maps each to the class(es) its answer must
    be (``ElicitResult``, ``CreateMessageResult``, ``ListRootsResult``); an
    answer of another class counts as missing.  Extra keys are ignored.  When
    the list is not empty, answer with a new ``InputRequiredResult`` asking
    for them again rather than with an error.
    """
    answers = input_responses or {}
    if isinstance(needed, Mapping):
        return [k for k, cls in needed.items() if not isinstance(answers.get(k), cls)]
    return [k for k in needed if answers.get(k) is None]
