"""Icon safety (ICON-01..10): src schemes and origins, redirects, magic numbers, limits."""

from __future__ import annotations

import base64
import contextlib
import struct

import pytest

import mcp_proto.icons
from mcp_proto import types as t
from mcp_proto.icons import (
    FORBIDDEN_FETCH_HEADERS,
    IconError,
    IconPolicy,
    check_icon,
    check_icon_bytes,
    check_icon_src,
    check_redirect,
    origin_of,
)

SERVER = "https://mcp.example.com/mcp"


def chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + b"\0\0\0\0"


def png(width: int = 16, height: int = 16, frames: int | None = None) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    actl = chunk(b"acTL", struct.pack(">II", frames, 0)) if frames else b""
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + actl
        + chunk(b"IDAT", b"x")
        + chunk(b"IEND", b"")
    )


def jpeg(width: int = 16, height: int = 16) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\0" + b"\x01\x01\0\0\x01\0\x01\0\0"
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + sof + b"\xff\xd9"


def webp_vp8x(width: int = 16, height: int = 16, frames: int = 0) -> bytes:
    flags = 0x02 if frames else 0
    body = (
        bytes([flags, 0, 0, 0])
        + (width - 1).to_bytes(3, "little")
        + (height - 1).to_bytes(3, "little")
    )
    data = b"VP8X" + struct.pack("<I", len(body)) + body
    data += (b"ANMF" + struct.pack("<I", 2) + b"\0\0") * frames
    return b"RIFF" + struct.pack("<I", len(data) + 4) + b"WEBP" + data


def webp_vp8l(width: int = 20, height: int = 10) -> bytes:
    bits = (width - 1) | ((height - 1) << 14)
    body = b"\x2f" + struct.pack("<I", bits)
    data = b"VP8L" + struct.pack("<I", len(body)) + body
    return b"RIFF" + struct.pack("<I", len(data) + 4) + b"WEBP" + data


SVG = b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"><script>x()</script></svg>'


