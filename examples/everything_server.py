"""The "everything" server: every fixture the official conformance server suite expects.

    python examples/everything_server.py --stdio [--adapter trio|asyncio|sync]

The handlers live in ``mcp_proto_cli.everything`` so that ``mcp-proto serve-example`` and
``mcp-proto demo`` can run them from an installed package; read them there.
"""

from mcp_proto_cli.everything import main

if __name__ == "__main__":
    main()
