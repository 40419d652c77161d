"""The "everything" server: every fixture the official conformance server suite expects.

    python examples/everything_server.py --stdio [--adapter trio|asyncio|sync]
    python examples/everything_server.py --http 127.0.0.1:3000       # Streamable HTTP at /mcp

The handlers live in ``mcp_proto_cli.everything`` so that ``mcp-proto serve-example`` and
``mcp-proto demo`` can run them from an installed package; read them there.
"""

from mcp_proto_cli.everything import main

if __name__ == "__main__":
    main()