def data_uri(mime: str, data: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


# -- src --------------------------------------------------------------------------------------


def test_same_origin_https_is_accepted_icon_07() -> None:
    source = check_icon_src("https://MCP.example.com:443/icons/a.png", server_origin=SERVER)
    assert (source.kind, source.origin) == ("https", "https://mcp.example.com")


@pytest.mark.parametrize(
    "src",
    [
        "https://cdn.example.net/a.png",
        "https://mcp.example.com:8443/a.png",
        "https://evil.example.com.attacker.test/a.png",
    ],
)
def test_cross_origin_https_is_refused_icon_07(src: str) -> None:
    with pytest.raises(IconError) as info:
        check_icon_src(src, server_origin=SERVER)
    assert info.value.reason == "origin"


def test_trusted_origins_and_stdio_servers() -> None:
    src = "https://cdn.example.net/a.png"
    assert check_icon_src(src, server_origin=SERVER, trusted_origins=["https://cdn.example.net"])
    with pytest.raises(IconError, match="no HTTP origin"):
        check_icon_src(src)
    assert check_icon_src(src, trusted_origins=["https://cdn.example.net/"]).origin == (
        "https://cdn.example.net"
    )


@pytest.mark.parametrize(
    "src",
    [
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        "file:///etc/passwd",
        "ftp://mcp.example.com/a.png",
        "ws://mcp.example.com/a",
        "wss://mcp.example.com/a",
        "http://mcp.example.com/a.png",
        "vscode://extension/x",
        "slack://open",
        "blob:https://mcp.example.com/uuid",
        "/relative/icon.png",
        "",
    ],
)
def test_unsafe_schemes_are_refused_icon_04(src: str) -> None:
    with pytest.raises(IconError) as info:
        check_icon_src(src, server_origin=SERVER)
    assert info.value.reason == "scheme"
    assert "only https: and data:" in str(info.value)


def test_credentials_in_urls_are_refused_icon_06() -> None:
    with pytest.raises(IconError) as info:
        check_icon_src("https://user:pw@mcp.example.com/a.png", server_origin=SERVER)
    assert info.value.reason == "credentials"
    assert {"cookie", "authorization"} <= FORBIDDEN_FETCH_HEADERS


def test_redirects_keep_scheme_and_origin_icon_04() -> None:
    url = "https://mcp.example.com/icons/a.png"
    assert check_redirect(url, "/icons/b.png") == "https://mcp.example.com/icons/b.png"
    for location, reason in [
        ("http://mcp.example.com/b.png", "scheme"),
        ("https://other.example.com/b.png", "origin"),
        ("data:image/png;base64,AAAA", "scheme"),
        ("javascript:alert(1)", "scheme"),
    ]:
        with pytest.raises(IconError) as info:
            check_redirect(url, location)
        assert info.value.reason == reason


def test_origin_of() -> None:
    assert origin_of("https://[::1]:8443/x") == "https://[::1]:8443"
    with pytest.raises(IconError):
        origin_of("https:///nohost")
    with pytest.raises(IconError, match="invalid port"):
        origin_of("https://a.example:99999/")


# -- data: URIs -------------------------------------------------------------------------------


def test_data_uri_is_decoded_and_checked_icon_01() -> None:
    source = check_icon(t.Icon(src=data_uri("image/png", png())))
    assert source.kind == "data" and source.image is not None
    assert (source.image.mime_type, source.image.width, source.image.height) == (
        "image/png",
        16,
        16,
    )


@pytest.mark.parametrize(
    ("src", "reason"),
    [
        ("data:image/png,rawbytes", "data-uri"),
        ("data:image/png;base64", "data-uri"),
        ("data:image/png;base64,!!!!", "data-uri"),
        ("data:image/png;base64," + "A" * 400_000, "size"),
    ],
)
def test_bad_data_uris(src: str, reason: str) -> None:
    with pytest.raises(IconError) as info:
        check_icon_src(src)
    assert info.value.reason == reason


def test_data_uri_type_must_agree_with_the_bytes_icon_09() -> None:
    with pytest.raises(IconError) as info:
        check_icon(t.Icon(src=data_uri("image/jpeg", png())))
    assert info.value.reason == "mismatch"
    with pytest.raises(IconError) as info:
        check_icon(t.Icon(src=data_uri("image/png", png()), mime_type="image/webp"))
    assert info.value.reason == "mismatch"


def test_https_icon_is_not_fetched_here() -> None:
    source = check_icon(t.Icon(src="https://mcp.example.com/a.png"), server_origin=SERVER)
    assert source.image is None and source.data is None


# -- bytes ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "declared", "mime", "size"),
    [
        (png(32, 48), "image/png", "image/png", (32, 48)),
        (jpeg(40, 30), "image/jpeg", "image/jpeg", (40, 30)),
        (jpeg(), "image/jpg", "image/jpeg", (16, 16)),
        (jpeg(), "IMAGE/JPEG; charset=binary", "image/jpeg", (16, 16)),
        (webp_vp8x(64, 32), "image/webp", "image/webp", (64, 32)),
        (webp_vp8l(20, 10), None, "image/webp", (20, 10)),
        (png(), None, "image/png", (16, 16)),
    ],
)
def test_magic_numbers_icon_02_09(
    data: bytes, declared: str | None, mime: str, size: tuple[int, int]
) -> None:
    image = check_icon_bytes(data, declared)
    assert (image.mime_type, (image.width, image.height)) == (mime, size)
    assert image.active_content is False and image.frames == 1


