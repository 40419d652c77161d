"""JSON Schema validation for untrusted schemas and instances (the implementation of
:mod:`mcp_proto.schema`, which is the public face; see ``docs/schema.md``)."""
