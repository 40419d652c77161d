"""The kernel's small shared pieces: imports nothing from ``mcp_proto``.

Any layer may import this module; it must stay free of protocol knowledge.
"""

from __future__ import annotations

__all__ = ["NEED_DATA", "PAUSED", "Sentinel"]


class Sentinel(type):
    """Metaclass of the marker classes (``NEED_DATA``, ``END``, ``PAUSED``).

    A marker is a class used as a value: it is unique, compared with ``is``, and
    its ``repr`` is its bare name (h11's trick), so ``repr(NEED_DATA) == "NEED_DATA"``.
    """

    def __repr__(cls) -> str:
        return cls.__name__


class NEED_DATA(metaclass=Sentinel):  # noqa: N801
    """Returned by ``next_event`` when no complete event is buffered yet."""


class PAUSED(metaclass=Sentinel):
    """Returned by a ``next_event`` that holds input it may not act on yet (h11's ``PAUSED``).

    What ends the pause is the caller's next response: the HTTP/1.1 reader resumes once
    the response to the request it read is complete; a server connection at its
    ``max_in_flight`` resumes once one of its requests ends.  Until then every call
    returns ``PAUSED`` again, and the bytes fed meanwhile wait, unread.
    """
