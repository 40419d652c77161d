"""Fuzzing harnesses for mcp_proto (see fuzz/README.md)."""
