"""The sync adapter for mcp_proto (placeholder until the adapters issue lands)."""
