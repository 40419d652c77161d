"""Icon safety for clients that display icons (ICON-01..10); see ``docs/icons.md``.

May import: ``mcp_proto.types`` and the error model only (``docs/architecture.md``).

>>> from mcp_proto.icons import check_icon_src
>>> check_icon_src("https://mcp.example.com/icon.png", server_origin="https://mcp.example.com/mcp").origin
'https://mcp.example.com'
"""

from ._check import (
    DEFAULT_ICON_POLICY,
    FORBIDDEN_FETCH_HEADERS,
    IconError,
    IconImage,
    IconPolicy,
    IconSource,
    check_icon,
    check_icon_bytes,
    check_icon_src,
    check_redirect,
    origin_of,
)

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
