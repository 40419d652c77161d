"""The ``mcp-proto`` command line (kept outside the core: it does I/O)."""

from ._main import main

__all__ = ["main"]
