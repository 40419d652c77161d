"""mcp_proto: a sans-I/O protocol core for the Model Context Protocol, revision 2026-07-28."""

__version__ = "0.1.0"
