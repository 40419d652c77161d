"""Icon safety for clients that display icons (ICON-01..10): a sans-I/O gatekeeper.

Contract:

* ``check_icon_src(src, server_origin=...)`` accepts only ``https:`` URLs and base64 ``data:``
  URIs (ICON-04). ``javascript:``, ``file:``, ``ftp:``, ``ws:``/``wss:``, plain ``http:``
  and every other scheme (local app schemes included) raise ``IconError``. An HTTPS URL must
  be of the server's origin (scheme, host, port; ICON-07) or of an origin in
  ``trusted_origins``; with no ``server_origin`` (a stdio server has none) only trusted
  origins are accepted. URLs carrying credentials (``user:pass@``) are refused.
* ``check_redirect(url, location)`` is for the adapter that fetches: a redirect is followed
  only to the same scheme and origin (ICON-04).
* ``check_icon_bytes(data, declared)`` sniffs the magic number (ICON-09): PNG and JPEG always
  (ICON-02; ``image/jpg`` is read as ``image/jpeg``), WebP unless the policy turns it off,
  SVG only when the policy allows it, and then flagged ``active_content`` (ICON-08: it may
  carry script; render it only through a sanitiser or as an inert image). The declared type is
  advisory but must agree with the bytes; an unknown format, a mismatch, a broken header, too
  many bytes, pixels or frames (ICON-05) raise ``IconError``, whose ``reason`` is one of
  ``scheme``, ``origin``, ``credentials``, ``data-uri``, ``size``, ``dimensions``, ``frames``,
  ``unknown-type``, ``mismatch``, ``svg``, ``broken``.

For the adapter that fetches an icon (nothing here does I/O; ICON-04/06): fetch without
credentials, that is without cookies, ``Authorization``/``Proxy-Authorization`` headers, client
certificates or any other client credential (``FORBIDDEN_FETCH_HEADERS``); pass each redirect
``Location`` through ``check_redirect`` (or refuse redirects); stop reading after
``IconPolicy.max_bytes``; apply a timeout; then call ``check_icon_bytes``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Collection
from typing import Final
from urllib.parse import unquote_to_bytes, urljoin, urlsplit

from attrs import frozen

from ..types import Icon
from ._sniff import sniff

__all__ = [
    "DEFAULT_ICON_POLICY",
    "FORBIDDEN_FETCH_HEADERS",
    "IconError",
    "IconImage",
    "IconPolicy",
    "IconSource",
    "check_icon",
    "check_icon_bytes",
    "check_icon_src",
    "check_redirect",
    "origin_of",
]

#: Request headers an icon fetch never sends (ICON-06), lower-case.
FORBIDDEN_FETCH_HEADERS: Final = frozenset({"cookie", "authorization", "proxy-authorization"})


class IconError(ValueError):
    """An icon refused; ``reason`` is a short tag (see the module docstring)."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


@frozen(kw_only=True)
class IconPolicy:
    """What a client accepts. Defaults: PNG, JPEG and WebP; no SVG; 256 KiB; 1024x1024 pixels;
    one frame (no animation)."""

    allow_svg: bool = False
    allow_webp: bool = True
    max_bytes: int = 256 * 1024
    max_width: int = 1024
    max_height: int = 1024
    max_frames: int = 1


DEFAULT_ICON_POLICY: Final = IconPolicy()


@frozen(kw_only=True)
class IconImage:
    """Checked icon bytes: the sniffed type, size when the format states it, frames, and
    whether the content can be active (SVG)."""

    mime_type: str
    width: int | None
    height: int | None
    frames: int
    size: int
    active_content: bool


@frozen(kw_only=True)
class IconSource:
    """A checked ``src``: ``kind`` is ``"https"`` (fetch ``url``) or ``"data"`` (``data`` holds
    the decoded bytes and ``media_type`` the URI's declared type, if any)."""

    kind: str
    url: str
    origin: str | None = None
    data: bytes | None = None
    media_type: str | None = None
    image: IconImage | None = None


def _normal_type(mime: str | None) -> str | None:
    if mime is None:
        return None
    base = mime.split(";", 1)[0].strip().lower()
    return "image/jpeg" if base == "image/jpg" else base or None


