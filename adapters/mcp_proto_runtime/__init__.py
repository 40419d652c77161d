"""mcp_proto_runtime: the handler runtime the adapters share, out of the core."""
