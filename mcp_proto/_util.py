"""The kernel's small shared pieces: imports nothing from ``mcp_proto``.

Any layer may import this module; it must stay free of protocol knowledge.
"""

from __future__ import annotations

__all__ = ["Sentinel"]


class Sentinel(type):
    """Metaclass of the marker classes (``NEED_DATA``, ``END``, ``PAUSED``).

    A marker is a class used as a value: it is unique, compared with ``is``, and
    its ``repr`` is its bare name (h11's trick), so ``repr(NEED_DATA) == "NEED_DATA"``.
    """

    def __repr__(cls) -> str:
        return cls.__name__