def origin_of(url: str) -> str:
    """The origin ``scheme://host[:port]`` of an absolute URL (default ports dropped)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if not scheme or not host:
        raise IconError("origin", f"{url!r} has no origin (scheme and host)")
    try:
        port = parts.port
    except ValueError as e:
        raise IconError("origin", f"{url!r} has an invalid port") from e
    default = {"https": 443, "http": 80}.get(scheme)
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}" if port in (None, default) else f"{scheme}://{host}:{port}"


def _https(src: str, server_origin: str | None, trusted: Collection[str]) -> IconSource:
    parts = urlsplit(src)
    if parts.username is not None or parts.password is not None:
        raise IconError("credentials", "icon URLs may not carry credentials")
    origin = origin_of(src)
    allowed = {origin_of(o) for o in trusted}
    if server_origin is not None:
        allowed.add(origin_of(server_origin))
    if origin not in allowed:
        where = (
            f"the server's origin {origin_of(server_origin)}"
            if server_origin
            else ("a trusted origin (the server has no HTTP origin)")
        )
        raise IconError("origin", f"icon origin {origin} is not {where}")
    return IconSource(kind="https", url=src, origin=origin)


def _data(src: str, policy: IconPolicy) -> IconSource:
    header, comma, payload = src[5:].partition(",")
    if not comma:
        raise IconError("data-uri", "a data: URI without a comma")
    params = [p.strip() for p in header.split(";")]
    if "base64" not in (p.lower() for p in params[1:]):
        raise IconError("data-uri", "icon data: URIs must be base64-encoded")
    if len(payload) // 4 * 3 > policy.max_bytes + 3:
        raise IconError("size", f"the icon exceeds max_bytes={policy.max_bytes}")
    try:
        data = base64.b64decode(unquote_to_bytes(payload.strip()), validate=True)
    except (binascii.Error, ValueError) as e:
        raise IconError("data-uri", f"the data: URI is not valid base64 ({e})") from None
    return IconSource(kind="data", url=src, data=data, media_type=_normal_type(params[0]))


def check_icon_src(
    src: str,
    *,
    server_origin: str | None = None,
    trusted_origins: Collection[str] = (),
    policy: IconPolicy = DEFAULT_ICON_POLICY,
) -> IconSource:
    """Check an icon's ``src`` (see the module docstring); ``data:`` URIs are decoded."""
    scheme = src.partition(":")[0].strip().lower() if ":" in src else ""
    if scheme == "https":
        return _https(src, server_origin, trusted_origins)
    if scheme == "data":
        return _data(src, policy)
    shown = f"{scheme}:" if scheme else "a relative URL"
    raise IconError("scheme", f"icon src scheme {shown} is refused (only https: and data:)")


def check_redirect(url: str, location: str) -> str:
    """The absolute target of a redirect from ``url``, if it keeps scheme and origin."""
    target = urljoin(url, location)
    if urlsplit(target).scheme.lower() != "https":
        raise IconError("scheme", f"a redirect to {target!r} changes the scheme")
    if origin_of(target) != origin_of(url):
        raise IconError("origin", f"a redirect to {origin_of(target)} leaves {origin_of(url)}")
    return target


def check_icon_bytes(
    data: bytes, declared: str | None = None, *, policy: IconPolicy = DEFAULT_ICON_POLICY
) -> IconImage:
    """Check fetched or decoded icon bytes against the declared type and the policy."""
    if len(data) > policy.max_bytes:
        raise IconError(
            "size", f"the icon's {len(data)} bytes exceed max_bytes={policy.max_bytes}"
        )
    try:
        found = sniff(data)
    except (ValueError, IndexError) as e:
        raise IconError("broken", f"the icon is not a well-formed image: {e}") from None
    if found is None:
        raise IconError("unknown-type", "the icon is not PNG, JPEG, WebP or SVG")
    want = _normal_type(declared)
    if want is not None and want != found.mime_type:
        raise IconError(
            "mismatch", f"the icon is declared {want} but its bytes are {found.mime_type}"
        )
    if found.mime_type == "image/svg+xml" and not policy.allow_svg:
        raise IconError("svg", "SVG icons can carry script and are not allowed by the policy")
    if found.mime_type == "image/webp" and not policy.allow_webp:
        raise IconError("unknown-type", "WebP icons are not allowed by the policy")
    if (found.width or 0) > policy.max_width or (found.height or 0) > policy.max_height:
        raise IconError(
            "dimensions",
            f"the icon is {found.width}x{found.height}, over "
            f"max_width={policy.max_width}/max_height={policy.max_height}",
        )
    if found.width == 0 or found.height == 0:
        raise IconError("broken", "the icon has no pixels")
    if found.frames > policy.max_frames:
        raise IconError(
            "frames", f"the icon has {found.frames} frames, over max_frames={policy.max_frames}"
        )
    return IconImage(
        mime_type=found.mime_type,
        width=found.width,
        height=found.height,
        frames=found.frames,
        size=len(data),
        active_content=found.mime_type == "image/svg+xml",
    )


def check_icon(
    icon: Icon,
    *,
    server_origin: str | None = None,
    trusted_origins: Collection[str] = (),
    policy: IconPolicy = DEFAULT_ICON_POLICY,
) -> IconSource:
    """Check an ``Icon``: its ``src``, and for a ``data:`` URI its bytes too (``.image``).

    For a ``data:`` URI both ``icon.mimeType`` and the URI's own type are advisory; each that
    is present must agree with the bytes.
    """
    source = check_icon_src(
        icon.src, server_origin=server_origin, trusted_origins=trusted_origins, policy=policy
    )
    if source.data is None:
        return source
    image = check_icon_bytes(source.data, icon.mime_type, policy=policy)
    if source.media_type not in (None, "text/plain", image.mime_type):
        raise IconError(
            "mismatch",
            f"the data: URI says {source.media_type} but its bytes are {image.mime_type}",
        )
    return IconSource(
        kind="data", url=source.url, data=source.data, media_type=source.media_type, image=image
    )
