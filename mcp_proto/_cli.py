"""The ``mcp-proto`` command line (placeholder)."""


def main() -> int:
    return 0