@pytest.mark.parametrize(
    ("data", "declared", "reason"),
    [
        (png(), "image/jpeg", "mismatch"),
        (jpeg(), "image/png", "mismatch"),
        (b"GIF89a\x10\x00\x10\x00", "image/gif", "unknown-type"),
        (b"<html><script>x()</script></html>", "image/png", "unknown-type"),
        (b"\x89PNG\r\n\x1a\n", "image/png", "broken"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "image/jpeg", "broken"),
        (b"RIFF\0\0\0\0WEBPVP8Z", "image/webp", "broken"),
        (png(5000, 10), "image/png", "dimensions"),
        (png(0, 10), "image/png", "broken"),
        (jpeg(10, 4000), "image/jpeg", "dimensions"),
        (png(frames=500), "image/png", "frames"),
        (webp_vp8x(frames=3), "image/webp", "frames"),
        (png() + b"\0" * 300_000, "image/png", "size"),
    ],
)
def test_refusals_icon_05_09(data: bytes, declared: str, reason: str) -> None:
    with pytest.raises(IconError) as info:
        check_icon_bytes(data, declared)
    assert info.value.reason == reason


def test_svg_is_opt_in_and_flagged_active_icon_08() -> None:
    with pytest.raises(IconError) as info:
        check_icon_bytes(SVG, "image/svg+xml")
    assert info.value.reason == "svg"
    image = check_icon_bytes(SVG, "image/svg+xml", policy=IconPolicy(allow_svg=True))
    assert image.mime_type == "image/svg+xml" and image.active_content is True
    with pytest.raises(IconError) as info:
        check_icon_bytes(SVG, "image/png", policy=IconPolicy(allow_svg=True))
    assert info.value.reason == "mismatch"


def test_policy_knobs() -> None:
    with pytest.raises(IconError):
        check_icon_bytes(webp_vp8l(), policy=IconPolicy(allow_webp=False))
    image = check_icon_bytes(png(frames=3), policy=IconPolicy(max_frames=3))
    assert image.frames == 3
    assert check_icon_bytes(webp_vp8x(frames=2), policy=IconPolicy(max_frames=2)).frames == 2


def test_truncated_headers_never_raise_index_errors() -> None:
    for sample in (png(), jpeg(), webp_vp8x(), webp_vp8l()):
        for cut in range(len(sample)):
            with contextlib.suppress(IconError):
                check_icon_bytes(sample[:cut])


def test_module_docstring_runs() -> None:
    import doctest

    assert doctest.testmod(mcp_proto.icons).failed == 0


def test_jpeg_segment_walk_skips_fill_bytes_and_markers() -> None:
    body = jpeg(24, 12)
    padded = body[:2] + b"\xff\xff\xff" + body[2:]  # fill bytes before a marker
    assert (check_icon_bytes(padded).width, check_icon_bytes(padded).height) == (24, 12)
    with pytest.raises(IconError) as info:
        check_icon_bytes(b"\xff\xd8\xff\xda\x00\x08" + b"\0" * 8)  # scan data before any SOF
    assert info.value.reason == "broken"
    with pytest.raises(IconError):
        check_icon_bytes(b"\xff\xd8\xff\xe0\x00\x10" + b"\0" * 14 + b"\x00\x00")
    for standalone in (b"\xff\x01", b"\xff\xd0", b"\xff\xd7", b"\xff\xd8"):  # TEM, RSTn, SOI
        walked = check_icon_bytes(body[:2] + standalone + body[2:])
        assert (walked.width, walked.height) == (24, 12)
    with pytest.raises(IconError, match="broken segment structure"):
        check_icon_bytes(body[:20] + b"\x00\x00\x00\x00" + body[20:])  # no marker after APP0


def test_webp_lossy_dimensions() -> None:
    frame = b"\0\0\0" + b"\x9d\x01\x2a" + struct.pack("<HH", 30, 20)
    data = b"VP8 " + struct.pack("<I", len(frame)) + frame
    webp = b"RIFF" + struct.pack("<I", len(data) + 4) + b"WEBP" + data
    image = check_icon_bytes(webp, "image/webp")
    assert (image.width, image.height) == (30, 20)
